#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The lineage programs skip a task that has no mark (docs/hooks.md, "A task
# in no session"): every way a task comes to be in a session must leave it
# marked, or its children escape the session's tags. For each way, a task of
# the session forks a child that moves itself out of every session cgroup
# (root writes its pid into another cgroup's cgroup.procs) and connects from
# there; the connect must be refused under the session (EPERM, logged as a
# deny in the cgroup it ran in), and the move logged:
#   - a process moved into the session's cgroup (cgroup.procs, from outside)
#     after the open;
#   - a process already in the cgroup when the session opened;
#   - a non-leader thread of a multi-threaded process moved in: the move's
#     tracepoint names the leader alone (fork from the thread; exec from the
#     thread, then a fork);
#   - a process made in the cgroup from outside with clone3(CLONE_INTO_CGROUP)
#     (it moves out itself: it is the session's once there);
#   - a task of a session resumed after kwitnessd was killed (-9): one in the
#     cgroup before the crash, one moved in after the restart;
#   - a process in the cgroup at open, outside the pid namespace of a
#     kwitnessd that runs in one of its own (its task iterator cannot see it).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
KT_PIN=/sys/fs/bpf/kwt-marks-$$
kwd_start_pinned || kt_fail_all "kwitnessd did not start with a pin folder"
kwd_has_hook net.connect || kt_skip_feature net.connect "net.connect hooks unavailable on this kernel"
listeners_start

OUT=$(cg_make outside)
PRE=$(cg_make pre) # where a process waits before it is moved in
DENY='"net":{"connect":[]}'
# what the escaping child runs: out of every session cgroup, then a connect
ESCAPE="echo \$\$ >$OUT/cgroup.procs && exec $NP connect 127.0.0.1 $LPORT_A"
# AWAIT GATE; CMD: waits (30 s at most) for the file GATE, then runs CMD
AWAIT='n=0; while [ ! -e "$0" ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n + 1)); done'

# start_waiting NAME CGROUP CMD..: runs CMD in CGROUP in the background, its
# output in $KT_TMP/NAME.out; sets PID. CMD waits for $KT_TMP/NAME.go.
start_waiting() {
	local name=$1 cg=$2
	shift 2
	# not cg_run: a function run in the background is a subshell, and PID
	# must be the process that runs CMD
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@" >"$KT_TMP/$name.out" 2>&1 &
	PID=$!
}

# joined PID CGROUP: until process PID is in CGROUP (10 s at most)
joined() {
	for _ in $(seq 200); do
		grep -qx "$1" "$2/cgroup.procs" && return 0
		sleep 0.05
	done
	return 1
}

# threads PID N: until process PID has N threads (10 s at most)
threads() {
	for _ in $(seq 200); do
		[ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -ge "$2" ] && return 0
		sleep 0.05
	done
	return 1
}

# followed NAME SID PID [N]: lets NAME go, waits for PID, closes SID and checks
# that the escaping child's connect was refused and logged under the session
# (N connects logged in all, 1 by default).
followed() {
	local name=$1 sid=$2 pid=$3 want=${4:-1} res moves line n
	touch "$KT_TMP/$name.go"
	wait "$pid"
	res=$(tail -1 "$KT_TMP/$name.out")
	if ! close_session "$sid"; then
		not_ok "$name: session closes"
		return
	fi
	expect_eq "$name: the escaped child's connect is refused" EPERM "$res"
	moves=$(decisions "$LOG" | grep '"tool":"cgroup.move"' | tail -1)
	check_entry "$name: its move out is logged" "$moves" \
		"decision=permit;via=cgroup.procs;target_cgroup=$(stat -c %i "$OUT");rule=session.follow" "$OUT"
	n=$(decisions "$LOG" | grep -c '"tool":"net.connect"')
	line=$(decisions "$LOG" | grep '"tool":"net.connect"' | tail -1)
	expect_eq "$name: $want connect decision(s) logged" "$want" "$n"
	[ "$n" = "$want" ] && check_entry "$name: the refused connect is logged where it ran" "$line" \
		"decision=deny;enforced=true;port=$LPORT_A;rule=net.connect:default" "$OUT"
	expect_eq "$name: trailer complete" true "$(jfield "$(trailer "$LOG")" complete)"
}

# close_session ID: closes (retrying while a restarted collector resumes) and
# sets LOG.
close_session() {
	local out
	for _ in $(seq 100); do
		out=$("$KW" session close --socket "$KT_SOCK" "$1" 2>&1) && break
		sleep 0.1
	done
	LOG=$KT_TMP/state/logs/$1.jsonl
	[ -s "$LOG" ] && trailer "$LOG" >/dev/null
}

# ---- moved in by cgroup.procs after the open ---------------------------------
name=procs-in
start_waiting $name "$PRE" sh -c "$AWAIT; sh -c '$ESCAPE'; exit \$?" "$KT_TMP/$name.go"
if policy_session $name enforce deny "$DENY"; then
	echo "$PID" >"$cg/cgroup.procs"
	followed $name "$sid" "$PID"
else
	not_ok "$name: session opens"
fi

