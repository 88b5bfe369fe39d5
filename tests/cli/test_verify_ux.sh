#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Verify for auditors (issue 38): a stale record's message says how to verify
# an old record (--max-age 0); `verify --decisions FILE` re-derives the
# transcript hash of a record built with `record build --decisions` from a
# JSON array (the adapter's input), and refuses an array that was changed.
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d /tmp/kwitness-verifyux.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1

"$KW" keygen --out key.pem >/dev/null
"$KW" key show --key key.pem --jwk >pub.jwk
printf '%s\n' '{"kwitness_policy":1,"mode":"enforce","record":"all","on_record_failure":"deny","net":{"connect":[]}}' >pol.json
cat >dec.json <<'J'
[{"tool":"net.connect","args":{"addr":"10.0.0.1","port":443},"decision":"allow","ts":1},
 {"tool":"fs.open","args":{"path":"/etc/passwd"},"decision":"deny","ts":2}]
J
"$KW" record build --sandbox-id spiffe://t/ux --image-digest "sha256:$(printf '%064d' 0)" --policy pol.json \
	--decisions dec.json --enforcement-mode enforce --model-provider a --model-id b >unsigned.json
"$KW" sign --key key.pem unsigned.json >rec.json

# the transcript hash, computed here independently: sha256 of "[" + the
# canonical entries joined by "," + "]"
want=sha256:$(python3 -c '
import json, sys
d = json.load(open("dec.json"))
t = "[" + ",".join(json.dumps(e, sort_keys=True, separators=(",", ":"), ensure_ascii=False) for e in d) + "]"
sys.stdout.write(t)' | sha256sum | cut -d" " -f1)
expect_eq "record build --decisions: the record's hash is the array's transcript" "$want" \
	"$(jq -r .tool_transcript.hash unsigned.json)"

out=$("$KW" verify --key pub.jwk --decisions dec.json rec.json 2>err)
rc=$?
expect_eq "verify --decisions ARRAY: valid" "0 1" "$rc $(grep -c '^valid: ' <<<"$out")"
check "verify --decisions: says the hash it derived" grep -qF "dec.json hashes to $want (2 entries)" err
jq -c '.[]' dec.json >dec.jsonl
"$KW" verify --key pub.jwk --decisions dec.jsonl rec.json >/dev/null 2>&1
expect_eq "verify --decisions JSON Lines: valid" 0 "$?"
jq '.[1].decision = "allow"' dec.json >changed.json
out=$("$KW" verify --key pub.jwk --decisions changed.json rec.json 2>/dev/null)
expect_eq "verify --decisions, one decision changed: transcript_mismatch (exit 1)" "1 transcript_mismatch" \
	"$? $(sed -n 's/^invalid: \([a-z_]*\):.*/\1/p' <<<"$out")"
jq '.[:1]' dec.json >short.json
out=$("$KW" verify --key pub.jwk --decisions short.json rec.json 2>/dev/null)
expect_eq "verify --decisions, one decision left out: transcript_mismatch" transcript_mismatch \
	"$(sed -n 's/^invalid: \([a-z_]*\):.*/\1/p' <<<"$out")"
"$KW" verify --key pub.jwk --decisions dec.json --log dec.jsonl rec.json >/dev/null 2>err
expect_eq "--decisions with --log: a usage error (2)" 2 "$?"

# a stale record: the message says how to verify it anyway
sleep 2
out=$("$KW" verify --key pub.jwk --max-age 1 rec.json)
rc=$?
expect_eq "a record older than --max-age: record_stale (exit 1)" "1 1" "$rc $(grep -c '^invalid: record_stale' <<<"$out")"
check "record_stale names --max-age 0" grep -qF -- "pass --max-age 0" <<<"$out"
"$KW" verify --key pub.jwk --max-age 0 rec.json >/dev/null
expect_eq "the same record with --max-age 0: valid" 0 "$?"
finish
