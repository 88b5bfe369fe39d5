#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The load check, run on every kernel of the matrix (scripts/vmtest.sh,
# KW_VM_KERNEL): kwitness's own programs load on this kernel for every class
# (Debian's cloud kernels have everything kwitness needs), kwitnessd starts
# and offers exactly what `kwitness probe` says, the probe names where exec
# entries' verity_digest comes from, and a program the verifier refuses costs
# its class only (build/tests/kw-hooktest-refuse, a test build whose
# kw_lsm_path_chmod no verifier accepts).
. "$(dirname "$0")/../lib.sh"
. "$KW_ROOT/tests/kernel/kwd_lib.sh"

kwd_require
command -v jq >/dev/null || kt_fail_all "jq missing"
kernel=$(uname -r)
echo "# kernel $kernel"
out=$("$KW" probe --json 2>"$KT_TMP/probe.err") ||
	kt_fail_all "kwitness probe --json failed: $(tail -3 "$KT_TMP/probe.err")"

# every class: kwitness's programs for it load here
while IFS=$'\t' read -r class avail why; do
	if [ "$avail" = true ]; then
		ok "$class: kwitness's programs load on $kernel"
	else
		not_ok "$class: kwitness's programs load on $kernel ($why)"
	fi
done < <(jq -r '.loader[] | [.class, (.available | tostring), (.reason // "")] | @tsv' <<<"$out")
# and each kind of program the probe tries says the same
while IFS=$'\t' read -r class avail why; do
	if [ "$avail" = true ]; then ok "probe $class: available"; else not_ok "probe $class: available ($why)"; fi
done < <(jq -r '.classes[] | [.class, (.available | tostring), (.reason // "")] | @tsv' <<<"$out")

# verity digests: the kfunc where the kernel has it, else the 6.1 read
src=$(jq -r '.verity_digest.source // ("none: " + .verity_digest.reason)' <<<"$out")
if grep -qw bpf_get_fsverity_digest /proc/kallsyms; then
	want="the kernel's bpf_get_fsverity_digest"
else
	want="the inode's fs-verity state (inode->i_verity_info)"
fi
expect_eq "verity_digest comes from $want" "$want" "$src"

# kwitnessd offers what the probe says it loads
kwd_start
want=$(jq -r '.loader[] | select(.available) | .class' <<<"$out" | sort | tr '\n' ' ')
got=$(kwd_hooks | sed '/^$/d' | sort | tr '\n' ' ')
expect_eq "kwitnessd's hooks are the probe's classes" "$want" "$got"
kwd_stop

# one refused program: its class alone is lost, named with the kernel's words
HT=$KW_BUILD/tests/kw-hooktest-refuse
if [ -x "$HT" ]; then
	ht_out=$("$HT" 2>&1)
	ht_rc=$?
	n=0
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "refused program: ${line#ok - }"; n=$((n + 1)) ;;
		"not ok - "*) not_ok "refused program: ${line#not ok - }"; n=$((n + 1)) ;;
		esac
	done <<<"$ht_out"
	[ "$n" -gt 0 ] || not_ok "refused program: kw-hooktest-refuse printed no result (exit $ht_rc)"
	[ "$ht_rc" -eq 0 ] || [ "$n" -gt 0 ] || echo "$ht_out" | tail -5 | sed 's/^/#   /'
else
	not_ok "$HT built (make test-bins)"
fi
finish
