#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make demo: one real sandbox session, end to end, on this machine.
#   kwitnessd (temporary state, socket and a fresh signing key)
#   two local TCP servers, 127.0.0.1:18080 and :18081
#   kwitness run --policy examples/demo-policy.json -- sh -c '...'
#     the policy allows 127.0.0.1:18080 only: one connect succeeds, the other
#     is refused by the kernel with EPERM
#   the signed TRACE v0.2 record, verified with kwitness verify against the
#   key's public JWK, the decision log and the policy bundle
# Level 2: a local transparency log (C2SP tlog-tiles) and one local witness
# (kwitness witness serve, over HTTP on a free port); kwitnessd signs the record
# once with its transparency URL, logs it, has the witness cosign, and writes
# RECORD.tlog-proof; kwitness verify --transparency checks it offline.
# With DEMO_TPM=1 (the default when swtpm and tpm2-tools are installed): a
# swtpm with an EK certificate from a CA made here, the AK enrolled by
# credential activation, kwitnessd --tpm, and a verification of the record
# against its TPM evidence (Level 1) and its log proof: Level 2.
# Needs root (BPF programs, cgroups). Cleans up after itself.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
B=$ROOT/build
ALLOWED_PORT=18080
DENIED_PORT=18081

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: run as root (loading BPF programs and making cgroups need it)" >&2
	exit 1
fi
if [ ! -x "$B/kwitness" ] || [ ! -x "$B/kwitnessd" ] || [ ! -x "$B/tests/kw-netprobe" ]; then
	echo "demo: building"
	make --no-print-directory all >/dev/null
fi

TMP=$(mktemp -d /tmp/kwitness-demo.XXXXXX)
DPID= LPID= WPID=
DEMO_TPM=${DEMO_TPM:-auto}
TPM_ARGS=()
. "$ROOT/tests/kernel/tpm_lib.sh"
if [ "$DEMO_TPM" = auto ]; then
	DEMO_TPM=1
	swtpm_tools_missing >/dev/null && DEMO_TPM=0
