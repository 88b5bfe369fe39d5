#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Self-contained Level 1: kwitnessd --record-profile trace-v0.3-draft signs
# records that carry their swtpm evidence inline (runtime.evidence, TRACE
# v0.3 draft). The record validates against the draft schema with an
# independent validator (python3-jsonschema); kwitness verify appraises the
# inline evidence to Level 1 with the same steps as the evidence file; a
# changed byte fails with its reason code; the default stays v0.2.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"
. "$(dirname "$0")/tpm_lib.sh"

missing=$(swtpm_tools_missing) && kt_skip_all "$missing not installed (scripts/deps.sh installs swtpm, swtpm-tools, tpm2-tools)"
python3 -c 'import jsonschema' 2>/dev/null ||
	kt_skip_all "python3-jsonschema not installed (scripts/deps.sh installs it)"
kwd_require
trap 'swtpm_cleanup; kwd_cleanup' EXIT
T=$KT_TMP
SCHEMA=$KW_ROOT/tests/vectors/trace-spec/trace-claim-v0.3-draft.json

make_ca "$T/ca" "kwitness test EK CA" || kt_skip_all "openssl cannot make a test CA"
swtpm_make "$T/tpm" "$T/ca" || { sed 's/^/# /' "$T/tpm/setup.log" | tail -5; kt_skip_all "swtpm_setup failed"; }
swtpm_start "$T/tpm" || kt_skip_all "swtpm did not start"
"$KW" keygen --out "$T/enroll.pem" >/dev/null
"$KW" key show --key "$T/enroll.pem" --jwk >"$T/enroll.jwk"
"$KW" tpm enroll --tpm "$TCTI" --tpm-ca "$T/ca/issuercert.pem" --enroll-key "$T/enroll.pem" \
	--key "$KT_TMP/signer.jwk" --ak-out "$T/ak.json" --out "$T/enrollment.json" 2>"$T/enroll.err" ||
	{ sed 's/^/# /' "$T/enroll.err"; kt_fail_all "tpm enroll failed"; }

# schema_check RECORD: the draft schema's verdict, "valid" or the first error.
schema_check() {
	python3 - "$SCHEMA" "$1" <<'EOF'
import json, sys
import jsonschema
schema, rec = (json.load(open(p)) for p in sys.argv[1:3])
v = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
errs = sorted(v.iter_errors(rec), key=lambda e: list(e.absolute_path))
print("valid" if not errs else "invalid: %s: %s" % ("/".join(map(str, errs[0].absolute_path)), errs[0].message[:200]))
EOF
}
b64url_enc() { base64 -w0 | tr '+/' '-_' | tr -d '='; }
verify_inline() { # RECORD [options]: kwitness verify --json, inline evidence
	local r=$1
	shift
	"$KW" verify --key "$KT_TMP/signer.jwk" --max-age 0 "$r" --tpm-ca "$T/ca/issuercert.pem" \
		--enroll-key "$T/enroll.jwk" --json "$@"
}
# fails_at NAME STEP REASON RECORD: level 0 at that appraisal step, exit 1.
fails_at() {
	local out rc
	out=$(verify_inline "$4")
	rc=$?
	expect_eq "$1: level 0 at step $2 ($3), exit 1" "1 true 0 $2 $3" \
		"$rc $(jq -r '"\(.valid) \(.level) \(.appraisal.step) \(.appraisal.reason)"' <<<"$out")"
}

# --- the config key, then the flag (which wins) -----------------------------------
printf 'record_profile = trace-v0.4\n' >"$T/bad.conf"
out=$(timeout 20 "$KWD" --foreground --state-dir "$T/state-bad" --socket "$T/bad.sock" --pin-dir none \
	--config "$T/bad.conf" --key "$KT_TMP/key.pem" 2>&1)
check "config record_profile: an unknown profile stops the start, saying which exist" \
	grep -q "record_profile must be trace-v0.2 or trace-v0.3-draft" <<<"$out"
printf 'record_profile = trace-v0.3-draft\n' >"$T/v03.conf"

kwd_start --tpm "$TCTI" --tpm-ak "$T/ak.json" --tpm-enrollment "$T/enrollment.json" --record-profile trace-v0.3-draft
POLICY=$(policy_file tpm '{"kwitness_policy":1,"mode":"enforce"}')
"$KW" run --socket "$KT_SOCK" --policy "$POLICY" --key-jwk "$KT_TMP/signer.jwk" -- true >/dev/null 2>"$T/run.err"
expect_eq "run: the session closes with a verified record" 0 "$?"
REC=$(sed -n 's/^record: *//p' "$T/run.err") LOG=$(sed -n 's/^log: *//p' "$T/run.err")
[ -f "$REC" ] || { sed 's/^/# /' "$T/run.err" "$KT_TMP/kwitnessd.log" | tail -10; kt_skip_all "no record"; }

expect_eq "record: eat_profile is the v0.3 draft's, runtime.platform tpm2" \
	"tag:agentrust-io.com,2026:trace-v0.3 tpm2" "$(jq -r '"\(.eat_profile) \(.runtime.platform)"' "$REC")"
expect_eq "record: runtime.evidence is {binds: cnf-key, format: tpm2-quote, quote}" \
	'["binds","format","quote"] cnf-key tpm2-quote' \
	"$(jq -c '.runtime.evidence | keys' "$REC") $(jq -r '.runtime.evidence | "\(.binds) \(.format)"' "$REC")"
