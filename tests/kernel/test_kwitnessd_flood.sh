#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitnessd under a flood with a tiny ring buffer (--ringbuf-size 4096): the
# trailer's dropped count equals exactly the sequence numbers missing from the
# log; with on_record_failure deny every operation whose decision is missing
# failed with EPERM (the flooding tool counts its own EPERMs), with allow they
# all proceeded. Nothing is lost silently. The collector is stopped (SIGSTOP)
# while the flood runs, so the ring buffer fills and drops happen on every
# run, however fast the collector is. Then drops with decisions after them
# while the collector runs: each gap is given up on the kernel's drop mark.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
kwd_start --ringbuf-size 4096
kwd_has_hook net.send || kt_skip_feature net.send "net.send hooks unavailable on this kernel"
listeners_start # a port of our own (TCP), for the UDP datagrams

PORT=$LPORT_A
N=20000

# missing_seqs LOG NEXT_SEQ: numbers below NEXT_SEQ that no entry carries
# (decisions and the proc entries, which are numbered alike).
missing_seqs() {
	numbered "$1" | sed -n 's/.*"seq":\([0-9]*\).*/\1/p' | sort -n | uniq >"$KT_TMP/seen"
	awk -v next_seq="$2" '$1 < next_seq { n++ } END { print next_seq - n }' "$KT_TMP/seen"
}

for fail in deny allow; do
	if ! policy_session "flood-$fail" enforce "$fail" "\"net\":{\"send\":[\"127.0.0.1/32:$PORT\"]}"; then
		not_ok "flood/$fail: session opens"
		continue
	fi
	kill -STOP "$KT_DPID"
	out=$(cg_run "$cg" "$NP" flood sendto 127.0.0.1 $PORT $N)
	kill -CONT "$KT_DPID"
	session_close "$sid" >/dev/null
	read -r _ _ attempts _ succeeded _ eperm _ other _ <<<"$out"
	t=$(trailer "$LOG")
	dropped=$(jfield "$t" dropped) next=$(jfield "$t" next_seq) gaps=$(jfield "$t" seq_gaps)
	logged=$(decisions "$LOG" | grep -c .)
	missing=$(missing_seqs "$LOG" "$next")
	procs=$(grep -c '"tool":"proc"' "$LOG")
	echo "# on_record_failure $fail: $out; logged $logged, trailer dropped $dropped, seq_gaps $gaps, next_seq $next"
	expect_eq "flood/$fail: logged + dropped == attempts (every operation accounted for)" \
		"$N" "$((logged + dropped))"
	expect_eq "flood/$fail: trailer seq_gaps == sequence numbers missing from the log" \
		"$missing" "$gaps"
	# A decision is numbered before its event is reserved, so each drop
	# leaves exactly one gap.
	expect_eq "flood/$fail: trailer dropped == missing sequence numbers" "$missing" "$dropped"
	# the flood's own proc entry (its exec) is numbered too
	expect_eq "flood/$fail: every attempt got a sequence number" "$((N + procs))" "$next"
	expect_eq "flood/$fail: no duplicate sequence numbers" "$((logged + procs))" "$(wc -l <"$KT_TMP/seen")"
	# A stopped collector and a 4 KiB ring buffer: at most ~64 events fit.
	check "flood/$fail: the full ring buffer dropped decisions ($dropped)" \
		test "${dropped:-0}" -ge $((N - 100))
	expect_eq "flood/$fail: trailer says incomplete" false "$(jfield "$t" complete)"
	if [ $fail = deny ]; then
		expect_eq "flood/deny: every unrecorded operation failed with EPERM" "$dropped" "$eperm"
		expect_eq "flood/deny: every recorded operation succeeded" "$logged" "$succeeded"
	else
		expect_eq "flood/allow: every operation proceeded" "$N 0" "$succeeded $eperm"
	fi
	expect_eq "flood/$fail: no other errors" 0 "$other"
	if [ "$dropped" -eq 0 ]; then
		check "flood/$fail: record verifies" verify_record
	else
		check "flood/$fail: record verifies only as incomplete (log_incomplete; the gap is in the signed transcript)" \
			verify_incomplete
	fi
done
# session_status JQ: JQ over this session's entry in the status reply.
session_status() {
	"$KW" status --json --socket "$KT_SOCK" |
		jq -r --arg s "$sid" ".sessions[] | select(.session == \$s) | $1"
}
# wait_status COND: until COND holds for this session (10 s at most).
wait_status() {
	for _ in $(seq 100); do
		[ "$(session_status "$1")" = true ] && return 0
		sleep 0.1
	done
	return 1
}

# Drops with decisions after them, while the collector runs: the kernel marks
# each dropped number in kw_lost, and the collector gives the gap up as soon as
# it sees a later number (gaps_marked), not after waiting for it (gaps_unmarked),
# so the ring buffer is not held meanwhile.
if policy_session flood-marks enforce allow "\"net\":{\"send\":[\"127.0.0.1/32:$PORT\"]}"; then
	kill -STOP "$KT_DPID"
	out=$(cg_run "$cg" "$NP" flood sendto 127.0.0.1 $PORT 2000)
	kill -CONT "$KT_DPID"
	# the first ~64 written and their ring buffer space let go, so the next
	# ten fit (an emulated VM may take a while)
	wait_status ".ringbuf_used == 0"
	out2=$(cg_run "$cg" "$NP" flood sendto 127.0.0.1 $PORT 10)
	wait_status ".pending == 0 and .gaps_marked + .gaps_unmarked > 0"
	read -r dropped marked unmarked pending <<<"$(session_status \
		'"\(.dropped) \(.gaps_marked) \(.gaps_unmarked) \(.pending)"')"
	echo "# marks: $out; then $out2; dropped $dropped, gaps_marked $marked, gaps_unmarked $unmarked, pending $pending"
	check "marks: the stopped collector's full ring buffer dropped decisions ($dropped)" \
		test "${dropped:-0}" -ge 1900
	expect_eq "marks: every drop given up on its mark" "$dropped" "$marked"
	expect_eq "marks: none given up after waiting" 0 "$unmarked"
	expect_eq "marks: nothing held in the reorder window" 0 "$pending"
	session_close "$sid" >/dev/null
	t=$(trailer "$LOG")
	next=$(jfield "$t" next_seq)
	expect_eq "marks: every attempt got a sequence number" \
		"$((2010 + $(grep -c '"tool":"proc"' "$LOG")))" "$next"
	expect_eq "marks: trailer dropped == missing sequence numbers" \
		"$(missing_seqs "$LOG" "$next")" "$(jfield "$t" dropped)"
	expect_eq "marks: logged + dropped == attempts" 2010 \
		"$(($(decisions "$LOG" | grep -c .) + $(jfield "$t" dropped)))"
	check "marks: the last ten decisions are logged, after the gap" \
		test "$(decisions "$LOG" | tail -10 | sed -n 's/.*"seq":\([0-9]*\).*/\1/p' | head -1)" = "$((next - 10))"
	check "marks: record verifies only as incomplete" verify_incomplete
else
	not_ok "marks: session opens"
fi
check "kwitnessd is still running" kwd_alive
finish
