#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kwitness probe: its answers match what this kernel really allows, worked out
# here independently: cgroup classes need root and a cgroup2 mount; an LSM class
# needs `bpf` in the active LSM list AND bpftool able to load the probe object's
# programs (lsm ones included) - which is exactly what this host refuses.
# The classes it says the loader would load are the ones kwitnessd offers.
. "$(dirname "$0")/../lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	skip "kwitness probe needs root"
	finish
fi
if [ ! -x "$KW" ]; then
	not_ok "build/kwitness exists"
	finish
fi

out=$("$KW" probe --json 2>&1)
rc=$?
expect_eq "probe --json exits 0" 0 "$rc"
text=$("$KW" probe 2>&1)

# class -> "true"/"false" from the JSON (jq when present, else the indented lines)
avail() {
	if command -v jq >/dev/null; then
		jq -r --arg c "$1" '.classes[] | select(.class == $c) | .available' <<<"$out"
	else
		tr -d '\n ' <<<"$out" | grep -o "\"class\":\"$1\",\"available\":[a-z]*" | sed 's/.*://'
	fi
}
reason() {
	if command -v jq >/dev/null; then
		jq -r --arg c "$1" '.classes[] | select(.class == $c) | .reason // ""' <<<"$out"
	else
		awk -v c="$1" '$1 == c { $1 = ""; $2 = ""; sub(/^ +/, ""); print }' <<<"$text"
	fi
}

if command -v jq >/dev/null; then
	n=$(jq '.classes | length' <<<"$out" 2>/dev/null)
	# as many as enum kw_probe_class has (user/bpf/probe.h)
	want=$(grep -c '^	KW_PROBE_[A-Z_0-9]*,' "$KW_ROOT/user/bpf/probe.h") || want="(user/bpf/probe.h unreadable)"
	expect_eq "probe --json lists $want classes" "$want" "$n"
fi

# cgroup classes: root + a cgroup2 hierarchy
if awk '$0 ~ / - cgroup2 / { f = 1 } END { exit !f }' /proc/self/mountinfo; then
	want_cg=true
else
	want_cg=false
fi
for c in cgroup.net cgroup.dev sysctl; do
	expect_eq "$c available=$want_cg" "$want_cg" "$(avail "$c")"
done

# LSM classes: bpf active AND the lsm programs load (bpftool, not our loader)
[ -r /sys/kernel/security/lsm ] || mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
lsm=$(cat /sys/kernel/security/lsm 2>/dev/null)
bpf_active=false
case ",$lsm," in *,bpf,*) bpf_active=true ;; esac
pin=/sys/fs/bpf/kwitness-probe-test-$$  # bpffs names may not contain dots
grep -q ' /sys/fs/bpf bpf ' /proc/mounts || mount -t bpf bpf /sys/fs/bpf 2>/dev/null
loads=false
if command -v bpftool >/dev/null && [ -f "$KW_BUILD/probe.bpf.o" ]; then
	if bpftool prog loadall "$KW_BUILD/probe.bpf.o" "$pin" >/dev/null 2>&1; then
		loads=true
	fi
	rm -rf "$pin" 2>/dev/null
	want_lsm=false
	$bpf_active && $loads && want_lsm=true
	echo "# lsm list: $lsm; bpftool loads the lsm programs: $loads"
	for c in lsm.file lsm.exec lsm.proc lsm.mount lsm.unix lsm.bpf; do
		expect_eq "$c available=$want_lsm" "$want_lsm" "$(avail "$c")"
	done
	if ! $want_lsm; then
		r=$(reason lsm.file)
		if $bpf_active; then
			case "$r" in
			*"refused at load"*) ok "lsm.file reason names the load refusal ($r)" ;;
			*) not_ok "lsm.file reason names the load refusal"; echo "#   got: $r" ;;
			esac
		else
			case "$r" in
			*"not an active LSM"*) ok "lsm.file reason names the missing bpf LSM" ;;
			*) not_ok "lsm.file reason names the missing bpf LSM"; echo "#   got: $r" ;;
			esac
		fi
	else
		expect_eq "available lsm.file has no reason" "" "$(reason lsm.file)"
	fi
	# exec digests: lsm programs run, the kernel has IMA (its securityfs
	# folder) and IMA's hash is SHA-256 (no other ima_hash= at boot)
	want_dig=false
	if $want_lsm && [ -d /sys/kernel/security/ima ]; then
		case " $(cat /proc/cmdline) " in
		*" ima_hash="*) grep -q ' ima_hash=sha256 ' <<<" $(cat /proc/cmdline) " && want_dig=true ;;
		*) want_dig=true ;;
		esac
	fi
	expect_eq "lsm.exec_digest available=$want_dig" "$want_dig" "$(avail lsm.exec_digest)"
	if ! $want_dig; then
		r=$(reason lsm.exec_digest)
		[ -n "$r" ] && ok "lsm.exec_digest says why not ($r)" || not_ok "lsm.exec_digest says why not"
	fi
