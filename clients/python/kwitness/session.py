# SPDX-License-Identifier: Apache-2.0
"""Session: open a kwitnessd session for a cgroup (or a process's cgroup),
close it, and get back what agentrust-trace's SandboxSessionResult takes
(sandbox_id, image_digest, policy_bundle_bytes, decisions) together with
kwitness's own signed record, its log and the kernel-reported enforcement mode.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from . import protocol
from .cgroup import pid_cgroup
from .protocol import KwitnessError
from .trace import bundle_hash, transcript_hash

__all__ = ["Session", "SessionResult", "status", "list_sessions"]

# kwitnessd's own bound on a policy bundle (docs/policy.md).
MAX_POLICY_BYTES = 1024 * 1024
# Lines of a decision log are bounded by the collector; this guards the reader.
MAX_LOG_LINE = 1024 * 1024


@dataclass
class SessionResult:
    """What a closed session produced.

    sandbox_id, image_digest, policy_bundle_bytes and decisions are the
    arguments of agentrust-trace's SandboxSessionResult; ``decisions`` is every
    entry of kwitness's decision log (the kwitness.open entry, the kernel's
    decisions, the kwitness.close trailer), so the adapter's transcript_hash
    and call_count over them equal the record's ``tool_transcript``.
    """

    sandbox_id: str
    image_digest: str
    policy_bundle_bytes: bytes
    decisions: list[dict[str, Any]]
    record: dict[str, Any]
    record_path: str
    log_path: str
    policy_path: str
    enforcement_mode: str
    complete: bool
    session: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def transcript_hash(self) -> str:
        return transcript_hash(self.decisions)

    @property
    def bundle_hash(self) -> str:
        return bundle_hash(self.policy_bundle_bytes)

    def sandbox_session_result(self):
        """agentrust-trace's SandboxSessionResult for these values (needs agentrust-trace installed)."""
        from agentrust_trace.adapters import SandboxSessionResult  # type: ignore[import-not-found]

        return SandboxSessionResult(sandbox_id=self.sandbox_id, image_digest=self.image_digest,
                                    policy_bundle_bytes=self.policy_bundle_bytes,
                                    decisions=self.decisions)


def _read_log(path: str) -> list[dict[str, Any]]:
    entries = []
    with open(path, "rb") as f:
        for n, line in enumerate(f, 1):
            if len(line) > MAX_LOG_LINE or not line.endswith(b"\n"):
                raise KwitnessError("log_malformed", f"{path}: line {n} is too long or unterminated")
            entry = json.loads(line)
            if not isinstance(entry, dict):
                raise KwitnessError("log_malformed", f"{path}: line {n} is not an object")
            entries.append(entry)
    return entries


