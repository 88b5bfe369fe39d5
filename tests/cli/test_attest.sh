#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitness attest --in-toto / verify-attestation offline: a session's
# record, log and bundle (the log written here the way kwitnessd writes one:
# an exec with its kernel digest, one destination reached, one refused)
# become a DSSE envelope that an independent verifier (Node's crypto,
# tests/helpers/dsse_check.js) accepts; the predicate lists exactly what the
# log holds; a flipped byte anywhere in the envelope, a swapped subject or
# record, and an unverifiable session are refused. The DSSE project's own
# vectors check the independent verifier first.
. "$(dirname "$0")/../lib.sh"

[ -x "$KW" ] || { not_ok "kwitness is not built ($KW)"; finish; }
command -v node >/dev/null || { not_ok "needs node (scripts/deps.sh installs nodejs)"; finish; }
command -v jq >/dev/null || { not_ok "needs jq"; finish; }
T=$(mktemp -d /tmp/kw-attest.XXXXXX)
trap 'rm -rf "$T"' EXIT
unset TRACE_PRIVATE_KEY_PEM
NODECHECK="node $KW_ROOT/tests/helpers/dsse_check.js"

# --- the independent verifier, against the DSSE project's vectors -----------------
out=$($NODECHECK vectors "$KW_ROOT/tests/vectors/dsse/vectors.json")
expect_eq "node DSSE check: the DSSE vectors' PAE bytes and verdicts (18 of 18)" 18 "$(grep -c '^ok ' <<<"$out")"
out=$($NODECHECK protocol "$KW_ROOT/tests/vectors/dsse/protocol-example.json")
expect_eq "node DSSE check: protocol.md's P-256 example (PAE text and signature)" 2 "$(grep -c '^ok ' <<<"$out")"

# --- a session ---------------------------------------------------------------------
"$KW" keygen --out "$T/k.pem" >/dev/null
"$KW" key show --key "$T/k.pem" --jwk >"$T/k.jwk"
"$KW" keygen --out "$T/other.pem" >/dev/null
"$KW" key show --key "$T/other.pem" --jwk >"$T/other.jwk"
printf '{"kwitness_policy":1,"mode":"enforce"}' >"$T/pol.json"
BH=sha256:$(sha256sum "$T/pol.json" | cut -d' ' -f1)
IMG=sha256:$(printf 'a%.0s' $(seq 64))
SID=0123456789abcdef0123456789abcdef
CC_DIGEST=sha256:$(printf 'c%.0s' $(seq 64))
log_of() { # HOOKS RECORD: a complete log of three decisions, canonical lines
	local c=$1 r=$2
	{
		printf '{"bundle_hash":"%s","hooks":"%s","image_digest":"%s","machine_id":"%s","mode":"enforce","record":"%s","sandbox_id":"spiffe://ci.example/build/1","session":"%s","tool":"kwitness.open","ts":1}\n' \
			"$BH" "$c" "$IMG" "$(printf 'a%.0s' $(seq 32))" "$r" "$SID"
		printf '{"access":"x","decision":"permit","digest":"%s","enforced":false,"path":"/usr/bin/cc","pid":5,"rule":"exec.allow[0]","seq":0,"tool":"fs.exec","ts":2,"uid":0}\n' "$CC_DIGEST"
		printf '{"decision":"permit","enforced":false,"host":"127.0.0.1","pid":5,"port":8080,"proto":"tcp","rule":"net.connect[0]","seq":1,"tool":"net.connect","ts":3,"uid":0}\n'
		printf '{"decision":"deny","enforced":true,"host":"10.0.0.9","pid":5,"port":443,"proto":"tcp","rule":"net.connect:default","seq":2,"tool":"net.connect","ts":4,"uid":0}\n'
		printf '{"complete":true,"decisions":3,"denials":1,"dropped":0,"kill_failed":0,"next_seq":3,"seq_gaps":0,"session":"%s","tool":"kwitness.close","ts":5,"unrecorded":0,"untracked_cgroups":0}\n' "$SID"
	}
}
log_of net.connect,net.send,exec,exec.digest all >"$T/log.jsonl"
"$KW" record build --sandbox-id spiffe://ci.example/build/1 --image-digest "$IMG" --policy "$T/pol.json" \
	--decisions "$T/log.jsonl" --enforcement-mode enforce --model-provider none --model-id none |
	"$KW" sign --key "$T/k.pem" - >"$T/rec.json"
"$KW" verify --key "$T/k.jwk" "$T/rec.json" --log "$T/log.jsonl" --policy "$T/pol.json" >/dev/null
expect_eq "the session verifies (record, log, bundle)" 0 "$?"
printf 'built artifact\n' >"$T/app.bin"
printf 'another artifact\n' >"$T/lib.so"

