#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_resume: what a collector restart costs and what a session can hold
# while no collector runs (root, cgroup2, its own pin folder). Prints:
#   - baseline: a paced flood with the collector up (nothing dropped);
#   - the same flood while the collector is down (kill -9, restarted after):
#     how many events the default ring buffer held, hence how many seconds
#     of downtime it covers at a given decision rate;
#   - resume time for a session with a short log (its waiting events read)
#     and for one whose log holds many decisions, and the whole restart (BPF
#     load included) until the collector answers.
# Env: BENCH_RATE (decisions/s, default 5000), BENCH_N (default 20000).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${KW_BUILD:-$PWD/build}
KW=$B/kwitness KWD=$B/kwitnessd NP=$B/tests/kw-netprobe
RATE=${BENCH_RATE:-5000} N=${BENCH_N:-20000}
[ "$(id -u)" -eq 0 ] || { echo "bench_resume: needs root (skipped)"; exit 0; }
for b in "$KW" "$KWD" "$NP"; do [ -x "$b" ] || { echo "bench_resume: $b not built"; exit 1; }; done
mnt=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
T=$(mktemp -d /tmp/kwitness-bench-resume.XXXXXX)
PIN=/sys/fs/bpf/kwb-$$ CG=$mnt/kwitness-bench-$$ DPID=
cleanup() {
	[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null
	rm -rf "$PIN"
	[ -d "$CG" ] && { echo 1 >"$CG/cgroup.kill"; sleep 0.2; rmdir "$CG"; }
	rm -rf "$T"
}
trap cleanup EXIT
"$KW" keygen --out "$T/key.pem" >/dev/null
mkdir -p "$CG"
PORT=$((30000 + $$ % 20000))
printf '{"kwitness_policy":1,"mode":"enforce","record":"all","on_record_failure":"deny","net":{"send":["127.0.0.1/32:%s"]}}' \
	"$PORT" >"$T/pol.json"

start() { # sets MS: ms until the collector answers
	local t0 t1
	t0=$(date +%s%N)
	"$KWD" --foreground -v --state-dir "$T/state" --socket "$T/sock" --key "$T/key.pem" \
		--pin-dir "$PIN" --config /dev/null 2>>"$T/d.log" &
	DPID=$!
	until "$KW" session list --socket "$T/sock" >/dev/null 2>&1; do sleep 0.01; done
	t1=$(date +%s%N)
	MS=$(((t1 - t0) / 1000000))
}
kill9() { kill -KILL "$DPID"; wait "$DPID" 2>/dev/null; DPID=; }
stop() { kill -TERM "$DPID"; wait "$DPID" 2>/dev/null; DPID=; }
open() {
	"$KW" session open --socket "$T/sock" --cgroup "$CG" --policy "$T/pol.json" \
		--sandbox-id spiffe://bench/resume --image-digest sha256:$(printf 'a%.0s' $(seq 64))
}
flood() { sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$NP" flood sendto 127.0.0.1 "$PORT" "$@"; }
close_counts() { # SID: "decisions dropped"
	"$KW" session close --socket "$T/sock" --json "$1" | jq -r '"\(.decisions) \(.dropped)"'
}

start
echo "ring buffer: $(awk '/ring buffers/ { print }' "$T/d.log" | sed 's/.*ring buffers \([0-9]*\) bytes.*/\1/') bytes per session (the default)"

sid=$(open)
out=$(flood "$N" "$RATE")
read -r dec drop <<<"$(close_counts "$sid")"
echo "baseline, collector up:   $N sendto at $RATE/s -> $dec logged, $drop dropped ($out)"

sid=$(open)
kill9
out=$(flood "$N" "$RATE")
start
us=$(sed -n "s/.*session $sid: resumed in \([0-9]*\) us.*/\1/p" "$T/d.log" | tail -1)
read -r dec drop <<<"$(close_counts "$sid")"
echo "collector down:           $N sendto at $RATE/s -> $dec logged (held by the ring buffer), $drop dropped ($out)"
echo "  events buffered while down: $dec; at $RATE decisions/s that is $(awk -v n="$dec" -v r="$RATE" 'BEGIN { printf "%.2f", n / r }') s of downtime, at 100/s $(awk -v n="$dec" 'BEGIN { printf "%.0f", n / 100 }') s"
echo "  resume of that session (a 1-line log, the waiting events read): $us us; restart until the collector answers: $MS ms"

sid=$(open)
flood 200000 0 >/dev/null
kill9
start
lines=$(wc -l <"$T/state/logs/$sid.jsonl")
us=$(sed -n "s/.*session $sid: resumed in \([0-9]*\) us.*/\1/p" "$T/d.log" | tail -1)
echo "resume: a log of $lines lines resumed in $us us; restart until the collector answers: $MS ms (BPF load included)"
close_counts "$sid" >/dev/null
stop
