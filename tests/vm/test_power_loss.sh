#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Power loss, for real (docs/decision-log.md, "Checkpoints"): a suite in
# phases, one per boot of the VM, with kwitnessd's state folder on a disk
# image that outlives each boot (tests/vm/power_loss_host.sh drives it).
#  phase 1: kwitnessd (pinned sessions) runs a session until it has signed
#           some checkpoints and logged lines after the last one; with the
#           kernel's periodic writeback off, only what kwitnessd fsynced and
#           the log's tail (synced by the test) are on disk when the VM is
#           reset by sysrq 'b' (tests/vm/init), kwitnessd still running.
#  phase 2: the same image, booted again, and a copy in which the host
#           changed one byte of a vouched line while the VM was off. On
#           each, kwitnessd starts, finds no pins and seals the session from
#           its last checkpoint; `kwitness verify` tells the vouched lines,
#           the unvouched tail and completeness apart, and fails the copy.
. "$(dirname "$0")/../lib.sh"
. "$KW_ROOT/tests/kernel/kwd_lib.sh"

DISK=/kw/disk/kw-state    # the image
TAMP=/kw/disk/kw-tampered # phase 2: the copy the host changed
PIN=/sys/fs/bpf/kwitness-power-loss
FACTS=$DISK/phase1.facts

kwd_require
command -v jq >/dev/null || kt_fail_all "jq missing"
mountpoint -q "$DISK" || kt_fail_all "no disk at $DISK (run through scripts/vmtest.sh)"

# kwd_on DIR: kwitnessd on the disk's state folder, key and config, pinned
kwd_on() {
	KT_SOCK=$KT_TMP/kwitnessd.sock
	rm -f "$KT_SOCK"
	"$KWD" --foreground -v --state-dir "$1/state" --socket "$KT_SOCK" --key "$1/key.pem" \
		--pin-dir "$PIN" --config "$1/kwd.conf" 2>>"$KT_TMP/kwitnessd.log" &
	KT_DPID=$!
	for _ in $(seq 900); do
		[ -S "$KT_SOCK" ] && return 0
		kwd_alive || break
		sleep 0.1
	done
	sed 's/^/# /' "$KT_TMP/kwitnessd.log" | tail -5
	kt_fail_all "kwitnessd did not start on $1"
}
lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }
# quiet LOG: waits until the log and its checkpoints stop growing (for 2 s:
# a checkpoint due is signed on a thread of its own, a moment later)
quiet() {
	local was= now same=0
	for _ in $(seq 240); do
		sleep 0.5
		now="$(lines "$1") $(lines "$1.checkpoints")"
		if [ "$now" = "$was" ]; then same=$((same + 1)); else same=0; fi
		[ $same -ge 4 ] && return 0
		was=$now
	done
	return 1
}

phase1() {
	# a checkpoint every 200 decisions, none by time: what is vouched for
	# is decided by the counts, not by the emulator's speed
	printf 'checkpoint_interval = 0\ncheckpoint_entries = 200\n' >"$DISK/kwd.conf"
	"$KW" keygen --out "$DISK/key.pem" >/dev/null
	"$KW" key show --key "$DISK/key.pem" --jwk >"$DISK/signer.jwk"
	sync
	# From here on only what is fsynced outlives the reset: no periodic
	# writeback (the kernel's would write dirty pages out after 30 s), as
	# when the power goes before it. Lost checkpoints show.
	echo 0 >/proc/sys/vm/dirty_writeback_centisecs
	echo 360000 >/proc/sys/vm/dirty_expire_centisecs
	kwd_on "$DISK"
	kwd_has_hook net.send || kt_skip_feature net.send "net.send hooks unavailable on this kernel"
	listeners_start
	policy_session pl enforce deny "\"net\":{\"send\":[\"127.0.0.1/32:$LPORT_A\"]}" ||
		kt_fail_all "no session opened"
	local log=$DISK/state/logs/$sid.jsonl
	# four rounds of 250, each let settle: a checkpoint is asked for after
	# the ring buffer read that crosses 200, and under emulation one read
	# can take most of a 1000-send flood (2 checkpoints in one CI run)
	local r
	for r in 1 2 3 4; do
		cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$LPORT_A" 250 >/dev/null
		quiet "$log" || not_ok "the log settles (round $r)"
	done
	# lines after the last checkpoint (fewer than 200 decisions: unsigned)
	for _ in 1 2 3 4 5; do
		[ "$(lines "$log")" -gt "$(tail -n1 "$log.checkpoints" | jq -r .lines)" ] && break
		cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$LPORT_A" 30 >/dev/null
		quiet "$log"
	done
	local n_ck ck_lines log_lines
	n_ck=$(lines "$log.checkpoints")
	ck_lines=$(tail -n1 "$log.checkpoints" | jq -r .lines)
	log_lines=$(lines "$log")
	check "kwitnessd signed checkpoints while the session ran ($n_ck)" test "$n_ck" -ge 3
	check "the log holds lines after the last checkpoint ($log_lines > $ck_lines)" \
		test "$log_lines" -gt "$ck_lines"
	check "the session is open: no close entry" test -z "$(trailer "$log")"
	check "and pinned in $PIN" test -n "$(ls "$PIN" 2>/dev/null)"
	printf 'sid=%s\nn_ck=%s\nck_lines=%s\nlog_lines=%s\nck_hash=%s\n' "$sid" "$n_ck" \
		"$ck_lines" "$log_lines" "$(tail -n1 "$log.checkpoints" | tr -d '\n' | sha256sum | cut -d' ' -f1)" \
		>"$FACTS"
	# the log's tail written out, as the kernel's writeback would have
	# (kwitnessd signed nothing for it); the checkpoints file is on disk
	# by kwitnessd's own fsyncs alone
	sync -d "$log" "$FACTS"
	expect_eq "nothing was logged or signed since (what the next boot must find)" \
		"$log_lines $n_ck" "$(lines "$log") $(lines "$log.checkpoints")"
	check "kwitnessd is still running when the power goes" kwd_alive
	# the power loss: tests/vm/init resets the VM by sysrq 'b' after this
	# suite; kwitnessd, its pins and the session are left as they are
	touch /run/kw-vm-power-loss
	KT_DPID= KT_CG= KT_PIN=
	finish
}

