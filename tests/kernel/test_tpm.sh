#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Level 1: kwitnessd --tpm binds the signing key to a swtpm quote; kwitness
# verify --evidence appraises it, and each forgery fails at its own step; without
# --tpm records stay software-only.
# Every swtpm runs on a free port with its state in this run's folder; the EK
# certificates come from CAs made here.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"
. "$(dirname "$0")/tpm_lib.sh"

missing=$(swtpm_tools_missing) && kt_skip_all "$missing not installed (scripts/deps.sh installs swtpm, swtpm-tools, tpm2-tools)"
kwd_require
trap 'swtpm_cleanup; kwd_cleanup' EXIT
T=$KT_TMP

make_ca "$T/ca1" "kwitness test EK CA" && make_ca "$T/ca2" "kwitness other EK CA" ||
	kt_skip_all "openssl cannot make a test CA"
swtpm_make "$T/tpmA" "$T/ca1" && swtpm_make "$T/tpmB" "$T/ca1" ||
	{ sed 's/^/# /' "$T/tpmA/setup.log" | tail -5; kt_skip_all "swtpm_setup failed"; }
swtpm_start "$T/tpmA" || kt_skip_all "swtpm did not start"
TCTI_A=$TCTI
quiet() { "$@" >/dev/null 2>&1; }
check "the EK certificate swtpm_setup made chains to the test CA" \
	quiet openssl verify -CAfile "$T/ca1/issuercert.pem" \
	<(openssl x509 -inform DER -in "$T/tpmA/certs/ek-rsa2048.crt")

# --- enrollment ---------------------------------------------------------------
"$KW" keygen --out "$T/enroll.pem" >/dev/null
"$KW" key show --key "$T/enroll.pem" --jwk >"$T/enroll.jwk"
"$KW" keygen --out "$T/other.pem" >/dev/null
"$KW" key show --key "$T/other.pem" --jwk >"$T/other.jwk"
"$KW" tpm enroll --tpm "$TCTI_A" --tpm-ca "$T/ca1/issuercert.pem" --enroll-key "$T/enroll.pem" \
	--key "$KT_TMP/signer.jwk" --ak-out "$T/ak.json" --out "$T/enrollment.json" 2>"$T/enroll.err"
expect_eq "tpm enroll: credential activation succeeds" 0 "$?"
expect_eq "tpm enroll: the record names this host and the signing key" \
	"$(cat /etc/machine-id) $("$KW" key show --key "$KT_TMP/key.pem" --thumbprint)" \
	"$(jq -r '"\(.machine_id) \(.signing_keys | join(","))"' "$T/enrollment.json")"
expect_eq "tpm enroll: the AK file is owner-only (0600)" 600 "$(stat -c %a "$T/ak.json")"
expect_eq "tpm enroll: the record names the EK certificate the TPM holds" \
	"sha256:$(openssl dgst -sha256 -r "$T/tpmA/certs/ek-rsa2048.crt" | cut -d' ' -f1)" \
	"$(jq -r .ek_certificate "$T/enrollment.json")"
out=$("$KW" tpm enroll --tpm "$TCTI_A" --tpm-ca "$T/ca2/issuercert.pem" --enroll-key "$T/enroll.pem" \
	--key "$KT_TMP/signer.jwk" --ak-out "$T/ak-ca2.json" 2>&1)
rc=$?
check "tpm enroll: an EK certificate from another CA is refused" \
	test $rc -eq 1 -a -n "$(grep 'does not chain to the EK CA' <<<"$out")"

# --- no TPM: start fails with one clear line ------------------------------------
free_ports
out=$(timeout 20 "$KWD" --foreground --state-dir "$T/state-none" --socket "$T/none.sock" \
	--pin-dir none --config /dev/null --key "$KT_TMP/key.pem" \
	--tpm "swtpm:host=127.0.0.1,port=$BPORT_A" 2>&1)
