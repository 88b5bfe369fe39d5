#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Offline record commands end to end: keygen -> record build -> sign -> verify,
# every verify failure code from the command line, usage errors, --help.
source "$(dirname "$0")/../lib.sh"

if [ ! -x "$KW" ]; then
	not_ok "kwitness is not built ($KW)"
	finish
fi

T=$(mktemp -d /tmp/kw-offline.XXXXXX)
trap 'rm -rf "$T"' EXIT
unset TRACE_PRIVATE_KEY_PEM

# A member of one JSON object on stdin (jq: scripts/deps.sh installs it).
json_field() { jq -r ".$1"; }

IMAGE=sha256:$(printf 'a%.0s' $(seq 64))
printf 'network:\n  egress: deny-all\nfilesystem:\n  write: /work\n' >"$T/bundle"
printf '%s\n' '{"tool":"fs.read","path":"/work/src","decision":"permit"}' \
	'{"tool":"net.connect","host":"api.example.org","decision":"deny"}' >"$T/log.jsonl"

# --- keygen ---------------------------------------------------------------
out=$("$KW" keygen --out "$T/keys/signing.pem"); rc=$?
expect_eq "keygen exits 0" 0 "$rc"
expect_eq "keygen key mode 0600" 600 "$(stat -c %a "$T/keys/signing.pem")"
expect_eq "keygen creates the parent directory 0700" 700 "$(stat -c %a "$T/keys")"
check "keygen writes PKCS#8 PEM" grep -q -- '-----BEGIN PRIVATE KEY-----' "$T/keys/signing.pem"
tp=$(printf '%s\n' "$out" | sed -n 's/^thumbprint: //p')
expect_eq "keygen prints a 43-character thumbprint" 43 "${#tp}"
cp "$T/keys/signing.pem" "$T/before.pem"
"$KW" keygen --out "$T/keys/signing.pem" >/dev/null 2>"$T/err"; rc=$?
expect_eq "keygen refuses to overwrite (exit 1)" 1 "$rc"
check "keygen leaves the existing key unchanged" cmp -s "$T/keys/signing.pem" "$T/before.pem"
check "keygen says why it refused" grep -q "refusing to overwrite" "$T/err"

# --- key show -------------------------------------------------------------
"$KW" key show --key "$T/keys/signing.pem" --jwk >"$T/signer.jwk"
expect_eq "key show --jwk prints one line" 1 "$(wc -l <"$T/signer.jwk")"
expect_eq "key show --jwk is an OKP JWK" "OKP Ed25519" \
	"$(json_field kty <"$T/signer.jwk") $(json_field crv <"$T/signer.jwk")"
expect_eq "key show --thumbprint matches keygen" "$tp" \
	"$("$KW" key show --key "$T/keys/signing.pem" --thumbprint)"
TRACE_PRIVATE_KEY_PEM=$(cat "$T/keys/signing.pem") "$KW" key show --thumbprint >"$T/tp.env"
expect_eq "key show reads TRACE_PRIVATE_KEY_PEM" "$tp" "$(cat "$T/tp.env")"
cp "$T/keys/signing.pem" "$T/open.pem" && chmod 644 "$T/open.pem"
"$KW" key show --key "$T/open.pem" >/dev/null 2>"$T/err"; rc=$?
expect_eq "key show refuses a world-readable key (exit 1)" 1 "$rc"
check "the refusal names the problem" grep -q "group- or world-accessible" "$T/err"
chmod 640 "$T/open.pem"
"$KW" sign --key "$T/open.pem" /dev/null >/dev/null 2>&1; rc=$?
expect_eq "sign refuses a group-readable key" 1 "$rc"

