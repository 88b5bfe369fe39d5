#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every built benchmark (build/bench/bench_*) in turn and prints what
# each measures. Benchmarks that need root or a kernel feature say why they
# skip a part. Usage: bench/run.sh [NAME ...]  (default: all built benches)
set -uo pipefail
cd "$(dirname "$0")/.."
rc=0
benches=("$@")
if [ ${#benches[@]} -eq 0 ]; then
	for b in build/bench/bench_* bench/bench_*.sh; do
		[ -x "$b" ] && benches+=("$(basename "$b")")
	done
fi
if [ ${#benches[@]} -eq 0 ]; then
	echo "bench/run.sh: nothing built (make bench)" >&2
	exit 1
fi
for name in "${benches[@]}"; do
	echo "### $name"
	exe=build/bench/$name
	[ "${name%.sh}" != "$name" ] && exe=bench/$name
	if ! "$exe"; then
		echo "### $name failed" >&2
		rc=1
	fi
	echo
done
exit $rc
