#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A session follows its processes. A sandboxed process that leaves its
# session's cgroup — its pid written to another cgroup's cgroup.procs (a
# sibling, or the cgroup2 root as in the review), or a child made with
# clone3(CLONE_INTO_CGROUP) — is still decided by the session: its connect
# ends in EPERM, and the log holds the move (cgroup.move) and the refused
# connect. As an unprivileged user the move itself is refused by the kernel.
# Never a connect that went through unlogged.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
kwd_start
listeners_start
kwd_has_hook net.connect || kt_skip_all "the net.connect hooks are unavailable on this kernel"

MNT=$(dirname "$KT_CG")
OUT=$(cg_make outside)
OUT_ID=$(stat -c %i "$OUT")
ROOT_ID=$(stat -c %i "$MNT")

# escape NAME SCRIPT WANT_RESULT MOVE_VIA MOVE_CGROUP_ID [USER]: runs SCRIPT
# (sh, $1 = kw-netprobe, $2 = the port) in a fresh session's cgroup; its last
# output line must be WANT_RESULT. MOVE_VIA "" means no move may be logged.
escape() {
	local name=$1 script=$2 want=$3 via=$4 to=$5 cg sid out res moves n
	if ! policy_session "esc-$name" enforce deny '"net":{"connect":[]}'; then
		not_ok "$name: session opens"
		return
	fi
	out=$(cg_run "$cg" sh -c "$script" sh "$NP" "$LPORT_A" 2>&1)
	res=$(tail -1 <<<"$out")
	if ! session_close "$sid" >/dev/null; then
		not_ok "$name: session closes"
		return
	fi
	expect_eq "$name: the connect after the escape" "$want" "$res"
	moves=$(decisions "$LOG" | grep '"tool":"cgroup.move"')
	if [ -n "$via" ]; then
		check_entry "$name: the move is logged" "$moves" \
			"decision=permit;via=$via;target_cgroup=$to;rule=session.follow" "$to_dir"
	else
		expect_eq "$name: no move logged" "" "$moves"
	fi
	n=$(decisions "$LOG" | grep -c "\"tool\":\"net.connect\",.*" )
	line=$(decisions "$LOG" | grep '"tool":"net.connect"')
	if [ "$want" = EPERM ]; then
		expect_eq "$name: one connect decision logged" 1 "$n"
		[ "$n" = 1 ] && check_entry "$name: the refused connect is logged where it ran" "$line" \
			"decision=deny;enforced=true;port=$LPORT_A;rule=net.connect:default" "$run_dir"
	else
		not_ok "$name: the connect went through (result $res)"
	fi
	expect_eq "$name: trailer complete" true "$(jfield "$(trailer "$LOG")" complete)"
	check "$name: record verifies" verify_record
}

# root in the sandbox: the moves succeed and are followed
to_dir=$OUT run_dir=$OUT
escape root-procs-sibling "echo \$\$ >$OUT/cgroup.procs && exec \$1 connect 127.0.0.1 \$2" \
	EPERM cgroup.procs "$OUT_ID"
to_dir=$MNT run_dir=$MNT
escape root-procs-root "echo \$\$ >$MNT/cgroup.procs && exec \$1 connect 127.0.0.1 \$2" \
	EPERM cgroup.procs "$ROOT_ID"
to_dir=$OUT run_dir=$OUT
escape root-clone-into "exec \$1 clone-into $OUT 127.0.0.1 \$2" EPERM clone_into_cgroup "$OUT_ID"
# a child of an escaped process is followed too (the tag is inherited)
escape root-procs-child "echo \$\$ >$OUT/cgroup.procs && \$1 connect 127.0.0.1 \$2" \
	EPERM cgroup.procs "$OUT_ID"

# an escaped process still cannot steer its witness: it keeps its tag
if policy_session esc-ctl enforce deny '"net":{"connect":[]}'; then
	out=$(cg_run "$cg" sh -c "echo \$\$ >$OUT/cgroup.procs && exec $KW session close --socket $KT_SOCK $sid" 2>&1)
	expect_eq "escaped root process: control socket refused" 1 \
		"$(grep -c forbidden_from_session <<<"$out")"
	expect_eq "escaped root process: its session is still open" 1 \
		"$("$KW" session list --socket "$KT_SOCK" | grep -c "$sid")"
	session_close "$sid" >/dev/null
else
	not_ok "esc-ctl: session opens"
fi

# unprivileged in the sandbox (kwitness run's default): the kernel refuses the
# move; the connect that follows is refused and logged in the session's cgroup
# by absolute path: a busybox sh would run its own setpriv applet
NOBODY="$(command -v setpriv) --reuid=65534 --regid=65534 --clear-groups"
if policy_session esc-user-procs enforce deny '"net":{"connect":[]}'; then
	out=$(cg_run "$cg" $NOBODY sh -c "echo \$\$ >$OUT/cgroup.procs; echo move=\$?; exec $NP connect 127.0.0.1 $LPORT_A" 2>&1)
	session_close "$sid" >/dev/null
	expect_eq "user: the move is refused" 1 "$(grep -c 'move=[^0]' <<<"$out")"
	expect_eq "user: the connect is refused" EPERM "$(tail -1 <<<"$out")"
	expect_eq "user: the connect is logged" 1 "$(decisions "$LOG" | grep -c '"tool":"net.connect"')"
else
	not_ok "user: session opens"
fi
if policy_session esc-user-clone enforce deny '"net":{"connect":[]}'; then
	out=$(cg_run "$cg" $NOBODY "$NP" clone-into "$OUT" 127.0.0.1 "$LPORT_A" 2>&1)
	session_close "$sid" >/dev/null
	case $out in
	EPERM|EACCES) ok "user: clone3(CLONE_INTO_CGROUP) refused ($out)" ;;
	*) not_ok "user: clone3(CLONE_INTO_CGROUP) refused (got $out)" ;;
	esac
	expect_eq "user: nothing went through unlogged" 0 \
		"$(decisions "$LOG" | grep -c '"decision":"permit"')"
else
	not_ok "user: session opens"
fi

# a process that never was in a session is left alone, wherever it runs
res=$(cg_run "$OUT" "$NP" connect 127.0.0.1 "$LPORT_A")
expect_eq "untagged process in another cgroup: connect proceeds" ok "$res"

check "kwitnessd is still running" kwd_alive
finish
