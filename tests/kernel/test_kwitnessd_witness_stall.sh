#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Nothing slow on the log path (docs/security.md, "The witness stalls
# everyone"): with `log = DIR` and a witness that accepts connections and
# never answers, a session is closed (its record waits for the witness)
# while another session floods decisions. The flood loses nothing, as in the
# control run without the stalled close; the stalled record loses only its
# Level 2 (signed without transparency, said in the log, counted in status
# and waiting for a retry).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

N=16000 RATE=2000

kwd_require
command -v python3 >/dev/null || kt_fail_all "python3 is not installed (scripts/deps.sh)"
listeners_start

# The witness: accepts, reads nothing, answers nothing, holds every connection.
stalled_witness_start
[ -n "$WPORT" ] || kt_fail_all "the stalled witness did not listen"

L=$KT_TMP/log
"$KW" keygen --out "$KT_TMP/log.pem" >/dev/null
"$KW" keygen --out "$KT_TMP/w.pem" >/dev/null
LVKEY=$("$KW" tlog init "$L" --origin log.test.kwitness/$$ --key "$KT_TMP/log.pem")
WVKEY=$("$KW" tlog vkey --key "$KT_TMP/w.pem" --name w.test.kwitness --witness)
printf 'log %s\nwitness W %s\nquorum W\n' "$LVKEY" "$WVKEY" >"$KT_TMP/trust"
cat >"$KT_TMP/kw.conf" <<CONF
log = $L
log_key = $KT_TMP/log.pem
log_witness = http://127.0.0.1:$WPORT
log_policy = $KT_TMP/trust
CONF
kwd_start --config "$KT_TMP/kw.conf"
kwd_has_hook net.send || kt_skip_all "net.send hooks unavailable on this kernel"

# flood LABEL STALL: a session floods N sends; with STALL another session is
# closed just before (its record waits for the witness meanwhile). Prints
# "logged dropped" of the flood session.
flood() {
	local cg sid scg ssid cpid=
	policy_session "flood-$1" enforce allow "\"net\":{\"send\":[\"127.0.0.1/32:$LPORT_A\"]}" ||
		kt_fail_all "flood session $1 did not open"
	if [ "$2" = stall ]; then
		scg=$(cg_make "stalled-$1")
		ssid=$(session_open "$scg" "$KT_TMP/p.json")
		"$KW" session close --socket "$KT_SOCK" "$ssid" >"$KT_TMP/stalled.out" 2>&1 &
		cpid=$!
		sleep 0.5
	fi
	cg_run "$cg" "$NP" flood sendto 127.0.0.1 "$LPORT_A" $N $RATE >"$KT_TMP/flood-$1.out"
	[ -n "$cpid" ] && wait $cpid
	session_close "$sid" >/dev/null
	echo "$(decisions "$LOG" | grep -c .) $(jfield "$(trailer "$LOG")" dropped)"
}
printf '{"kwitness_policy":1,"mode":"enforce","record":"all"}' >"$KT_TMP/p.json"

control=$(flood control none)
echo "# control: logged, dropped: $control"
expect_eq "control: every send logged, none dropped" "$N 0" "$control"
t0=$(date +%s)
attack=$(flood attack stall)
echo "# with a stalled witness: logged, dropped: $attack ($(($(date +%s) - t0)) s)"
expect_eq "stalled witness: every send logged, none dropped (as in the control run)" "$N 0" "$attack"

REC=$(sed -n 's/^record: *//p' "$KT_TMP/stalled.out")
check "the stalled session's close still got its record" test -s "$REC"
expect_eq "the stalled record has no transparency (its Level 2 is lost)" null "$(jq .transparency "$REC")"
"$KW" verify --key "$KT_TMP/signer.jwk" "$REC" >/dev/null
expect_eq "the stalled record verifies (Level 1)" 0 $?
check "kwitnessd says the record was not logged and will be retried" \
	grep -q "not logged (no transparency): .*retried in" "$KT_TMP/kwitnessd.log"
st=$("$KW" status --socket "$KT_SOCK" --json)
expect_eq "status counts the records not logged and waiting for a retry" "3 3 0" \
	"$(jq -r '"\(.transparency.unlogged) \(.transparency.retry_waiting) \(.transparency.logged)"' <<<"$st")"
kwd_stop
finish
