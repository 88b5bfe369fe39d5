#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Kill counts are facts (docs/security.md, "A kill that did not happen").
# - A close with --kill reaches child cgroups: a process in a child cgroup of
#   the session's cgroup is killed and counted, nothing is left frozen; a
#   close without --kill reports it in still_running.
# - kwitnessd confined as examples/systemd/kwitnessd.service confines it
#   kills a session's process owned by nobody: killed 1, the process gone.
#   systemd is not PID 1 where tests run, so the unit's confinement is
#   reproduced: a private mount namespace (unshare) where /sys/fs/cgroup is
#   read-only unless the unit makes it writable (ProtectControlGroups=no and
#   ReadWritePaths), and the unit's CapabilityBoundingSet with no_new_privs
#   (setpriv).
# - Confined without CAP_KILL and with a read-only cgroup fs (the unit
#   before this fix), the kill cannot be done: the trailer counts kill_failed
#   and still_running, the record is not complete, kwitnessd logs why, and
#   `session close --kill` exits 1.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
for t in setpriv unshare; do
	command -v $t >/dev/null || kt_fail_all "$t is not installed (util-linux, scripts/deps.sh)"
done
SETPRIV=$(command -v setpriv) UNSHARE=$(command -v unshare)
UNIT=$KW_ROOT/examples/systemd/kwitnessd.service
REAL_KWD=$KWD
CGMNT=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
POLICY=$(policy_file p '{"kwitness_policy":1,"mode":"enforce","record":"all"}')
NOBODY=$(id -u nobody 2>/dev/null || echo 65534)

