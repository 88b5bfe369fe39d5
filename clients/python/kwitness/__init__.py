# SPDX-License-Identifier: Apache-2.0
"""kwitness: a Python client for kwitnessd, the collector that makes the Linux
kernel the witness of what a sandbox was allowed to do (Python >= 3.11; the
standard library, and ``cryptography`` for verify).

    import kwitness
    with kwitness.sandbox(policy="policy.json", sandbox_id="spiffe://example.org/agent/1") as s:
        s.run(["python3", "agent.py"])
    s.verdict.valid, s.result.record_path
    kwitness.verify(s.result.record_path, "signer.jwk", log=s.result.log_path)

The lower-level session API, for a runtime that makes its own cgroups:

    from kwitness import Session, cgroup2_mount
    s = Session.open(cgroup=cgroup2_mount() + "/agents/a1", policy=b"...",
                     sandbox_id="spiffe://example.org/agent/1", image_digest="sha256:...")
    ... run the agent in the cgroup ...
    result = s.close()
    result.record, result.decisions, result.enforcement_mode, result.complete
"""

from .jcs import CanonicalizationError, canonicalize
from .cgroup import cgroup2_mount, pid_cgroup
from .protocol import DEFAULT_SOCKET, KwitnessError
from .session import Session, SessionResult, list_sessions, status
from .sandbox import Sandbox, sandbox
from .trace import bundle_hash, software_measurement, transcript_hash
from .verify import REASONS, LogVerdict, Verdict, verify, verify_log

__all__ = [
    "sandbox", "Sandbox", "verify", "Verdict", "verify_log", "LogVerdict", "REASONS",
    "Session", "SessionResult", "KwitnessError", "status", "list_sessions", "pid_cgroup",
    "cgroup2_mount",
    "canonicalize", "CanonicalizationError", "bundle_hash", "transcript_hash",
    "software_measurement", "DEFAULT_SOCKET",
]
__version__ = "0.1.0"