class Session:
    """One open kwitnessd session. Use Session.open(...); close() ends it.
    As a context manager, leaving the block closes it (the result is in .result)."""

    def __init__(self, *, session: str, cgroup: str, sandbox_id: str, image_digest: str,
                 policy_bundle_bytes: bytes, log_path: str, policy_path: str,
                 socket: str | None):
        self.id = session
        self.cgroup = cgroup
        self.sandbox_id = sandbox_id
        self.image_digest = image_digest
        self.policy_bundle_bytes = policy_bundle_bytes
        self.log_path = log_path
        self.policy_path = policy_path
        self.socket = socket
        self.result: SessionResult | None = None

    @classmethod
    def open(cls, *, cgroup: str | os.PathLike[str] | None = None, pid: int | None = None,
             policy: bytes | str | os.PathLike[str], sandbox_id: str, image_digest: str,
             socket: str | os.PathLike[str] | None = None, model_provider: str | None = None,
             model_id: str | None = None, data_class: str | None = None,
             checkpoint_interval: int | None = None) -> "Session":
        """Opens a session for ``cgroup`` (a cgroup2 directory) or ``pid``'s
        cgroup. ``policy`` is the bundle's bytes, or the path of its file (str
        or PathLike). ``checkpoint_interval``: seconds between the session's
        signed interim checkpoints (0: none by time), instead of kwitnessd's
        setting. Raises KwitnessError when kwitnessd refuses or cannot be
        reached, ValueError / OSError for bad arguments and unreadable files."""
        if (cgroup is None) == (pid is None):
            raise ValueError("give exactly one of cgroup and pid")
        cg = os.fspath(cgroup) if cgroup is not None else pid_cgroup(pid)  # type: ignore[arg-type]
        if isinstance(policy, (bytes, bytearray, memoryview)):
            bundle = bytes(policy)
        elif isinstance(policy, (str, os.PathLike)):
            with open(policy, "rb") as f:
                bundle = f.read(MAX_POLICY_BYTES + 1)
        else:
            raise TypeError("policy is the bundle's bytes or the path of its file")
        if len(bundle) > MAX_POLICY_BYTES:
            raise ValueError("policy: larger than the bundle limit (1 MiB)")
        try:
            text = bundle.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("policy: not UTF-8 text") from None
        req: dict[str, Any] = {"op": "open", "cgroup": cg, "sandbox_id": sandbox_id,
                               "image_digest": image_digest, "policy": text}
        for k, v in (("model_provider", model_provider), ("model_id", model_id),
                     ("data_class", data_class)):
            if v is not None:
                req[k] = v
        if checkpoint_interval is not None:
            if not isinstance(checkpoint_interval, int) or not 0 <= checkpoint_interval <= 10**9:
                raise ValueError("checkpoint_interval: seconds, 0 to 1000000000")
            req["checkpoint_interval"] = checkpoint_interval
        sock = os.fspath(socket) if socket is not None else None
        reply = protocol.call(req, sock)
        sid = reply.get("session")
        if not isinstance(sid, str) or not sid:
            raise KwitnessError("protocol", "the open reply has no session id")
        return cls(session=sid, cgroup=cg, sandbox_id=sandbox_id, image_digest=image_digest,
                   policy_bundle_bytes=bundle, log_path=str(reply.get("log_path", "")),
                   policy_path=str(reply.get("policy_path", "")), socket=sock)

    def status(self) -> dict[str, Any] | None:
        """This session's entry in kwitnessd's list (state, mode, hooks, counts), or None once gone."""
        for s in list_sessions(self.socket):
            if s.get("session") == self.id:
                return s
        return None

    def close(self, kill: bool = False) -> SessionResult:
        """Closes the session: kwitnessd drains it, writes the log's trailer and
        signs the record; with kill=True it first kills what is left in the
        cgroup (counted in the trailer). Reads the decision log back (the
        caller must be able to read kwitnessd's logs folder, as root can)."""
        if self.result is not None:
            return self.result
        req: dict[str, Any] = {"op": "close", "session": self.id}
        if kill:
            req["kill"] = True
        return self.close_reply(protocol.call(req, self.socket))

    def close_reply(self, reply: dict[str, Any]) -> SessionResult:
        """The result of this session from kwitnessd's ok reply to its close."""
        if self.result is not None:
            return self.result
        record = reply.get("record")
        if not isinstance(record, dict):
            raise KwitnessError("protocol", "the close reply has no record")
        log_path = str(reply.get("log_path") or self.log_path)
        mode = (record.get("policy") or {}).get("enforcement_mode")
        self.result = SessionResult(
            sandbox_id=self.sandbox_id, image_digest=self.image_digest,
            policy_bundle_bytes=self.policy_bundle_bytes, decisions=_read_log(log_path),
            record=record, record_path=str(reply.get("record_path", "")), log_path=log_path,
            policy_path=str(reply.get("policy_path") or self.policy_path),
            enforcement_mode=str(mode), complete=reply.get("complete") is True, session=self.id,
            counts={k: int(reply.get(k, 0)) for k in
                    ("decisions", "denials", "dropped", "unrecorded", "untracked_cgroups",
                     "killed", "still_running", "kill_failed")})
        return self.result

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        if self.result is None:
            self.close()


def status(socket: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """kwitnessd's status reply: sessions, hooks available and unavailable, settings."""
    return protocol.call({"op": "status"}, os.fspath(socket) if socket is not None else None)


def list_sessions(socket: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    reply = protocol.call({"op": "list"}, os.fspath(socket) if socket is not None else None)
    return list(reply.get("sessions") or [])
