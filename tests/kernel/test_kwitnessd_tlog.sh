#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitnessd with `log = DIR` (Level 2): every record is signed once with its
# transparency URL, appended to the log, cosigned by a local witness and
# written with RECORD.tlog-proof; kwitness verify --transparency checks it
# offline; a witness policy that cannot be met sends records out without a URI.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
L=$KT_TMP/log
"$KW" keygen --out "$KT_TMP/log.pem" >/dev/null
"$KW" keygen --out "$KT_TMP/w.pem" >/dev/null
LVKEY=$("$KW" tlog init "$L" --origin log.test.kwitness/$$ --key "$KT_TMP/log.pem")
WVKEY=$("$KW" tlog vkey --key "$KT_TMP/w.pem" --name w.test.kwitness --witness)
printf 'log %s\nwitness W %s\nquorum W\n' "$LVKEY" "$WVKEY" >"$KT_TMP/trust"
cat >"$KT_TMP/kw.conf" <<CONF
log = $L
log_key = $KT_TMP/log.pem
log_witness = local:w.test.kwitness:$KT_TMP/w.pem:$KT_TMP/wstate
log_policy = $KT_TMP/trust
CONF
kwd_start --config "$KT_TMP/kw.conf"
check "kwitnessd says where records go" grep -q "records go to the transparency log" "$KT_TMP/kwitnessd.log"

pol=$(policy_file p '{"kwitness_policy":1,"mode":"enforce","record":"all"}')
for i in 1 2 3; do
	cg=$(cg_make "s$i")
	sid=$(session_open "$cg" "$pol" "spiffe://test.kwitness.local/tlog/$i")
	cg_run "$cg" true
	session_close "$sid" >/dev/null
	eval "REC$i=\$REC"
done
jq -e '.transparency | startswith("https://log.test.kwitness/")' "$REC1" >/dev/null
expect_eq "the record has its transparency URL" 0 $?
check "RECORD.tlog-proof is beside it" [ -s "$REC1.tlog-proof" ]
for i in 1 2 3; do
	eval "r=\$REC$i"
	out=$("$KW" verify --key "$KT_TMP/signer.jwk" --transparency "$KT_TMP/trust" "$r")
	rc=$?
	if [ $rc -eq 0 ] && grep -q '^level 0, logged' <<<"$out"; then
		ok "record $i: logged and witnessed, verified offline (level 0, logged: no TPM)"
	else
		not_ok "record $i verifies with --transparency (rc $rc)"; echo "$out" | sed 's/^/#   /'
	fi
done
"$KW" tlog check "$L" --vkey "$LVKEY" >"$KT_TMP/out"
expect_eq "the log holds the three records and audits clean" "valid: log.test.kwitness/$$, 3 entries" \
	"$(cut -d, -f1,2 "$KT_TMP/out")"
kwd_stop

# A policy the witnesses cannot meet: the record goes out without a URI.
"$KW" keygen --out "$KT_TMP/w2.pem" >/dev/null
printf 'log %s\nwitness W %s\nwitness X %s\ngroup g all W X\nquorum g\n' "$LVKEY" "$WVKEY" \
	"$("$KW" tlog vkey --key "$KT_TMP/w2.pem" --name x.test.kwitness --witness)" >"$KT_TMP/trust2"
sed -i "s|^log_policy = .*|log_policy = $KT_TMP/trust2|" "$KT_TMP/kw.conf"
kwd_start --config "$KT_TMP/kw.conf"
cg=$(cg_make s4)
sid=$(session_open "$cg" "$pol" spiffe://test.kwitness.local/tlog/4)
session_close "$sid" >/dev/null
expect_eq "an unmet witness policy: no transparency in the record" null "$(jq .transparency "$REC")"
check "and no proof beside it" [ ! -e "$REC.tlog-proof" ]
"$KW" verify --key "$KT_TMP/signer.jwk" "$REC" >/dev/null
expect_eq "the record is still valid (re-signed, Level 0)" 0 $?
check "kwitnessd says why it was not logged" grep -q "not logged (no transparency): witness policy not met" "$KT_TMP/kwitnessd.log"
kwd_stop

sed -i "s|^log_key = .*|log_key = $KT_TMP/w2.pem|" "$KT_TMP/kw.conf"
out=$(timeout 20 "$KWD" --foreground --state-dir "$KT_TMP/state-x" --socket "$KT_TMP/x.sock" --pin-dir none \
	--key "$KT_TMP/key.pem" --config "$KT_TMP/kw.conf" 2>&1)
check "kwitnessd refuses a log_key that did not sign the log" grep -q "not signed by log_key" <<<"$out"
finish
