#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitness verify --evidence and kwitness tpm, without a TPM: the committed
# swtpm vectors (tests/vectors/tpm) appraise to Level 1, every other way of
# asking reports Level 0, and bad usage gets one clear line and exit 2.
. "$(dirname "$0")/../lib.sh"

V=$KW_ROOT/tests/vectors/tpm
[ -x "$KW" ] || { skip "$KW not built"; finish; }
TRUST=(--tpm-ca "$V/ek-ca.pem" --enroll-key "$V/enroll.jwk")

out=$("$KW" verify --key "$V/signer.jwk" --max-age 0 "$V/record.json" --evidence "$V/evidence.json" "${TRUST[@]}")
expect_eq "vectors: verify --evidence exits 0" 0 "$?"
check "vectors: the human line says level 1" grep -q '^level 1: TPM 2.0 quote by an enrolled AK' <<<"$out"
out=$("$KW" verify --key "$V/signer.jwk" --max-age 0 "$V/record.json" --evidence "$V/evidence.json" "${TRUST[@]}" --json)
expect_eq "vectors: --json level 1, appraisal ok" "1 ok" "$(jq -r '"\(.level) \(.appraisal.reason)"' <<<"$out")"
out=$("$KW" verify --key "$V/signer.jwk" --max-age 0 "$V/record.json" --json)
expect_eq "vectors: without --evidence, valid at level 0" "true 0" "$(jq -r '"\(.valid) \(.level)"' <<<"$out")"
out=$("$KW" verify --key "$V/signer.jwk" --max-age 0 "$V/record.json" --evidence "$V/evidence.json" \
	--tpm-ca "$V/ek-ca.pem" --enroll-key "$V/signer.jwk")
rc=$?
check "vectors: an untrusted enrollment key: exit 1, level 0 at step 2" \
	test $rc -eq 1 -a -n "$(grep '^level 0: TPM appraisal failed at step 2: ak_not_enrolled' <<<"$out")"

# Evidence made before enrollments named the host and the signing keys: the
# quote still verifies, but the AK speaks for no key (re-enroll).
V0=$V/v0
out=$("$KW" verify --key "$V0/signer.jwk" --max-age 0 "$V0/record.json" --evidence "$V0/evidence.json" \
	--tpm-ca "$V0/ek-ca.pem" --enroll-key "$V0/enroll.jwk" --json)
expect_eq "older enrollment (no signing keys named): level 0 at step 2, ak_not_enrolled_for_key" \
	"true 0 2 ak_not_enrolled_for_key" \
	"$(jq -r '"\(.valid) \(.level) \(.appraisal.step) \(.appraisal.reason)"' <<<"$out")"
check "older enrollment: the reason says to enroll again" grep -q "enroll the AK again" <<<"$out"

usage() { # NAME WANT_TEXT ARGS...: exit 2 and one line saying WANT_TEXT
	local name=$1 want=$2 out rc
	shift 2
	out=$("$KW" "$@" 2>&1)
	rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$want" <<<"$out"; then ok "$name"; else
		not_ok "$name (exit $rc)"
		echo "#   $out" | head -2
	fi
}
usage "--evidence needs --tpm-ca and --enroll-key" "--evidence needs --tpm-ca" \
	verify --key "$V/signer.jwk" "$V/record.json" --evidence "$V/evidence.json"
usage "--tpm-ca without --enroll-key" "give both --tpm-ca and --enroll-key" \
	verify --key "$V/signer.jwk" "$V/record.json" --tpm-ca "$V/ek-ca.pem"
usage "tpm: a subcommand is required" "expected 'enroll' or 'quote'" tpm
usage "tpm quote: a bad PCR selection" "PCR selection 'sha1:0'" \
	tpm quote --tpm device:/dev/null --ak /nonexistent --key "$V/signer.jwk" --pcrs sha1:0
usage "tpm enroll: --tpm-ca, --enroll-key, --key and --ak-out are required" \
	"--tpm-ca, --enroll-key, --key and --ak-out are required" tpm enroll --tpm device:/dev/null
usage "tpm quote: --ak is required" "--ak and one --key are required" \
	tpm quote --tpm device:/dev/null --key "$V/signer.jwk"
out=$("$KW" tpm quote --tpm bogus --ak /nonexistent --key "$V/signer.jwk" 2>&1)
check "tpm quote --tpm bogus: exit 1, saying what a TCTI looks like" \
	test $? -eq 1 -a -n "$(grep 'expected device:/dev/tpmrm0 or swtpm:host=H,port=P' <<<"$out")"
out=$("$KW" tpm --help)
expect_eq "tpm --help exits 0" 0 "$?"
finish