"$KW" attest --in-toto --record "$T/rec.json" --log "$T/log.jsonl" --policy "$T/pol.json" \
	--key "$T/k.pem" --subject "$T/app.bin" --subject "$T/lib.so" --out "$T/env.json"
expect_eq "attest: exit 0" 0 "$?"
expect_eq "envelope: payloadType application/vnd.in-toto+json" "application/vnd.in-toto+json" \
	"$(jq -r .payloadType "$T/env.json")"
expect_eq "envelope: keyid is the signing key's thumbprint" \
	"$("$KW" key show --key "$T/k.pem" --thumbprint)" "$(jq -r '.signatures[0].keyid' "$T/env.json")"
out=$($NODECHECK envelope "$T/env.json" "$T/k.jwk")
expect_eq "node: PAE computed in JS, Ed25519 signature valid under the signer's JWK" \
	"valid application/vnd.in-toto+json" "$out"
$NODECHECK envelope "$T/env.json" "$T/other.jwk" >/dev/null
expect_eq "node: the same envelope under another key is refused" 1 "$?"

jq -r .payload "$T/env.json" | base64 -d >"$T/st.json"
ST=$T/st.json
expect_eq "statement: _type in-toto Statement v1, kwitness predicate type" \
	"https://in-toto.io/Statement/v1 urn:kwitness:predicate:session:v1" \
	"$(jq -r '"\(._type) \(.predicateType)"' "$ST")"
expect_eq "statement: subjects are the two files (SHA-256 by sha256sum) and the record" \
	"$(for f in app.bin lib.so rec.json; do sha256sum "$T/$f" | cut -d' ' -f1; done | paste -sd' ')" \
	"$(jq -r '[.subject[].digest.sha256] | join(" ")' "$ST")"
expect_eq "statement: subject names as given (the record by its file name)" \
	"$T/app.bin $T/lib.so rec.json" "$(jq -r '[.subject[].name] | join(" ")' "$ST")"
expect_eq "predicate: exactly the executable the log ran, with the kernel's digest" \
	"[{\"digest\":\"$CC_DIGEST\",\"path\":\"/usr/bin/cc\"}]" "$(jq -c .predicate.executables "$ST")"
expect_eq "predicate: exactly the destination reached" '[{"host":"127.0.0.1","port":8080,"proto":"tcp"}]' \
	"$(jq -c .predicate.network "$ST")"
expect_eq "predicate: exactly the denial" \
	'1 [{"enforced":true,"host":"10.0.0.9","port":443,"proto":"tcp","rule":"net.connect:default","seq":2,"tool":"net.connect"}]' \
	"$(jq -c '"\(.predicate.denials_total) \(.predicate.denials)"' -r "$ST")"
expect_eq "predicate: policy hash and mode are the record's" \
	"$(jq -r '"\(.policy.bundle_hash) \(.policy.enforcement_mode)"' "$T/rec.json")" \
	"$(jq -r '"\(.predicate.policy.bundle_hash) \(.predicate.policy.enforcement_mode)"' "$ST")"
expect_eq "predicate: record digest, transcript hash, completeness, level" \
	"$(sha256sum "$T/rec.json" | cut -d' ' -f1) $(jq -r .tool_transcript.hash "$T/rec.json") true 0" \
	"$(jq -r '.predicate | "\(.record.digest.sha256) \(.transcript.hash) \(.completeness.complete) \(.level)"' "$ST")"
expect_eq "predicate: exec and network coverage (governed, recorded, complete)" "true true true" \
	"$(jq -r '.predicate.coverage | "\(.executables) \(.executable_digests) \(.network)"' "$ST")"

va() { "$KW" verify-attestation --key "$T/k.jwk" "$@"; }
out=$(va "$T/env.json" --subject "$T/app.bin" --subject "$T/lib.so" --record "$T/rec.json")
check "verify-attestation: valid with both subjects and the record (exit 0)" \
	test $? -eq 0 -a -n "$(grep "^valid: in-toto attestation of session $SID: 3 subjects, level 0, complete, 1 executables, 1 destinations, 1 denials" <<<"$out")"
reason() { va --json "$@" | jq -r .reason; }
expect_eq "verify-attestation under another key: signature_invalid" signature_invalid \
	"$("$KW" verify-attestation --key "$T/other.jwk" --json "$T/env.json" | jq -r .reason)"
printf 'built artifact, changed\n' >"$T/app2.bin"
expect_eq "a file that is not a subject: subject_mismatch" subject_mismatch \
	"$(reason "$T/env.json" --subject "$T/app2.bin")"
expect_eq "another record: record_mismatch" record_mismatch \
	"$(reason "$T/env.json" --record "$T/pol.json")"