rc=$?
check "--tpm at a port with no TPM: start fails, saying so" \
	test $rc -eq 1 -a -n "$(grep -E 'kwitnessd: --tpm .*(cannot be reached|does not answer)' <<<"$out")"
out=$(timeout 20 "$KWD" --foreground --state-dir "$T/state-none" --socket "$T/none.sock" \
	--pin-dir none --config /dev/null --key "$KT_TMP/key.pem" --tpm "tcp:nothing" 2>&1)
check "--tpm with an unknown TCTI: start fails, saying what is expected" \
	grep -q "expected device:/dev/tpmrm0 or swtpm:host=H,port=P" <<<"$out"

# --- an AK and an enrollment that kwitnessd must have -----------------------------
kwd_refused() { # NAME WANT_TEXT ARGS...: kwitnessd does not start, saying WANT_TEXT
	local name=$1 want=$2 out rc
	shift 2
	out=$(timeout 20 "$KWD" --foreground --state-dir "$T/state-none" --socket "$T/none.sock" \
		--pin-dir none --config /dev/null --key "$KT_TMP/key.pem" --tpm "$TCTI_A" "$@" 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && grep -qF -- "$want" <<<"$out"; then ok "$name"; else
		not_ok "$name (exit $rc)"
		echo "#   $out" | tail -2
	fi
}
kwd_refused "--tpm without --tpm-ak: start fails" "--tpm needs --tpm-ak FILE"
"$KW" tpm enroll --tpm "$TCTI_A" --tpm-ca "$T/ca1/issuercert.pem" --enroll-key "$T/enroll.pem" \
	--key "$T/other.jwk" --ak-out "$T/ak-other.json" --out "$T/enrollment-other.json" 2>/dev/null
kwd_refused "an enrollment for another signing key: start fails" \
	"the enrollment does not vouch for this host's signing key" \
	--tpm-ak "$T/ak-other.json" --tpm-enrollment "$T/enrollment-other.json"
cp "$T/ak.json" "$T/ak-open.json" && chmod 644 "$T/ak-open.json"
kwd_refused "an AK file others may read: start fails" "with mode 0600" --tpm-ak "$T/ak-open.json"

# --- the happy path -------------------------------------------------------------
kwd_start --tpm "$TCTI_A" --tpm-ak "$T/ak.json" --tpm-enrollment "$T/enrollment.json"
listeners_start
POLICY=$(policy_file tpm "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":[\"127.0.0.1/32:$LPORT_A\"]}}")
"$KW" run --socket "$KT_SOCK" --policy "$POLICY" --key-jwk "$KT_TMP/signer.jwk" -- \
	"$NP" connect 127.0.0.1 "$LPORT_A" >/dev/null 2>"$T/run.err"
expect_eq "run: the session closes with a verified record" 0 "$?"
REC=$(sed -n 's/^record: *//p' "$T/run.err") LOG=$(sed -n 's/^log: *//p' "$T/run.err")
[ -f "$REC" ] || { sed 's/^/# /' "$T/run.err" "$KT_TMP/kwitnessd.log" | tail -10; kt_skip_all "no record"; }

expect_eq "record: runtime.platform is tpm2" tpm2 "$(jq -r .runtime.platform "$REC")"
check "run: the summary leaves the tpm2 measurement to verify --evidence" \
	grep -q "runtime is tpm2: kwitness verify --evidence appraises it" "$T/run.err"
expect_eq "record: runtime.nonce is kwitness key show --thumbprint" \
	"$("$KW" key show --key "$KT_TMP/key.pem" --thumbprint)" "$(jq -r .runtime.nonce "$REC")"
expect_eq "record: runtime.nonce is the RFC 7638 thumbprint of cnf.jwk (jq + openssl)" \
	"$(thumbprint_of_jwk "$(jq -c .cnf.jwk "$REC")")" "$(jq -r .runtime.nonce "$REC")"
tpm2_pcrread -T "$TCTI_A" sha256:0,1,2,3,4,5,6,7 -o "$T/pcrs.bin" >/dev/null
expect_eq "record: runtime.measurement is SHA-256 of PCRs 0-7 read with tpm2_pcrread" \
	"sha256:$(openssl dgst -sha256 -r "$T/pcrs.bin" | cut -d' ' -f1)" \
	"$(jq -r .runtime.measurement "$REC")"
check "record: runtime.firmware_version is a.b.c.d" \
	grep -qE '^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$' <<<"$(jq -r .runtime.firmware_version "$REC")"

EVNAME=$(jq -r 'select(.tool == "kwitness.open") | .evidence' "$LOG")
EV=$T/state/evidence/${EVNAME#sha256:}.json
check "log: the open entry names an evidence file that exists" test -f "$EV"
expect_eq "log: the close entry names the same evidence" "$EVNAME" \
	"$(jq -r 'select(.tool == "kwitness.close") | .evidence' "$LOG")"
expect_eq "evidence: its name is SHA-256 of the quoted TPMS_ATTEST" \
	"$EVNAME" "sha256:$(b64url_dec "$(jq -r .quote.attest "$EV")" | openssl dgst -sha256 -r | cut -d' ' -f1)"
expect_eq "evidence: the EK certificate is the one the TPM holds" \
	"$(base64 -w0 "$T/tpmA/certs/ek-rsa2048.crt")" \
	"$(b64url_dec "$(jq -r '.ek_certificates[0]' "$EV")" | base64 -w0)"

verify_tpm() { # RECORD EVIDENCE [extra options...]: prints the JSON result
	local r=$1 e=$2
	shift 2
	"$KW" verify --key "$KT_TMP/signer.jwk" --max-age 0 "$r" --evidence "$e" \
		--tpm-ca "$T/ca1/issuercert.pem" --enroll-key "$T/enroll.jwk" --json "$@"
}
out=$("$KW" verify --key "$KT_TMP/signer.jwk" --log "$LOG" "$REC" --evidence "$EV" \
	--tpm-ca "$T/ca1/issuercert.pem" --enroll-key "$T/enroll.jwk")
rc=$?
check "verify --evidence: Level 1 (human line, exit 0)" test $rc -eq 0 -a -n "$(grep '^level 1: ' <<<"$out")"
expect_eq "verify --evidence --json: level 1, step 0, ok" "1 0 ok" \
	"$(verify_tpm "$REC" "$EV" | jq -r '"\(.level) \(.appraisal.step) \(.appraisal.reason)"')"
out=$("$KW" verify --key "$KT_TMP/signer.jwk" "$REC" --json)
expect_eq "verify without --evidence: valid, level 0" "true 0" "$(jq -r '"\(.valid) \(.level)"' <<<"$out")"
check "verify without --evidence: the human line says level 0" \
	grep -q '^level 0: no TPM evidence appraised' <<<"$("$KW" verify --key "$KT_TMP/signer.jwk" "$REC")"

# The estate: ingest appraises the evidence the log's trailer names.
mkdir -p "$T/trust" && cp "$KT_TMP/signer.jwk" "$T/trust/"
estate_level() { # DB: "level appraisal" of the stored record
	sqlite3 -batch -noheader -separator ' ' "$1" 'SELECT level, appraisal FROM records'
}
"$KW" estate ingest --create --db "sqlite:$T/e1.sqlite" --trust "$T/trust" --tpm-ca "$T/ca1/issuercert.pem" \
	--enroll-key "$T/enroll.jwk" "$T/state" >"$T/ingest.out"
check "estate ingest --tpm-ca --enroll-key: the record is stored at level 1" \
	grep -q '^summary: 1 records: 1 stored (0 incomplete, 1 at level 1)' "$T/ingest.out"
expect_eq "estate query: level 1" 1 "$("$KW" estate query --db "sqlite:$T/e1.sqlite" --json | jq -r .level | sort -u)"
"$KW" estate ingest --create --db "sqlite:$T/e0.sqlite" --trust "$T/trust" "$T/state" >/dev/null
expect_eq "estate ingest without them: level 0, and why" \
	"0 TPM evidence not appraised (no --tpm-ca and --enroll-key)" "$(estate_level "$T/e0.sqlite")"
"$KW" estate ingest --create --db "sqlite:$T/e2.sqlite" --trust "$T/trust" --tpm-ca "$T/ca2/issuercert.pem" \
	--enroll-key "$T/enroll.jwk" "$T/state" >/dev/null
check "estate ingest under another EK CA: level 0 at step 1 (ek_untrusted)" \
	grep -q '^0 TPM appraisal failed at step 1: ek_untrusted: ' <<<"$(estate_level "$T/e2.sqlite")"

# PCR reference: equal values pass, one changed value fails at step 6.
jq '.quote.pcr_values' "$EV" >"$T/ref.json"
expect_eq "verify --pcrs-ref with the quoted values: level 1" 1 \
	"$(verify_tpm "$REC" "$EV" --pcrs-ref "$T/ref.json" | jq .level)"
jq '.["7"] = "00000000000000000000000000000000000000000000000000000000000000ff"' "$T/ref.json" >"$T/ref-bad.json"

# fails_at NAME STEP REASON RECORD EVIDENCE [options]: level 0, the first failing step.
fails_at() {
	local name=$1 step=$2 reason=$3 r=$4 e=$5 out rc
	shift 5
	out=$(verify_tpm "$r" "$e" "$@")
	rc=$?
	if [ $rc -eq 1 ] && [ "$(jq -r '"\(.valid) \(.level) \(.appraisal.step) \(.appraisal.reason)"' <<<"$out")" = "true 0 $step $reason" ]; then
		ok "$name: level 0 at step $step ($reason)"
	else
		not_ok "$name: want level 0 at step $step ($reason), exit 1 (exit $rc)"
		echo "#   $out"
	fi
}
fails_at "a PCR value unlike the reference" 6 pcr_values_mismatch "$REC" "$EV" --pcrs-ref "$T/ref-bad.json"

# --- a swapped evidence file: same key, same TPM, another quote ---------------------
# Another quote of this key by this AK, put under the name the log commits to:
# a valid quote on its own, but not the one the record is signed under.
"$KW" tpm quote --tpm "$TCTI_A" --ak "$T/ak.json" --key "$KT_TMP/signer.jwk" \
	--enrollment "$T/enrollment.json" --out "$T/ev-swap.json" 2>/dev/null
expect_eq "swap: the other quote on its own appraises (level 1)" 1 "$(verify_tpm "$REC" "$T/ev-swap.json" | jq .level)"
cp -a "$T/state" "$T/state-swap"
cp "$T/ev-swap.json" "$T/state-swap/evidence/${EVNAME#sha256:}.json"

out=$("$KW" verify --key "$KT_TMP/signer.jwk" --log "$LOG" "$REC" \
	--evidence "$T/state-swap/evidence/${EVNAME#sha256:}.json" \
	--tpm-ca "$T/ca1/issuercert.pem" --enroll-key "$T/enroll.jwk" --json)
rc=$?
expect_eq "swap: verify --log refuses it, level 0 at step 0 (evidence_not_logged), exit 1" \
	"1 0 0 evidence_not_logged" "$rc $(jq -r '"\(.level) \(.appraisal.step) \(.appraisal.reason)"' <<<"$out")"
"$KW" estate ingest --create --db "sqlite:$T/e-swap.sqlite" --trust "$T/trust" --tpm-ca "$T/ca1/issuercert.pem" \
	--enroll-key "$T/enroll.jwk" "$T/state-swap" >/dev/null
check "swap: estate ingest stores it at level 0, saying evidence_not_logged" \
	grep -q '^0 TPM appraisal failed at step 0: evidence_not_logged: ' <<<"$(estate_level "$T/e-swap.sqlite")"
out=$("$KW" verify --key "$KT_TMP/signer.jwk" --log "$LOG" "$REC" --evidence "$EV" \
	--tpm-ca "$T/ca1/issuercert.pem" --enroll-key "$T/enroll.jwk" --json)
expect_eq "the logged evidence with verify --log: level 1" 1 "$(jq .level <<<"$out")"

# --- forgeries, each caught at its own step ---------------------------------------
# 1: the EK CA the verifier trusts did not issue this EK certificate.
out=$("$KW" verify --key "$KT_TMP/signer.jwk" --max-age 0 "$REC" --evidence "$EV" \
	--tpm-ca "$T/ca2/issuercert.pem" --enroll-key "$T/enroll.jwk" --json)
expect_eq "EK certificate from a CA not trusted: level 0 at step 1" "0 1 ek_untrusted" \
	"$(jq -r '"\(.level) \(.appraisal.step) \(.appraisal.reason)"' <<<"$out")"
# 2: evidence from another swtpm instance (another EK, same CA).
jq --arg c "$(base64 -w0 "$T/tpmB/certs/ek-rsa2048.crt" | tr -- '+/' '-_' | tr -d '=')" \
	'.ek_certificates = [$c]' "$EV" >"$T/ev-otherek.json"
fails_at "evidence with another swtpm's EK" 2 ak_not_enrolled "$REC" "$T/ev-otherek.json"
# 2: an AK not enrolled (no enrollment, or one by a key the verifier does not trust).
jq '.ak_binding = {method: "none", enrollment: null}' "$EV" >"$T/ev-noenroll.json"
fails_at "an AK not enrolled" 2 ak_not_enrolled "$REC" "$T/ev-noenroll.json"
out=$("$KW" verify --key "$KT_TMP/signer.jwk" --max-age 0 "$REC" --evidence "$EV" \
	--tpm-ca "$T/ca1/issuercert.pem" --enroll-key "$T/other.jwk" --json)
expect_eq "an enrollment signed by an untrusted key: level 0 at step 2" "0 2 ak_not_enrolled" \
	"$(jq -r '"\(.level) \(.appraisal.step) \(.appraisal.reason)"' <<<"$out")"
# 3: a TPMS_ATTEST changed after signing (one bit, 40 bytes before its end).
att=$(b64url_dec "$(jq -r .quote.attest "$EV")" | od -An -v -tx1 | tr -d ' \n')
pos=$(( (${#att} / 2 - 40) * 2 ))
flipped=${att:0:pos}$(printf '%02x' $(( 0x${att:pos:2} ^ 1 )))${att:pos+2}
jq --arg a "$(printf "$(sed 's/../\\x&/g' <<<"$flipped")" | base64 -w0 | tr -- '+/' '-_' | tr -d '=')" \
	'.quote.attest = $a' "$EV" >"$T/ev-forged.json"
fails_at "a quote changed after the AK signed it" 3 quote_signature_invalid "$REC" "$T/ev-forged.json"
# 4: a quote made for another key's thumbprint (same TPM, same enrolled AK).
"$KW" tpm quote --tpm "$TCTI_A" --ak "$T/ak.json" --key "$T/other.jwk" --enrollment "$T/enrollment.json" \
	--out "$T/ev-otherkey.json" 2>"$T/quote.err"
expect_eq "tpm quote for another key: made" 0 "$?"
fails_at "a quote made for another key's thumbprint" 4 quote_nonce_mismatch "$REC" "$T/ev-otherkey.json"
# 4: a record signed by a key whose thumbprint is not in the quote.
"$KW" sign --key "$T/other.pem" "$REC" >"$T/rec-otherkey.json"
out=$("$KW" verify --key "$T/other.jwk" --max-age 0 "$T/rec-otherkey.json" --evidence "$EV" \
	--tpm-ca "$T/ca1/issuercert.pem" --enroll-key "$T/enroll.jwk" --json)
expect_eq "a record signed by a key the AK is not enrolled for: level 0 at step 2" \
	"true 0 2 ak_not_enrolled_for_key" \
	"$(jq -r '"\(.valid) \(.level) \(.appraisal.step) \(.appraisal.reason)"' <<<"$out")"
# 5: a hostile producer swaps runtime.measurement before signing.
jq '.runtime.measurement = "sha256:1111111111111111111111111111111111111111111111111111111111111111"' \
	"$REC" | "$KW" sign --key "$KT_TMP/key.pem" - >"$T/rec-swapped.json"
expect_eq "swapped measurement: the signature still verifies" 0 \
	"$("$KW" verify --key "$KT_TMP/signer.jwk" "$T/rec-swapped.json" >/dev/null; echo $?)"
fails_at "a swapped runtime.measurement" 5 quote_measurement_mismatch "$T/rec-swapped.json" "$EV"
# 6: a PCR value changed in the evidence.
jq '.quote.pcr_values["3"] = "00000000000000000000000000000000000000000000000000000000000000aa"' \
	"$EV" >"$T/ev-pcr.json"
fails_at "a changed PCR value in the evidence" 6 pcr_values_mismatch "$REC" "$T/ev-pcr.json"
# A software-only record never reaches Level 1.
jq '.runtime = {platform: "software-only", measurement: .runtime.measurement}' "$REC" |
	"$KW" sign --key "$KT_TMP/key.pem" - >"$T/rec-soft.json"
fails_at "a software-only record with evidence" 0 evidence_malformed "$T/rec-soft.json" "$EV"

# --- PCR extend mid-session: the close gets a new binding and new evidence ---------
cg=$(cg_make extend)
sid=$(session_open "$cg" "$POLICY")
tpm2_pcrextend -T "$TCTI_A" 7:sha256=$(printf 'kwitness test' | openssl dgst -sha256 -r | cut -d' ' -f1)
session_close "$sid" >/dev/null
open_ev=$(jq -r 'select(.tool == "kwitness.open") | .evidence' "$LOG")
close_ev=$(jq -r 'select(.tool == "kwitness.close") | .evidence' "$LOG")
expect_eq "extend: the open entry named the binding before the extend" "$EVNAME" "$open_ev"
check "extend: the close entry names a new binding" test "$close_ev" != "$open_ev" -a -n "$close_ev"
EV2=$T/state/evidence/${close_ev#sha256:}.json
check "extend: the new evidence file exists" test -f "$EV2"
tpm2_pcrread -T "$TCTI_A" sha256:0,1,2,3,4,5,6,7 -o "$T/pcrs2.bin" >/dev/null
expect_eq "extend: the record's measurement is the new PCR digest" \
	"sha256:$(openssl dgst -sha256 -r "$T/pcrs2.bin" | cut -d' ' -f1)" \
	"$(jq -r .runtime.measurement "$REC")"
expect_eq "extend: the new record with the new evidence: level 1" 1 "$(verify_tpm "$REC" "$EV2" | jq .level)"
fails_at "extend: the new record with the old evidence" 5 quote_measurement_mismatch "$REC" "$EV"

kwd_stop
check "kwitnessd stops cleanly with --tpm" test $? -eq 0

# --- without --tpm: software-only, as before -------------------------------------
kwd_start
"$KW" run --socket "$KT_SOCK" --policy "$POLICY" --key-jwk "$KT_TMP/signer.jwk" -- true \
	>/dev/null 2>"$T/run-soft.err"
REC=$(sed -n 's/^record: *//p' "$T/run-soft.err") LOG=$(sed -n 's/^log: *//p' "$T/run-soft.err")
expect_eq "without --tpm: runtime.platform is software-only, no nonce" "software-only null" \
	"$(jq -r '"\(.runtime.platform) \(.runtime.nonce)"' "$REC")"
expect_eq "without --tpm: the open entry names no evidence" null \
	"$(jq -r 'select(.tool == "kwitness.open") | .evidence' "$LOG")"
fails_at "without --tpm: any evidence" 0 evidence_malformed "$REC" "$EV"
kwd_stop
finish
