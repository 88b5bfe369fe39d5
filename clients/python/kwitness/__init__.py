# SPDX-License-Identifier: Apache-2.0
"""kwitness: a Python client for kwitnessd, the collector that makes the Linux
kernel the witness of what a sandbox was allowed to do. Standard library only
(Python >= 3.11).

    from kwitness import Session
    s = Session.open(cgroup="/sys/fs/cgroup/agents/a1", policy=b"...",
                     sandbox_id="spiffe://example.org/agent/1", image_digest="sha256:...")
    ... run the agent in the cgroup ...
    result = s.close()
    result.record, result.decisions, result.enforcement_mode, result.complete
"""

from .jcs import CanonicalizationError, canonicalize
from .cgroup import pid_cgroup
from .protocol import DEFAULT_SOCKET, KwitnessError
from .session import Session, SessionResult, list_sessions, status
from .trace import bundle_hash, software_measurement, transcript_hash

__all__ = [
    "Session", "SessionResult", "KwitnessError", "status", "list_sessions", "pid_cgroup",
    "canonicalize", "CanonicalizationError", "bundle_hash", "transcript_hash",
    "software_measurement", "DEFAULT_SOCKET",
]
__version__ = "1"
