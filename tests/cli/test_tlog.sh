#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The transparency log from the command line, checked by an independent
# implementation: tests/go/tlogcheck.go on Debian's golang.org/x/mod/sumdb/tlog
# and sumdb/note, built offline. Tile boundaries up to 70,000 entries, proofs
# and consistency both ways (kwitness's checked by Go, Go's by kwitness), the
# witness refusing forks and rollbacks, cosignatures checked with the OpenSSL
# command line, and a writer killed mid-append 20 times.
source "$(dirname "$0")/../lib.sh"

if [ ! -x "$KW" ]; then
	not_ok "kwitness is not built ($KW)"
	finish
fi
T=$(mktemp -d /tmp/kw-tlog.XXXXXX)
trap 'rm -rf "$T"' EXIT
unset TRACE_PRIVATE_KEY_PEM

# --- the independent checker --------------------------------------------
GO_CHECK=$KW_BUILD/go/tlogcheck
if ! command -v go >/dev/null || [ ! -d /usr/share/gocode/src/golang.org/x/mod/sumdb/tlog ]; then
	not_ok "golang-go and golang-golang-x-mod-dev are needed (scripts/deps.sh installs them)"
	finish
fi
mkdir -p "$KW_BUILD/go"
if GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= GOCACHE=$KW_BUILD/go/cache \
	go build -o "$GO_CHECK" "$KW_ROOT/tests/go/tlogcheck.go" 2>"$T/gobuild"; then
	ok "the Go checker builds offline against Debian's golang.org/x/mod"
else
	not_ok "the Go checker builds"; sed 's/^/#   /' "$T/gobuild"
	finish
fi

"$KW" keygen --out "$T/log.pem" >/dev/null
"$KW" keygen --out "$T/w1.pem" >/dev/null
"$KW" keygen --out "$T/w2.pem" >/dev/null
"$KW" keygen --out "$T/other.pem" >/dev/null
ORIGIN=log.example.org/kwitness
L=$T/log
LVKEY=$("$KW" tlog init "$L" --origin $ORIGIN --key "$T/log.pem")
expect_eq "log init prints the log's vkey" "$LVKEY" "$("$KW" tlog vkey --key "$T/log.pem" --name $ORIGIN)"
"$KW" tlog init "$L" --origin $ORIGIN --key "$T/log.pem" >/dev/null 2>"$T/err"
expect_eq "log init refuses a directory that holds a log" 1 $?
# `kwitness log`, tlog's old name, works for one release and says so once.
"$KW" log vkey --key "$T/log.pem" --name $ORIGIN >"$T/out" 2>"$T/err"
expect_eq "the old name 'kwitness log' still runs tlog" "0 $LVKEY" "$? $(cat "$T/out")"
expect_eq "the old name prints one deprecation line" "kwitness: 'log' is deprecated, use 'tlog'" \
	"$(cat "$T/err")"
# A verb's operands: DIR missing, too many, too few: exit 2 and the fix.
"$KW" tlog request 2>"$T/err"
expect_eq "tlog request without DIR: 2, needs DIR" "2 kwitness tlog request: needs DIR" "$? $(cat "$T/err")"
for args in "proof $L" "checkpoint $L x" "cosign $L a b"; do
	# shellcheck disable=SC2086 # the operands, split
	"$KW" tlog $args 2>"$T/err"
	expect_eq "tlog ${args/"$L"/DIR}: 2, wrong arguments, see --help" \
		"2 kwitness tlog: unknown subcommand or wrong arguments: ${args%% *}; see \`kwitness tlog --help\`" \
		"$? $(cat "$T/err")"
done

