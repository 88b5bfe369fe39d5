#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitness run runs CMD unprivileged: --user when given, else SUDO_UID/SUDO_GID,
# else nobody, with no_new_privs; root only with --as-root. The review's escape
# (CMD writes its pid to the cgroup2 root's cgroup.procs, then connects) ends
# in a refused move and a refused, logged connect.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
kwd_start
listeners_start

POLICY=$(policy_file deny '{"kwitness_policy":1,"mode":"enforce","record":"all","on_record_failure":"deny","net":{"connect":[]}}')
MNT=$(dirname "$KT_CG")
NOBODY_UID=$(id -u nobody 2>/dev/null || echo 65534)

# run_ids [ENV...] -- [OPTIONS...]: "uid gid nnp" as CMD saw them
run_ids() {
	local envs=() opts=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	opts=("$@")
	env -u SUDO_UID -u SUDO_GID "${envs[@]}" "$KW" run --socket "$KT_SOCK" --policy "$POLICY" \
		"${opts[@]}" -- sh -c 'echo "$(id -u) $(id -g) $(sed -n "s/^NoNewPrivs:\t*//p" /proc/self/status)"' \
		2>"$KT_TMP/run.err"
}

expect_eq "default: nobody, no_new_privs" "$NOBODY_UID $(id -g nobody 2>/dev/null || echo 65534) 1" \
	"$(run_ids --)"
expect_eq "SUDO_UID/SUDO_GID when set" "4242 4343 1" "$(run_ids SUDO_UID=4242 SUDO_GID=4343 --)"
expect_eq "--user UID:GID" "4444 4545 1" "$(run_ids -- --user 4444:4545)"
expect_eq "--as-root keeps root" "0 0 0" "$(run_ids -- --as-root)"
"$KW" run --socket "$KT_SOCK" --policy "$POLICY" --user root -- true 2>"$KT_TMP/err"
expect_eq "--user root refused (125: kwitness's own failure)" 125 "$?"
check "--user root: says to use --as-root" grep -q "root needs --as-root" "$KT_TMP/err"
"$KW" run --socket "$KT_SOCK" --policy "$POLICY" --user no-such-user-$$ -- true 2>/dev/null
expect_eq "--user unknown refused (125)" 125 "$?"

# exit codes (issue 38): CMD's when it ran, 125/126/127 when it did not
run_rc() { "$KW" run --socket "$KT_SOCK" --policy "$POLICY" "$@" 2>"$KT_TMP/rc.err"; echo $?; }
expect_eq "exit code: CMD's 0" 0 "$(run_rc -- true)"
expect_eq "exit code: CMD's 1 is 1" 1 "$(run_rc -- false)"
expect_eq "exit code: CMD's 3 is 3" 3 "$(run_rc -- sh -c 'exit 3')"
expect_eq "exit code: CMD killed by SIGKILL is 137" 137 "$(run_rc -- sh -c 'kill -9 $$')"
printf 'not a program\n' >"$KT_TMP/noexec"
chmod 0644 "$KT_TMP/noexec"
expect_eq "exit code: CMD not executable is 126" 126 "$(run_rc -- "$KT_TMP/noexec")"
expect_eq "exit code: CMD not found is 127" 127 "$(run_rc -- no-such-command-$$)"
check "not found: says so" grep -q "no-such-command-$$: command not found" "$KT_TMP/rc.err"
BAD=$(policy_file bad '{"kwitness_policy":1,"mode":"enforce","record":"all","on_record_failure":"deny","net":{"conect":[]}}')
rc=$("$KW" run --socket "$KT_SOCK" --policy "$BAD" -- true 2>"$KT_TMP/rc.err"; echo $?)
expect_eq "exit code: an invalid policy is 125, not CMD's" 125 "$rc"
check "invalid policy: did you mean connect" grep -q 'did you mean "connect"' "$KT_TMP/rc.err"
expect_eq "exit code: kwitnessd unreachable is 125" 125 \
	"$("$KW" run --socket "$KT_TMP/none.sock" --policy "$POLICY" -- true 2>/dev/null; echo $?)"

# the review's escape, under the default user
out=$(env -u SUDO_UID -u SUDO_GID "$KW" run --socket "$KT_SOCK" --policy "$POLICY" -- \
	sh -c "echo \$\$ >$MNT/cgroup.procs; echo move=\$?; exec $NP connect 127.0.0.1 $LPORT_A" \
	2>"$KT_TMP/run.err")
expect_eq "escape as the default user: the move is refused" 1 "$(grep -c 'move=[^0]' <<<"$out")"
expect_eq "escape as the default user: the connect is refused" EPERM "$(tail -1 <<<"$out")"
LOG=$(sed -n 's/^log: *//p' "$KT_TMP/run.err")
expect_eq "escape as the default user: the connect is logged" 1 \
	"$(decisions "$LOG" | grep '"tool":"net.connect"' | grep -cE "\"uid\":$NOBODY_UID[,}]")"

check "kwitnessd is still running" kwd_alive
finish
