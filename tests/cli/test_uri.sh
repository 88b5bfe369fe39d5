#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# URI members that are not RFC 3986 URIs: `record build` and `sign` refuse
# them with a one-line error naming the member, and `verify` reports
# schema_invalid for a record that carries one under a valid signature. That
# signature is made without kwitness: jq writes the RFC 8785 bytes (the record
# is ASCII with integer numbers, where jq's sorted compact output is RFC 8785)
# and openssl signs them. The same construction with good URIs verifies, so
# the signature is known to be good and the refusal is the schema's.
source "$(dirname "$0")/../lib.sh"

if [ ! -x "$KW" ]; then
	skip "kwitness is not built ($KW)"
	finish
fi
for tool in jq openssl basenc; do
	if ! command -v "$tool" >/dev/null; then
		skip "$tool is missing (scripts/deps.sh installs it)"
		finish
	fi
done

T=$(mktemp -d /tmp/kw-uri.XXXXXX)
trap 'rm -rf "$T"' EXIT
unset TRACE_PRIVATE_KEY_PEM

IMAGE=sha256:$(printf 'a%.0s' $(seq 64))
printf 'network: {}\n' >"$T/bundle"
printf '%s\n' '{"decision":"deny","tool":"net.connect"}' >"$T/log.jsonl"
build() { # extra args...
	"$KW" record build --sandbox-id spiffe://example.org/sandbox/1 --image-digest "$IMAGE" \
		--policy "$T/bundle" --decisions "$T/log.jsonl" --enforcement-mode enforce \
		--model-provider anthropic --model-id claude-sonnet-4-6 "$@"
}

# The issue's five, a zone identifier, and two more.
BAD=('http://ex.com/#a#b' 'http://ex.com/?q=[x]' 'http://ex.com:8o/' 'http://[::ffff:01.2.3.4]/'
	'http://[::1' 'http://[fe80::1%25eth0]/' 'http://ex.com/a b' '//no-scheme')
GOOD=('http://[::ffff:1.2.3.4]/' 'ldap://[2001:db8::7]/c=GB?objectClass?one'
	'http://[v7.fe80::abcd]:8080/a?b#c' 'urn:kwitness:collector' 'file:///etc/hosts')
# Every "format": "uri" member of the TRACE v0.2 schema.
MEMBERS=(.model.aibom_uri .runtime.rim_uri .policy.policy_uri .tool_transcript.transcript_uri
	.build_provenance.provenance_uri .appraisal.verifier .appraisal.policy_ref .transparency)

# --- record build ---------------------------------------------------------
for u in "${BAD[@]}"; do
	build --verifier "$u" >"$T/out" 2>"$T/err"
	expect_eq "record build --verifier '$u' exits 1" 1 "$?"
	check "...and prints no record" test ! -s "$T/out"
	case $(cat "$T/err") in
	"kwitness record build: \$.appraisal.verifier: format uri (not an RFC 3986 URI: "*")")
		[ "$(wc -l <"$T/err")" = 1 ] && ok "...one line naming the member and the rule" ||
			not_ok "...one line naming the member and the rule"
		;;
	*) not_ok "...one line naming the member and the rule"; echo "#   got: $(cat "$T/err")" ;;
	esac
done
for u in "${GOOD[@]}"; do
	build --verifier "$u" >/dev/null
	expect_eq "record build --verifier '$u' exits 0" 0 "$?"
done

# --- sign -----------------------------------------------------------------
openssl genpkey -algorithm ed25519 -out "$T/key.pem" 2>/dev/null && chmod 600 "$T/key.pem"
x=$(openssl pkey -in "$T/key.pem" -pubout -outform DER | tail -c 32 | basenc --base64url | tr -d '=\n')
printf '{"crv":"Ed25519","kty":"OKP","x":"%s"}\n' "$x" >"$T/signer.jwk"
build >"$T/unsigned.json"
for m in "${MEMBERS[@]}"; do
	jq -c --arg u 'http://ex.com/#a#b' "$m = \$u" "$T/unsigned.json" >"$T/bad-unsigned.json"
	"$KW" sign --key "$T/key.pem" "$T/bad-unsigned.json" >"$T/out" 2>"$T/err"
	expect_eq "sign refuses $m = 'http://ex.com/#a#b' (exit 1)" 1 "$?"
	check "...and prints no record" test ! -s "$T/out"
	check "...naming \$$m and the rule" grep -qF \
		"kwitness sign: record does not validate: \$$m: format uri (not an RFC 3986 URI: '#' at byte 16 is not allowed in the fragment)" "$T/err"
done

# --- verify: records signed by openssl -------------------------------------
sign_by_hand() { # unsigned record file -> signed record on stdout
	jq -S -c --argjson jwk "$(cat "$T/signer.jwk")" '.cnf = {jwk: $jwk} | del(.signature)' "$1" |
		tr -d '\n' >"$T/tbs"
	openssl pkeyutl -sign -inkey "$T/key.pem" -rawin -in "$T/tbs" -out "$T/sig" || return 1
	jq -c --arg s "$(basenc --base64url <"$T/sig" | tr -d '=\n')" '.signature = $s' "$T/tbs"
}
for m in "${MEMBERS[@]}"; do
	jq -c --arg u 'ldap://[2001:db8::7]/c=GB?objectClass?one' "$m = \$u" "$T/unsigned.json" >"$T/good-unsigned.json"
	sign_by_hand "$T/good-unsigned.json" >"$T/good.json"
	out=$("$KW" verify --key "$T/signer.jwk" "$T/good.json")
	expect_eq "openssl-signed record with a good $m verifies (exit 0)" 0 "$?"
	case $out in valid:*) ;; *) echo "#   got: $out" ;; esac
	for u in 'http://ex.com/#a#b' 'http://[::1' 'http://ex.com:8o/'; do
		jq -c --arg u "$u" "$m = \$u" "$T/unsigned.json" >"$T/bad-unsigned.json"
		sign_by_hand "$T/bad-unsigned.json" >"$T/bad.json"
		out=$("$KW" verify --key "$T/signer.jwk" "$T/bad.json")
		expect_eq "openssl-signed record with $m = '$u': verify exits 1" 1 "$?"
		case $out in
		"invalid: schema_invalid: "*"\$$m: format uri (not an RFC 3986 URI: "*) ok "...schema_invalid naming \$$m" ;;
		*) not_ok "...schema_invalid naming \$$m"; echo "#   got: $out" ;;
		esac
	done
done
out=$("$KW" verify --json --key "$T/signer.jwk" "$T/bad.json")
expect_eq "verify --json reason schema_invalid" "false schema_invalid" \
	"$(printf '%s' "$out" | jq -r '"\(.valid) \(.reason)"')"

finish
