#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_lineage: what process lineage costs a task that is in no session
# (root, cgroup2). The lineage programs run for every fork and exec on the
# host: kw_task_fork (tp_btf/sched_process_fork; it was there before, now it
# also reports a session process) and kw_proc_exec (tp_btf/sched_process_exec).
# With kernel.bpf_stats_enabled, BENCH_N (default 2000) fork + exec of
# /bin/true by this untagged shell, and the kernel's own run time per run of
# each program, in: a session open elsewhere (the untagged test: no mark in
# the task's storage; on 6.1 also the hash lookups, docs/hooks.md "A task in
# no session"), then that session's processes' own (tagged: an event).
# For scale, kw_task_free (tp_btf/sched_process_free: the same test for an
# untagged task) in the same runs, and the floor: an empty
# program on each of the three tracepoints (floor_fork, floor_exec,
# floor_free: bench/lineage_floor.bpf.c, attached by bench_lineage_floor),
# measured in the same runs.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${KW_BUILD:-$PWD/build}
KW=$B/kwitness KWD=$B/kwitnessd
N=${BENCH_N:-2000}
[ "$(id -u)" -eq 0 ] || { echo "bench_lineage: needs root (skipped)"; exit 0; }
command -v bpftool >/dev/null || { echo "bench_lineage: needs bpftool (skipped)"; exit 0; }
for b in "$KW" "$KWD" "$B/bench/bench_lineage_floor"; do [ -x "$b" ] || { echo "bench_lineage: $b not built (make)"; exit 1; }; done
mnt=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
[ -n "$mnt" ] || { echo "bench_lineage: no cgroup2 mount (skipped)"; exit 0; }
T=$(mktemp -d /tmp/kwitness-bench-lineage.XXXXXX)
CG=$mnt/kwitness-bench-lineage-$$ DPID= FPID=
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled)
cleanup() {
	echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled
	[ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null
	[ -n "$FPID" ] && { exec 3>&-; wait "$FPID"; }
	sleep 0.3
	[ -d "$CG" ] && { echo 1 >"$CG/cgroup.kill"; sleep 0.2; rmdir "$CG"; }
	rm -rf "$T"
}
trap cleanup EXIT
"$KW" keygen --out "$T/key.pem" >/dev/null
"$KWD" --foreground --state-dir "$T/state" --socket "$T/sock" --key "$T/key.pem" \
	--pin-dir none --config /dev/null 2>"$T/kwd.log" &
DPID=$!
for _ in $(seq 600); do [ -S "$T/sock" ] && break; sleep 0.1; done
mkdir "$CG"
echo '{"kwitness_policy":1,"mode":"enforce","net":{"connect":["127.0.0.1/32:1"]}}' >"$T/policy.json"
sid=$("$KW" session open --socket "$T/sock" --cgroup "$CG" --policy "$T/policy.json" \
	--sandbox-id spiffe://bench.local/lineage --image-digest "sha256:$(printf '%064d' 0)") ||
	{ echo "bench_lineage: the session did not open"; cat "$T/kwd.log"; exit 1; }
# the floor programs, held while fd 3 is open
mkfifo "$T/floor"
"$B/bench/bench_lineage_floor" <"$T/floor" >"$T/floor.out" &
FPID=$!
exec 3>"$T/floor"
for _ in $(seq 100); do grep -q attached "$T/floor.out" && break; sleep 0.1; done
grep -q attached "$T/floor.out" || { echo "bench_lineage: the floor programs did not attach"; exit 1; }
PROGS="kw_task_fork floor_fork kw_proc_exec floor_exec kw_task_free floor_free"
# "run_cnt run_time_ns" of the program NAME
prog_stats() {
	bpftool -j prog show | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("name") == sys.argv[1]:
        print(p.get("run_cnt", 0), p.get("run_time_ns", 0)); break
else:
    print(0, 0)' "$1"
}
measure() { # LABEL CMD...: ns per run of each program while CMD runs
	local label=$1 p before after
	shift
	declare -A b
	for p in $PROGS; do b[$p]=$(prog_stats "$p"); done
	"$@"
	for p in $PROGS; do
		read -r c0 t0 <<<"${b[$p]}"
		read -r c1 t1 <<<"$(prog_stats "$p")"
		awk -v l="$label" -v p="$p" -v c=$((c1 - c0)) -v t=$((t1 - t0)) \
			'BEGIN { printf "  %-34s %-13s %6d runs  %6.1f ns per run\n", l, p, c, c ? t / c : 0 }'
	done
}
loop() { for _ in $(seq "$N"); do /bin/true; done; }
echo 1 >/proc/sys/kernel/bpf_stats_enabled
echo "bench_lineage: $N fork + exec of /bin/true"
measure "untagged, a session open elsewhere" loop
measure "tagged (in the session)" sh -c 'echo $$ >"$0/cgroup.procs" && for _ in $(seq "$1"); do /bin/true; done' "$CG" "$N"
