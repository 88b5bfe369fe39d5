#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_lsm and bench_exec inside the qemu VM (Debian 12's 6.1 kernel, BPF-LSM
# on): this host's kernel refuses LSM programs. The VM boots and runs
# both benchmarks; their lines are the "# bench:" ones. Emulated
# CPU: only the ratios mean anything. KW_VM_KERNEL picks another kernel.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(KW_VM_KERNEL=${KW_VM_KERNEL:-6.1} KW_VM_BENCH=1 KW_VM_TESTS=none scripts/vmtest.sh 2>&1)
rc=$?
grep -E '^# (vm|bench):' <<<"$out"
grep -q '^# bench:' <<<"$out" || { echo "bench_lsm_vm: the VM printed no benchmark lines (vmtest exit $rc)" >&2; exit 1; }
exit $rc
