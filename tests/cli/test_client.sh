#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitness session/status/run without a collector: usage errors exit 2, an
# unreachable socket exits 1 with one clear line, nothing is left behind.
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d /tmp/kwitness-clitest.XXXXXX)
trap 'rm -rf "$T"' EXIT
NOSOCK=$T/none.sock
printf '{"kwitness_policy":1,"mode":"enforce","net":{"connect":[]}}' >"$T/p.json"

rc() { "$@" >"$T/out" 2>"$T/err"; echo $?; }

expect_eq "session without subcommand: usage (2)" 2 "$(rc "$KW" session)"
expect_eq "session bogus: usage (2)" 2 "$(rc "$KW" session bogus)"
expect_eq "session open without options: usage (2)" 2 "$(rc "$KW" session open --socket "$NOSOCK")"
expect_eq "session close without id: usage (2)" 2 "$(rc "$KW" session close --socket "$NOSOCK")"
expect_eq "status with an argument: usage (2)" 2 "$(rc "$KW" status extra)"
expect_eq "run without a command: usage, kwitness's own failure (125)" 125 "$(rc "$KW" run --policy "$T/p.json")"
expect_eq "run without a policy: usage, kwitness's own failure (125)" 125 "$(rc "$KW" run -- true)"
expect_eq "session --help: 0" 0 "$(rc "$KW" session --help)"
expect_eq "run --help: 0" 0 "$(rc "$KW" run --help)"

expect_eq "status, no collector: 1" 1 "$(rc "$KW" status --socket "$NOSOCK")"
check "status, no collector: says it cannot reach kwitnessd" grep -q "cannot reach kwitnessd at $NOSOCK" "$T/err"
expect_eq "session list, no collector (KWITNESS_SOCKET): 1" 1 \
	"$(KWITNESS_SOCKET=$NOSOCK rc "$KW" session list)"
check "KWITNESS_SOCKET is used" grep -q "$NOSOCK" "$T/err"
expect_eq "session open, unreadable policy: 1" 1 "$(rc "$KW" session open --socket "$NOSOCK" \
	--cgroup /x --sandbox-id did:x --policy "$T/missing.json" --image-digest sha256:00)"
check "session open, unreadable policy: names the file" grep -q "missing.json" "$T/err"
expect_eq "run, command not found: 127" 127 "$(rc "$KW" run --socket "$NOSOCK" --policy "$T/p.json" -- kw-no-such-command)"
if [ "$(id -u)" -eq 0 ] && awk '$0 ~ / - cgroup2 / { f = 1 } END { exit !f }' /proc/self/mountinfo; then
	mnt=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
	# kwitness run names its cgroup run-<its pid>: this run's own cgroup,
	# not a count of everyone's.
	"$KW" run --socket "$NOSOCK" --policy "$T/p.json" -- true >/dev/null 2>&1 &
	run_pid=$!
	wait "$run_pid"
	expect_eq "run, no collector: kwitness's own failure (125)" 125 "$?"
	check "run, no collector: its cgroup (run-$run_pid) is removed" test ! -e "$mnt/kwitness/run-$run_pid"
else
	skip "run without a collector: needs root and cgroup2"
fi
finish
