#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Level 1 speaks for one host's keys, and only the holder of the AK file can
# quote: two swtpm instances stand for two hosts A and B, each with its own
# signing key, AK and enrollment. A quote by B's AK over A's key is refused
# (ak_not_enrolled_for_key); a local user who may talk to A's TPM (as the tss
# group may) but cannot read A's AK file cannot make evidence that appraises.
. "$(dirname "$0")/../lib.sh"
. "$KW_ROOT/tests/kernel/tpm_lib.sh"

[ -x "$KW" ] || { skip "$KW not built"; finish; }
if missing=$(swtpm_tools_missing); then
	not_ok "needs $missing (scripts/deps.sh installs swtpm, swtpm-tools, tpm2-tools)"
	finish
fi
T=$(mktemp -d /tmp/kwitness-tpm-hosts.XXXXXX)
trap 'swtpm_cleanup; rm -rf "$T"' EXIT
# Public files (keys, enrollments, records) are readable by everyone; the AK
# files are the collector's, root-only.
chmod 755 "$T"
P=$T/pub
mkdir -p "$P" && chmod 755 "$P"
make_ca "$T/ca" "kwitness hosts test EK CA" && swtpm_make "$T/tpmA" "$T/ca" &&
	swtpm_make "$T/tpmB" "$T/ca" || { not_ok "swtpm_setup failed"; finish; }
cp "$T/ca/issuercert.pem" "$P/ca.pem"
swtpm_start "$T/tpmA" && TCTI_A=$TCTI && swtpm_start "$T/tpmB" && TCTI_B=$TCTI ||
	{ not_ok "swtpm did not start"; finish; }
MID_A=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa MID_B=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb

"$KW" keygen --out "$T/enroll.pem" >/dev/null
"$KW" key show --key "$T/enroll.pem" --jwk >"$P/enroll.jwk"
for h in A B; do
	"$KW" keygen --out "$T/signer$h.pem" >/dev/null
	"$KW" key show --key "$T/signer$h.pem" --jwk >"$P/signer$h.jwk"
done
"$KW" tpm enroll --tpm "$TCTI_A" --tpm-ca "$P/ca.pem" --enroll-key "$T/enroll.pem" \
	--key "$P/signerA.jwk" --machine-id $MID_A --ak-out "$T/akA.json" --out "$P/enrA.json"
expect_eq "host A: enrolled for its key and machine id" 0 "$?"
"$KW" tpm enroll --tpm "$TCTI_B" --tpm-ca "$P/ca.pem" --enroll-key "$T/enroll.pem" \
	--key "$P/signerB.jwk" --machine-id $MID_B --ak-out "$T/akB.json" --out "$P/enrB.json"
