#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every libFuzzer target (build/fuzz/fuzz_*) for FUZZ_SECONDS (default 20)
# from its committed seed corpus (tests/fuzz/corpus/NAME/), one at a time.
# New inputs go to build/fuzz/work/NAME (the committed corpus is read only),
# crash inputs to build/fuzz/crashes/. TAP: one line per target with its
# execution count; a crash, leak or sanitizer report is a failure.
# FUZZ_NICE=N runs the targets under nice -n N (long campaigns: make soak).
# Usage: tests/fuzz/run.sh [NAME...]   (default: every target)
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
secs=${FUZZ_SECONDS:-20}
nice_n=${FUZZ_NICE:-0}
dir=$KW_BUILD/fuzz
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for s in "$KW_ROOT"/tests/fuzz/fuzz_*.c; do
		n=$(basename "$s" .c); names+=("${n#fuzz_}")
	done
fi
mkdir -p "$dir/work" "$dir/crashes" "$dir/logs"
for n in "${names[@]}"; do
	bin=$dir/fuzz_$n corpus=$KW_ROOT/tests/fuzz/corpus/$n log=$dir/logs/$n.log
	if [ ! -x "$bin" ]; then
		not_ok "fuzz_$n: not built (make fuzz)"
		continue
	fi
	if [ ! -d "$corpus" ] || [ -z "$(ls -A "$corpus")" ]; then
		not_ok "fuzz_$n: no seed corpus in tests/fuzz/corpus/$n"
		continue
	fi
	mkdir -p "$dir/work/$n"
	# Conformance vectors seed the targets that read what they describe.
	extra=()
	[ "$n" = jcs ] && [ -d "$KW_ROOT/tests/vectors/jcs/input" ] &&
		extra+=("$KW_ROOT/tests/vectors/jcs/input")
	nice -n "$nice_n" "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$dir/crashes/$n-" \
		"$dir/work/$n" "$corpus" "${extra[@]}" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	if [ $rc -eq 0 ] && [ -n "$execs" ]; then
		ok "fuzz_$n: ${secs} s, ${execs} executions, no crash"
	else
		not_ok "fuzz_$n: exit $rc after ${execs:-?} executions (log: $log)"
		grep -E 'ERROR|SUMMARY|artifact|Test unit written' "$log" | head -8 | sed 's/^/#   /'
	fi
done
finish
