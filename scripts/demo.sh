#!/usr/bin/env bash
# make demo: one real sandbox session, end to end, on this machine.
#   kwitnessd (temporary state, socket and a fresh signing key)
#   two local TCP servers, 127.0.0.1:18080 and :18081
#   kwitness run --policy examples/demo-policy.json -- sh -c '...'
#     the policy allows 127.0.0.1:18080 only: one connect succeeds, the other
#     is refused by the kernel with EPERM
#   the signed TRACE v0.2 record, verified with kwitness verify against the
#   key's public JWK, the decision log and the policy bundle
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
DPID= LPID=
cleanup() {
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

step "kwitnessd (state $TMP/state)"
"$B/kwitnessd" --foreground -v --state-dir "$TMP/state" --socket "$TMP/kwitnessd.sock" \
	--key "$TMP/signing-key.pem" --pin-dir none --config /dev/null 2>"$TMP/kwitnessd.log" &
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

step "stopping kwitnessd"
kill -TERM "$DPID"
wait "$DPID" || true
DPID=
sed 's/^/  /' "$TMP/kwitnessd.log"
echo
echo "demo: ok"