# --- record build -> sign -> verify ----------------------------------------
build() { # extra args...
	"$KW" record build --sandbox-id spiffe://example.org/sandbox/1 --image-digest "$IMAGE" \
		--policy "$T/bundle" --decisions "$T/log.jsonl" --enforcement-mode enforce \
		--model-provider anthropic --model-id claude-sonnet-4-6 "$@"
}
build >"$T/unsigned.json"; rc=$?
expect_eq "record build exits 0" 0 "$rc"
check "record build: bundle_hash known answer" grep -q '"bundle_hash":"sha256:b7a7d560278f34511e4abcc7a8909a3c07e9ee16143da6693b19cb3222ee0cae"' "$T/unsigned.json"
check "record build: transcript known answer" grep -q '"call_count":2,"hash":"sha256:ffce23badc0a325b93ac587374132bbaae4f7798a4d57f84cf135a312f4a6aea"' "$T/unsigned.json"
check "record build: measurement known answer" grep -q '"measurement":"sha256:06a9b5018d74ec48f31bcec06e5eade5b12b565a6443caafc5ba8cdda715ac5f"' "$T/unsigned.json"
check "record build: data_class defaults to internal" grep -q '"data_class":"internal"' "$T/unsigned.json"
expect_eq "record build prints canonical JSON (and a newline)" "$("$KW" jcs "$T/unsigned.json")" \
	"$(cat "$T/unsigned.json")"
jq -c -s . "$T/log.jsonl" >"$T/log.array.json" 2>/dev/null || \
	printf '[%s,%s]\n' "$(sed -n 1p "$T/log.jsonl")" "$(sed -n 2p "$T/log.jsonl")" >"$T/log.array.json"
build --decisions "$T/log.array.json" >"$T/unsigned2.json"
check "a JSON array log hashes like its JSON Lines" grep -q 'ffce23badc0a325b93ac587374132bbaae4f7798a4d57f84cf135a312f4a6aea' "$T/unsigned2.json"

"$KW" sign --key "$T/keys/signing.pem" "$T/unsigned.json" >"$T/signed.json"; rc=$?
expect_eq "sign exits 0" 0 "$rc"
check "sign sets cnf.jwk to the signer" grep -qF "\"cnf\":{\"jwk\":$(cat "$T/signer.jwk")}" "$T/signed.json"
out=$("$KW" verify --key "$T/signer.jwk" "$T/signed.json" --log "$T/log.jsonl" --policy "$T/bundle"); rc=$?
expect_eq "verify with --log and --policy exits 0" 0 "$rc"
case $out in valid:*) ok "verify prints valid: ..." ;; *) not_ok "verify prints valid: ... (got: $out)" ;; esac
"$KW" verify --key "$T/signer.jwk" "$T/signed.json" --log "$T/log.array.json" --policy "$T/bundle" \
	--image-digest "$IMAGE" >/dev/null
expect_eq "verify with an explicit --image-digest" 0 "$?"
out=$("$KW" verify --key "$T/signer.jwk" --json "$T/signed.json")
expect_eq "verify --json valid" "true ok" \
	"$(printf '%s' "$out" | json_field valid) $(printf '%s' "$out" | json_field reason)"
"$KW" verify --allow-embedded-key "$T/signed.json" >/dev/null
expect_eq "verify --allow-embedded-key without --key" 0 "$?"
build --iat 1785000000 >"$T/fixed.json"
build --iat 1785000000 --decisions - <"$T/log.jsonl" | cmp -s - "$T/fixed.json"
expect_eq "record build reads the decision log from stdin" 0 "$?"
"$KW" sign --key "$T/keys/signing.pem" --pretty - <"$T/unsigned.json" >"$T/pretty.json"
expect_eq "sign --pretty from stdin" 0 "$?"
"$KW" verify --key "$T/keys/signing.pem" "$T/pretty.json" >/dev/null
expect_eq "pretty record verifies; a PEM private key file reduces to its public key" 0 "$?"
TRACE_PRIVATE_KEY_PEM=$(cat "$T/keys/signing.pem") "$KW" sign "$T/unsigned.json" >"$T/signed-env.json"
check "sign with TRACE_PRIVATE_KEY_PEM gives the same bytes" cmp -s "$T/signed.json" "$T/signed-env.json"

# The signed boundary vectors verify from the command line.
for v in "$VECTORS"/trace-spec/canonicalization-boundary/0*.json; do
	jq '.trusted_key' "$v" >"$T/bv.jwk"
	jq '.record' "$v" >"$T/bv.json"
	"$KW" verify --key "$T/bv.jwk" --max-age 0 "$T/bv.json" >/dev/null
	expect_eq "boundary vector $(basename "$v" .json) verifies" 0 "$?"
done