# --- tile boundaries, every pair of checkpoints consistent ----------------
entries() { # FROM COUNT: lines "entry N"
	seq "$1" $(($1 + $2 - 1)) | sed 's/^/kwitness test entry /'
}
sizes=(1 2 255 256 257 70000)
have=0 prev=()
for s in "${sizes[@]}"; do
	entries $have $((s - have)) >"$T/lines"
	"$KW" tlog append "$L" --key "$T/log.pem" --lines "$T/lines" >/dev/null || not_ok "append to $s"
	have=$s
	cp "$L/checkpoint" "$T/cp.$s"
	out=$("$GO_CHECK" log "$L" "$LVKEY")
	check "size $s: Go rebuilds every tile and the root and verifies the signature" [ "${out%% *}" = ok ]
	[ "${out%% *}" = ok ] || echo "#   $out"
	"$KW" tlog check "$L" --vkey "$LVKEY" >"$T/out"
	expect_eq "size $s: kwitness tlog check agrees" "valid" "$(cut -d: -f1 "$T/out")"
	# Proofs of the boundary leaves and a sample, checked by tlog.CheckRecord.
	idx=(0 $((s - 1)) $((s / 2)))
	[ "$s" -gt 256 ] && idx+=(255 256)
	[ "$s" -eq 70000 ] && idx+=($(seq 1 997 69999) 65535 65536 69887 69888)
	files=()
	for i in "${idx[@]}"; do
		"$KW" tlog proof "$L" "$i" >"$T/p.$i" && files+=("$T/p.$i")
	done
	out=$("$GO_CHECK" inclusion "$L" "${files[@]}")
	check "size $s: ${#files[@]} kwitness proofs equal tlog.ProveRecord and pass tlog.CheckRecord" [ "${out%% *}" = ok ]
	# Consistency from every earlier checkpoint, checked both ways.
	bad=0
	for o in "${prev[@]}"; do
		"$KW" tlog request "$L" --old "$o" >"$T/req"
		"$GO_CHECK" consistency "$L" "$T/cp.$o" "$T/req" >/dev/null || bad=$((bad + 1))
		"$GO_CHECK" prove-tree "$L" "$o" >"$T/goreq"
		cmp -s "$T/req" "$T/goreq" || bad=$((bad + 1))
	done
	expect_eq "size $s: consistency proofs from ${#prev[@]} earlier checkpoints pass tlog.CheckTree and equal tlog.ProveTree" 0 $bad
	prev+=("$s")
done

# Every leaf of the big log proves (the unit tests prove every leaf of the
# smaller trees); kwitness reads its own tiles for each.
"$KW" tlog proof "$L" 69999 --anchor-v1 >"$T/anchor.json"
n=$(sed -n '/^index /,/^$/p' "$T/p.69999" | grep -c '=$')
jq -e --argjson n "$n" '.leaf_index == 69999 and (.audit_path | length) == $n and
	(.audit_path[0] | test("^sha256:[0-9a-f]{64}$"))' "$T/anchor.json" >/dev/null
expect_eq "proof --anchor-v1 gives {audit_path, leaf_index}, the same $n hashes" 0 $?

# --- a policy, a witness and its cosignatures -----------------------------
W1VKEY=$("$KW" tlog vkey --key "$T/w1.pem" --name w1.example --witness)
W2VKEY=$("$KW" tlog vkey --key "$T/w2.pem" --name w2.example --witness)
cat >"$T/policy" <<POL
log $LVKEY
witness W1 $W1VKEY
witness W2 $W2VKEY
group both all W1 W2
quorum both
POL
witness() { # KEYNUM REQUEST
	"$KW" witness add-checkpoint --key "$T/w$1.pem" --name "w$1.example" --state "$T/ws$1" \
		--log "$LVKEY" "$2"
}
"$KW" tlog request "$L" >"$T/req0"
witness 1 "$T/req0" >"$T/cos1"; rc=$?
expect_eq "witness 1 cosigns the first checkpoint it sees" 0 $rc
"$KW" tlog cosign "$L" --key "$T/log.pem" "$T/cos1"
"$KW" verify --transparency "$T/policy" --consistency "$T/cp.70000" <("$KW" tlog request "$L" --old 70000) >/dev/null
expect_eq "verify --consistency: a checkpoint is consistent with itself" 0 $?

