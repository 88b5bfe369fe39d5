#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_dns: what egress by name costs a DNS question (root, cgroup2). The
# same client (build/tests/kw-dnstest bench: one UDP socket, one question
# after the other) asks, in the same run:
#   - baseline: the local upstream (kw-dnstest serve) directly, from outside
#     any session;
#   - a permitted name from inside a session: steered to kwitnessd's resolver,
#     forwarded, its address opened in the kernel map, a dns.query entry;
#   - a refused name from inside the session (the resolver alone, no upstream).
# Each both ways a stub resolver sends: sendto() per question (musl; the
# cgroup sendmsg hook steers every datagram) and on a connect()ed socket
# (glibc; the connect hook steers once). The latency the resolver adds is the
# permitted row less its baseline; the client's own cost is in every row.
# 4 clients at once, directly and in one session, give questions per second.
# The rows alternate, round after round, and each figure is the median over
# the rounds, so a burst of other work on a shared host moves one round, not
# a row. Env: BENCH_N (questions per client and round, default 2000),
# BENCH_ROUNDS (default 5).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${KW_BUILD:-$PWD/build}
KW=$B/kwitness KWD=$B/kwitnessd DT=$B/tests/kw-dnstest
N=${BENCH_N:-2000} ROUNDS=${BENCH_ROUNDS:-5}
[ "$(id -u)" -eq 0 ] || { echo "bench_dns: needs root (skipped)"; exit 0; }
for b in "$KW" "$KWD" "$DT"; do [ -x "$b" ] || { echo "bench_dns: $b not built (make test-bins)"; exit 1; }; done
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
"$DT" serve "$T/zone" "$T/dns.port" &
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
# bench FILE CMD...: appends one client's "mean p50 p99 qps rcode" to FILE; exits on a failure
bench() {
	local r
	r=$("${@:2}") || { echo "bench_dns: ${*:2} failed: $r"; exit 1; }
	echo "$r" >>"$T/$1"
}
# median FILE: the median of each column of FILE's rows (the last column: the first row's)
median() {
	local c cols=()
	for c in 1 2 3 4; do
		cols+=("$(cut -d' ' -f$c "$T/$1" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')")
	done
	echo "${cols[*]} $(head -n 1 "$T/$1" | cut -d' ' -f5)"
}
row() { # LABEL FILE
	read -r mean p50 p99 qps rc <<<"$(median "$2")"
	printf '  %-48s mean %7s us  p50 %7s us  p99 %7s us  %6s q/s  (%s)\n' "$1" "$mean" "$p50" "$p99" "$qps" "$rc"
}
added() { # LABEL PERMITTED BASELINE
	local bm bp pm pp
	read -r bm bp _ <<<"$(median "$3")"
	read -r pm pp _ <<<"$(median "$2")"
	awk -v l="$1" -v bm="$bm" -v bp="$bp" -v pm="$pm" -v pp="$pp" \
		'BEGIN { printf "  latency the resolver adds per permitted question (%s): p50 %.1f us, mean %.1f us\n", l, pp - bp, pm - bm }'
}
# clients4 FILE CMD...: 4 clients of CMD at once; appends the questions/s over all to FILE
clients4() {
	local start end i pids=()
	start=$(date +%s.%N)
	for i in 1 2 3 4; do
		"${@:2}" bench.test "$N" sendto >"$T/c$i" &
		pids+=($!)
	done
	wait "${pids[@]}"
	end=$(date +%s.%N)
	for i in 1 2 3 4; do
		[ "$(cut -d' ' -f5 "$T/c$i")" = NOERROR ] || { echo "bench_dns: a client failed: $(cat "$T/c$i")"; exit 1; }
	done
	awk -v n=$((4 * N)) -v s="$start" -v e="$end" 'BEGIN { printf "%.0f\n", n / (e - s) }' >>"$T/$1"
}
for _ in $(seq "$ROUNDS"); do
	for mode in sendto connect; do
		bench "base.$mode" "$DT" bench 127.0.0.1 "$PORT" bench.test "$N" "$mode"
		bench "perm.$mode" in_cg "$DT" bench 192.0.2.53 53 bench.test "$N" "$mode"
		bench "ref.$mode" in_cg "$DT" bench 192.0.2.53 53 other.test "$N" "$mode"
	done
	clients4 base4 "$DT" bench 127.0.0.1 "$PORT"
	clients4 sess4 in_cg "$DT" bench 192.0.2.53 53
done
echo "DNS questions, one UDP socket, one at a time; medians of $ROUNDS rounds of $N questions:"
for mode in sendto connect; do
	row "baseline ($mode): the upstream directly" "base.$mode"
	row "session ($mode): permitted name (opened)" "perm.$mode"
	row "session ($mode): refused name (resolver alone)" "ref.$mode"
	added "$mode" "perm.$mode" "base.$mode"
done
med4() { sort -g "$T/$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "  4 clients at once (sendto), medians: baseline (the upstream directly) $(med4 base4) questions/s;" \
	"one session (permitted, opened) $(med4 sess4) questions/s"
"$KW" session close --socket "$T/sock" "$sid" >"$T/close.out" || { echo "bench_dns: close failed"; exit 1; }
log=$(sed -n 's/^log: *//p' "$T/close.out")
echo "  dns.query entries in the log: $(grep -c '"tool":"dns.query"' "$log")"