else
	not_ok "bpftool and build/probe.bpf.o are there (the independent LSM expectation)"
fi

# the probe leaves no cgroup behind
left=$(find /sys/fs/cgroup -maxdepth 2 -name 'kwitness-probe-*' 2>/dev/null | head -n 1)
expect_eq "no probe cgroup left behind" "" "$left"

# "the loader would load" is the loader's own answer: a kwitnessd started
# here offers exactly those classes (its status, after load and attach)
if command -v jq >/dev/null; then
	. "$(dirname "$0")/kwd_lib.sh"
	kwd_require
	kwd_start
	want=$(jq -r '.loader[] | select(.available) | .class' <<<"$out" | sort | tr '\n' ' ')
	got=$(kwd_hooks | sed '/^$/d' | sort | tr '\n' ' ')
	echo "# loader: $want; kwitnessd: $got"
	if [ -n "$want" ]; then
		expect_eq "kwitnessd offers what probe says the loader would load" "$want" "$got"
	else
		not_ok "probe --json lists the loader's classes"
	fi
	for c in $(jq -r '.loader[] | select(.available | not) | .class' <<<"$out"); do
		r=$(jq -r --arg c "$c" '.loader[] | select(.class == $c) | .reason // ""' <<<"$out")
		if [ -n "$r" ]; then
			ok "loader leaves $c out and says why ($r)"
		else
			not_ok "loader leaves $c out and says why"
		fi
		check "kwitnessd's log names $c unavailable with the same reason" \
			grep -qF "class $c unavailable: $r" "$KT_TMP/kwitnessd.log"
	done
	kwd_stop
else
	not_ok "jq is installed (scripts/deps.sh)"
fi

# kwitness policy check: the classes a policy governs that this host cannot
# enforce are the ones probe's loader leaves out (design-sketch governs fs and
# exec, LSM classes; net.connect, a cgroup class)
if command -v jq >/dev/null; then
	SKETCH=$KW_ROOT/examples/policies/design-sketch.json
	governed=$("$KW" policy check --no-probe "$SKETCH" | sed -n 's/^governs: //p' | tr ' ' '\n')
	want=$("$KW" probe --json | jq -r '.loader[] | select(.available | not) | .class' | grep -xF -f <(echo "$governed") | sort)
	got=$("$KW" policy check "$SKETCH" | sed -n 's/^  \([a-z.]*\)  .*/\1/p' | sort)
	rc=$("$KW" policy check "$SKETCH" >/dev/null; echo $?)
	expect_eq "policy check: what this host cannot enforce is what probe's loader leaves out (exit $rc)" \
		"$want $([ -n "$want" ] && echo 1 || echo 0)" "$got $rc"
fi

# unknown option is a usage error
"$KW" probe --bogus >/dev/null 2>&1
expect_eq "unknown option exits 2" 2 "$?"
finish