# The cosignature checked with the OpenSSL command line: cosignature/v1,
# time, the checkpoint text, Ed25519 over that (tlog-cosignature).
sigline=$(grep '^— w1.example ' "$L/checkpoint" | cut -d' ' -f3)
printf '%s' "$sigline" | base64 -d >"$T/cosig.bin"
ts=$(od -An -tu8 --endian=big -j4 -N8 "$T/cosig.bin" | tr -d ' ')
tail -c 64 "$T/cosig.bin" >"$T/cosig.sig"
{ printf 'cosignature/v1\ntime %s\n' "$ts"; head -n 3 "$L/checkpoint"; } >"$T/cosig.msg"
pub=$(printf '%s' "$W1VKEY" | cut -d+ -f3- | base64 -d | tail -c 32 | od -An -tx1 | tr -d ' \n')
printf "$(printf '302a300506032b6570032100%s' "$pub" | sed 's/../\\x&/g')" >"$T/w1.der"
openssl pkey -pubin -inform DER -in "$T/w1.der" -out "$T/w1.pub.pem" 2>/dev/null
openssl pkeyutl -verify -pubin -inkey "$T/w1.pub.pem" -rawin -in "$T/cosig.msg" -sigfile "$T/cosig.sig" >/dev/null
expect_eq "openssl pkeyutl -verify -rawin accepts the witness cosignature" 0 $?
printf 'X' >>"$T/cosig.msg"
"$KW" tlog checkpoint "$L" >/dev/null
openssl pkeyutl -verify -pubin -inkey "$T/w1.pub.pem" -rawin -in "$T/cosig.msg" -sigfile "$T/cosig.sig" >/dev/null 2>&1
expect_eq "openssl refuses it over another message" 1 $?

# Grow by one; the witness needs the consistency proof from what it saw.
entries 70000 1 >"$T/lines"
"$KW" tlog append "$L" --key "$T/log.pem" --lines "$T/lines" >/dev/null
"$KW" tlog request "$L" >"$T/req1"
out=$(witness 1 "$T/req1")
expect_eq "the witness answers a stale old size with 409 and its size" "409 Conflict
70000" "$out"
"$KW" tlog request "$L" --old 70000 >"$T/req1"
witness 1 "$T/req1" >/dev/null
expect_eq "it cosigns with the consistency proof" 0 $?
cp "$L/checkpoint" "$T/cp.70001"

# A fork: another log with the same key and the witness's size, other entries.
F=$T/fork
"$KW" tlog init "$F" --origin $ORIGIN --key "$T/log.pem" >/dev/null
{ entries 0 70000; } | sed '7s/$/ forked/' >"$T/lines"
"$KW" tlog append "$F" --key "$T/log.pem" --lines "$T/lines" >/dev/null
entries 70000 1 >"$T/lines"
"$KW" tlog append "$F" --key "$T/log.pem" --lines "$T/lines" >/dev/null
"$KW" tlog request "$F" --old 70001 >"$T/forkreq"
out=$(witness 1 "$T/forkreq")
expect_eq "the witness refuses a fork (same size, another root): 409" "409 Conflict" "${out%%$'\n'*}"
"$KW" verify --transparency "$T/policy" --consistency "$T/cp.70001" "$T/forkreq" >"$T/out"
expect_eq "verify --consistency names the fork" "1 invalid: tlog_fork" "$? $(cut -d: -f1,2 "$T/out")"
# A rollback: a smaller checkpoint after a bigger one.
"$KW" tlog request "$L" --old 70001 | sed "1s/.*/old 70001/" >/dev/null
"$KW" verify --transparency "$T/policy" --consistency "$T/cp.70001" <(printf 'old 70000\n\n'; cat "$T/cp.70000") >"$T/out"
expect_eq "verify --consistency names a rolled-back log" "1 invalid: tlog_rollback" "$? $(cut -d: -f1,2 "$T/out")"
printf 'old 70000\n\n' >"$T/rb"; cat "$T/cp.70000" >>"$T/rb"
out=$(witness 1 "$T/rb")
expect_eq "the witness refuses a rollback: 409 with its size" "409 Conflict
70001" "$out"
# A grown fork: its consistency proof cannot link it to the cosigned tree.
entries 70001 5 >"$T/lines"
"$KW" tlog append "$F" --key "$T/log.pem" --lines "$T/lines" >/dev/null
"$KW" tlog request "$F" --old 70001 >"$T/forkreq"
out=$(witness 1 "$T/forkreq")
expect_eq "the witness refuses a grown fork: 422" "422 Unprocessable Entity" "$out"
"$KW" verify --transparency "$T/policy" --consistency "$T/cp.70001" "$T/forkreq" >"$T/out"
expect_eq "verify --consistency: tlog_inconsistent" "1 invalid: tlog_inconsistent" "$? $(cut -d: -f1,2 "$T/out")"
# A checkpoint by another key under the log's name.
O=$T/other
"$KW" tlog init "$O" --origin $ORIGIN --key "$T/other.pem" >/dev/null
"$KW" tlog request "$O" >"$T/oreq"
out=$(witness 2 "$T/oreq")
expect_eq "the witness refuses a checkpoint signed by another key: 403" "403 Forbidden" "$out"
# Go's own proofs pass kwitness.
"$GO_CHECK" prove-tree "$L" 257 >"$T/goreq"
"$KW" verify --transparency "$T/policy" --consistency "$T/cp.257" "$T/goreq" >"$T/out"
expect_eq "a consistency proof made by tlog.ProveTree passes kwitness verify" "0 valid" "$? $(cut -d: -f1 "$T/out")"

