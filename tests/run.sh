#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every test suite and prints one closing line "N passed, N failed, N skipped".
# Each suite speaks TAP: cmocka binaries (CMOCKA_MESSAGE_OUTPUT=tap) and the
# shell suites (tests/lib.sh). A suite fails when it exits non-zero or by a
# signal, or when its plan ("1..N") is missing or does not match the results
# it printed, so a crash is never silent.
#
# Under CI=true a skipped test is a failure, unless it was skipped for a
# kernel feature (skip_feature in tests/lib.sh) that `kwitness probe` confirms
# absent on this host. The features the probe found absent are listed last.
# Usage: tests/run.sh [unit|cli|fuzz|kernel|relo|vm|vm-kernels|vm-all ...]
# (default: relo unit cli fuzz kernel vm vm-kernels). relo relocates the BPF
# object against each kernel's BTF without booting it. vm runs every VM suite on
# Debian 12's 6.1; vm-kernels runs the load check and the LSM, escape and
# exec-digest suites on the other kernels of the matrix (Debian 13's 6.12,
# Debian unstable's newest); vm-all runs every VM suite on all three.
set -uo pipefail
cd "$(dirname "$0")/.."
export KW_ROOT=$PWD KW_BUILD=$PWD/build
export CMOCKA_MESSAGE_OUTPUT=tap
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

passed=0 failed=0 skipped=0
failures=()
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(relo unit cli fuzz kernel vm vm-kernels)
# the kernel matrix (scripts/vmtest.sh, KW_VM_KERNEL)
VM_KERNELS_OTHER=(6.12 newest)
VM_MATRIX_TESTS="tests/vm/test_load.sh tests/vm/test_lsm.sh tests/vm/test_lsm_escape.sh tests/vm/test_exec_digest.sh tests/vm/test_lsm_bpf.sh"
CI=${CI:-false}

# Kernel features `kwitness probe` finds absent here: its classes that are not
# available, the policy classes each of them serves, and the policy classes
# the loader would not load. Empty when the probe
# cannot run (not root, not built): then no kernel skip is excused.
absent=() probe_note=
probe_absent() {
	local json
	if [ "$(id -u)" -ne 0 ]; then
		probe_note="kwitness probe not run: not root"
		return
	fi
	if [ ! -x build/kwitness ] || ! command -v jq >/dev/null; then
		probe_note="kwitness probe not run: build/kwitness or jq missing"
		return
	fi
	if ! json=$(build/kwitness probe --json 2>/dev/null); then
		probe_note="kwitness probe failed"
		return
	fi
	mapfile -t absent < <(jq -r '[(.classes[] | select(.available == false) |
		(.class, (.policy_classes // [])[])),
		(.loader // [] | .[] | select(.available == false) | .class)] | unique | .[]' <<<"$json")
}
probe_absent

# A skip line is excused under CI only for a feature the probe found absent.
skip_excused() {
	local line=$1 f a
	[[ $line =~ \#\ SKIP\ kernel-feature=([a-z0-9.]+): ]] || return 1
	f=${BASH_REMATCH[1]}
	for a in "${absent[@]}"; do
		[ "$a" = "$f" ] && return 0
	done
	return 1
}

run_one() { # name, command...
	local name=$1; shift
	local out rc p=0 f=0 s=0 n=0 plan=
	local t0=$SECONDS
	echo "### $name"
	out=$("$@" 2>&1); rc=$?
	printf '%s\n' "$out"
	echo "### $name: $((SECONDS - t0)) s"
	while IFS= read -r line; do
		case "$line" in
		"ok "*"# SKIP"*|"ok "*"# skip"*|"not ok "*"# SKIP"*|"not ok "*"# skip"*)
			n=$((n + 1))
			if [ "$CI" = true ] && ! skip_excused "$line"; then
				f=$((f + 1)); failures+=("$name: skipped under CI=true: ${line}")
			else
				s=$((s + 1))
			fi ;;
		"ok "*) p=$((p + 1)) n=$((n + 1)) ;;
		"not ok "*) f=$((f + 1)) n=$((n + 1)); failures+=("$name: ${line}") ;;
		1..*) plan=${line#1..}; plan=${plan%% *} ;;
		esac
	done <<<"$out"
	if [ $rc -ne 0 ]; then
		f=$((f + 1))
		if [ $rc -gt 128 ]; then
			failures+=("$name: killed by signal $((rc - 128))")
		else
			failures+=("$name: exited $rc")
		fi
	fi
	if [ -z "$plan" ]; then
		f=$((f + 1)); failures+=("$name: no TAP plan (1..N): it stopped early")
	elif [ "$plan" != "$n" ]; then
		f=$((f + 1)); failures+=("$name: plan 1..$plan but $n results")
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

# The VM runs go in the background from the start, niced so that the host
# suites keep the cores they need: each VM is one emulation thread, and the
# host suites leave about one core idle (they wait on kernels and daemons).
# They start once relo has fetched every kernel of the matrix into build/vm
# (two runs must not download one kernel at once); their output is read when
# the vm and vm-kernels suites come. The full 6.1 run leaves out the
# benchmark (bench/bench_lsm_vm.sh runs it).
VM_BG_DIR=$(mktemp -d /tmp/kw-vm-runs.XXXXXX)
trap 'rm -rf "$VM_BG_DIR"' EXIT
declare -A VM_BG_PID=()
vm_start() { # the suite name: vm or vm-kernels
	case $1 in
	vm) (
		KW_VM_KERNEL=6.1 KW_VM_BENCH=0 nice -n 10 scripts/vmtest.sh >"$VM_BG_DIR/6.1.out" 2>&1
		echo $? >"$VM_BG_DIR/6.1.rc"
	) & ;;
	vm-kernels) (
		for k in "${VM_KERNELS_OTHER[@]}"; do
			KW_VM_KERNEL="$k" KW_VM_BENCH=0 KW_VM_TESTS="$VM_MATRIX_TESTS" \
				nice -n 10 scripts/vmtest.sh >"$VM_BG_DIR/$k.out" 2>&1
			echo $? >"$VM_BG_DIR/$k.rc"
		done
	) & ;;
	esac
	VM_BG_PID[$1]=$!
}
vm_report() { # kernel: the run's output as one suite
	run_one "vm-$1" sh -c 'cat "$1"; exit "$(cat "$2" 2>/dev/null || echo 1)"' sh \
		"$VM_BG_DIR/$1.out" "$VM_BG_DIR/$1.rc"
}
vms_started=0
vms_start() {
	[ $vms_started = 1 ] && return
	vms_started=1
	for suite in "${suites[@]}"; do
		case $suite in vm|vm-kernels) vm_start "$suite" ;; esac
	done
}
case " ${suites[*]} " in *" relo "*) ;; *) vms_start ;; esac

