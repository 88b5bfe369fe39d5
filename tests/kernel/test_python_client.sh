#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Python client (clients/python/kwitness) against a real kwitnessd and
# real cgroups: starts the daemon and two listeners, then runs
# clients/python/tests/test_live.py and test_live_checkpoints.py (a session
# kwitnessd checkpointed, verified by both verifiers), whose TAP is this
# suite's output.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/kwd_lib.sh"

kwd_require
command -v python3 >/dev/null || kt_fail_all "python3 is not installed (scripts/deps.sh)"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
	kt_fail_all "the client needs Python >= 3.11, this is $(python3 -V)"
kwd_start
listeners_start
KT_SOCK=$KT_SOCK KT_CG=$KT_CG KT_NP=$NP KW=$KW KT_TMP=$KT_TMP KT_JWK=$KT_TMP/signer.jwk \
	LPORT_A=$LPORT_A LPORT_B=$LPORT_B \
	PYTHONDONTWRITEBYTECODE=1 python3 "$KW_ROOT/clients/python/tests/tap.py" test_live test_live_checkpoints