# --- a writer killed mid-append, 20 times --------------------------------
C=$T/crash
"$KW" tlog init "$C" --origin crash.example/log --key "$T/log.pem" >/dev/null
CVKEY=$("$KW" tlog vkey --key "$T/log.pem" --name crash.example/log)
printf 'log %s\nquorum none\n' "$CVKEY" >"$T/cpolicy"
entries 0 3000 >"$T/big"
cp "$C/checkpoint" "$T/crash.prev"
bad=0 kills=0
for i in $(seq 1 20); do
	"$KW" tlog append "$C" --key "$T/log.pem" --lines "$T/big" >/dev/null 2>&1 &
	pid=$!
	sleep "0.0$((RANDOM % 10))$((RANDOM % 10))"
	kill -KILL $pid 2>/dev/null && kills=$((kills + 1))
	wait $pid 2>/dev/null
	# The next writer recovers; the log must be whole and grown append-only.
	entries 0 1 >"$T/one"
	"$KW" tlog append "$C" --key "$T/log.pem" --lines "$T/one" >/dev/null || bad=$((bad + 1))
	"$KW" tlog check "$C" --vkey "$CVKEY" >/dev/null || bad=$((bad + 1))
	old=$(sed -n 2p "$T/crash.prev")
	"$KW" tlog request "$C" --old "$old" >"$T/creq"
	"$KW" verify --transparency "$T/cpolicy" --consistency "$T/crash.prev" "$T/creq" >/dev/null ||
		bad=$((bad + 1))
	cp "$C/checkpoint" "$T/crash.prev"
done
expect_eq "20 appends killed at random points ($kills still running when killed): every recovery leaves a whole log consistent with the checkpoint before" 0 $bad
out=$("$GO_CHECK" log "$C" "$CVKEY")
check "the crashed log passes the Go checker" [ "${out%% *}" = ok ]
check "no torn-append journal is left" [ ! -e "$C/.kwitness/pending" ]

# --- Level 2: a TPM-bound record, signed once, logged, witnessed ----------
. "$KW_ROOT/tests/kernel/tpm_lib.sh"
trap 'swtpm_cleanup; rm -rf "$T"' EXIT
R=$T/l2 LOG2=$T/l2/log
mkdir -p "$R"
if missing=$(swtpm_tools_missing); then
	not_ok "Level 2 needs $missing (scripts/deps.sh installs it)"
	finish
fi
make_ca "$R/ca" "kwitness tlog test EK CA" && swtpm_make "$R/tpm" "$R/ca" && swtpm_start "$R/tpm" ||
	{ not_ok "swtpm could not be started"; finish; }
"$KW" keygen --out "$R/signer.pem" >/dev/null
"$KW" keygen --out "$R/enroll.pem" >/dev/null
"$KW" key show --key "$R/signer.pem" --jwk >"$R/signer.jwk"
"$KW" key show --key "$R/enroll.pem" --jwk >"$R/enroll.jwk"
"$KW" tpm enroll --tpm "$TCTI" --tpm-ca "$R/ca/issuercert.pem" --enroll-key "$R/enroll.pem" \
	--key "$R/signer.jwk" --ak-out "$R/ak.json" --out "$R/enrollment.json" >/dev/null 2>&1
"$KW" tpm quote --tpm "$TCTI" --ak "$R/ak.json" --key "$R/signer.pem" --enrollment "$R/enrollment.json" \
	--out "$R/evidence.json" >/dev/null 2>&1
