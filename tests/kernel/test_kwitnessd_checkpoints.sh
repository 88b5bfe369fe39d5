#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Interim checkpoints (docs/decision-log.md, "Checkpoints"): a session with
# a checkpoint every 200 decisions; the close entry names the last one and
# the record verifies with the chain; the log cut at 50 random byte offsets
# verifies exactly through the last checkpoint it holds whole; a forged, a
# removed and a reordered checkpoint each fail with their own reason code,
# and so does a vouched line changed. Then a collector killed with the pins
# gone (a power loss, as far as the host can show one; tests/vm/test_power_loss.sh
# has a real one): the next one seals
# from the last checkpoint and verify tells vouched lines, the unvouched
# tail and completeness apart; a vouched line changed while it was down fails.
# With the pins kept, the chain goes on across a restart, and a log cut below
# its last checkpoint while down is sealed as found, not resumed.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
command -v jq >/dev/null || kt_skip_all "jq missing"

conf() { # INTERVAL ENTRIES: a config file
	printf 'checkpoint_interval = %s\ncheckpoint_entries = %s\n' "$1" "$2" >"$KT_TMP/kwd.conf"
}
start_with_conf() {
	KT_SOCK=$KT_TMP/kwitnessd.sock
	"$KWD" --foreground -v --state-dir "$KT_TMP/state" --socket "$KT_SOCK" \
		--key "$KT_TMP/key.pem" --pin-dir none --config "$KT_TMP/kwd.conf" \
		2>>"$KT_TMP/kwitnessd.log" &
	KT_DPID=$!
	for _ in $(seq 600); do [ -S "$KT_SOCK" ] && return 0; kwd_alive || break; sleep 0.1; done
	sed 's/^/# /' "$KT_TMP/kwitnessd.log" | tail -5
	kt_fail_all "kwitnessd did not start"
}
KEY=$KT_TMP/signer.jwk
# cut_verify LOG CKPTS: kwitness verify of a log without its record, as JSON
cut_verify() { "$KW" verify --key "$KEY" --log "$1" --checkpoints "$2" --json; }
code_of() { jq -r .reason <<<"$1"; }
# same_verdict WHAT [--allow-incomplete]: the Python client's kwitness.verify
# (a second implementation of the checkpoint checks) against kwitness verify
# on $REC, $LOG and its checkpoints: validity, reason code, checkpoints sentence
if python3 -c 'import cryptography' 2>/dev/null; then
	same_verdict() {
		local what=$1 cli py
		shift
		cli=$("$KW" verify --key "$KEY" --log "$LOG" --json "$@" "$REC" |
			jq -c '[.valid, .reason, .checkpoints // ""]')
		py=$(PYTHONPATH=$KW_ROOT/clients/python python3 -c 'import json, sys
from kwitness.verify import verify
v = verify(sys.argv[1], sys.argv[2], log=sys.argv[3], allow_incomplete=len(sys.argv) > 4)
print(json.dumps([v.valid, v.reason, v.checkpoints], separators=(",", ":")))' \
			"$REC" "$KEY" "$LOG" "$@")
		expect_eq "the Python client's verdict is the CLI's: $what ($cli)" "$cli" "$py"
	}
	# same_cut WHAT LOG CKPTS: kwitness.verify_log against verify --log without a record
	same_cut() {
		local py
		py=$(PYTHONPATH=$KW_ROOT/clients/python python3 -c 'import dataclasses, json, sys
from kwitness.verify import verify_log
print(json.dumps(dataclasses.asdict(verify_log(sys.argv[1], sys.argv[2], checkpoints=sys.argv[3]))))' \
			"$2" "$KEY" "$3" | jq -Sc .)
		expect_eq "the Python client's verify_log is the CLI's: $1" "$(cut_verify "$2" "$3" | jq -Sc .)" "$py"
	}
else
	same_verdict() { skip "the Python client's verdict: $1 (python3 cryptography missing)"; }
	same_cut() { skip "the Python client's verify_log: $1 (python3 cryptography missing)"; }
fi

conf 3600 200
start_with_conf
kwd_has_hook net.send || kt_skip_feature net.send "net.send hooks unavailable on this kernel"
listeners_start
PORT=$LPORT_A

policy_session ck enforce deny "\"net\":{\"send\":[\"127.0.0.1/32:$PORT\"]}" ||
	kt_fail_all "no session opened"
for _ in 1 2 3; do
	cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$PORT" 1000 >/dev/null
	sleep 0.2
done
session_close "$sid" >/dev/null || kt_fail_all "close failed"
CK=$LOG.checkpoints
n_ck=$(wc -l <"$CK")
check "checkpoints were written while the session ran ($n_ck for 3000 decisions)" \
	test "$n_ck" -ge 5
expect_eq "they are numbered 1..$n_ck" "$(seq -s, "$n_ck")" \
	"$(jq -r .n "$CK" | paste -sd,)"
jq -r .decisions "$CK" | paste -sd' ' | sed 's/^/# decisions at each checkpoint: /'
check "every checkpoint after the first covers at least 200 more decisions" \
	jq -se '. as $a | all(range(1; $a | length); $a[.].decisions - $a[. - 1].decisions >= 200)' "$CK"
t=$(trailer "$LOG")
expect_eq "the close entry names the last checkpoint" \
	"$(tail -n1 "$CK" | tr -d '\n' | sha256sum | cut -d' ' -f1) $n_ck" \
	"$(jfield "$t" checkpoint | sed 's/^sha256://') $(jfield "$t" checkpoints)"
out=$("$KW" verify --key "$KEY" --log "$LOG" --policy "$POL" "$REC")
check "the record verifies with its checkpoints" grep -q "^checkpoints: lines 1-" <<<"$out"
same_verdict "a closed session with its checkpoints"

# --- the log cut at 50 random byte offsets ------------------------------
size=$(stat -c %s "$LOG")
bad=0
for off in $(shuf -i 1-"$size" -n 50); do
	head -c "$off" "$LOG" >"$KT_TMP/cut"
	whole=$(tr -cd '\n' <"$KT_TMP/cut" | wc -c)
	want=$(jq -r .lines "$CK" | awk -v w="$whole" '$1 <= w && $1 > m { m = $1 } END { print m + 0 }')
	j=$(cut_verify "$KT_TMP/cut" "$CK")
	got=$(jq -r '"\(.valid) \(.vouched_lines)"' <<<"$j")
	if [ "$got" != "true $want" ]; then
		bad=$((bad + 1))
		echo "# cut at $off ($whole whole lines): want true $want, got $got: $j"
	fi
done
expect_eq "a log cut at 50 random offsets verifies exactly through its last whole checkpoint" 0 "$bad"
j=$(cut_verify "$KT_TMP/cut" "$CK")
check "a cut inside a line stops with log_truncated or at a checkpoint past the cut" \
	grep -qE '"stop":"(log_truncated|checkpoint_beyond_log|log_end)"' <<<"$j"
same_cut "the log cut at byte $off" "$KT_TMP/cut" "$CK"
head -n "$(jq -r .lines "$CK" | sed -n 3p)" "$LOG" >"$KT_TMP/cut3"
same_cut "the log cut after checkpoint 3's lines" "$KT_TMP/cut3" "$CK"

# --- forged, removed, reordered --------------------------------------------
sed '3s/"decisions":[0-9]*/"decisions":1/' "$CK" >"$KT_TMP/forged"
expect_eq "a forged checkpoint fails: checkpoint_signature_invalid" checkpoint_signature_invalid \
	"$(code_of "$(cut_verify "$LOG" "$KT_TMP/forged")")"
sed '3d' "$CK" >"$KT_TMP/removed"
expect_eq "a removed checkpoint fails: checkpoint_chain_gap" checkpoint_chain_gap \
	"$(code_of "$(cut_verify "$LOG" "$KT_TMP/removed")")"
awk 'NR == 3 { h = $0; next } NR == 4 { print; print h; next } { print }' "$CK" >"$KT_TMP/reordered"
expect_eq "a reordered pair fails: checkpoint_reordered" checkpoint_reordered \
	"$(code_of "$(cut_verify "$LOG" "$KT_TMP/reordered")")"
same_cut "a reordered pair" "$LOG" "$KT_TMP/reordered"
sed '$d' "$CK" >"$KT_TMP/lastgone"
out=$("$KW" verify --key "$KEY" --log "$LOG" --policy "$POL" --checkpoints "$KT_TMP/lastgone" "$REC")
check "the record fails when its last checkpoint is removed (checkpoint_chain_gap)" \
	grep -q "^invalid: checkpoint_chain_gap" <<<"$out"
# a decision line vouched for by a checkpoint, changed: same bytes length
sed '5s/"seq":\([0-9]\)/"seq":9/' "$LOG" >"$KT_TMP/tampered"
cmp -s "$LOG" "$KT_TMP/tampered" && not_ok "the test changed a line" ||
	expect_eq "a changed vouched line fails: checkpoint_prefix_mismatch" checkpoint_prefix_mismatch \
		"$(code_of "$(cut_verify "$KT_TMP/tampered" "$CK")")"

# --- the collector killed with no pins: sealed from the last checkpoint ---
power_off() { # NAME: a session with checkpoints, then more lines, then SIGKILL
	policy_session "$1" enforce deny "\"net\":{\"send\":[\"127.0.0.1/32:$PORT\"]}" ||
		kt_fail_all "no session opened"
	cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$PORT" 500 >/dev/null
	sleep 2.5 # a checkpoint by time (interval 2 s)
	sleep 2.5 # idle: nothing new, no checkpoint
	[ "$1" = pl ] && expect_eq "one checkpoint by time, none while nothing new was logged" 1 \
		"$(wc -l <"$KT_TMP/state/logs/$sid.jsonl.checkpoints")"
	# new lines after a quiet spell: checkpointed at once (the interval is
	# over), then more within the next interval, which stay unvouched
	cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$PORT" 200 >/dev/null
	sleep 0.3
	cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$PORT" 300 >/dev/null
	sleep 0.5 # on disk, not yet checkpointed
	kill -KILL "$KT_DPID"
	kwd_gone "$KT_DPID" 100
	KT_DPID=
	LOG=$KT_TMP/state/logs/$sid.jsonl REC=$KT_TMP/state/records/$sid.json
}
kwd_stop
conf 2 0
start_with_conf
power_off pl
lines_ck=$(tail -n1 "$LOG.checkpoints" | jq -r .lines)
lines_now=$(wc -l <"$LOG")
check "before the restart the log holds lines after the last checkpoint ($lines_now > $lines_ck)" \
	test "$lines_now" -gt "$lines_ck"
start_with_conf
for _ in $(seq 100); do [ -e "$REC" ] && break; sleep 0.1; done
t=$(trailer "$LOG")
expect_eq "the seal names the checkpoint it vouches from and the unvouched lines" \
	"$(tail -n1 "$LOG.checkpoints" | jq -r .n) $((lines_now - lines_ck)) false" \
	"$(jfield "$t" checkpoints) $(jfield "$t" unvouched_lines) $(jfield "$t" complete)"
out=$("$KW" verify --key "$KEY" --log "$LOG" --allow-incomplete "$REC")
echo "$out" | sed 's/^/# /'
check "verify reports the vouched lines and the unvouched tail" \
	grep -q "^checkpoints: lines 1-$lines_ck vouched .* $((lines_now - lines_ck)) line(s) after it unvouched" <<<"$out"
check "and completeness false" grep -q "^completeness: INCOMPLETE" <<<"$out"
out=$("$KW" verify --key "$KEY" --log "$LOG" "$REC")
check "without --allow-incomplete it is log_incomplete" grep -q "^invalid: log_incomplete" <<<"$out"
same_verdict "a session sealed from its last checkpoint, the unvouched tail" --allow-incomplete
same_verdict "the same without --allow-incomplete"

# a vouched line changed while the collector was down
power_off pl2
# (a 1 put before the pid changes it whatever its digits: a 9 written over
# the first digit left a pid of 9xxx as it was)
cp "$LOG" "$KT_TMP/before-edit"
sed -i '3s/"pid":\([0-9]\)/"pid":1\1/' "$LOG"
cmp -s "$LOG" "$KT_TMP/before-edit" && not_ok "the test changed a vouched line"
start_with_conf
for _ in $(seq 100); do [ -e "$REC" ] && break; sleep 0.1; done
out=$("$KW" verify --key "$KEY" --log "$LOG" --allow-incomplete "$REC")
check "a vouched line changed while down fails: checkpoint_prefix_mismatch" \
	grep -q "^invalid: checkpoint_prefix_mismatch" <<<"$out" || { sed -n 3p "$LOG"; echo "$out"; } | sed 's/^/# /'
same_verdict "a vouched line changed while down, then sealed" --allow-incomplete

# --- a collector killed with the pins kept: the resumed session's chain goes on
kwd_stop
KT_PIN=/sys/fs/bpf/kwt-ck-$$
conf 1 0
start_pinned() {
	kwd_start --pin-dir "$KT_PIN" --config "$KT_TMP/kwd.conf"
}
# pinned_session NAME: a session, 300 decisions, a checkpoint (interval 1 s),
# then the collector killed with its pins kept
pinned_session() {
	policy_session "$1" enforce deny "\"net\":{\"send\":[\"127.0.0.1/32:$PORT\"]}" ||
		kt_fail_all "no session opened"
	LOG=$KT_TMP/state/logs/$sid.jsonl REC=$KT_TMP/state/records/$sid.json
	cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$PORT" 300 >/dev/null
	sleep 1.5
	kill -KILL "$KT_DPID"
	kwd_gone "$KT_DPID" 100
	KT_DPID=
	rm -f "$KT_TMP/kwitnessd.sock"
}
rm -f "$KT_TMP/kwitnessd.sock"
start_pinned
pinned_session rs
start_pinned
cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$PORT" 300 >/dev/null
sleep 1.5
session_close "$sid" >/dev/null || not_ok "the resumed session closes"
check "a resumed session's checkpoints continue its chain (n 1..$(wc -l <"$LOG.checkpoints"))" \
	test "$(jq -r .n "$LOG.checkpoints" | paste -sd,)" = "$(seq -s, "$(wc -l <"$LOG.checkpoints")")" -a \
	"$(wc -l <"$LOG.checkpoints")" -ge 2
check "and its record verifies with them" verify_record

# --- the log cut below its last checkpoint while no collector ran: that
# session is sealed as found, not resumed, and the collector says why
pinned_session rc
ck_n=$(tail -n1 "$LOG.checkpoints" | jq -r .n)
ck_lines=$(tail -n1 "$LOG.checkpoints" | jq -r .lines)
head -n 10 "$LOG" >"$KT_TMP/cut" && cat "$KT_TMP/cut" >"$LOG"
start_pinned
for _ in $(seq 100); do [ -e "$REC" ] && break; sleep 0.1; done
check "a log cut below its checkpoint $ck_n ($ck_lines lines) is not resumed: the collector says so" \
	grep -q "session $sid cannot be resumed: the log no longer matches its checkpoints (checkpoint_beyond_log): checkpoint $ck_n covers $ck_lines lines; the log holds 10" \
	"$KT_TMP/kwitnessd.log"
expect_eq "... sealed as found, vouching for nothing (no resume entry, no checkpoint named)" "0 1 0" \
	"$(grep -c '"tool":"kwitness.resume"' "$LOG") $(trailer "$LOG" |
		grep -c '"sealed":"the session could not be resumed: the log no longer matches') $(trailer \
		"$LOG" | grep -c '"checkpoint":')"
same_verdict "a log cut below its last checkpoint while down, sealed as found" --allow-incomplete
finish
