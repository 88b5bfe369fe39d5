#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checkpoints in the transparency log (docs/transparency.md, "Checkpoints"):
# with checkpoint_tlog = true each signed checkpoint is logged and cosigned,
# its proof stored in LOG.checkpoints.tlog-proofs, and `kwitness verify --log
# --transparency POLICY` (with the RECORD or without) judges each one; a proof moved to another
# checkpoint fails; kwitnessd refuses the key without a log. A stalled
# witness does not stop decisions: checkpoints are dropped from the queue.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
command -v jq >/dev/null || kt_skip_all "jq missing"
command -v python3 >/dev/null || kt_fail_all "python3 is not installed (scripts/deps.sh)"
KEY=$KT_TMP/signer.jwk

# Refused without the log.
printf 'checkpoint_interval = 60\ncheckpoint_tlog = true\n' >"$KT_TMP/bad.conf"
out=$(timeout 20 "$KWD" --foreground --state-dir "$KT_TMP/state-x" --socket "$KT_TMP/x.sock" \
	--pin-dir none --key "$KT_TMP/key.pem" --config "$KT_TMP/bad.conf" 2>&1)
rc=$?
check "kwitnessd refuses checkpoint_tlog without log = DIR (rc $rc)" \
	grep -q "checkpoint_tlog = true needs the transparency log" <<<"$out"

L=$KT_TMP/log
"$KW" keygen --out "$KT_TMP/log.pem" >/dev/null
"$KW" keygen --out "$KT_TMP/w.pem" >/dev/null
LVKEY=$("$KW" tlog init "$L" --origin log.test.kwitness/$$ --key "$KT_TMP/log.pem")
WVKEY=$("$KW" tlog vkey --key "$KT_TMP/w.pem" --name w.test.kwitness --witness)
printf 'log %s\nwitness W %s\nquorum W\n' "$LVKEY" "$WVKEY" >"$KT_TMP/trust"
# conf WITNESS: the config with this witness
conf() {
	cat >"$KT_TMP/kw.conf" <<CONF
log = $L
log_key = $KT_TMP/log.pem
log_witness = $1
log_policy = $KT_TMP/trust
checkpoint_interval = 3600
checkpoint_entries = 200
checkpoint_tlog = true
CONF
}
conf "local:w.test.kwitness:$KT_TMP/w.pem:$KT_TMP/wstate"
kwd_start --config "$KT_TMP/kw.conf"
kwd_has_hook net.send || kt_skip_feature net.send "net.send hooks unavailable on this kernel"
listeners_start

# proofs_caught_up LOG: every checkpoint so far has its proof line
proofs_caught_up() {
	[ "$(cat "$1.checkpoints.tlog-proofs" 2>/dev/null | wc -l)" -ge \
		"$(cat "$1.checkpoints" 2>/dev/null | wc -l)" ]
}
# run_session NAME [paced]: 3,000 sends (a checkpoint every 200). Paced: 15
# rounds of 200, each waiting (20 s at most) until the log has taken every
# checkpoint so far, so that a slow log on a loaded host never fills the queue
# of 4 (the stalled run below tests the full queue).
run_session() {
	local rounds=3 per=1000 log
	policy_session "$1" enforce deny "\"net\":{\"send\":[\"127.0.0.1/32:$LPORT_A\"]}" ||
		kt_fail_all "no session opened"
	[ "${2:-}" = paced ] && rounds=15 per=200
	log=$KT_TMP/state/logs/$sid.jsonl
	for _ in $(seq $rounds); do
		cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$LPORT_A" $per >/dev/null
		sleep 0.2
		if [ "${2:-}" = paced ]; then
			for _ in $(seq 200); do proofs_caught_up "$log" && break; sleep 0.1; done
		fi
	done
}
run_session ok paced
session_close "$sid" >/dev/null || kt_fail_all "close failed"
CK=$LOG.checkpoints
n_ck=$(wc -l <"$CK")
for _ in $(seq 100); do
	[ -f "$CK.tlog-proofs" ] && [ "$(wc -l <"$CK.tlog-proofs")" -ge "$n_ck" ] && break
	sleep 0.1