tpm2_pcrread -T "$TCTI" sha256:0,1,2,3,4,5,6,7 -o "$R/pcrs.bin" >/dev/null
M=sha256:$(openssl dgst -sha256 -r "$R/pcrs.bin" | cut -d' ' -f1)
fw() { tpm2_getcap -T "$TCTI" properties-fixed | awk -v p="$1" '$1 == p":" { getline; print $2 }'; }
V1=$(fw TPM2_PT_FIRMWARE_VERSION_1) V2=$(fw TPM2_PT_FIRMWARE_VERSION_2)
FW=$(printf '%d.%d.%d.%d' $((V1 >> 16)) $((V1 & 0xffff)) $((V2 >> 16)) $((V2 & 0xffff)))
TPMTRUST=(--evidence "$R/evidence.json" --tpm-ca "$R/ca/issuercert.pem" --enroll-key "$R/enroll.jwk")
printf '{"kwitness_policy":1,"mode":"enforce"}' >"$R/policy.json"
printf '{"tool":"kwitness.open"}\n' >"$R/decisions.jsonl"
build_record() { # SANDBOX-ID: an unsigned tpm2 record on stdout
	"$KW" record build --sandbox-id "$1" --image-digest "sha256:$(printf 'a%.0s' $(seq 64))" \
		--policy "$R/policy.json" --decisions "$R/decisions.jsonl" --enforcement-mode enforce \
		--model-provider test --model-id test |
		jq -c --arg m "$M" --arg n "$("$KW" key show --key "$R/signer.pem" --thumbprint)" --arg f "$FW" \
			'.runtime = {platform: "tpm2", measurement: $m, nonce: $n, firmware_version: $f}'
}
build_record spiffe://l2.example/a >"$R/a.unsigned"
build_record spiffe://l2.example/b >"$R/b.unsigned"
ORIGIN2=l2.example.org/kwitness
"$KW" tlog init "$LOG2" --origin $ORIGIN2 --key "$T/log.pem" >"$R/log.vkey"
L2VKEY=$(cat "$R/log.vkey")
WIT=(--witness-at "local:w1.example:$T/w1.pem:$R/ws1" --witness-at "local:w2.example:$T/w2.pem:$R/ws2")
cat >"$R/trust" <<POL
log $L2VKEY
witness W1 $W1VKEY
witness W2 $W2VKEY
group both all W1 W2
quorum both
POL
"$KW" tlog sign "$LOG2" --key "$T/log.pem" --signing-key "$R/signer.pem" "${WIT[@]}" \
	--witness-policy "$R/trust" --out "$R/a.json" "$R/a.unsigned" >"$R/out"
expect_eq "log sign: signed once, logged, cosigned by both witnesses" 0 $?
"$KW" tlog sign "$LOG2" --key "$T/log.pem" --signing-key "$R/signer.pem" "${WIT[@]}" \
	--witness-policy "$R/trust" --out "$R/b.json" "$R/b.unsigned" >/dev/null
url=$(jq -r .transparency "$R/a.json")
case $url in
https://$ORIGIN2/kwitness/*.tlog-proof) ok "the record's transparency URL is its proof's place in the log" ;;
*) not_ok "transparency URL: $url" ;;
esac
check "the log serves the proof at that URL's path" cmp -s "$R/a.json.tlog-proof" "$LOG2/kwitness/${url##*/}"
check "the proof carries both cosignatures" [ "$(grep -c '^— w[12].example ' "$R/a.json.tlog-proof")" = 2 ]

V=("$KW" verify --key "$R/signer.jwk" --max-age 0)
out=$("${V[@]}" "${TPMTRUST[@]}" --transparency "$R/trust" "$R/a.json"); rc=$?
expect_eq "verify --evidence --transparency: exit 0" 0 $rc
check "Level 2 is reported" grep -q '^level 2: ' <<<"$out"
out=$("${V[@]}" "${TPMTRUST[@]}" --transparency "$R/trust" --json "$R/a.json")
expect_eq "--json: level 2, logged" "2 true" "$(jq -r '"\(.level) \(.logged)"' <<<"$out")"
out=$("${V[@]}" --transparency "$R/trust" "$R/a.json"); rc=$?
check "without TPM evidence: valid, reported as level 0, logged (never Level 2)" \
	test $rc -eq 0 -a -n "$(grep '^level 0, logged' <<<"$out")"

