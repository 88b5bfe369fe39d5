#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# libpq is loaded at the first PostgreSQL connection (user/estate/pq_lazy.c):
# kwitness starts without it (not among its shared libraries), and when it
# cannot be loaded a PostgreSQL URL fails saying so, while SQLite still works.
source "$(dirname "$0")/../lib.sh"

if [ ! -x "$KW" ]; then
	not_ok "kwitness missing"
	finish
fi
check "kwitness does not load libpq at start" bash -c "! ldd '$KW' | grep -q libpq"
PQ=$(ldconfig -p | awk '/libpq\.so\.5 /{print $NF; exit}')
T=$(mktemp -d /tmp/kw-estate-libpq.XXXXXX)
trap 'rm -rf "$T"' EXIT
if [ -z "$PQ" ] || ! unshare -m true 2>/dev/null; then
	skip "no libpq.so.5 or no mount namespace (root) to hide it"
	finish
fi
# libpq hidden in a mount namespace of this command only.
out=$(unshare -m sh -c "mount --bind /dev/null '$PQ' &&
	'$KW' estate query --db 'postgresql:///estate?host=$T' 2>&1; echo \"rc=\$?\"")
check "without libpq a PostgreSQL URL fails" grep -q 'rc=[1-9]' <<<"$out"
check "...naming libpq and why" grep -q "PostgreSQL needs .*libpq.so.5" <<<"$out"
out=$(unshare -m sh -c "mount --bind /dev/null '$PQ' &&
	'$KW' estate init --db 'sqlite:$T/e.sqlite' 2>&1; echo \"rc=\$?\"")
check "...while SQLite works without it" grep -q 'rc=0' <<<"$out"
finish
