#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The systemd unit's capability bounding set is enough, and its BPF
# capabilities are each needed: kwitnessd started as root with exactly the
# unit's CapabilityBoundingSet (setpriv) loads, pins into a private bpffs
# folder, opens a session whose connect to a denied port gets EPERM and signs a
# record that verifies. Without CAP_BPF, CAP_PERFMON or CAP_NET_ADMIN no
# session can govern net.connect (kwitnessd does not start, or refuses it).
# In the VM, where BPF-LSM works, the classes compared include the LSM ones.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/kwd_lib.sh"

kwd_require
command -v setpriv >/dev/null || kt_fail_all "setpriv is not installed (util-linux, scripts/deps.sh)"
UNIT=$KW_ROOT/examples/systemd/kwitnessd.service
UNIT_CAPS=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT")
[ -n "$UNIT_CAPS" ] || kt_fail_all "the unit has no CapabilityBoundingSet"
REAL_KWD=$KWD
PIN=/sys/fs/bpf/kwitness-capstest-$$
trap 'rm -rf "$PIN"; kwd_cleanup' EXIT
listeners_start
BPORT_A=$LPORT_A BPORT_B=$LPORT_B
# by absolute path: the wrapper's /bin/sh may be busybox, whose setpriv applet
# has no --bounding-set
SETPRIV=$(command -v setpriv)
POLICY=$(policy_file caps "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"record\":\"all\",\"on_record_failure\":\"deny\",\"net\":{\"connect\":[\"127.0.0.1/32:$BPORT_A\"]}}")

# with_caps "CAP_A CAP_B ...": KWD becomes kwitnessd under that bounding set
# (root keeps only these; nothing inheritable or ambient).
with_caps() {
	local set=-all c
	for c in $1; do
		c=${c#CAP_}
		set="$set,+${c,,}"
	done
	printf '#!/bin/sh\nexec %s --bounding-set=%s --inh-caps=-all %s "$@"\n' "$SETPRIV" "$set" "$REAL_KWD" \
		>"$KT_TMP/kwitnessd-caps"
	chmod 0755 "$KT_TMP/kwitnessd-caps"
	KWD=$KT_TMP/kwitnessd-caps
}

# a session on a fresh cgroup; a connect to the denied port. Sets GOT to the
# probe's result, or the open's refusal (and REC, LOG, POL after a close).
governed_connect() {
	local cg sid
	cg=$(cg_make "$1")
	if ! sid=$(session_open "$cg" "$POLICY" 2>&1); then
		GOT="refused: $sid"
		return
	fi
	GOT=$(cg_run "$cg" "$NP" connect 127.0.0.1 "$BPORT_B" 2>&1)
	session_close "$sid" >/dev/null
}

# the hook classes a kwitnessd with every capability attaches here
kwd_start
ALL_HOOKS=$(kwd_hooks | xargs)
echo "# classes attached with every capability: $ALL_HOOKS"
kwd_stop
rm -f "$KT_SOCK"

with_caps "$UNIT_CAPS"
kwd_start --pin-dir "$PIN"
expect_eq "with the unit's capabilities kwitnessd attaches every class it attaches as full root" \
	"$ALL_HOOKS" "$(kwd_hooks | xargs)"
eff=$(awk '/^CapEff/ { print $2 }' "/proc/$KT_DPID/status")
expect_eq "kwitnessd runs with the unit's bounding set only ($UNIT_CAPS)" \
	"$("$SETPRIV" --bounding-set=-all$(for c in $UNIT_CAPS; do c=${c#CAP_}; printf ',+%s' "${c,,}"; done) \
		awk '/^CapEff/ { print $2 }' /proc/self/status)" "$eff"
governed_connect full
expect_eq "with the unit's capabilities: the denied connect gets EPERM" EPERM "$GOT"
check "... the record verifies with --log and --policy" verify_record
check "... and the maps are pinned in the private bpffs folder" test -n "$(ls "$PIN" 2>/dev/null)"
kwd_stop

for drop in CAP_BPF CAP_PERFMON CAP_NET_ADMIN; do
	with_caps "${UNIT_CAPS//$drop/}"
	rm -f "$KT_TMP/kwitnessd.log"
	KT_SOCK=$KT_TMP/kwitnessd.sock
	"$KWD" --foreground --state-dir "$KT_TMP/state-$drop" --socket "$KT_SOCK" --key "$KT_TMP/key.pem" \
		--pin-dir none --config /dev/null 2>"$KT_TMP/kwitnessd.log" &
	KT_DPID=$!
	for _ in $(seq 300); do [ -S "$KT_SOCK" ] || ! kill -0 "$KT_DPID" 2>/dev/null && break; sleep 0.1; done
	if [ -S "$KT_SOCK" ]; then
		governed_connect "no-$drop"
		got=$GOT
		why="kwitnessd started; the open: ${got:0:100}"
	else
		got="not started"
		why="kwitnessd did not start: $(tail -1 "$KT_TMP/kwitnessd.log")"
	fi
	if [ "$got" != EPERM ] && [ "$got" != ok ]; then
		ok "without $drop no session governs net.connect ($why)"
	else
		not_ok "without $drop a session still governed net.connect: $got"
	fi
	kwd_stop
	rm -f "$KT_SOCK"
done
finish
