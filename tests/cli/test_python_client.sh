#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Python client (clients/python/kwitness) without kwitnessd: RFC 8785 and
# the TRACE hashes with known answers, argument and socket errors
# (clients/python/tests/test_offline.py), and kwitness.verify against the
# CLI's verdicts on tampered records, logs and checkpoint files (test_verify.py,
# test_checkpoints.py); TAP is this suite's output.
. "$(dirname "$0")/../lib.sh"
if ! command -v python3 >/dev/null; then
	skip "python3 is not installed (scripts/deps.sh)"
	finish
fi
PYTHONDONTWRITEBYTECODE=1 KW_ROOT=$KW_ROOT KW=$KW exec python3 "$KW_ROOT/clients/python/tests/tap.py" test_offline test_verify test_checkpoints