jq -c '.payloadType = "application/json"' "$T/env.json" >"$T/env-type.json"
expect_eq "another payloadType: signature_invalid (the PAE covers the type)" signature_invalid \
	"$(reason "$T/env-type.json")"

# Every byte of the payload and signature text flipped in turn, one at a time:
# kwitness and node both refuse each.
flips=0 both=0
for member in payload sig; do
	if [ $member = payload ]; then path=.payload; else path='.signatures[0].sig'; fi
	text=$(jq -r "$path" "$T/env.json")
	step=$(( ${#text} / 40 + 1 ))
	for ((i = 0; i < ${#text}; i += step)); do
		c=${text:i:1}
		[ "$c" = A ] && n=B || n=A
		jq -c --arg v "${text:0:i}$n${text:i+1}" "$path = \$v" "$T/env.json" >"$T/flip.json"
		flips=$((flips + 1))
		va "$T/flip.json" >/dev/null 2>&1; r1=$?
		$NODECHECK envelope "$T/flip.json" "$T/k.jwk" >/dev/null 2>&1; r2=$?
		[ $r1 -eq 1 ] && [ $r2 -eq 1 ] && both=$((both + 1))
	done
done
expect_eq "each of $flips flipped characters (payload and signature): refused by kwitness and node" "$flips" "$both"

# --- what attest refuses ---------------------------------------------------------------
out=$("$KW" attest --in-toto --record "$T/rec.json" --log "$T/log.jsonl" --policy "$T/pol.json" \
	--key "$T/other.pem" --out "$T/env-other.json" 2>&1)
check "attest with a key that did not sign the record: exit 1, nothing written" \
	test $? -eq 1 -a ! -e "$T/env-other.json" -a -n "$(grep '^invalid: cnf_key_mismatch' <<<"$out")"
sed 's/"port":8080/"port":8081/' "$T/log.jsonl" >"$T/log-edited.jsonl"
out=$("$KW" attest --in-toto --record "$T/rec.json" --log "$T/log-edited.jsonl" --policy "$T/pol.json" \
	--key "$T/k.pem" --out "$T/env-edited.json" 2>&1)
check "attest of an edited log: exit 1 (transcript_mismatch), nothing written" \
	test $? -eq 1 -a ! -e "$T/env-edited.json" -a -n "$(grep '^invalid: transcript_mismatch' <<<"$out")"
"$KW" attest --record "$T/rec.json" --log "$T/log.jsonl" --policy "$T/pol.json" --key "$T/k.pem" \
	>/dev/null 2>&1
expect_eq "attest without --in-toto: usage error (exit 2)" 2 "$?"

# --- an exec the kernel could not hash: listed, and not "every program digested" ----------
sed "s/\"digest\":\"$CC_DIGEST\"/\"digest_unavailable\":\"unsupported\"/" "$T/log.jsonl" >"$T/log3.jsonl"
"$KW" record build --sandbox-id spiffe://ci.example/build/1 --image-digest "$IMG" --policy "$T/pol.json" \
	--decisions "$T/log3.jsonl" --enforcement-mode enforce --model-provider none --model-id none |
	"$KW" sign --key "$T/k.pem" - >"$T/rec3.json"
"$KW" attest --in-toto --record "$T/rec3.json" --log "$T/log3.jsonl" --policy "$T/pol.json" \
	--key "$T/k.pem" | jq -r .payload | base64 -d >"$T/st3.json"
expect_eq "an exec without a kernel digest: listed with why, executable_digests false" \
	'[{"digest_unavailable":"unsupported","path":"/usr/bin/cc"}] true false' \
	"$(jq -r '"\(.predicate.executables | tojson) \(.predicate.coverage.executables) \(.predicate.coverage.executable_digests)"' "$T/st3.json")"

# --- a session that did not record permits: the lists are not the whole story ----------
log_of net.connect,net.send deny >"$T/log2.jsonl"
"$KW" record build --sandbox-id spiffe://ci.example/build/1 --image-digest "$IMG" --policy "$T/pol.json" \
	--decisions "$T/log2.jsonl" --enforcement-mode enforce --model-provider none --model-id none |
	"$KW" sign --key "$T/k.pem" - >"$T/rec2.json"
"$KW" attest --in-toto --record "$T/rec2.json" --log "$T/log2.jsonl" --policy "$T/pol.json" \
	--key "$T/k.pem" | jq -r .payload | base64 -d >"$T/st2.json"
expect_eq "record deny, exec not governed: coverage says no list is complete" "false false false" \
	"$(jq -r '.predicate.coverage | "\(.executables) \(.executable_digests) \(.network)"' "$T/st2.json")"
finish