# ---- in the cgroup when the session opened -----------------------------------
# open_over NAME: a process waits in a new cgroup NAME, then a session opens
# over that cgroup; the process's child must be followed.
open_over() {
	local name=$1 cg sid
	cg=$(cg_make "$name")
	start_waiting "$name" "$cg" sh -c "$AWAIT; sh -c '$ESCAPE'; exit \$?" "$KT_TMP/$name.go"
	joined "$PID" "$cg" || not_ok "$name: the process runs in the cgroup before the open"
	sid=$(session_open "$cg" "$(policy_file "$name" \
		"{\"kwitness_policy\":1,\"mode\":\"enforce\",\"record\":\"all\",$DENY}")")
	if [ -n "$sid" ]; then
		followed "$name" "$sid" "$PID"
	else
		not_ok "$name: session opens"
	fi
}
open_over before-open

# ---- a non-leader thread of a process moved in -------------------------------
for mode in fork exec; do
	name=thread-$mode
	if [ $mode = fork ]; then
		start_waiting $name "$PRE" "$NP" thread-run fork "$KT_TMP/$name.go" sh -c "$ESCAPE"
	else
		start_waiting $name "$PRE" "$NP" thread-run exec "$KT_TMP/$name.go" \
			sh -c "sh -c '$ESCAPE'; exit \$?"
	fi
	threads "$PID" 2 || not_ok "$name: kw-netprobe runs two threads"
	if policy_session $name enforce deny "$DENY"; then
		echo "$PID" >"$cg/cgroup.procs"
		followed $name "$sid" "$PID"
	else
		not_ok "$name: session opens"
	fi
done

# ---- clone3(CLONE_INTO_CGROUP) into the session's cgroup from outside --------
name=clone-in
if policy_session $name enforce deny "$DENY"; then
	start_waiting $name "$PRE" "$NP" clone-into-exec "$cg" sh -c "$AWAIT; $ESCAPE" "$KT_TMP/$name.go"
	followed $name "$sid" "$PID"
else
	not_ok "$name: session opens"
fi

# ---- a resumed session (kwitnessd killed with -9, started again) -------------
name=resumed
if policy_session $name enforce deny "$DENY"; then
	start_waiting $name "$cg" sh -c "$AWAIT; sh -c '$ESCAPE'; exit \$?" "$KT_TMP/$name.go"
	first=$PID
	start_waiting $name-late "$PRE" sh -c "$AWAIT; sh -c '$ESCAPE'; exit \$?" "$KT_TMP/$name-late.go"
	late=$PID
	joined "$first" "$cg" || not_ok "$name: the first process runs in the cgroup before the crash"
	joined "$late" "$PRE" || not_ok "$name: the second process waits outside"
	kill -KILL "$KT_DPID"
	wait "$KT_DPID" 2>/dev/null
	KT_DPID=
	kwd_start_pinned || not_ok "$name: kwitnessd starts again"
	echo "$late" >"$cg/cgroup.procs"
	touch "$KT_TMP/$name-late.go"
	wait "$late"
	expect_eq "$name: moved in after the restart: the escaped child's connect is refused" \
		EPERM "$(tail -1 "$KT_TMP/$name-late.out")"
	followed $name "$sid" "$first" 2
	expect_eq "$name: resumed once" 1 "$(grep -c '"tool":"kwitness.resume"' "$LOG")"
	expect_eq "$name: both connects refused" 2 \
		"$(decisions "$LOG" | grep '"tool":"net.connect"' | grep -c '"decision":"deny"')"
else
	not_ok "$name: session opens"
fi

# a process that never was in a session is left alone
expect_eq "untagged process outside: connect proceeds" ok \
	"$(cg_run "$OUT" "$NP" connect 127.0.0.1 "$LPORT_A")"
check "kwitnessd is still running" kwd_alive

# ---- kwitnessd in a pid namespace of its own ---------------------------------
# Its task iterator sees that namespace's tasks alone: a process already in
# the cgroup at open, outside it, gets no tag and no mark there (as in
# before-open, but unseen).
# --kill-child (util-linux) stops kwitnessd should the test die; the VM's
# busybox unshare has no such option, and the test stops it itself below.
name=pidns
kill_child=--kill-child=TERM
unshare --pid --fork $kill_child true 2>/dev/null || kill_child=
if unshare --pid --fork $kill_child true 2>/dev/null; then
	kwd_stop || not_ok "$name: kwitnessd stops"
	printf '#!/bin/sh\nexec unshare --pid --fork %s "%s" "$@"\n' "$kill_child" "$KWD" >"$KT_TMP/kwd-pidns"
	chmod +x "$KT_TMP/kwd-pidns"
	KWD_HOST=$KWD KWD=$KT_TMP/kwd-pidns
	kwd_start
	KWD=$KWD_HOST
	open_over $name
	# unshare waits for its child (ignoring SIGTERM): stop kwitnessd itself
	inner=$(grep -lx "PPid:[[:space:]]*$KT_DPID" /proc/[0-9]*/status 2>/dev/null | cut -d/ -f3)
	[ -n "$inner" ] && kill -TERM $inner
	kwd_gone "$KT_DPID" 300 || not_ok "$name: kwitnessd stops"
	KT_DPID=
else
	skip "$name: unshare --pid --fork unavailable"
fi
finish