# Each failure at its own step.
fails_at() { # NAME WANT-CODE ARGS...
	local name=$1 want=$2 out rc
	shift 2
	out=$("${V[@]}" "${TPMTRUST[@]}" "$@"); rc=$?
	if [ $rc -eq 1 ] && grep -q "^invalid: $want" <<<"$out"; then ok "$name: $want"; else
		not_ok "$name: $want"; echo "#   rc $rc: $out"; fi
}
jq -c '.subject = "spiffe://l2.example/evil"' "$R/a.json" >"$R/tampered.json"
cp "$R/a.json.tlog-proof" "$R/tampered.json.tlog-proof"
fails_at "a tampered record (step 1)" signature_invalid --transparency "$R/trust" "$R/tampered.json"
# A tampered path: flip the first hash of b's audit path (a, the first entry
# of a one-entry tree, has none).
awk '/^index /{print; getline; printf "%s%s\n", ($0 ~ /^A/ ? "B" : "A"), substr($0,2); next} {print}' \
	"$R/b.json.tlog-proof" >"$R/badpath"
fails_at "a tampered path (step 6)" tlog_inclusion_invalid --transparency "$R/trust" --proof "$R/badpath" "$R/b.json"
fails_at "a proof for another leaf (step 2)" tlog_leaf_mismatch --transparency "$R/trust" \
	--proof "$R/b.json.tlog-proof" "$R/a.json"
grep -v '^extra ' "$R/b.json.tlog-proof" >"$R/noextra"
fails_at "another leaf's proof without its leaf hint (step 6)" tlog_inclusion_invalid \
	--transparency "$R/trust" --proof "$R/noextra" "$R/a.json"
"$KW" tlog vkey --key "$T/other.pem" --name $ORIGIN2 >"$R/other.vkey"
sed "s|^log .*|log $(cat "$R/other.vkey")|" "$R/trust" >"$R/trust.otherkey"
fails_at "a checkpoint signed by another key (step 4)" tlog_checkpoint_signature \
	--transparency "$R/trust.otherkey" "$R/a.json"
"$KW" keygen --out "$T/w3.pem" >/dev/null
printf 'witness W3 %s\ngroup three all W1 W2 W3\nquorum three\n' \
	"$("$KW" tlog vkey --key "$T/w3.pem" --name w3.example --witness)" >"$R/more"
grep -v '^quorum' "$R/trust" | cat - "$R/more" >"$R/trust.three"
fails_at "a witness quorum not met (step 5)" tlog_witness_quorum --transparency "$R/trust.three" "$R/a.json"
printf 'log %s\nquorum none\n' "$LVKEY" >"$R/trust.otherlog"
fails_at "a log the policy does not name (step 3)" tlog_origin_mismatch \
	--transparency "$R/trust.otherlog" "$R/a.json"
printf 'not a proof\n' >"$R/junk"
fails_at "a malformed proof" tlog_proof_malformed --transparency "$R/trust" --proof "$R/junk" "$R/a.json"

# Go's proof of the same entry passes kwitness; kwitness's passes Go.
idx=$(sed -n 's/^index //p' "$R/a.json.tlog-proof")
"$GO_CHECK" prove "$LOG2" "$idx" >"$R/go.tlog-proof"
out=$("${V[@]}" "${TPMTRUST[@]}" --transparency "$R/trust" --proof "$R/go.tlog-proof" "$R/a.json")
check "a proof made by tlog.ProveRecord passes kwitness verify at Level 2" grep -q '^level 2: ' <<<"$out"
out=$("$GO_CHECK" inclusion "$LOG2" "$R/b.json.tlog-proof")
check "kwitness's record proof passes tlog.CheckRecord" [ "${out%% *}" = ok ]
out=$("$GO_CHECK" log "$LOG2" "$L2VKEY")
check "the Level 2 log passes the Go checker" [ "${out%% *}" = ok ]

printf 'log %s\nquorum none\n' "$L2VKEY" >"$R/trust.otherlog2"
"$KW" sign --key "$R/signer.pem" <(jq -c '.transparency = "https://elsewhere.example/x.tlog-proof" | del(.signature)' "$R/a.json") >"$R/moved.json"
"$KW" tlog append "$LOG2" --key "$T/log.pem" --record "$R/moved.json" >"$R/out"
"$KW" tlog proof "$LOG2" "$(cut -d' ' -f2 "$R/out")" >"$R/moved.json.tlog-proof"
fails_at "a logged record naming another URL (step 3)" tlog_origin_mismatch --transparency "$R/trust.otherlog2" \
	"$R/moved.json"