expect_eq "host B: enrolled for its key and machine id" 0 "$?"
chmod 644 "$P"/*

# A tpm2 record signed by a host's key, its runtime read from that host's TPM
# with tpm2-tools and openssl.
fw() { tpm2_getcap -T "$1" properties-fixed | awk -v p="$2" '$1 == p":" { getline; print $2 }'; }
printf '{"kwitness_policy":1,"mode":"enforce"}' >"$T/policy.json"
printf '{"tool":"kwitness.open"}\n' >"$T/decisions.jsonl"
record_of() { # HOST TCTI: the signed record on stdout
	local h=$1 tcti=$2 m v1 v2
	tpm2_pcrread -T "$tcti" sha256:0,1,2,3,4,5,6,7 -o "$T/pcrs$h.bin" >/dev/null
	m=sha256:$(openssl dgst -sha256 -r "$T/pcrs$h.bin" | cut -d' ' -f1)
	v1=$(fw "$tcti" TPM2_PT_FIRMWARE_VERSION_1) v2=$(fw "$tcti" TPM2_PT_FIRMWARE_VERSION_2)
	"$KW" record build --sandbox-id "spiffe://hosts.example/$h" \
		--image-digest "sha256:$(printf 'a%.0s' $(seq 64))" --policy "$T/policy.json" \
		--decisions "$T/decisions.jsonl" --enforcement-mode enforce \
		--model-provider test --model-id test |
		jq -c --arg m "$m" --arg n "$("$KW" key show --key "$T/signer$h.pem" --thumbprint)" \
			--arg f "$(printf '%d.%d.%d.%d' $((v1 >> 16)) $((v1 & 0xffff)) $((v2 >> 16)) $((v2 & 0xffff)))" \
			'.runtime = {platform: "tpm2", measurement: $m, nonce: $n, firmware_version: $f}' |
		"$KW" sign --key "$T/signer$h.pem" -
}
record_of A "$TCTI_A" >"$P/recA.json"
record_of B "$TCTI_B" >"$P/recB.json"
appraise() { # HOST EVIDENCE: "level step reason" of host HOST's record with EVIDENCE
	"$KW" verify --key "$P/signer$1.jwk" --max-age 0 "$P/rec$1.json" --evidence "$2" \
		--tpm-ca "$P/ca.pem" --enroll-key "$P/enroll.jwk" --json |
		jq -r '"\(.level) \(.appraisal.step) \(.appraisal.reason)"'
}

# Each host's own evidence: Level 1.
"$KW" tpm quote --tpm "$TCTI_A" --ak "$T/akA.json" --key "$P/signerA.jwk" --enrollment "$P/enrA.json" \
	--out "$T/evA.json"
expect_eq "host A's AK over host A's key: level 1" "1 0 ok" "$(appraise A "$T/evA.json")"
"$KW" tpm quote --tpm "$TCTI_B" --ak "$T/akB.json" --key "$P/signerB.jwk" --enrollment "$P/enrB.json" \
	--out "$T/evB.json"
expect_eq "host B's AK over host B's key: level 1" "1 0 ok" "$(appraise B "$T/evB.json")"

# --- host B's AK over host A's key --------------------------------------------------
# The quote is genuine (B's enrolled AK signed it, the PCRs and firmware equal
# A's: both TPMs are fresh), and its qualifyingData is A's thumbprint; only
# the enrollment says B's AK does not speak for A's key.
"$KW" tpm quote --tpm "$TCTI_B" --ak "$T/akB.json" --key "$P/signerA.jwk" --enrollment "$P/enrB.json" \
	--out "$T/evB-forA.json"
hex() { od -An -v -tx1 | tr -d ' \n'; }
check "B's quote carries A's thumbprint (32 bytes of TPMS_ATTEST.extraData)" \
	grep -q "0020$(b64url_dec "$(jq -r .runtime.nonce "$P/recA.json")" | hex)" \
	<<<"$(b64url_dec "$(jq -r .quote.attest "$T/evB-forA.json")" | hex)"
expect_eq "host B's AK over host A's key: level 0 at step 2 (ak_not_enrolled_for_key)" \
	"0 2 ak_not_enrolled_for_key" "$(appraise A "$T/evB-forA.json")"

# --- a local user with TPM access but not the AK file ---------------------------
# The tss user where the TPM packages made one (else nobody's ids): the
# swtpm's TCP port stands for /dev/tpmrm0, which the tss group may open.
if [ "$(id -u)" -ne 0 ]; then
	skip "the local-user case switches user: run as root"
	finish
fi
TSS_UID=$(id -u tss 2>/dev/null || echo 65534) TSS_GID=$(id -g tss 2>/dev/null || echo 65534)
U=$T/tss
mkdir -p "$U" && chown "$TSS_UID:$TSS_GID" "$U"
as_tss() { setpriv --reuid "$TSS_UID" --regid "$TSS_GID" --clear-groups -- "$@"; }
out=$(as_tss "$KW" tpm quote --tpm "$TCTI_A" --ak "$T/akA.json" --key "$P/signerA.jwk" \
	--enrollment "$P/enrA.json" --out "$U/ev-direct.json" 2>&1)
rc=$?
check "tss user: quoting with kwitnessd's AK fails, the AK file is unreadable" \
	test $rc -eq 1 -a -n "$(grep 'Permission denied' <<<"$out")"
# Its own AK on A's TPM (enrolled with a key of its own), quoting A's key,
# with A's real enrollment attached.
as_tss "$KW" keygen --out "$U/enroll.pem" >/dev/null
as_tss "$KW" tpm enroll --tpm "$TCTI_A" --tpm-ca "$P/ca.pem" --enroll-key "$U/enroll.pem" \
	--key "$P/signerA.jwk" --machine-id $MID_A --ak-out "$U/ak.json" --out "$U/enr.json"
expect_eq "tss user: makes and enrolls an AK of its own on A's TPM" 0 "$?"
as_tss "$KW" tpm quote --tpm "$TCTI_A" --ak "$U/ak.json" --key "$P/signerA.jwk" \
	--enrollment "$U/enr.json" --out "$U/ev-own-enr.json"
expect_eq "tss user: quotes A's key with its own AK" 0 "$?"
expect_eq "tss user's quote with its own enrollment: level 0 at step 2 (ak_not_enrolled)" \
	"0 2 ak_not_enrolled" "$(appraise A "$U/ev-own-enr.json")"
jq -c --slurpfile e "$P/enrA.json" '.ak_binding.enrollment = $e[0]' "$U/ev-own-enr.json" >"$U/ev-own-ak.json"
expect_eq "tss user's quote with A's enrollment put in: level 0 at step 2 (ak_not_enrolled)" \
	"0 2 ak_not_enrolled" "$(appraise A "$U/ev-own-ak.json")"
# The AK file's blobs without its authorisation value do not quote.
jq -c '.auth = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"' "$T/akA.json" >"$U/ak-guess.json"
chown "$TSS_UID:$TSS_GID" "$U/ak-guess.json" && chmod 600 "$U/ak-guess.json"
out=$(as_tss "$KW" tpm quote --tpm "$TCTI_A" --ak "$U/ak-guess.json" --key "$P/signerA.jwk" 2>&1)
rc=$?
check "A's AK blobs with a guessed authorisation value: the TPM refuses the quote" \
	test $rc -eq 1 -a -n "$(grep 'TPM Quote failed: .*authorization failure' <<<"$out")"
finish