for suite in "${suites[@]}"; do
	case $suite in
	unit)
		for t in build/asan/tests/test_*; do
			[ -x "$t" ] && run_one "unit/$(basename "$t")" "$t"
		done ;;
	cli|kernel)
		for t in tests/$suite/test_*.sh; do
			[ -f "$t" ] && run_one "$suite/$(basename "$t" .sh)" bash "$t"
		done ;;
	fuzz)
		run_one "fuzz/smoke" bash tests/fuzz/run.sh ;;
	vm)
		vms_start
		wait "${VM_BG_PID[vm]}"
		vm_report 6.1 ;;
	relo)
		for k in 6.1 "${VM_KERNELS_OTHER[@]}"; do
			run_one "relo-$k" env KW_VM_KERNEL="$k" KW_VM_RELO_ONLY=1 scripts/vmtest.sh
		done
		vms_start ;;
	vm-kernels)
		vms_start
		wait "${VM_BG_PID[vm-kernels]}"
		for k in "${VM_KERNELS_OTHER[@]}"; do
			vm_report "$k"
		done ;;
	vm-all)
		for k in 6.1 "${VM_KERNELS_OTHER[@]}"; do
			run_one "vm-$k" env KW_VM_KERNEL="$k" scripts/vmtest.sh
		done ;;
	*) echo "tests/run.sh: unknown suite '$suite'" >&2; exit 2 ;;
	esac
done

echo
if [ ${#failures[@]} -gt 0 ]; then
	echo "Failures:"
	printf '  %s\n' "${failures[@]}"
fi
if [ ${#absent[@]} -gt 0 ]; then
	echo "Kernel features kwitness probe finds absent here: ${absent[*]}"
else
	echo "Kernel features kwitness probe finds absent here: none${probe_note:+ ($probe_note)}"
fi
[ "$CI" = true ] && echo "CI=true: a skip counts as a failure unless its feature is listed above"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