# When the witness policy cannot be met the record goes out without a URI.
build_record spiffe://l2.example/c >"$R/c.unsigned"
"$KW" tlog sign "$LOG2" --key "$T/log.pem" --signing-key "$R/signer.pem" \
	--witness-at "local:w1.example:$T/w1.pem:$R/ws1" --witness-policy "$R/trust" \
	--out "$R/c.json" "$R/c.unsigned" >/dev/null 2>"$R/err"
expect_eq "log sign with one witness of two: exit 1" 1 $?
check "it says the witness policy was not met" grep -q "witness policy not met" "$R/err"
expect_eq "the record carries no transparency URL" null "$(jq .transparency "$R/c.json")"
check "and no proof is written" [ ! -e "$R/c.json.tlog-proof" ]
out=$("${V[@]}" "${TPMTRUST[@]}" "$R/c.json")
check "the record is re-signed and verifies at Level 1" grep -q '^level 1: ' <<<"$out"

# --- over HTTP: a witness, the log read-only, a shared writer -------------
bg_serve() { # OUTFILE CMD...: starts a server, waits for its address; sets SRV_PID, SRV_URL
	local out=$1
	shift
	"$@" >"$out" 2>&1 &
	SRV_PID=$!
	SERVERS+=("$SRV_PID")
	for _ in $(seq 100); do
		SRV_URL=$(sed -n 's/^listening on //p' "$out")
		[ -n "$SRV_URL" ] && return 0
		sleep 0.05
	done
	return 1
}
SERVERS=()
trap 'for p in "${SERVERS[@]}"; do kill "$p" 2>/dev/null; done; swtpm_cleanup; rm -rf "$T"' EXIT
H=$T/http HLOG=$T/http/log
mkdir -p "$H"
"$KW" tlog init "$HLOG" --origin http.example/log --key "$T/log.pem" >"$H/log.vkey"
HVKEY=$(cat "$H/log.vkey")
bg_serve "$H/w.out" "$KW" witness serve --listen 127.0.0.1:0 --key "$T/w1.pem" --name w1.example \
	--state "$H/ws" --log "$HVKEY"
WURL=$SRV_URL
check "witness serve listens on a free port" [ -n "$WURL" ]
printf 'log %s\nwitness W1 %s\nquorum W1\n' "$HVKEY" "$W1VKEY" >"$H/trust"
head -c 24 /dev/urandom | base64 >"$H/token"
bg_serve "$H/l.out" "$KW" tlog serve "$HLOG" --listen 127.0.0.1:0 --append-token "$H/token" \
	--key "$T/log.pem" --witness-at "$WURL" --witness-policy "$H/trust"
LURL=$SRV_URL
check "log serve listens on a free port" [ -n "$LURL" ]
build_record spiffe://l2.example/remote >"$R/r.unsigned"
"$KW" tlog sign "$LURL" --log-vkey "$HVKEY" --token "$H/token" --signing-key "$R/signer.pem" \
	--out "$H/r.json" "$R/r.unsigned" >/dev/null