done
check "checkpoints were written ($n_ck)" test "$n_ck" -ge 5
expect_eq "every checkpoint has its proof line" "$n_ck" "$(wc -l <"$CK.tlog-proofs" 2>/dev/null)"
out=$("$KW" verify --key "$KEY" --log "$LOG" --transparency "$KT_TMP/trust" --json)
expect_eq "verify --log --transparency: valid (exit 0)" 0 $?
expect_eq "every checkpoint's proof is present and valid" "$(seq -s, "$n_ck")" \
	"$(jq -r '[.transparency[] | select(.proof and .valid) | .n] | join(",")' <<<"$out")"
out=$("$KW" verify --key "$KEY" --log "$LOG" --transparency "$KT_TMP/trust" --json "$REC")
expect_eq "verify RECORD --log --transparency: the record logged, every checkpoint's proof valid" \
	"0 true true $(seq -s, "$n_ck")" "$? $(jq -r '.valid, .logged' <<<"$out" | tr '\n' ' ')$(jq -r \
	'[.checkpoint_transparency[] | select(.proof and .valid) | .n] | join(",")' <<<"$out")"
"$KW" tlog check "$L" --vkey "$LVKEY" >"$KT_TMP/out"
expect_eq "the log holds the checkpoints and the record, audits clean" \
	"valid: log.test.kwitness/$$, $((n_ck + 1)) entries" "$(cut -d, -f1,2 "$KT_TMP/out")"

# A proof moved to another checkpoint: checkpoint 1's line given 2's proof.
cp "$CK.tlog-proofs" "$KT_TMP/proofs.orig"
p2=$(sed -n 2p "$CK.tlog-proofs" | jq -c .proof)
sed -n 1p "$KT_TMP/proofs.orig" | jq -c --argjson p "$p2" '.proof = $p' >"$CK.tlog-proofs"
sed -n '2,$p' "$KT_TMP/proofs.orig" >>"$CK.tlog-proofs"
out=$("$KW" verify --key "$KEY" --log "$LOG" --transparency "$KT_TMP/trust" --json)
expect_eq "a proof for another checkpoint: exit 1" 1 $?
expect_eq "checkpoint 1 fails at the leaf, the others hold" "tlog_leaf_mismatch ok" \
	"$(jq -r '[.transparency[0].reason, (.transparency[1:] | map(.reason) | unique | join(","))] | join(" ")' <<<"$out")"
out=$("$KW" verify --key "$KEY" --log "$LOG" --transparency "$KT_TMP/trust" --json "$REC")
expect_eq "... with the record: exit 1, not valid, checkpoint 1 at the leaf" "1 false tlog_leaf_mismatch" \
	"$? $(jq -r .valid <<<"$out") $(jq -r '.checkpoint_transparency[0].reason' <<<"$out")"
out=$("$KW" verify --key "$KEY" --log "$LOG" --transparency "$KT_TMP/trust" "$REC")
expect_eq "... and in text: exit 1, the checkpoint's line" "1 1" \
	"$? $(grep -c '^checkpoint 1: transparency: invalid: tlog_leaf_mismatch' <<<"$out")"
# A proof removed: reported as missing, not a failure.
sed -n '2,$p' "$KT_TMP/proofs.orig" >"$CK.tlog-proofs"
out=$("$KW" verify --key "$KEY" --log "$LOG" --transparency "$KT_TMP/trust")
expect_eq "a checkpoint without a proof: said, exit 0" "0 1" \
	"$? $(grep -c '^checkpoint 1: transparency: no proof' <<<"$out")"
cp "$KT_TMP/proofs.orig" "$CK.tlog-proofs"
kwd_stop

# A witness that accepts and never answers: decisions go on.
stalled_witness_start
conf "http://127.0.0.1:$WPORT"
kwd_start --config "$KT_TMP/kw.conf"
run_session stall
LOG=$KT_TMP/state/logs/$sid.jsonl
n_ck=$(wc -l <"$LOG.checkpoints")
expect_eq "stalled log: every send decided and logged" 3000 \
	"$(grep -c '"tool":"net.send"' "$LOG")"
check "stalled log: checkpoints still signed while it runs ($n_ck)" test "$n_ck" -ge 6
st=$("$KW" status --socket "$KT_SOCK" --json)
d=$(jq -r '.transparency.checkpoints.dropped' <<<"$st")
check "status counts the checkpoints dropped from the full queue ($d)" test "$d" -ge 1
check "kwitnessd says why" grep -q "not logged: the transparency queue is full" "$KT_TMP/kwitnessd.log"
kill -KILL "$KT_DPID" 2>/dev/null
KT_DPID=
finish
