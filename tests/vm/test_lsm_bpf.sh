#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The bpf class (lsm/bpf) through a kwitnessd session, in the VM: bpf(2) from
# a tagged process is refused with EPERM under enforce and recorded
# ("tool":"bpf", its command), proceeds under advisory, and is permitted by
# bpf.allow; an untagged process is untouched and not recorded; the record
# verifies with its log and policy.
. "$(dirname "$0")/../lib.sh"
. "$KW_ROOT/tests/kernel/kwd_lib.sh"

LP=$KW_BUILD/tests/kw-lsmprobe
[ -x "$LP" ] || kt_skip_all "$LP not built"
kwd_require
kwd_start
trap kwd_cleanup EXIT
kwd_has_hook bpf || kt_skip_feature "lsm/bpf" "the bpf hook is unavailable on this kernel ($(uname -r))"

# run_op CGROUP|- OP...: prints "PID RESULT" of kw-lsmprobe OP, in CGROUP or untagged
run_op() {
	local cg=$1 out pid res
	shift
	if [ "$cg" = - ]; then
		# shellcheck disable=SC2068
		out=$(sh -c 'echo $$; exec "$@"' sh "$LP" $@)
	else
		# shellcheck disable=SC2068
		out=$(cg_run "$cg" sh -c 'echo $$; exec "$@"' sh "$LP" $@)
	fi
	{ read -r pid; read -r res; } <<<"$out"
	echo "$pid $res"
}

# BPF_MAP_CREATE is command 0 of enum bpf_cmd
for mode in enforce advisory; do
	if ! policy_session "bpf-$mode" "$mode" deny '"bpf":{}'; then
		not_ok "$mode: session opens"
		continue
	fi
	r=$(run_op "$cg" bpf-map); dpid=${r%% *} dres=${r#* }
	r=$(run_op - bpf-map); upid=${r%% *} ures=${r#* }
	session_close "$sid" >/dev/null || { not_ok "$mode: session closes"; continue; }
	if [ $mode = enforce ]; then
		expect_eq "$mode: bpf(2) in the session fails with EPERM" EPERM "$dres"
	else
		expect_eq "$mode: bpf(2) in the session proceeds (advisory)" ok "$dres"
	fi
	expect_eq "$mode: bpf(2) outside the session untouched" ok "$ures"
	line=$(decisions "$LOG" | grep "\"pid\":$dpid," | grep '"tool":"bpf"')
	n=$(grep -c . <<<"$line")
	if [ -z "$line" ] || [ "$n" -ne 1 ]; then
		not_ok "$mode: one entry for the bpf(2) call (found $n)"
		decisions "$LOG" | grep "\"pid\":$dpid," | tail -n 3 | sed 's/^/#   /'
	else
		check_entry "$mode: denial entry fields" "$line" \
			"decision=deny;enforced=$([ $mode = enforce ] && echo true || echo false);tool=bpf;cmd=0;rule=bpf:default" "$cg"
	fi
	expect_eq "$mode: untagged process not recorded" 0 "$(decisions "$LOG" | grep -c "\"pid\":$upid,")"
	check "$mode: record verifies with log and bundle (kwitness verify)" verify_record
done

# bpf.allow opens the class up: the call proceeds, its permit names the setting
if policy_session bpf-allow enforce deny '"bpf":{"allow":true}'; then
	r=$(run_op "$cg" bpf-map); pid=${r%% *} res=${r#* }
	session_close "$sid" >/dev/null || not_ok "allow: session closes"
	expect_eq "allow: bpf(2) proceeds" ok "$res"
	line=$(decisions "$LOG" | grep "\"pid\":$pid," | grep '"tool":"bpf"' | tail -n 1)
	bad=$(entry_mismatch "$line" "decision=permit;enforced=false;tool=bpf;cmd=0;rule=bpf.allow")
	if [ -z "$bad" ]; then ok "allow: permit entry names the setting"; else
		not_ok "allow: permit entry:$bad"
		echo "#   $line"
	fi
	check "allow: record verifies" verify_record
else
	not_ok "allow: session opens"
fi

check "kwitnessd is still running" kwd_alive
finish
