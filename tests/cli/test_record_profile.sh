#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Record profiles without a TPM: `record build` makes v0.2 by default and the
# TRACE v0.3 draft on request; an independent validator (python3-jsonschema)
# holds the v0.3 record to the draft schema (tests/vectors/trace-spec/
# trace-claim-v0.3-draft.json), kwitness verify accepts both, and asking to
# appraise inline evidence a record does not carry fails at step 0.
# (Inline evidence from a TPM: tests/kernel/test_tpm_profile.sh.)
. "$(dirname "$0")/../lib.sh"

[ -x "$KW" ] || { skip "$KW not built"; finish; }
python3 -c 'import jsonschema' 2>/dev/null || { skip "python3-jsonschema not installed (scripts/deps.sh)"; finish; }
T=$(mktemp -d /tmp/kwitness-profile.XXXXXX)
trap 'rm -rf "$T"' EXIT
SCHEMA=$VECTORS/trace-spec/trace-claim-v0.3-draft.json
V=$VECTORS/tpm

schema_check() { # RECORD: "valid" or the draft schema's first error
	python3 - "$SCHEMA" "$1" <<'EOF'
import json, sys
import jsonschema
schema, rec = (json.load(open(p)) for p in sys.argv[1:3])
v = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
errs = sorted(v.iter_errors(rec), key=lambda e: list(e.absolute_path))
print("valid" if not errs else "invalid: %s: %s" % ("/".join(map(str, errs[0].absolute_path)), errs[0].message[:200]))
EOF
}
expect_eq "the draft schema is the 34568 bytes of trace-spec@05236bd" 34568 "$(wc -c <"$SCHEMA")"

"$KW" keygen --out "$T/k.pem" >/dev/null
"$KW" key show --key "$T/k.pem" --jwk >"$T/k.jwk"
printf '{"kwitness_policy":1,"mode":"enforce"}' >"$T/policy.json"
printf '{"tool":"kwitness.open"}\n' >"$T/log.jsonl"
build() { # [options]: a signed record
	"$KW" record build --sandbox-id spiffe://test.kwitness.local/profile \
		--image-digest "sha256:$(printf '%064d' 0)" --policy "$T/policy.json" \
		--decisions "$T/log.jsonl" --enforcement-mode enforce --model-provider t --model-id t "$@" |
		"$KW" sign --key "$T/k.pem" -
}
build >"$T/v02.json"
build --record-profile trace-v0.3-draft >"$T/v03.json"
expect_eq "default: a TRACE v0.2 record" "tag:agentrust-io.com,2026:trace-v0.2" "$(jq -r .eat_profile "$T/v02.json")"
expect_eq "--record-profile trace-v0.3-draft: the draft's eat_profile, software-only, no evidence" \
	"tag:agentrust-io.com,2026:trace-v0.3 software-only null" \
	"$(jq -r '"\(.eat_profile) \(.runtime.platform) \(.runtime.evidence)"' "$T/v03.json")"
expect_eq "the two differ in eat_profile only (and so in signature)" \
	"$(jq -c 'del(.eat_profile, .signature, .iat, .appraisal.timestamp)' "$T/v02.json")" \
	"$(jq -c 'del(.eat_profile, .signature, .iat, .appraisal.timestamp)' "$T/v03.json")"
expect_eq "v0.3: valid under the draft schema (python3-jsonschema)" valid "$(schema_check "$T/v03.json")"
check "v0.2: the draft schema refuses it (eat_profile)" grep -q '^invalid: eat_profile' <<<"$(schema_check "$T/v02.json")"
for r in v02 v03; do
	out=$("$KW" verify --key "$T/k.jwk" --json "$T/$r.json")
	expect_eq "verify $r: valid, level 0" "0 true 0" "$? $(jq -r '"\(.valid) \(.level)"' <<<"$out")"
done

# The committed swtpm vectors' evidence inline in a v0.3 record: the draft
# schema accepts the encoding kwitness uses (quote = base64url of the
# evidence's RFC 8785 bytes; the record's signature is not checked here).
q=$(tr -d '\n' <"$V/evidence.json" | base64 -w0 | tr '+/' '-_' | tr -d '=')
jq -c --arg q "$q" '.eat_profile = "tag:agentrust-io.com,2026:trace-v0.3" |
	.runtime.evidence = {format: "tpm2-quote", binds: "cnf-key", quote: $q}' "$V/record.json" >"$T/inline.json"
expect_eq "inline tpm2-quote evidence of the vectors: valid under the draft schema" valid "$(schema_check "$T/inline.json")"
jq -c '.runtime.evidence.quote_digest = "sha256:" + ("0" * 64)' "$T/inline.json" >"$T/both.json"
check "quote and quote_digest together: the draft schema refuses it (oneOf)" \
	grep -q '^invalid: runtime/evidence' <<<"$(schema_check "$T/both.json")"
jq -c 'del(.signature)' "$T/both.json" | "$KW" sign --key "$T/k.pem" - >/dev/null 2>"$T/sign.err"
check "quote and quote_digest together: kwitness's schema check refuses it too" \
	grep -q 'runtime.evidence: oneOf' "$T/sign.err"

# Appraisal asked for, and no inline evidence: step 0.
out=$("$KW" verify --key "$T/k.jwk" --json "$T/v03.json" --tpm-ca "$V/ek-ca.pem" --enroll-key "$V/enroll.jwk")
expect_eq "verify --tpm-ca without evidence anywhere: exit 1, level 0 at step 0 (evidence_malformed)" \
	"1 0 0 evidence_malformed" "$? $(jq -r '"\(.level) \(.appraisal.step) \(.appraisal.reason)"' <<<"$out")"
out=$("$KW" record build --record-profile trace-v0.4 2>&1)
expect_eq "record build --record-profile with an unknown profile: exit 2, saying which exist" \
	"2 1" "$? $(grep -c 'trace-v0.2 or trace-v0.3-draft' <<<"$out")"
finish
