# SPDX-License-Identifier: Apache-2.0
"""A decision log's signed interim checkpoints (``LOG.checkpoints``,
docs/decision-log.md "Checkpoints"), checked with the log as
``kwitness verify`` checks them: each line's form, key and Ed25519 signature,
the chain (``n`` one more each time, ``prev`` the SHA-256 of the line before,
``lines`` growing), each ``transcript_prefix`` against the log's first lines,
and the close entry's last checkpoint (with a seal, ``unvouched_lines``).

The walk is fed the log's lines in order and holds the next checkpoint and a
running transcript digest: constant memory. It reads the next checkpoint only
once the log has reached the one before, so which problem is found first is
the C verifier's."""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Any, BinaryIO

from .jcs import CanonicalizationError, canonicalize, parse_strict

__all__ = ["CheckpointWalk", "SUFFIX", "REASONS"]

SUFFIX = ".checkpoints"
TYPE = "kwitness.checkpoint"
# The longest checkpoint line read (the collector's are about 600 bytes).
LINE_MAX = 4096

REASONS = {
    "checkpoint_malformed": "A checkpoint line is not a canonical kwitness.checkpoint.",
    "checkpoint_key_mismatch": "A checkpoint names a signing key other than the trusted key.",
    "checkpoint_signature_invalid": "A checkpoint's Ed25519 signature does not hold under the "
                                    "trusted key.",
    "checkpoint_chain_gap": "A checkpoint is missing from the chain: a number is skipped, or the "
                            "last one the close entry names is not there.",
    "checkpoint_reordered": "The checkpoints are out of order: a number or a line count goes "
                            "back.",
    "checkpoint_chain_broken": "A checkpoint's previous hash, or the close entry's last "
                               "checkpoint hash, does not match.",
    "checkpoint_prefix_mismatch": "The log's first lines do not hash to what a signed checkpoint "
                                  "says: a vouched line was changed.",
    "checkpoint_beyond_log": "A checkpoint covers more lines than the log holds: the log was "
                             "cut.",
    "checkpoints_missing": "The close entry names checkpoints but the checkpoint file cannot be "
                           "read.",
    "checkpoint_unvouched_mismatch": "The seal's count of lines after its last checkpoint does "
                                     "not match the log.",
}

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}|sha384:[0-9a-f]{96}")
_COUNTS = ("decisions", "denials", "dropped", "gaps", "lines", "n", "ts")
# Text members and the longest each may be, in bytes (the C reader's buffers).
_TEXTS = {"kid": 43, "session": 32, "signature": 127, "transcript_prefix": 103, "type": 31}
_PREV_MAX = 103


class _Bad(Exception):
    def __init__(self, reason: str, why: str):
        super().__init__(reason)
        self.reason, self.why = reason, why


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _text(v: Any, longest: int) -> bool:
    return isinstance(v, str) and len(v.encode("utf-8", "surrogatepass")) <= longest


def _well_formed(c: dict[str, Any]) -> bool:
    """Every member present and of its kind, nothing else (last_seq and prev
    are optional: absent before the first decision, and in checkpoint 1)."""
    if any(not _count(c.get(k)) for k in _COUNTS):
        return False
    if any(not _text(c.get(k), n) for k, n in _TEXTS.items()):
        return False
    if "last_seq" in c and not _count(c["last_seq"]):
        return False
    prev = c.get("prev")
    if "prev" in c and (not _text(prev, _PREV_MAX) or prev == ""):
        return False
    if len(c) != len(_COUNTS) + len(_TEXTS) + ("last_seq" in c) + ("prev" in c):
        return False
    return (c["type"] == TYPE and c["n"] > 0 and c["lines"] > 0
            and _DIGEST.fullmatch(c["transcript_prefix"]) is not None
            and (c["n"] == 1) == (prev is None)
            and (prev is None or _DIGEST.fullmatch(prev) is not None)
            and len(c["session"].encode()) == 32)


def read_line(line: bytes, pub: Any, kid: str) -> tuple[dict[str, Any], str]:
    """One checkpoint line (no newline) checked against the trusted key: its
    members and its line hash ("sha256:..."), else _Bad."""
    from cryptography.exceptions import InvalidSignature

    from .verify import _b64url

    try:
        c = parse_strict(line) if len(line) <= LINE_MAX else None
        if not isinstance(c, dict) or canonicalize(c) != line:
            raise CanonicalizationError("not canonical")
    except CanonicalizationError:
        raise _Bad("checkpoint_malformed", "not a canonical JSON object") from None
    if not _well_formed(c):
        raise _Bad("checkpoint_malformed",
                   "not a kwitness.checkpoint (a member is missing, extra or malformed)")
    if not hmac.compare_digest(c["kid"].encode(), kid.encode()):
        raise _Bad("checkpoint_key_mismatch",
                   f"checkpoint {c['n']} names key {c['kid']}, not the trusted key")
    try:
        sig = _b64url(c["signature"])
        if len(sig) != 64:
            raise ValueError
        pub.verify(sig, canonicalize({k: v for k, v in c.items() if k != "signature"}))
    except (ValueError, InvalidSignature):
        raise _Bad("checkpoint_signature_invalid",
                   f"checkpoint {c['n']}: the Ed25519 signature does not hold") from None
    return c, "sha256:" + hashlib.sha256(line).hexdigest()