# confined CAPS RO: KWD becomes kwitnessd under bounding set CAPS, with
# no_new_privs, in a private mount namespace whose cgroup fs is read-only
# when RO is yes.
confined() {
	local set=-all c ro=
	for c in $1; do
		c=${c#CAP_}
		set="$set,+${c,,}"
	done
	[ "$2" = yes ] && ro="mount -o remount,bind,ro $CGMNT && "
	printf '#!/bin/sh\nexec %s -m --propagation private sh -c '\''%sexec %s --bounding-set=%s --inh-caps=-all --no-new-privs "$0" "$@"'\'' %s "$@"\n' \
		"$UNSHARE" "$ro" "$SETPRIV" "$set" "$REAL_KWD" >"$KT_TMP/kwitnessd-confined"
	chmod 0755 "$KT_TMP/kwitnessd-confined"
	KWD=$KT_TMP/kwitnessd-confined
}

# a process owned by nobody in cgroup CG (background); sets VICTIM
victim() {
	# not through cg_run: a backgrounded function is a subshell, $! its pid
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$1" \
		"$SETPRIV" --reuid="$NOBODY" --regid="$NOBODY" --clear-groups sleep 600 &
	VICTIM=$!
	disown "$VICTIM" # no job notice when it is killed
	for _ in $(seq 50); do
		[ "$(awk '/^Uid:/ { print $2 }' "/proc/$VICTIM/status" 2>/dev/null)" = "$NOBODY" ] &&
			grep -qx "$VICTIM" "$1/cgroup.procs" && return 0
		sleep 0.1
	done
	kt_fail_all "the victim did not start in $1"
}
gone() { kwd_gone "$1" 30; }
frozen() { sed -n 's/^frozen //p' "$1/cgroup.events"; }

# close_kill ID [--kill]: the close's output in OUT, its status in RC, the
# trailer in T (REC, LOG, POL set as session_close does)
close_as() {
	OUT=$("$KW" session close --socket "$KT_SOCK" "$@" 2>&1)
	RC=$?
	LOG=$(sed -n 's/^log: *//p' <<<"$OUT")
	REC=$(sed -n 's/^record: *//p' <<<"$OUT")
	POL=$(sed -n 's/^policy: *//p' <<<"$OUT")
	T=$(trailer "$LOG")
}

# --- child cgroups (full root) -----------------------------------------------
kwd_start
cg=$(cg_make child-kill)
sid=$(session_open "$cg" "$POLICY")
mkdir "$cg/inner"
victim "$cg/inner"
close_as "$sid" --kill
expect_eq "child cgroup: close --kill succeeds" 0 "$RC"
check "child cgroup: the process in the child cgroup is gone" gone "$VICTIM"
expect_eq "child cgroup: the trailer counts it killed, none failed, none running" "1 0 0" \
	"$(jfield "$T" killed) $(jfield "$T" kill_failed) $(jfield "$T" still_running)"
expect_eq "child cgroup: nothing is left frozen (session cgroup, child)" "0 0" \
	"$(frozen "$cg") $(frozen "$cg/inner")"
check "child cgroup: the record verifies" verify_record

cg=$(cg_make child-keep)
sid=$(session_open "$cg" "$POLICY")
mkdir "$cg/inner"
victim "$cg/inner"
close_as "$sid"
expect_eq "child cgroup, no --kill: still_running 1, killed 0" "0 1 0" \
	"$RC $(jfield "$T" still_running) $(jfield "$T" killed)"
check "child cgroup, no --kill: the process runs on" kill -0 "$VICTIM"
check "child cgroup, no --kill: the summary warns" grep -q 'still run in the cgroup' <<<"$OUT"
kill -KILL "$VICTIM"
kwd_stop
rm -f "$KT_SOCK"

# --- as the unit confines it ---------------------------------------------------
UNIT_CAPS=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT")
RW=$(sed -n 's/^ReadWritePaths=//p' "$UNIT" | tr '\n' ' ')
RO=yes
if [ "$(sed -n 's/^ProtectControlGroups=//p' "$UNIT")" = no ] && [[ " $RW " == *" /sys/fs/cgroup "* ]]; then
	RO=no
fi
echo "# the unit's confinement, reproduced: bounding set $UNIT_CAPS; cgroup fs read-only: $RO"
confined "$UNIT_CAPS" "$RO"
kwd_start
cg=$(cg_make unit-kill)
sid=$(session_open "$cg" "$POLICY")
victim "$cg"
close_as "$sid" --kill
echo "$OUT" | sed 's/^/#   /'
expect_eq "unit: close --kill of nobody's process succeeds" 0 "$RC"
check "unit: nobody's process is gone" gone "$VICTIM"
expect_eq "unit: the trailer says killed 1, kill_failed 0, complete" "1 0 true" \
	"$(jfield "$T" killed) $(jfield "$T" kill_failed) $(jfield "$T" complete)"
expect_eq "unit: nothing is left frozen" 0 "$(frozen "$cg")"
check "unit: the record verifies" verify_record
kill -KILL "$VICTIM" 2>/dev/null
kwd_stop
rm -f "$KT_SOCK"

# --- a kill that cannot be done --------------------------------------------------
confined "${UNIT_CAPS//CAP_KILL/}" yes
kwd_start
cg=$(cg_make nokill)
sid=$(session_open "$cg" "$POLICY")
victim "$cg"
close_as "$sid" --kill
expect_eq "no CAP_KILL, read-only cgroup fs: close --kill exits 1" 1 "$RC"
check "... the process runs on (the test kills it)" kill -0 "$VICTIM"
expect_eq "... the trailer: killed 0, kill_failed 1, still_running 1, not complete" \
	"0 1 1 false" \
	"$(jfield "$T" killed) $(jfield "$T" kill_failed) $(jfield "$T" still_running) $(jfield "$T" complete)"
check "... the summary names the failure" grep -q 'kill_failed: 1' <<<"$OUT"
check "... kwitnessd logs why" grep -q "kill at close failed: 1 of 1 process(es) run on" "$KT_TMP/kwitnessd.log"
check "... the record verifies only as incomplete" verify_incomplete
expect_eq "... nothing is left frozen" 0 "$(frozen "$cg")"
kill -KILL "$VICTIM"
finish
