#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitness policy check FILE (issue 38): a policy validated offline, without
# kwitnessd or root: one line naming the field, the valid keys or values
# with "did you mean" for a near miss; what a valid one governs. (What this
# host cannot enforce is checked against `kwitness probe` in
# tests/kernel/test_probe.sh.)
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d /tmp/kwitness-polcheck.XXXXXX)
chmod 0755 "$T"
trap 'rm -rf "$T"' EXIT
H='"kwitness_policy":1,"mode":"enforce"'

# invalid FILE WANT NAME: exit 1 and "invalid: FILE: WANT..." on stdout
invalid() {
	local out rc
	printf '%s\n' "$2" >"$T/p.json"
	out=$("$KW" policy check --no-probe "$T/p.json"); rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -qF -- "invalid: $T/p.json: $3" <<<"$out"; then
		ok "$1"
	else
		not_ok "$1 (exit $rc)"
		echo "#   $out"
	fi
}
invalid "unknown section key: the valid ones and did you mean" "{$H,\"net\":{\"conect\":[]}}" \
	'net.conect: unknown key (valid: connect, send, bind, socket, unix, dns; did you mean "connect"?)'
invalid "unknown top-level key: did you mean" "{$H,\"recrod\":\"all\"}" \
	'recrod: unknown key (valid: kwitness_policy, mode, record, on_record_failure, net, dev, sysctl, fs, exec, mount, proc, bpf; did you mean "record"?)'
invalid "unknown mode value: the valid ones and did you mean" '{"kwitness_policy":1,"mode":"enforced"}' \
	'mode: unknown value "enforced" (valid: enforce, advisory, silent; did you mean "enforce"?)'
invalid "far from every value: the valid ones, no guess" '{"kwitness_policy":1,"mode":"zzz"}' \
	'mode: unknown value "zzz" (valid: enforce, advisory, silent)'
invalid "a bad CIDR names the field" "{$H,\"net\":{\"connect\":[\"10.0.0.0/33:443\"]}}" 'net.connect[0]'

out=$("$KW" policy check --no-probe "$KW_ROOT/examples/demo-policy.json"); rc=$?
expect_eq "the demo policy: valid (exit 0)" "0 1" "$rc $(grep -c '^valid: ' <<<"$out")"
# its net.connect section; a net section governs net.socket too (docs/policy.md)
expect_eq "what it governs, from its sections" "governs: net.connect net.socket" "$(grep '^governs:' <<<"$out")"
printf '{"kwitness_policy":1,"mode":"advisory"}\n' >"$T/empty.json"
check "a policy without sections governs nothing, and says so" \
	grep -qF "governs: nothing" <<<"$("$KW" policy check --no-probe "$T/empty.json")"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	out=$(setpriv --reuid 65534 --regid 65534 --clear-groups "$KW" policy check "$T/empty.json"); rc=$?
	expect_eq "as a user: valid, the host not asked (exit 0)" "0 1" "$rc $(grep -c 'probing the kernel needs root' <<<"$out")"
else
	skip "needs root and setpriv to become another user"
fi
"$KW" policy check --no-probe "$T/none.json" >/dev/null 2>&1
expect_eq "a missing file: exit 1" 1 "$?"
"$KW" policy check >/dev/null 2>&1
expect_eq "no FILE: a usage error (2)" 2 "$?"
finish
