#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Remakes the TPM appraisal vectors in this folder from a fresh swtpm: a CA
# valid for 100 years, an EK certificate from it, an enrollment, a quote for a
# fresh signing key, and a tpm2 record whose runtime is computed here (PCR
# digest from tpm2_pcrread + openssl, firmware from tpm2_getcap), signed with
# kwitness sign. Needs swtpm, swtpm-tools, tpm2-tools and a built kwitness.
# The private keys are thrown away: the vectors are public data.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
K=$ROOT/build/kwitness
. "$ROOT/tests/kernel/tpm_lib.sh"
W=$(mktemp -d /tmp/kwitness-vectors.XXXXXX)
trap 'swtpm_cleanup; rm -rf "$W"' EXIT

make_ca "$W/ca" "kwitness vector EK CA"
# make_ca makes a short-lived CA for tests; the vectors need one that lasts.
openssl req -x509 -key "$W/ca/signkey.pem" -out "$W/ca/issuercert.pem" -days 36500 \
	-subj "/CN=kwitness vector EK CA" -addext basicConstraints=critical,CA:TRUE \
	-addext keyUsage=critical,keyCertSign,cRLSign
swtpm_make "$W/tpm" "$W/ca"
swtpm_start "$W/tpm"
"$K" keygen --out "$W/enroll.pem" >/dev/null
"$K" keygen --out "$W/signer.pem" >/dev/null
"$K" key show --key "$W/enroll.pem" --jwk >"$HERE/enroll.jwk"
"$K" key show --key "$W/signer.pem" --jwk >"$HERE/signer.jwk"
cp "$W/ca/issuercert.pem" "$HERE/ek-ca.pem"
"$K" tpm enroll --tpm "$TCTI" --tpm-ca "$W/ca/issuercert.pem" --enroll-key "$W/enroll.pem" \
	--key "$HERE/signer.jwk" --machine-id 0123456789abcdef0123456789abcdef --ak-out "$W/ak.json" \
	--out "$W/enrollment.json"
"$K" tpm quote --tpm "$TCTI" --ak "$W/ak.json" --key "$W/signer.pem" --enrollment "$W/enrollment.json" \
	--out "$HERE/evidence.json"
tpm2_pcrread -T "$TCTI" sha256:0,1,2,3,4,5,6,7 -o "$W/pcrs.bin" >/dev/null
M=sha256:$(openssl dgst -sha256 -r "$W/pcrs.bin" | cut -d' ' -f1)
fw() { tpm2_getcap -T "$TCTI" properties-fixed | awk -v p="$1" '$1 == p":" { getline; print $2 }'; }
V1=$(fw TPM2_PT_FIRMWARE_VERSION_1) V2=$(fw TPM2_PT_FIRMWARE_VERSION_2)
FW=$(printf '%d.%d.%d.%d' $((V1 >> 16)) $((V1 & 0xffff)) $((V2 >> 16)) $((V2 & 0xffff)))
printf '{"kwitness_policy":1,"mode":"enforce"}' >"$W/policy.json"
printf '{"tool":"kwitness.open"}\n' >"$W/log.jsonl"
"$K" record build --sandbox-id spiffe://vectors.kwitness.local/tpm \
	--image-digest sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa \
	--policy "$W/policy.json" --decisions "$W/log.jsonl" --enforcement-mode enforce \
	--model-provider test --model-id test --iat "$(date +%s)" |
	jq -c --arg m "$M" --arg n "$("$K" key show --key "$W/signer.pem" --thumbprint)" --arg f "$FW" \
		'.runtime = {platform: "tpm2", measurement: $m, nonce: $n, firmware_version: $f}' |
	"$K" sign --key "$W/signer.pem" - >"$HERE/record.json"
"$K" verify --key "$HERE/signer.jwk" --max-age 0 "$HERE/record.json" --evidence "$HERE/evidence.json" \
	--tpm-ca "$HERE/ek-ca.pem" --enroll-key "$HERE/enroll.jwk"