fi
cleanup() {
	swtpm_cleanup
	[ -n "$WPID" ] && kill "$WPID" 2>/dev/null || true
	[ -n "$LPID" ] && kill "$LPID" 2>/dev/null || true
	if [ -n "$DPID" ] && kill -0 "$DPID" 2>/dev/null; then
		kill -TERM "$DPID" 2>/dev/null || true
		wait "$DPID" 2>/dev/null || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "a fresh Ed25519 signing key"
"$B/kwitness" keygen --out "$TMP/signing-key.pem"
"$B/kwitness" key show --key "$TMP/signing-key.pem" --jwk >"$TMP/signer.jwk"

if [ "$DEMO_TPM" = 1 ]; then
	if missing=$(swtpm_tools_missing); then
		echo "demo: DEMO_TPM=1 needs $missing (scripts/deps.sh installs it)" >&2
		exit 1
	fi
	step "a software TPM (swtpm) with an EK certificate from a demo CA"
	make_ca "$TMP/ca" "kwitness demo EK CA (software TPM)" || { echo "demo: openssl cannot make the demo CA" >&2; exit 1; }
	swtpm_make "$TMP/tpm" "$TMP/ca" || { cat "$TMP/tpm/setup.log" >&2; exit 1; }
	swtpm_start "$TMP/tpm" || { echo "demo: swtpm did not start" >&2; exit 1; }
	echo "TPM: $TCTI"
	openssl x509 -inform DER -in "$TMP/tpm/certs/ek-rsa2048.crt" -noout -subject -issuer

	step "kwitness tpm enroll: the AK tied to the EK by credential activation"
	"$B/kwitness" keygen --out "$TMP/enroll.pem" >/dev/null
	"$B/kwitness" key show --key "$TMP/enroll.pem" --jwk >"$TMP/enroll.jwk"
	"$B/kwitness" tpm enroll --tpm "$TCTI" --tpm-ca "$TMP/ca/issuercert.pem" \
		--enroll-key "$TMP/enroll.pem" --key "$TMP/signer.jwk" --ak-out "$TMP/tpm-ak.json" \
		--out "$TMP/enrollment.json"
	jq . "$TMP/enrollment.json"
	TPM_ARGS=(--tpm "$TCTI" --tpm-ak "$TMP/tpm-ak.json" --tpm-enrollment "$TMP/enrollment.json")
fi

step "a transparency log ($TMP/log) and a witness (kwitness witness serve)"
"$B/kwitness" keygen --out "$TMP/log-key.pem" >/dev/null
"$B/kwitness" keygen --out "$TMP/witness-key.pem" >/dev/null
LOG_VKEY=$("$B/kwitness" tlog init "$TMP/log" --origin demo.kwitness.local/log --key "$TMP/log-key.pem")
W_VKEY=$("$B/kwitness" tlog vkey --key "$TMP/witness-key.pem" --name witness.demo.kwitness.local --witness)
"$B/kwitness" witness serve --listen 127.0.0.1:0 --key "$TMP/witness-key.pem" \
	--name witness.demo.kwitness.local --state "$TMP/witness" --log "$LOG_VKEY" >"$TMP/witness.out" 2>&1 &
WPID=$!
for _ in $(seq 100); do grep -q '^listening on ' "$TMP/witness.out" && break; sleep 0.05; done
W_URL=$(sed -n 's/^listening on //p' "$TMP/witness.out")
[ -n "$W_URL" ] || { cat "$TMP/witness.out" >&2; exit 1; }
echo "witness: $W_URL"
printf 'log %s\nwitness W %s\nquorum W\n' "$LOG_VKEY" "$W_VKEY" >"$TMP/trust.policy"
echo "tlog-policy (what a verifier trusts):"
sed 's/^/  /' "$TMP/trust.policy"
cat >"$TMP/kwitnessd.conf" <<CONF
log = $TMP/log
log_key = $TMP/log-key.pem
log_witness = $W_URL
log_policy = $TMP/trust.policy
CONF

step "kwitnessd (state $TMP/state)"
"$B/kwitnessd" --foreground -v --state-dir "$TMP/state" --socket "$TMP/kwitnessd.sock" \
	--key "$TMP/signing-key.pem" --pin-dir none --config "$TMP/kwitnessd.conf" "${TPM_ARGS[@]}" \
	2>"$TMP/kwitnessd.log" &
DPID=$!
for _ in $(seq 100); do
	[ -S "$TMP/kwitnessd.sock" ] && break
	kill -0 "$DPID" 2>/dev/null || { cat "$TMP/kwitnessd.log" >&2; exit 1; }
	sleep 0.1
done
"$B/kwitness" status --socket "$TMP/kwitnessd.sock"

step "two local TCP servers: 127.0.0.1:$ALLOWED_PORT (allowed) and :$DENIED_PORT (not in the policy)"
"$B/tests/kw-netprobe" listen $ALLOWED_PORT $DENIED_PORT >"$TMP/listen.out" &
LPID=$!
for _ in $(seq 50); do [ -s "$TMP/listen.out" ] && break; sleep 0.1; done
if [ "$(cat "$TMP/listen.out")" != ok ]; then
	echo "demo: cannot listen on 127.0.0.1:$ALLOWED_PORT/$DENIED_PORT: $(cat "$TMP/listen.out")" >&2
	exit 1
fi
echo "policy (examples/demo-policy.json):"
cat examples/demo-policy.json

step "kwitness run: the sandboxed command connects to both"
P=$B/tests/kw-netprobe
"$B/kwitness" run --socket "$TMP/kwitnessd.sock" --policy examples/demo-policy.json \
	--sandbox-id spiffe://demo.kwitness.local/agent/1 --key-jwk "$TMP/signer.jwk" --json -- \
	sh -c "echo \"  sandbox: connect 127.0.0.1:$ALLOWED_PORT -> \$($P connect 127.0.0.1 $ALLOWED_PORT)\" >&2;
	       echo \"  sandbox: connect 127.0.0.1:$DENIED_PORT -> \$($P connect 127.0.0.1 $DENIED_PORT)\" >&2" \
	>"$TMP/close.json"

REC=$(sed -n 's/^  "record_path": "\(.*\)",$/\1/p' "$TMP/close.json")
LOG=$(sed -n 's/^  "log_path": "\(.*\)",$/\1/p' "$TMP/close.json")
POL=$(sed -n 's/^  "policy_path": "\(.*\)",$/\1/p' "$TMP/close.json")

step "the decision log ($LOG)"
cat "$LOG"

step "the signed TRACE v0.2 record ($REC)"
jq . "$REC" 2>/dev/null || cat "$REC"

step "kwitness verify --key signer.jwk --log ... --policy ..."
"$B/kwitness" verify --key "$TMP/signer.jwk" --log "$LOG" --policy "$POL" "$REC"

step "egress by name: a policy naming api.demo.test:$ALLOWED_PORT, a local resolver answering it"
DT=$B/tests/kw-dnstest
printf 'api.demo.test A 127.0.0.1 60\nother.demo.test A 127.0.0.1 60\n' >"$TMP/zone"
"$DT" serve "$TMP/zone" "$TMP/dns.port" &
NSPID=$!
for _ in $(seq 50); do [ -s "$TMP/dns.port" ] && break; sleep 0.1; done
printf '{"kwitness_policy":1,"mode":"enforce","net":{"connect":["api.demo.test:%s"],"dns":{"resolvers":["127.0.0.1:%s"]}}}\n' \
	"$ALLOWED_PORT" "$(cat "$TMP/dns.port")" >"$TMP/names-policy.json"
echo "policy:"
cat "$TMP/names-policy.json"
"$B/kwitness" run --socket "$TMP/kwitnessd.sock" --policy "$TMP/names-policy.json" \
	--sandbox-id spiffe://demo.kwitness.local/agent/2 --key-jwk "$TMP/signer.jwk" --json -- \
	sh -c "echo \"  sandbox: connect 127.0.0.1:$ALLOWED_PORT before any lookup -> \$($P connect 127.0.0.1 $ALLOWED_PORT)\" >&2;
	       echo \"  sandbox: getaddrinfo api.demo.test -> \$($DT resolve api.demo.test)\" >&2;
	       echo \"  sandbox: connect 127.0.0.1:$ALLOWED_PORT (api.demo.test) -> \$($P connect 127.0.0.1 $ALLOWED_PORT)\" >&2;
	       echo \"  sandbox: ask 9.9.9.9 for other.demo.test -> \$($DT query 9.9.9.9 53 other.demo.test)\" >&2" \
	>"$TMP/names-close.json"
kill "$NSPID" 2>/dev/null
NLOG=$(sed -n 's/^  "log_path": "\(.*\)",$/\1/p' "$TMP/names-close.json")
NREC=$(sed -n 's/^  "record_path": "\(.*\)",$/\1/p' "$TMP/names-close.json")
NPOL=$(sed -n 's/^  "policy_path": "\(.*\)",$/\1/p' "$TMP/names-close.json")
echo "its decision log: the questions (dns.query, from the collector) and the connect they opened (via):"
grep -E '"tool":"(dns.query|net.connect)"' "$NLOG"
"$B/kwitness" verify --key "$TMP/signer.jwk" --log "$NLOG" --policy "$NPOL" "$NREC"

if [ "$DEMO_TPM" = 1 ]; then
	EV=$(jq -r 'select(.tool == "kwitness.close") | .evidence' "$LOG")
	EV=$TMP/state/evidence/${EV#sha256:}.json
	step "the TPM evidence the log names ($EV)"
	jq -c '{format, pcr_selection: .quote.pcr_selection, pcr_values: .quote.pcr_values, ak_binding: .ak_binding.method}' "$EV"

	step "kwitness verify --evidence ... --tpm-ca ... --enroll-key ...: Level 1"
	"$B/kwitness" verify --key "$TMP/signer.jwk" --log "$LOG" --policy "$POL" "$REC" \
		--evidence "$EV" --tpm-ca "$TMP/ca/issuercert.pem" --enroll-key "$TMP/enroll.jwk"
fi

step "the log: its cosigned checkpoint and the record's proof ($REC.tlog-proof)"
cat "$TMP/log/checkpoint"
echo
cat "$REC.tlog-proof"
"$B/kwitness" tlog check "$TMP/log" --vkey "$LOG_VKEY"

if [ "$DEMO_TPM" = 1 ]; then
	step "kwitness verify --evidence ... --transparency trust.policy: Level 2"
	"$B/kwitness" verify --key "$TMP/signer.jwk" --log "$LOG" --policy "$POL" "$REC" \
		--evidence "$EV" --tpm-ca "$TMP/ca/issuercert.pem" --enroll-key "$TMP/enroll.jwk" \
		--transparency "$TMP/trust.policy"
else
	step "kwitness verify --transparency trust.policy (no TPM: level 0, logged)"
	"$B/kwitness" verify --key "$TMP/signer.jwk" --log "$LOG" --policy "$POL" "$REC" \
		--transparency "$TMP/trust.policy"
fi
step "kwitness estate ingest: the record, verified, into the embedded database (SQLite)"
mkdir -p "$TMP/trust"
cp "$TMP/signer.jwk" "$TMP/trust/"
# The estate judges the record as verify did: with the TPM's CA and
# enrollment key and the witness policy it stores the level the evidence
# proves (without them it would store Level 0 and say why in LEVEL_WHY).
EST_ARGS=(--transparency "$TMP/trust.policy")
[ "$DEMO_TPM" = 1 ] && EST_ARGS+=(--tpm-ca "$TMP/ca/issuercert.pem" --enroll-key "$TMP/enroll.jwk")
"$B/kwitness" estate ingest --create --db "sqlite:$TMP/estate.sqlite" --trust "$TMP/trust" "${EST_ARGS[@]}" "$TMP/state"

step "kwitness estate query --decision deny: who did this"
"$B/kwitness" estate query --db "sqlite:$TMP/estate.sqlite" --decision deny

step "stopping kwitnessd"
kill -TERM "$DPID"
wait "$DPID" || true
DPID=
sed 's/^/  /' "$TMP/kwitnessd.log"
echo
echo "demo: ok"