expect_eq "log sign to a shared writer over HTTP: logged, cosigned by the witness over HTTP" 0 $?
out=$("${V[@]}" "${TPMTRUST[@]}" --transparency "$H/trust" "$H/r.json")
check "the record from the shared writer verifies at Level 2" grep -q '^level 2: ' <<<"$out"
curl_get() { # PATH: GET through bash's /dev/tcp, prints the status line and headers
	local hp=${LURL#http://}
	exec 3<>"/dev/tcp/${hp%:*}/${hp##*:}"
	printf 'GET %s HTTP/1.1\r\nHost: x\r\n\r\n' "$1" >&3
	cat <&3
	exec 3<&-
}
curl_get /checkpoint >"$H/get"
check "GET /checkpoint: 200, no-cache, the checkpoint" \
	sh -c "grep -q '^HTTP/1.1 200' '$H/get' && grep -qi '^Cache-Control: no-cache' '$H/get' && grep -q '^http.example/log$' '$H/get'"
curl_get /tile/entries/000.p/1 >"$H/get"
check "GET a partial entry bundle: 200, immutable" \
	sh -c "grep -q '^HTTP/1.1 200' '$H/get' && grep -qi 'immutable' '$H/get'"
for p in /.kwitness/lock /../etc/passwd /tile/../checkpoint /etc/passwd //checkpoint; do
	curl_get "$p" >"$H/get"
	check "GET $p is refused (404)" grep -q '^HTTP/1.1 404' "$H/get"
done
"$KW" tlog sign "$LURL" --log-vkey "$HVKEY" --token <(echo wrong-token-wrong-token) \
	--signing-key "$R/signer.pem" --out "$H/x.json" "$R/r.unsigned" >/dev/null 2>"$H/err"
expect_eq "a wrong token: not logged (exit 1)" 1 $?
check "the writer said 401" grep -q "answered 401" "$H/err"
expect_eq "and the record has no transparency" null "$(jq .transparency "$H/x.json")"
kill -9 "${SERVERS[0]}" 2>/dev/null; wait "${SERVERS[0]}" 2>/dev/null
"$KW" tlog sign "$LURL" --log-vkey "$HVKEY" --token "$H/token" --signing-key "$R/signer.pem" \
	--out "$H/y.json" "$R/r.unsigned" >/dev/null 2>"$H/err"
expect_eq "the witness is down: not logged (exit 1), the writer says why" "1 yes" \
	"$? $(grep -q 'witness policy not met' "$H/err" && echo yes)"
out=$("$GO_CHECK" log "$HLOG" "$HVKEY")
check "the shared writer's log passes the Go checker" [ "${out%% *}" = ok ]

# A shared writer that answers every /add with a genuine proof, signed by
# the log, of another entry (the record logged above): never taken as this
# record's proof.
cat >"$H/other_proof_writer.py" <<'PY'
import http.server, sys
proof = open(sys.argv[1], "rb").read()
class Writer(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(proof)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(proof)
    def log_message(self, *args):
        pass
srv = http.server.HTTPServer(("127.0.0.1", 0), Writer)
print("listening on http://127.0.0.1:%d" % srv.server_address[1], flush=True)
srv.serve_forever()
PY
if bg_serve "$H/o.out" python3 "$H/other_proof_writer.py" "$H/r.json.tlog-proof"; then
	check "the other entry's proof holds for its own record" \
		grep -q '^level 2: ' <<<"$("${V[@]}" "${TPMTRUST[@]}" --transparency "$H/trust" "$H/r.json")"
	build_record spiffe://l2.example/another >"$R/o.unsigned"
	"$KW" log sign "$SRV_URL" --log-vkey "$HVKEY" --token "$H/token" --signing-key "$R/signer.pem" \
		--out "$H/o.json" "$R/o.unsigned" >"$H/o.stdout" 2>"$H/err"
	expect_eq "a writer's genuine proof of another entry: not logged (exit 1), and why" "1 yes" \
		"$? $(grep -q "proof does not hold for this record" "$H/err" && echo yes)"
	expect_eq "the record carries no transparency URL" null "$(jq .transparency "$H/o.json")"
	check "and no proof is written" [ ! -e "$H/o.json.tlog-proof" ]
	check "nothing claims it was logged" [ ! -s "$H/o.stdout" ]
	check "the record is re-signed and verifies at Level 1" \
		grep -q '^level 1: ' <<<"$("${V[@]}" "${TPMTRUST[@]}" "$H/o.json")"
else
	not_ok "the other-proof writer (python3) listens"
fi

# --- usage ----------------------------------------------------------------
"$KW" tlog --help >"$T/out"
check "log --help" grep -q "tlog-tiles" "$T/out"
"$KW" witness --help >"$T/out"
check "witness --help" grep -q "add-checkpoint" "$T/out"
"$KW" tlog append "$L" --key "$T/other.pem" --lines "$T/one" >/dev/null 2>"$T/err"
expect_eq "append with another key is refused" "1" "$?"
check "and says why" grep -q "not signed by this key" "$T/err"
"$KW" tlog proof "$L" 99999999 >/dev/null 2>"$T/err"
check "a proof past the end says so" grep -q "no such entry" "$T/err"
head -c 70000 /dev/zero >"$T/huge"
"$KW" tlog append "$L" --key "$T/log.pem" "$T/huge" >/dev/null 2>"$T/err"
check "an entry over 65535 bytes is refused" grep -q "at most 65535" "$T/err"
finish
