# SPDX-License-Identifier: Apache-2.0
"""A kwitnessd decision log, read as kwitness verify reads it
(docs/record.md, "Decision log checks"): every line canonical RFC 8785 JSON,
the transcript hash over "[" + the lines joined by "," + "]", the open entry,
sequence numbers with their gaps, the trailer's counts, and completeness.
The log is streamed line by line; memory is bounded by the longest line and
the gap list, not the log's size."""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable

from .jcs import CanonicalizationError, canonicalize, parse_strict

__all__ = ["LogCheck", "LINE_MAX", "GAP_RANGES", "check_log"]

# The longest line a log may have (KW_LOG_LINE_MAX) and the separate gaps kept.
LINE_MAX = 256 * 1024
GAP_RANGES = 1024


@dataclass
class LogCheck:
    problem: str = "ok"           # a reason code when the log could not be read through
    why: str = ""
    hash: str = ""                 # "sha256:..." of the transcript, when problem is "ok"
    entries: int = 0
    lines: int = 0
    decisions: int = 0
    denials: int = 0
    resumes: int = 0
    open: dict[str, Any] | None = None
    has_close: bool = False
    complete: bool = False
    incomplete_why: str = ""
    inconsistent_why: str = ""
    close_evidence: Any = None
    _gaps: list[list[int]] = field(default_factory=list)   # [lo, hi), sorted, apart
    _gaps_merged: bool = False
    _seq_next: int = 0
    _seq_missing: int = 0
    _trailer: dict[str, Any] = field(default_factory=dict)

    def _problem(self, code: str, why: str) -> None:
        if self.problem == "ok":
            self.problem, self.why = code, why

    def _inconsistent(self, why: str) -> None:
        if not self.inconsistent_why:
            self.inconsistent_why = why

    # -- sequence numbers --------------------------------------------------
    def _add_gap(self, lo: int, hi: int) -> None:
        if len(self._gaps) == GAP_RANGES:
            self._gaps[-1][1] = hi
            self._gaps_merged = True
        else:
            self._gaps.append([lo, hi])

    def _fill_gap(self, s: int) -> None:
        i = bisect.bisect_right([g[1] for g in self._gaps], s)
        if i == len(self._gaps) or self._gaps[i][0] > s:
            self._inconsistent(f"line {self.lines}: seq {s} appears twice")
            return
        g = self._gaps[i]
        self._seq_missing -= 1
        if g[0] == s:
            g[0] += 1
        elif g[1] == s + 1:
            g[1] -= 1
        elif len(self._gaps) < GAP_RANGES:
            self._gaps.insert(i + 1, [s + 1, g[1]])
            g[1] = s
        else:
            self._gaps_merged = True
            return
        if g[0] == g[1]:
            del self._gaps[i]

    def _follow_seq(self, s: int) -> None:
        if s == self._seq_next:
            self._seq_next += 1
        elif s > self._seq_next:
            self._add_gap(self._seq_next, s)
            self._seq_missing += s - self._seq_next
            self._seq_next = s + 1
        else:
            self._fill_gap(s)

    # -- entries -------------------------------------------------------------
    def _follow(self, e: dict[str, Any]) -> None:
        tool = e.get("tool")
        if self.has_close:
            self._inconsistent(f"line {self.lines}: an entry after the trailer (kwitness.close)")
        if tool == "kwitness.open":
            if self.lines != 1 or self.open is not None:
                self._inconsistent(f"line {self.lines}: an open entry that is not the first line")
                return
            self.open = e
            return
        if tool == "kwitness.close":
            self.has_close = True
            self._trailer = e
            self.close_evidence = e.get("evidence")
            if self.open is not None and ("session" not in e or
                                          e.get("session") != self.open.get("session")):
                self._inconsistent("the trailer names another session than the open entry")
            if self.open is None:
                self._inconsistent("a trailer (kwitness.close) without an open entry")
            return
        if isinstance(tool, str) and tool.startswith("kwitness."):
            if tool == "kwitness.resume":
                self.resumes += 1
            return
        # a process entry is numbered like a decision but is not one
        if tool != "proc":
            self.decisions += 1
            if e.get("decision") == "deny":
                self.denials += 1
        seq = e.get("seq")
        if not _count(seq):
            if self.open is not None:
                self._inconsistent(f"line {self.lines}: a decision entry without a seq number")
            return
        self._follow_seq(seq)

    def _line(self, line: bytes) -> Any:
        """Checks one line; its entry when the line is a canonical object."""
        self.lines += 1
        if not line:
            self._problem("log_malformed", f"line {self.lines} is empty")
            return
        try:
            value = parse_strict(line)
            canon = canonicalize(value)
        except CanonicalizationError as err:
            self._problem("log_malformed", f"line {self.lines}: {err}")
            return
        if not isinstance(value, dict):
            self._problem("log_malformed", f"line {self.lines} is JSON but not an object")
            return
        if canon != line:
            i = next((k for k in range(min(len(canon), len(line))) if canon[k] != line[k]),
                     min(len(canon), len(line)))
            self._problem("log_not_canonical",
                          f"line {self.lines} differs from its RFC 8785 form at column {i + 1}")
            return None
        self._follow(value)
        return value

    # -- the end -------------------------------------------------------------
    def _judge(self) -> None:
        t = self._trailer
        missing = self._seq_missing
        n = {k: t.get(k) if _count(t.get(k)) else -1 for k in
             ("decisions", "denials", "dropped", "next_seq", "seq_gaps", "kill_failed")}
        sealed = "sealed" in t
        claimed = t.get("complete") is True
        if self.has_close:
            if n["decisions"] >= 0 and n["decisions"] != self.decisions:
                self._inconsistent(f"the trailer counts {n['decisions']} decisions, "
                                   f"the log holds {self.decisions}")
            if n["denials"] >= 0 and n["denials"] != self.denials:
                self._inconsistent(f"the trailer counts {n['denials']} denials, "
                                   f"the log holds {self.denials}")
            if sealed:
                if claimed:
                    self._inconsistent("a sealed trailer says complete")
            elif n["next_seq"] < 0:
                self._inconsistent("the trailer has no next_seq")
            elif self._seq_next > n["next_seq"]:
                self._inconsistent(f"seq {self._seq_next - 1} is at or beyond the trailer's "
                                   f"next_seq {n['next_seq']}")
            else:
                missing += n["next_seq"] - self._seq_next
                if n["seq_gaps"] >= 0 and n["seq_gaps"] != missing:
                    self._inconsistent(f"the trailer counts {n['seq_gaps']} seq gaps, the log "
                                       f"misses {missing} numbers below next_seq {n['next_seq']}")
                elif 0 <= n["dropped"] < missing:
                    self._inconsistent(f"the trailer counts {n['dropped']} dropped but "
                                       f"{missing} seq gaps")
                elif claimed and n["dropped"] != 0:
                    self._inconsistent(f"the trailer says complete but counts {n['dropped']} "
                                       "dropped")
                elif claimed and n["kill_failed"] > 0:
                    self._inconsistent(f"the trailer says complete but counts "
                                       f"{n['kill_failed']} processes a kill did not end")
        self.complete = False
        if self.open is None and not self.has_close:
            self.incomplete_why = ("the log has no kwitness.open entry and no trailer: it is not a "
                                   "collector's log, so what it leaves out cannot be told"
                                   if self.lines else "the log is empty")
        elif not self.has_close:
            self.incomplete_why = (f"the log has no trailer (kwitness.close): the session was not "
                                   f"closed, and decisions after line {self.lines} are unknown "
                                   f"({missing} seq gaps so far)")
        elif sealed:
            self.incomplete_why = ("the trailer says complete:false: the session was sealed by a "
                                   "later collector, its last decisions and the kernel's counters "
                                   "are unknown")
        elif not claimed or n["dropped"] != 0 or missing or n["kill_failed"] > 0:
            self.incomplete_why = (f"the trailer says complete:{'true' if claimed else 'false'}, "
                                   f"{n['dropped']} dropped, {missing} seq gaps")
            if n["kill_failed"] > 0:
                self.incomplete_why += (f", {n['kill_failed']} process(es) a kill at close did "
                                        "not end")
        elif not self.inconsistent_why:
            self.complete = True
        else:
            self.incomplete_why = self.inconsistent_why
        if self._gaps_merged and not self.complete:
            self.incomplete_why += (f"; more than {GAP_RANGES} separate gaps: late entries inside "
                                    "them are not told from duplicates")


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def check_log(f: BinaryIO,
              on_line: Callable[[bytes, dict[str, Any]], None] | None = None) -> LogCheck:
    """Reads a decision log from a binary file object to its end. on_line is
    given every line that passes the line checks (and its entry), in order:
    the checkpoint walk."""
    c = LogCheck()
    digest = hashlib.sha256(b"[")
    while c.problem == "ok":
        line = f.readline(LINE_MAX + 2)
        if not line:
            break
        if not line.endswith(b"\n"):
            if len(line) > LINE_MAX:
                c._problem("log_line_too_long",
                           f"line {c.lines + 1} is longer than {LINE_MAX} bytes")
            else:
                c._problem("log_truncated", f"the log ends inside line {c.lines + 1} "
                           f"({len(line)} bytes after the last newline)")
            break
        line = line[:-1]
        if len(line) > LINE_MAX:
            c._problem("log_line_too_long", f"line {c.lines + 1} is longer than {LINE_MAX} bytes")
            break
        entry = c._line(line)
        if c.problem == "ok":
            if on_line is not None:
                on_line(line, entry)
            digest.update(b"," + line if c.entries else line)
            c.entries += 1
    if c.problem == "ok":
        digest.update(b"]")
        c.hash = "sha256:" + digest.hexdigest()
    c._judge()
    return c