expect_eq "record: validates against the draft schema (python3-jsonschema, draft 2020-12)" valid "$(schema_check "$REC")"
EVNAME=$(jq -r 'select(.tool == "kwitness.close") | .evidence' "$LOG")
EV=$T/state/evidence/${EVNAME#sha256:}.json
expect_eq "record: the inline quote is the RFC 8785 bytes of the evidence file the close entry names" \
	"$(tr -d '\n' <"$EV" | b64url_enc)" "$(jq -r .runtime.evidence.quote "$REC")"

out=$("$KW" verify --key "$KT_TMP/signer.jwk" --log "$LOG" "$REC" --tpm-ca "$T/ca/issuercert.pem" \
	--enroll-key "$T/enroll.jwk")
rc=$?
check "verify, inline evidence: Level 1 (human line, exit 0)" test $rc -eq 0 -a -n "$(grep '^level 1: ' <<<"$out")"
expect_eq "verify --log --json, inline evidence: level 1, step 0, ok" "1 0 ok" \
	"$(verify_inline "$REC" --log "$LOG" | jq -r '"\(.level) \(.appraisal.step) \(.appraisal.reason)"')"
expect_eq "verify --evidence FILE on the same record: level 1 too" 1 \
	"$(verify_inline "$REC" --evidence "$EV" | jq .level)"
expect_eq "verify without --tpm-ca: valid, level 0" "true 0" \
	"$("$KW" verify --key "$KT_TMP/signer.jwk" --json "$REC" | jq -r '"\(.valid) \(.level)"')"

# --- changed bytes -------------------------------------------------------------
# A byte of the inline quote changed, the record not signed again: the record
# signature covers the evidence, so verify stops before any appraisal.
q=$(jq -r .runtime.evidence.quote "$REC")
c=${q:100:1}; [ "$c" = A ] && c=B || c=A
jq -c --arg q "${q:0:100}$c${q:101}" '.runtime.evidence.quote = $q' "$REC" >"$T/rec-flip.json"
out=$(verify_inline "$T/rec-flip.json")
expect_eq "a changed quote character, not re-signed: signature_invalid, exit 1" "1 signature_invalid" \
	"$? $(jq -r .reason <<<"$out")"
# The same re-signed with the record's own key (a producer that edits its
# evidence): one byte of TPMS_ATTEST changed fails the AK's signature (step 3).
att=$(jq -r .quote.attest "$EV")
att2=$(b64url_dec "$att" | python3 -c 'import sys; b=bytearray(sys.stdin.buffer.read()); b[-1]^=1; sys.stdout.buffer.write(b)' | b64url_enc)
jq -c --arg a "$att2" '.quote.attest = $a' "$EV" | tr -d '\n' | b64url_enc >"$T/q-attest"
jq -c --rawfile q "$T/q-attest" '.runtime.evidence.quote = $q' "$REC" |
	"$KW" sign --key "$KT_TMP/key.pem" - >"$T/rec-attest.json"
fails_at "one TPMS_ATTEST byte changed inline, re-signed" 3 quote_signature_invalid "$T/rec-attest.json"
# The quote bound to this key, inline in a record whose measurement lies.
jq -c '.runtime.measurement = "sha256:" + ("0" * 64)' "$REC" |
	"$KW" sign --key "$KT_TMP/key.pem" - >"$T/rec-meas.json"
fails_at "the inline quote with another runtime.measurement, re-signed" 5 quote_measurement_mismatch "$T/rec-meas.json"
# Inline evidence gone (a v0.3 record signed without it): nothing to appraise.
jq -c 'del(.runtime.evidence)' "$REC" | "$KW" sign --key "$KT_TMP/key.pem" - >"$T/rec-none.json"
fails_at "a v0.3 record without runtime.evidence" 0 evidence_malformed "$T/rec-none.json"
kwd_stop

# --- the config key; and the default stays v0.2 --------------------------------
kwd_start --tpm "$TCTI" --tpm-ak "$T/ak.json" --tpm-enrollment "$T/enrollment.json" --config "$T/v03.conf"
"$KW" run --socket "$KT_SOCK" --policy "$POLICY" --key-jwk "$KT_TMP/signer.jwk" -- true >/dev/null 2>"$T/run2.err"
REC2=$(sed -n 's/^record: *//p' "$T/run2.err")
expect_eq "config record_profile = trace-v0.3-draft: a v0.3 record with inline evidence" \
	"tag:agentrust-io.com,2026:trace-v0.3 tpm2-quote" "$(jq -r '"\(.eat_profile) \(.runtime.evidence.format)"' "$REC2")"
kwd_stop
kwd_start --tpm "$TCTI" --tpm-ak "$T/ak.json" --tpm-enrollment "$T/enrollment.json" \
	--config "$T/v03.conf" --record-profile trace-v0.2
"$KW" run --socket "$KT_SOCK" --policy "$POLICY" --key-jwk "$KT_TMP/signer.jwk" -- true >/dev/null 2>"$T/run3.err"
REC3=$(sed -n 's/^record: *//p' "$T/run3.err")
expect_eq "--record-profile trace-v0.2 over the config: v0.2, no runtime.evidence" \
	"tag:agentrust-io.com,2026:trace-v0.2 null" "$(jq -r '"\(.eat_profile) \(.runtime.evidence)"' "$REC3")"
check "v0.2: the draft schema refuses it (its eat_profile is v0.2's)" \
	grep -q '^invalid: eat_profile' <<<"$(schema_check "$REC3")"
fails_at "a v0.2 record has no inline evidence to appraise" 0 evidence_malformed "$REC3"
kwd_stop
finish
