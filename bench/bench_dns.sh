#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_dns: what egress by name costs a DNS question (root, cgroup2). The
# same client (tests/kernel/dnstest.py, one UDP socket, one question after
# the other) asks:
#   - baseline: the local upstream directly, from outside any session;
#   - a permitted name from inside a session: steered to kwitnessd's resolver,
#     forwarded, its address opened in the kernel map, a dns.query entry;
#   - a refused name from inside the session (the resolver alone, no upstream).
# The latency the resolver adds is the permitted row less the baseline; the
# client's own cost is in every row. 4 clients at once give the session's
# questions per second. Env: BENCH_N (questions per client, default 3000).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${KW_BUILD:-$PWD/build}
KW=$B/kwitness KWD=$B/kwitnessd DT=$PWD/tests/kernel/dnstest.py
N=${BENCH_N:-3000}
[ "$(id -u)" -eq 0 ] || { echo "bench_dns: needs root (skipped)"; exit 0; }
command -v python3 >/dev/null || { echo "bench_dns: needs python3 (skipped)"; exit 0; }
for b in "$KW" "$KWD"; do [ -x "$b" ] || { echo "bench_dns: $b not built"; exit 1; }; done
mnt=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
[ -n "$mnt" ] || { echo "bench_dns: no cgroup2 mount (skipped)"; exit 0; }
T=$(mktemp -d /tmp/kwitness-bench-dns.XXXXXX)
CG=$mnt/kwitness-bench-dns-$$ DPID= SPID=
cleanup() {
	[ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null
	sleep 0.3
	[ -d "$CG" ] && { echo 1 >"$CG/cgroup.kill"; sleep 0.2; rmdir "$CG"; }
	rm -rf "$T"
}
trap cleanup EXIT
"$KW" keygen --out "$T/key.pem" >/dev/null
echo "bench.test A 127.0.0.2 300" >"$T/zone"
python3 "$DT" serve "$T/zone" "$T/dns.port" &
SPID=$!
"$KWD" --foreground --state-dir "$T/state" --socket "$T/sock" --key "$T/key.pem" \
	--pin-dir none --config /dev/null 2>"$T/kwd.log" &
DPID=$!
for _ in $(seq 600); do [ -S "$T/sock" ] && [ -s "$T/dns.port" ] && break; sleep 0.1; done
PORT=$(cat "$T/dns.port")
mkdir "$CG"
printf '{"kwitness_policy":1,"mode":"enforce","net":{"connect":["bench.test:443"],"dns":{"resolvers":["127.0.0.1:%s"]}}}' \
	"$PORT" >"$T/policy.json"
sid=$("$KW" session open --socket "$T/sock" --cgroup "$CG" --policy "$T/policy.json" \
	--sandbox-id spiffe://bench.local/dns --image-digest "sha256:$(printf '%064d' 0)") ||
	{ echo "bench_dns: the session did not open"; cat "$T/kwd.log"; exit 1; }
in_cg() { sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@"; }
row() { # LABEL RESULT
	read -r mean p50 p99 qps rc <<<"$2"
	printf '  %-44s mean %7s us  p50 %7s us  p99 %7s us  %6s q/s  (rcode %s)\n' "$1" "$mean" "$p50" "$p99" "$qps" "$rc"
}
echo "DNS questions, $N per client, one UDP socket, one at a time:"
base=$(python3 "$DT" bench 127.0.0.1 "$PORT" bench.test "$N")
row "baseline: upstream directly (no session)" "$base"
perm=$(in_cg python3 "$DT" bench 192.0.2.53 53 bench.test "$N")
row "session, permitted name (steered, opened)" "$perm"
ref=$(in_cg python3 "$DT" bench 192.0.2.53 53 other.test "$N")
row "session, refused name (resolver alone)" "$ref"
read -r bm _ <<<"$base"
read -r pm _ <<<"$perm"
awk -v b="$bm" -v p="$pm" 'BEGIN { printf "  latency the resolver adds per permitted question: %.1f us\n", p - b }'
start=$(date +%s.%N)
for i in 1 2 3 4; do in_cg python3 "$DT" bench 192.0.2.53 53 bench.test "$N" >"$T/c$i" & done
wait $(jobs -p | grep -v "^$SPID$" | grep -v "^$DPID$") 2>/dev/null
end=$(date +%s.%N)
awk -v n=$((4 * N)) -v s="$start" -v e="$end" 'BEGIN { printf "  4 clients at once in one session: %.0f permitted questions/s\n", n / (e - s) }'
"$KW" session close --socket "$T/sock" "$sid" >"$T/close.out" || { echo "bench_dns: close failed"; exit 1; }
log=$(sed -n 's/^log: *//p' "$T/close.out")
echo "  dns.query entries in the log: $(grep -c '"tool":"dns.query"' "$log")"