# --- every failure code ---------------------------------------------------
"$KW" keygen --out "$T/other.pem" >/dev/null
"$KW" key show --key "$T/other.pem" --jwk >"$T/other.jwk"
signed=$(cat "$T/signed.json")
sig=$(printf '%s' "$signed" | sed 's/.*"signature":"\([^"]*\)".*/\1/')
mk() { printf '%s\n' "$2" >"$T/$1.json"; }
mk malformed 'not json'
mk profile_missing "$(printf '%s' "$signed" | sed 's/"eat_profile":"[^"]*",//')"
mk profile_unsupported "$(printf '%s' "$signed" | sed 's/trace-v0\.2/trace-v0.1/')"
mk signature_missing "$(printf '%s' "$signed" | sed 's/"signature":"[^"]*",//')"
mk signature_malformed "$(printf '%s' "$signed" | sed "s/\"signature\":\"$sig\"/\"signature\":\"${sig}AA\"/")"
mk schema_invalid "$(printf '%s' "$signed" | sed 's/"platform":"software-only"/"platform":"software-only","extra":1/')"
mk signature_invalid "$(printf '%s' "$signed" | sed 's/"data_class":"internal"/"data_class":"public"/')"
ec='{"crv":"P-256","kty":"EC","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}'
mk embedded_ec "$(printf '%s' "$signed" | sed "s/\"cnf\":{\"jwk\":{[^}]*}}/\"cnf\":{\"jwk\":$ec}/")"
build --iat $(( $(date +%s) + 3600 )) | "$KW" sign --key "$T/keys/signing.pem" - >"$T/future.json"
build --iat 1700000000 | "$KW" sign --key "$T/keys/signing.pem" - >"$T/stale.json"
printf '{"tool":"fs.read","path":"/etc/shadow","decision":"deny"}\n' >>"$T/log.other.jsonl"
printf 'network: {}\n' >"$T/bundle.other"

expect_code() { # name code record-file verify-args...
	local name=$1 code=$2 rec=$3; shift 3
	local out rc
	out=$("$KW" verify "$@" "$rec"); rc=$?
	expect_eq "$name: exit 1" 1 "$rc"
	case $out in
	"invalid: $code: "*) ok "$name: prints $code" ;;
	*) not_ok "$name: prints $code"; echo "#   got: $out" ;;
	esac
	out=$("$KW" verify --json "$@" "$rec"); rc=$?
	expect_eq "$name: --json" "1 false $code" \
		"$rc $(printf '%s' "$out" | json_field valid) $(printf '%s' "$out" | json_field reason)"
}
K=(--key "$T/signer.jwk")
expect_code record_malformed record_malformed "$T/malformed.json" "${K[@]}"
expect_code profile_missing profile_missing "$T/profile_missing.json" "${K[@]}"
expect_code profile_unsupported profile_unsupported "$T/profile_unsupported.json" "${K[@]}"
expect_code signature_missing signature_missing "$T/signature_missing.json" "${K[@]}"
expect_code "unsigned build output" signature_missing "$T/unsigned.json" "${K[@]}"
expect_code signature_malformed signature_malformed "$T/signature_malformed.json" "${K[@]}"
expect_code schema_invalid schema_invalid "$T/schema_invalid.json" "${K[@]}"
expect_code trusted_key_missing trusted_key_missing "$T/embedded_ec.json" --allow-embedded-key
expect_code cnf_key_mismatch cnf_key_mismatch "$T/signed.json" --key "$T/other.jwk"
expect_code record_in_future record_in_future "$T/future.json" "${K[@]}"
expect_code record_stale record_stale "$T/stale.json" "${K[@]}"
"$KW" verify "${K[@]}" --skew 7200 "$T/future.json" >/dev/null
expect_eq "--skew 7200 accepts a record an hour ahead" 0 "$?"
# The default skew is TRACE's 5 minutes: 4 minutes ahead passes, 7 do not.
build --iat $(( $(date +%s) + 240 )) | "$KW" sign --key "$T/keys/signing.pem" - >"$T/ahead4.json"
build --iat $(( $(date +%s) + 420 )) | "$KW" sign --key "$T/keys/signing.pem" - >"$T/ahead7.json"
"$KW" verify "${K[@]}" "$T/ahead4.json" >/dev/null
expect_eq "default skew (300 s) accepts a record 4 minutes ahead" 0 "$?"
expect_code "default skew (300 s), 7 minutes ahead" record_in_future "$T/ahead7.json" "${K[@]}"
expect_code "--skew 60, 4 minutes ahead" record_in_future "$T/ahead4.json" "${K[@]}" --skew 60
"$KW" verify "${K[@]}" --skew 600 "$T/ahead7.json" >/dev/null
expect_eq "--skew 600 accepts a record 7 minutes ahead" 0 "$?"
check "verify --help gives the default skew" sh -c '"$1" verify --help | grep -q "default 300"' sh "$KW"
"$KW" verify "${K[@]}" --max-age 0 "$T/stale.json" >/dev/null
expect_eq "--max-age 0 accepts an old record" 0 "$?"
expect_code nonce_mismatch nonce_mismatch "$T/signed.json" "${K[@]}" --nonce bm9uY2U
expect_code signature_invalid signature_invalid "$T/signature_invalid.json" "${K[@]}"
expect_code transcript_mismatch transcript_mismatch "$T/signed.json" "${K[@]}" --log "$T/log.other.jsonl"
expect_code bundle_mismatch bundle_mismatch "$T/signed.json" "${K[@]}" --policy "$T/bundle.other"
expect_code measurement_mismatch measurement_mismatch "$T/signed.json" "${K[@]}" --policy "$T/bundle" \
	--image-digest "sha256:$(printf 'b%.0s' $(seq 64))"

