# SPDX-License-Identifier: Apache-2.0
"""The TRACE v0.2 hashes kwitnessd puts in a record, by the formulas of
agentrust-trace's TraceSandboxAdapter, so a runtime can recompute them or hand
kwitness's decisions to its own adapter and get the same values:

* ``bundle_hash(b)``      = "sha256:" + hex(SHA-256(b)), the bundle bytes as given;
* ``transcript_hash(ds)`` = "sha256:" + hex(SHA-256(RFC 8785 form of the list ds));
* ``software_measurement(image_digest, bundle_hash)``
                          = "sha256:" + hex(SHA-256(image_digest + "\\n" + bundle_hash)).

kwitness's decision log is one RFC 8785 entry per line, so the RFC 8785 form of
the list of all its entries (the kwitness.open entry, the decisions, the
kwitness.close trailer) is "[" + the lines joined by "," + "]": exactly the
transcript kwitnessd hashed, and call_count is the number of entries.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .jcs import canonicalize

__all__ = ["bundle_hash", "transcript_hash", "software_measurement"]


def bundle_hash(policy_bundle_bytes: bytes) -> str:
    return "sha256:" + hashlib.sha256(policy_bundle_bytes).hexdigest()


def transcript_hash(decisions: list[dict[str, Any]]) -> str:
    return "sha256:" + hashlib.sha256(canonicalize(list(decisions))).hexdigest()


def software_measurement(image_digest: str, bundle_hash_: str) -> str:
    return "sha256:" + hashlib.sha256(f"{image_digest}\n{bundle_hash_}".encode()).hexdigest()