class CheckpointWalk:
    """The chain of one log's checkpoint file against that log. Feed every
    line of the log that passed the log check to line(), then call bound()
    once the log is read; describe() says what is vouched for."""

    def __init__(self, f: BinaryIO | None, pub: Any, kid: str):
        self.f, self.pub, self.kid = f, pub, kid
        self.problem, self.why = "ok", ""
        self.chain = 0              # checkpoints read and linked
        self.head, self.head_lines = "", 0
        self.vouched_n = self.vouched_lines = 0
        self.vouched_hash = ""
        self.log_lines = 0
        self.beyond_log = False
        self.has_close = self.close_sealed = False
        self.close_head, self.close_chain, self.close_unvouched = "", -1, -1
        self._session = ""
        self._next: dict[str, Any] | None = None
        self._next_hash = ""
        self._digest = hashlib.sha256(b"[")
        self._count = 0
        self._advance()

    @classmethod
    def from_file(cls, path: str, pub: Any, kid: str) -> "CheckpointWalk":
        """The walk over the file at path (a folder reads as an empty file,
        as stdio reads one); OSError when it cannot be opened."""
        try:
            f: BinaryIO = open(path, "rb")
        except IsADirectoryError:
            f = _Empty()  # type: ignore[assignment]
        return cls(f, pub, kid)

    @classmethod
    def beside(cls, path: str, pub: Any, kid: str) -> "CheckpointWalk | None":
        """For a record's log: the walk over the file at path; a walk with no
        file when there is none (the close entry must then name none); None
        when it is there but cannot be opened (kwitness verify then checks
        nothing)."""
        try:
            return cls.from_file(path, pub, kid)
        except FileNotFoundError:
            return cls(None, pub, kid)
        except OSError:
            return None

    def close(self) -> None:
        if self.f is not None:
            self.f.close()

    def _fail(self, reason: str, why: str) -> None:
        if self.problem == "ok":
            self.problem, self.why = reason, why
        self._next = None

    def _has_later(self, n: int) -> bool:
        """Whether checkpoint n comes later in the file (by its "n" only)."""
        assert self.f is not None
        at = self.f.tell()
        try:
            for raw in iter(lambda: self.f.readline(LINE_MAX + 1), b""):  # type: ignore[union-attr]
                try:
                    o = parse_strict(raw.rstrip(b"\n"))
                except CanonicalizationError:
                    continue
                if isinstance(o, dict) and _count(o.get("n")) and o["n"] == n:
                    return True
            return False
        finally:
            self.f.seek(at)

    def _advance(self) -> None:
        """Reads, checks and links the next checkpoint; none left (or a torn
        last line, written when the power went): _next is None."""
        self._next = None
        if self.problem != "ok" or self.f is None:
            return
        raw = self.f.readline(LINE_MAX + 1)
        if not raw:
            return
        if not raw.endswith(b"\n") and len(raw) <= LINE_MAX:
            return  # torn: ignored
        if b"\0" in raw or not raw.endswith(b"\n"):
            self._fail("checkpoint_malformed", "a checkpoint line holds a NUL byte"
                       if b"\0" in raw else "a checkpoint line is too long")
            return
        try:
            c, h = read_line(raw[:-1], self.pub, self.kid)
        except _Bad as b:
            self._fail(b.reason, b.why)
            return
        n, lines = c["n"], c["lines"]
        if self._session and c["session"] != self._session:
            self._fail("checkpoint_chain_broken", f"checkpoint {n} belongs to another session")
        elif n <= self.chain or (self.chain and lines <= self.head_lines):
            self._fail("checkpoint_reordered",
                       f"checkpoint {n} ({lines} lines) comes after checkpoint {self.chain} "
                       f"({self.head_lines} lines)")
        elif n != self.chain + 1:
            if self._has_later(self.chain + 1):
                self._fail("checkpoint_reordered",
                           f"checkpoint {n} comes before checkpoint {self.chain + 1}")
            else:
                self._fail("checkpoint_chain_gap", f"checkpoint {n} follows checkpoint "
                           f"{self.chain}: {n - self.chain - 1} missing")
        elif c.get("prev", "") != self.head:
            self._fail("checkpoint_chain_broken",
                       f"checkpoint {n} does not name checkpoint {self.chain} as its previous")
        else:
            self._session = c["session"]
            self.chain, self.head_lines, self.head = n, lines, h
            self._next, self._next_hash = c, h

    def _read_close(self, e: dict[str, Any]) -> None:
        def number(k: str) -> int:
            v = e.get(k)
            return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else -1

        head = e.get("checkpoint")
        self.has_close = True
        self.close_sealed = "sealed" in e
        self.close_head = head if isinstance(head, str) and len(head.encode()) <= 103 else ""
        self.close_chain, self.close_unvouched = number("checkpoints"), number("unvouched_lines")

    def line(self, line: bytes, entry: dict[str, Any]) -> None:
        """One canonical log line (no newline) and its parsed entry, in order."""
        self.log_lines += 1
        if entry.get("tool") == "kwitness.close":
            self._read_close(entry)
        c = self._next
        if c is None:
            return
        self._digest.update(b"," + line if self._count else line)
        self._count += 1
        if self._count != c["lines"]:
            return
        d = self._digest.copy()
        d.update(b"]")
        if "sha256:" + d.hexdigest() != c["transcript_prefix"]:
            self._fail("checkpoint_prefix_mismatch",
                       f"the log's first {c['lines']} lines do not hash to checkpoint "
                       f"{c['n']}'s transcript prefix")
            return
        self.vouched_n, self.vouched_lines, self.vouched_hash = c["n"], c["lines"], self._next_hash
        self._advance()

    def end(self) -> None:
        """After the log: the rest of the chain (signatures and links only)."""
        if self._next is not None:
            self.beyond_log = True
        while self._next is not None:
            self._advance()

    def bound(self) -> str:
        """After the log: end(), then the chain against the log's end and its
        close entry. The reason code found, or "ok"."""
        self.end()
        if self.problem == "ok" and self.beyond_log:
            self.problem = "checkpoint_beyond_log"
            self.why = (f"checkpoint {self.vouched_n + 1} covers {self.head_lines} lines; the log "
                        f"holds {self.log_lines}")
        if self.problem != "ok" or not self.has_close or self.close_chain < 0:
            return self.problem
        if self.f is None:
            self._fail("checkpoints_missing", f"the close entry names {self.close_chain} "
                       "checkpoint(s); there is no checkpoint file")
        elif self.close_chain > self.chain:
            self._fail("checkpoint_chain_gap", f"the close entry names checkpoint "
                       f"{self.close_chain}; the file ends at {self.chain}")
        elif (self.close_chain < self.chain or self.close_head != self.head
              or self.vouched_n != self.chain):
            self._fail("checkpoint_chain_broken", f"the close entry's last checkpoint "
                       f"({self.close_chain}) is not the chain's last ({self.chain})")
        elif (self.close_unvouched >= 0
              and self.close_unvouched + self.vouched_lines + 1 != self.log_lines):
            self._fail("checkpoint_unvouched_mismatch",
                       f"the seal says {self.close_unvouched} lines follow checkpoint "
                       f"{self.vouched_n}; the log has {self.log_lines - self.vouched_lines - 1}")
        return self.problem

    @property
    def checkpointed(self) -> bool:
        """Whether there is anything to say: a chain, a close entry naming one,
        or a problem."""
        return self.chain > 0 or self.close_chain >= 0 or self.problem != "ok"

    @property
    def unvouched_lines(self) -> int:
        """Lines after the last checkpoint the log matched, the close entry
        (signed by the record) not counted: a seal's unvouched_lines."""
        after = self.log_lines - self.vouched_lines
        return after - 1 if self.has_close and after else after

    def describe(self) -> str:
        """kwitness verify's checkpoints: sentence."""
        if not self.vouched_n:
            return f"no checkpoint covers the log ({self.log_lines} lines)"
        tail = ("unvouched: on disk, not signed before the collector stopped"
                if self.close_sealed and self.close_unvouched >= 0 else
                "signed by the record" if self.has_close else "not vouched for")
        return (f"lines 1-{self.vouched_lines} vouched for by checkpoint {self.vouched_n} of "
                f"{self.chain} ({self.vouched_hash}); {self.unvouched_lines} line(s) after it "
                f"{tail}")


class _Empty:
    """A checkpoint "file" that reads as empty (a directory, as stdio reads one)."""

    def readline(self, limit: int = -1) -> bytes:
        return b""

    def tell(self) -> int:
        return 0

    def seek(self, at: int) -> int:
        return 0

    def close(self) -> None:
        pass