# --- usage errors exit 2, --help exits 0 -----------------------------------
usage() { # name args...
	local name=$1; shift
	"$KW" "$@" >/dev/null 2>&1
	expect_eq "usage error exits 2: $name" 2 "$?"
}
usage "verify without arguments" verify
usage "verify without a key" verify "$T/signed.json"
usage "verify with an unknown option" verify --bogus "${K[@]}" "$T/signed.json"
usage "verify --max-age not a number" verify "${K[@]}" --max-age soon "$T/signed.json"
usage "verify --skew negative" verify "${K[@]}" --skew -5 "$T/signed.json"
usage "verify two records" verify "${K[@]}" "$T/signed.json" "$T/signed.json"
usage "verify bad --image-digest" verify "${K[@]}" --policy "$T/bundle" --image-digest md5:00 "$T/signed.json"
usage "verify --image-digest without --policy" verify "${K[@]}" --image-digest "$IMAGE" "$T/signed.json"
usage "verify missing record file" verify "${K[@]}" "$T/nope.json"
usage "verify missing key file" verify --key "$T/nope.jwk" "$T/signed.json"
printf '%s\n' '{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"}' >"$T/private.jwk"
"$KW" verify --key "$T/private.jwk" "$T/signed.json" >/dev/null 2>"$T/err"
expect_eq "verify refuses a JWK with \"d\" (exit 2)" 2 "$?"
check "...saying it holds private members" grep -q "private key members" "$T/err"
usage "record without subcommand" record
usage "record build missing options" record build --sandbox-id spiffe://x/y
usage "record build bad --iat" record build --iat yesterday
usage "sign without record" sign --key "$T/keys/signing.pem"
usage "keygen extra argument" keygen --out "$T/x.pem" extra
usage "key without show" key
usage "key show --jwk --thumbprint" key show --jwk --thumbprint
for c in "keygen" "key show" "key" "record build" "record" "sign" "verify"; do
	# shellcheck disable=SC2086
	out=$("$KW" $c --help); rc=$?
	if [ "$rc" = 0 ] && printf '%s' "$out" | grep -q '^usage: kwitness'; then
		ok "kwitness $c --help"
	else
		not_ok "kwitness $c --help (exit $rc)"
	fi
done

# record build refuses bad input with a message (exit 1).
build --enforcement-mode enforcing >/dev/null 2>"$T/err"
expect_eq "record build refuses an unknown enforcement mode" 1 "$?"
build --verifier "not a uri" >/dev/null 2>"$T/err"
expect_eq "record build refuses a verifier that is not a URI" 1 "$?"
check "...naming the member" grep -q 'appraisal.verifier' "$T/err"
printf 'not json\n' >"$T/bad.jsonl"
build --decisions "$T/bad.jsonl" >/dev/null 2>"$T/err"
expect_eq "record build refuses a bad decision log" 1 "$?"
check "...naming the line" grep -q 'line 1' "$T/err"

finish
