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
expect_eq "--user root refused (2)" 2 "$?"
check "--user root: says to use --as-root" grep -q "root needs --as-root" "$KT_TMP/err"
"$KW" run --socket "$KT_SOCK" --policy "$POLICY" --user no-such-user-$$ -- true 2>/dev/null
expect_eq "--user unknown refused (2)" 2 "$?"

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