# sealed DIR: kwitnessd started on DIR after the power loss seals the session
sealed() {
	local dir=$1
	kwd_on "$dir"
	REC=$dir/state/records/$sid.json
	for _ in $(seq 300); do [ -s "$REC" ] && break; sleep 0.1; done
	kwd_stop
	[ -s "$REC" ]
}

phase2() {
	[ -f "$FACTS" ] || kt_fail_all "phase 1 left no facts on the disk"
	local sid n_ck ck_lines log_lines ck_hash
	. "$FACTS"
	local log=$DISK/state/logs/$sid.jsonl tail=$((log_lines - ck_lines)) j t
	echo "# phase 1: $n_ck checkpoint(s), the last over $ck_lines line(s); $log_lines line(s) logged"
	# the power went: nothing closed the session
	check "after the reset the log has no close entry" test -z "$(trailer "$log")"
	check "and the session no record" test ! -e "$DISK/state/records/$sid.json"
	expect_eq "the disk kept every line and checkpoint written before the reset" \
		"$log_lines $n_ck" "$(lines "$log") $(lines "$log.checkpoints")"
	# the log as the power loss left it, before any collector touches it
	j=$("$KW" verify --key "$DISK/signer.jwk" --log "$log" --json)
	echo "# verify --log (as found): $j"
	expect_eq "verify --log: valid, lines 1-$ck_lines vouched by checkpoint $n_ck, $tail unvouched" \
		"true log_end $ck_lines $n_ck $tail" \
		"$(jq -r '"\(.valid) \(.stop) \(.vouched_lines) \(.checkpoint) \(.unvouched_lines)"' <<<"$j")"

	# the copy the host changed while the power was off, as found
	local tlog=$TAMP/state/logs/$sid.jsonl diff
	diff=$(cmp -l "$log" "$tlog" 2>/dev/null | awk '{ print $1 }')
	check "the copy differs from the image in one byte, in a vouched line" \
		test "$(wc -w <<<"$diff")" = 1 -a "$(head -c "${diff:-0}" "$log" | wc -l)" -lt "$ck_lines"
	j=$("$KW" verify --key "$TAMP/signer.jwk" --log "$tlog" --json)
	expect_eq "verify --log of the changed copy: checkpoint_prefix_mismatch" \
		"false checkpoint_prefix_mismatch" "$(jq -r '"\(.valid) \(.reason)"' <<<"$j")"

	sealed "$DISK" || kt_fail_all "kwitnessd sealed no record for $sid"
	t=$(trailer "$log")
	echo "# seal: $t"
	expect_eq "the seal names the last checkpoint, its hash and the unvouched lines" \
		"sha256:$ck_hash $n_ck $tail false" \
		"$(jfield "$t" checkpoint) $(jfield "$t" checkpoints) $(jfield "$t" unvouched_lines) $(jfield "$t" complete)"
	j=$("$KW" verify --key "$DISK/signer.jwk" --log "$log" --allow-incomplete --json "$REC")
	echo "# verify: $j"
	expect_eq "verify: valid, complete false" "true false" "$(jq -r '"\(.valid) \(.complete)"' <<<"$j")"
	check "verify: lines 1-$ck_lines vouched for by checkpoint $n_ck of $n_ck, $tail after it unvouched" \
		grep -q "^lines 1-$ck_lines vouched for by checkpoint $n_ck of $n_ck .* $tail line(s) after it unvouched" \
		<<<"$(jq -r .checkpoints <<<"$j")"
	expect_eq "without --allow-incomplete: log_incomplete" log_incomplete \
		"$("$KW" verify --key "$DISK/signer.jwk" --log "$log" --json "$REC" | jq -r .reason)"

	if sealed "$TAMP"; then
		check "the changed copy's seal vouches from no checkpoint" \
			test -z "$(jfield "$(trailer "$tlog")" checkpoint)"
		expect_eq "verify of its record: checkpoint_prefix_mismatch" checkpoint_prefix_mismatch \
			"$("$KW" verify --key "$TAMP/signer.jwk" --log "$tlog" --allow-incomplete --json "$REC" |
				jq -r .reason)"
	else
		not_ok "kwitnessd sealed the changed copy"
	fi
	finish
}

case ${KW_VM_PHASE:-} in
1) phase1 ;;
2) phase2 ;;
*) kt_fail_all "KW_VM_PHASE=${KW_VM_PHASE:-} (1 or 2: scripts/vmtest.sh boots this suite)" ;;
esac
