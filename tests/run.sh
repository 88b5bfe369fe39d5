#!/usr/bin/env bash
# Runs every test suite and prints one closing line "N passed, N failed, N skipped".
# Each suite speaks TAP: cmocka binaries (CMOCKA_MESSAGE_OUTPUT=tap) and the
# shell suites (tests/lib.sh). A suite that exits non-zero without a failing
# test line counts as one failure, so a crash is never silent.
# Usage: tests/run.sh [unit|cli|kernel|vm ...]   (default: all)
set -uo pipefail
cd "$(dirname "$0")/.."
export KW_ROOT=$PWD KW_BUILD=$PWD/build
export CMOCKA_MESSAGE_OUTPUT=tap
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

passed=0 failed=0 skipped=0
failures=()
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(unit cli kernel vm)

run_one() { # name, command...
	local name=$1; shift
	local out rc p=0 f=0 s=0
	echo "### $name"
	out=$("$@" 2>&1); rc=$?
	printf '%s\n' "$out"
	while IFS= read -r line; do
		case "$line" in
		"ok "*"# SKIP"*|"ok "*"# skip"*|"not ok "*"# SKIP"*|"not ok "*"# skip"*) s=$((s + 1)) ;;
		"ok "*) p=$((p + 1)) ;;
		"not ok "*) f=$((f + 1)); failures+=("$name: ${line}") ;;
		esac
	done <<<"$out"
	if [ $rc -ne 0 ] && [ $f -eq 0 ]; then
		f=1; failures+=("$name: exited $rc with no failing test line")
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

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
	vm)
		[ -x scripts/vmtest.sh ] && run_one "vm" scripts/vmtest.sh ;;
	*) echo "tests/run.sh: unknown suite '$suite'" >&2; exit 2 ;;
	esac
done

echo
if [ ${#failures[@]} -gt 0 ]; then
	echo "Failures:"
	printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
