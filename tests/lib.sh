# SPDX-License-Identifier: Apache-2.0
# TAP helpers for the shell test suites. Source it; call plan-free ok/not_ok/skip,
# then `finish` last (exit status 1 when any test failed).
# KW_BUILD points at the build folder (tests/run.sh exports it).
: "${KW_ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${KW_BUILD:=$KW_ROOT/build}"
KW=$KW_BUILD/kwitness
KWD=$KW_BUILD/kwitnessd
VECTORS=$KW_ROOT/tests/vectors
_tap_n=0 _tap_failed=0

ok()     { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $*"; }
not_ok() { _tap_n=$((_tap_n + 1)); _tap_failed=1; echo "not ok $_tap_n - $*"; }
# skip REASON: not run here. Under CI=true, tests/run.sh counts it a failure.
skip()   { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n # SKIP $*"; }
# skip_feature FEATURE REASON: not run because this kernel lacks FEATURE, a
# `kwitness probe` class (lsm.file, cgroup.net, ...) or a policy class it
# serves (fs, net.connect, ...). Under CI=true, tests/run.sh accepts it only
# when `kwitness probe` confirms FEATURE absent on this host.
skip_feature() {
	local f=$1
	shift
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n # SKIP kernel-feature=$f: $*"
}
# check NAME CMD...: ok when CMD succeeds
check()  { local n=$1; shift; if "$@"; then ok "$n"; else not_ok "$n"; fi; }
# expect_eq NAME WANT GOT
expect_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1"; echo "#   want: $2"; echo "#   got:  $3"; fi
}
finish() { echo "1..$_tap_n"; exit $_tap_failed; }

# Kills what runs in cgroup DIR and removes it with its children, deepest
# first (killed tasks leave their cgroup a moment later).
rm_cgroup() {
	local d=$1 c
	[ -d "$d" ] || return 0
	[ -f "$d/cgroup.kill" ] && echo 1 >"$d/cgroup.kill" 2>/dev/null
	find "$d" -depth -type d | while read -r c; do
		for _ in $(seq 20); do
			[ -s "$c/cgroup.procs" ] || break
			sleep 0.1
		done
		rmdir "$c" 2>/dev/null
	done
	return 0
}
