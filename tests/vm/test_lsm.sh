#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# BPF-LSM through kwitnessd sessions (run inside the VM by scripts/vmtest.sh;
# skipped where the LSM classes are unavailable). Per hook: a real syscall
# from a tagged session is refused with the errno the policy's class uses
# (EACCES for fs/exec/net.unix, EPERM for proc/mount) under enforce and
# proceeds under advisory; an allowed one succeeds; the same syscall from an
# untagged process is untouched and not recorded; the denial is in the log
# with its fields ("enforced": false under advisory); the record verifies
# with kwitness verify --log --policy.
. "$(dirname "$0")/../lib.sh"
. "$KW_ROOT/tests/kernel/kwd_lib.sh"

LP=$KW_BUILD/tests/kw-lsmprobe
[ -x "$LP" ] || kt_skip_all "$LP not built"
kwd_require
# Where kwitness probe says lsm programs run, a collector that cannot load them
# is a failure, not a reason to skip.
if "$KW" probe 2>/dev/null | grep -q '^lsm.file *yes'; then
	kt_skip_all() { not_ok "$* (kwitness probe says this kernel runs lsm programs)"; finish; }
fi
kwd_start
for c in fs exec proc mount net.unix; do
	kwd_has_hook "$c" || kt_skip_all "the $c hooks are unavailable on this kernel ($(uname -r))"
done

T=/tmp/lsmt S=/tmp/lsmsock
# what every fs policy lets the helper itself load
FSR='"/kw","/lib","/lib64","/usr","/etc","/bin"'
LONG=$T/ok/$(printf 'a%.0s' $(seq 60))/$(printf 'b%.0s' $(seq 60))/$(printf 'c%.0s' $(seq 60))/$(printf 'd%.0s' $(seq 60))

# Fresh files for every operation (an advisory run really does what it asks);
# cheap, since every operation runs it under emulation.
setup_tree() {
	rm -rf "$T"
	mkdir -p "$T/ok" "$T/no" "$T/mnt" "$LONG"
	echo data >"$LONG/f"
	cp /bin/busybox "$T/ok/busybox"
}
fixtures() {
	rm -rf "$T"/ok/{nd,fifo,sym,r2,r3,l2,l3} "$T"/no/{nd,fifo,sym,r4}
	mkdir -p "$T/ok/d" "$T/no/d"
	local d f
	for d in ok no; do
		for f in f u t r l secret; do echo data >"$T/$d/$f"; done
	done
	ln -sf "$T/ok/f" "$T/no/to-ok"
	ln -sf "$T/no/f" "$T/ok/to-no"
}
setup_tree

# outside: an untagged process to signal and trace
sleep 86400 & # killed at exit; lives however slow the emulation is
OUTPID=$!
mkdir -p "$S"
"$LP" listen "$S/ok.sock" >"$KT_TMP/l1" &
L1=$!
"$LP" listen "$S/no.sock" >"$KT_TMP/l2" &
L2=$!
"$LP" listen "@kwitness-test-$$" >"$KT_TMP/l3" &
L3=$!
for _ in $(seq 50); do grep -q ok "$KT_TMP/l1" && grep -q ok "$KT_TMP/l2" && grep -q ok "$KT_TMP/l3" && break; sleep 0.1; done
cleanup_lsm() { kill "$OUTPID" "$L1" "$L2" "$L3" 2>/dev/null; rm -rf "$T" "$S"; kwd_cleanup; }
trap cleanup_lsm EXIT

# One session per mode holds every case (a session costs seconds under
# emulation); each case runs in processes of its own, so its entries are
# found by pid.
POLICY="\"fs\":{\"read\":[$FSR,\"$T/ok\"],\"write\":[\"$T/ok\"],\"deny\":[\"$T/ok/secret\"]},
\"exec\":{\"allow\":[\"$KW_BUILD/tests\",\"/bin\"]},\"proc\":{},\"mount\":{},
\"net\":{\"unix\":[\"$S/ok.sock\"]}"

# CASES: NAME|ALLOWED_OP|DENIED_OP|ERRNO|FIELDS (kw-lsmprobe arguments; FIELDS
# "key=value;..." the denial's log entry must hold)
CASES=(
	# fs: file_open
	"fs-read|open $T/ok/f r|open $T/no/f r|EACCES|tool=fs.open;path=$T/no/f;access=r;rule=fs:default"
	"fs-deny|open $T/ok/f r|open $T/ok/secret r|EACCES|tool=fs.open;path=$T/ok/secret;access=r;rule=fs.deny[0]"
	"fs-write|open $T/ok/f w|open $T/no/f w|EACCES|tool=fs.open;path=$T/no/f;access=w;rule=fs:default"
	"fs-rw|open $T/ok/f rw|open $T/no/f rw|EACCES|tool=fs.open;path=$T/no/f;access=rw;rule=fs:default"
	# a path longer than the kernel buffer under an allowed prefix: refused, marked truncated
	"fs-truncated|open $T/ok/f r|open $LONG/f r|EACCES|tool=fs.open;access=r;truncated=true;rule=fs:default"
	# fs: path operations (the write class)
	"fs-unlink|unlink $T/ok/u|unlink $T/no/u|EACCES|tool=fs.unlink;path=$T/no/u;access=w;rule=fs:default"
	"fs-mkdir|mkdir $T/ok/nd|mkdir $T/no/nd|EACCES|tool=fs.mkdir;path=$T/no/nd;rule=fs:default"
	"fs-rmdir|rmdir $T/ok/d|rmdir $T/no/d|EACCES|tool=fs.rmdir;path=$T/no/d;rule=fs:default"
	"fs-mknod|mknod $T/ok/fifo|mknod $T/no/fifo|EACCES|tool=fs.mknod;path=$T/no/fifo;rule=fs:default"
	"fs-truncate|truncate $T/ok/t|truncate $T/no/t|EACCES|tool=fs.truncate;path=$T/no/t;rule=fs:default"
	"fs-symlink|symlink /x $T/ok/sym|symlink /x $T/no/sym|EACCES|tool=fs.symlink;path=$T/no/sym;rule=fs:default"
	# the source of a rename or hard link is judged too: it is the refused path here
	"fs-rename|rename $T/ok/r $T/ok/r2|rename $T/no/r $T/ok/r3|EACCES|tool=fs.rename;path=$T/no/r;rule=fs:default"
	"fs-link|link $T/ok/l $T/ok/l2|link $T/no/l $T/ok/l3|EACCES|tool=fs.link;path=$T/no/l;rule=fs:default"
	"fs-rename-dest|rename $T/ok/r $T/ok/r2|rename $T/ok/r $T/no/r4|EACCES|tool=fs.rename;path=$T/no/r4;rule=fs:default"
	# a symbolic link never shows: the file it leads to is judged and logged
	"fs-symlink-follow|open $T/no/to-ok r|open $T/ok/to-no r|EACCES|tool=fs.open;path=$T/no/f;access=r;rule=fs:default"
	# exec (a readable copy of busybox outside exec.allow; /bin is allowed for the shells)
	"exec|exec $LP nop|exec $T/ok/busybox echo ok|EACCES|tool=fs.exec;path=$T/ok/busybox;access=x;rule=exec:default"
	# proc
	"proc-kill|kill-child|kill $OUTPID 0|EPERM|tool=proc.kill;target_pid=$OUTPID;signal=0;rule=proc:default"
	"proc-ptrace|ptrace-child|ptrace $OUTPID|EPERM|tool=proc.ptrace;target_pid=$OUTPID;rule=proc:default"
	# mount
	"mount|nop|mount $T/mnt|EPERM|tool=fs.mount;path=$T/mnt;rule=mount:default"
	# net.unix
	"unix|unix $S/ok.sock|unix $S/no.sock|EACCES|tool=net.unix;path=$S/no.sock;access=connect;rule=net.unix:default"
	# an abstract socket has no path a rule can name: "@name", default deny
	"unix-abstract|unix $S/ok.sock|unix @kwitness-test-$$|EACCES|tool=net.unix;path=@kwitness-test-$$;access=connect;rule=net.unix:default"
)

# run_op CGROUP|- OP...: prints "PID RESULT" of kw-lsmprobe OP, in CGROUP or untagged
run_op() {
	local cg=$1 out pid res
	shift
	fixtures
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

for mode in enforce advisory; do
	if ! policy_session "lsm-$mode" "$mode" deny "$POLICY"; then
		not_ok "$mode: session opens"
		continue
	fi
	declare -A ares=() dpid=() dres=() upid=() ures=()
	for c in "${CASES[@]}"; do
		IFS='|' read -r name allowed denied errno fields <<<"$c"
		# shellcheck disable=SC2086
		r=$(run_op "$cg" $allowed); ares[$name]=${r#* }
		# shellcheck disable=SC2086
		r=$(run_op "$cg" $denied); dpid[$name]=${r%% *} dres[$name]=${r#* }
		# shellcheck disable=SC2086
		r=$(run_op - $denied); upid[$name]=${r%% *} ures[$name]=${r#* }
	done
	if ! session_close "$sid" >/dev/null; then
		not_ok "$mode: session closes"
		continue
	fi
	for c in "${CASES[@]}"; do
		IFS='|' read -r name allowed denied errno fields <<<"$c"
		expect_eq "$name/$mode: allowed operation proceeds" ok "${ares[$name]}"
		if [ $mode = enforce ]; then
			expect_eq "$name/$mode: denied operation fails with $errno" "$errno" "${dres[$name]}"
		else
			expect_eq "$name/$mode: denied operation proceeds (advisory)" ok "${dres[$name]}"
		fi
		expect_eq "$name/$mode: untagged process untouched" ok "${ures[$name]}"
		line=$(decisions "$LOG" | grep "\"pid\":${dpid[$name]}," | grep '"decision":"deny"')
		want="decision=deny;enforced=$([ $mode = enforce ] && echo true || echo false);$fields"
		n=$(grep -c . <<<"$line")
		if [ -z "$line" ] || [ "$n" -ne 1 ]; then
			not_ok "$name/$mode: one denial entry for the denied operation (found $n)"
			decisions "$LOG" | grep "\"pid\":${dpid[$name]}," | tail -n 3 | sed 's/^/#   /'
		else
			check_entry "$name/$mode: denial entry fields" "$line" "$want" "$cg"
		fi
		expect_eq "$name/$mode: untagged process not recorded" 0 \
			"$(decisions "$LOG" | grep -c "\"pid\":${upid[$name]},")"
	done
	expect_eq "$mode: trailer complete" true "$(jfield "$(trailer "$LOG")" complete)"
	expect_eq "$mode: entries in the log = trailer's count" \
		"$(jfield "$(trailer "$LOG")" decisions)" "$(decisions "$LOG" | grep -c .)"
	check "$mode: record verifies with log and bundle (kwitness verify)" verify_record
done

# ---- the settings that open a class up ----
# allowed_case NAME SECTION OP FIELDS: OP succeeds in an enforcing session and
# its permit names the setting.
allowed_case() {
	local name=$1 section=$2 op=$3 fields=$4 cg sid out pid res line bad tool
	tool=$(sed -n 's/^tool=\([^;]*\).*/\1/p' <<<"$fields")
	fixtures
	policy_session "$name" enforce deny "$section" || { not_ok "$name: session opens"; return; }
	# shellcheck disable=SC2086
	out=$(cg_run "$cg" sh -c 'echo $$; exec "$@"' sh "$LP" $op)
	pid=$(sed -n 1p <<<"$out") res=$(sed -n 2p <<<"$out")
	session_close "$sid" >/dev/null || { not_ok "$name: session closes"; return; }
	expect_eq "$name: operation proceeds" ok "$res"
	# the pid's last entry of the tool (loading the helper came first)
	line=$(decisions "$LOG" | grep "\"pid\":$pid," | grep "\"tool\":\"$tool\"" | tail -n 1)
	bad=$(entry_mismatch "$line" "decision=permit;enforced=false;$fields")
	if [ -z "$bad" ]; then ok "$name: permit entry names the setting"; else
		not_ok "$name: permit entry:$bad"
		echo "#   $line"
	fi
	check "$name: record verifies" verify_record
}
allowed_case proc-signal-outside "\"proc\":{\"signal_outside\":true}" "kill $OUTPID 0" \
	"tool=proc.kill;rule=proc.signal_outside"
allowed_case mount-allow "\"mount\":{\"allow\":true}" "mount $T/mnt" \
	"tool=fs.mount;rule=mount.allow"
allowed_case fs-write-permit "\"fs\":{\"read\":[$FSR],\"write\":[\"$T/ok\"]}" "open $T/ok/f w" \
	"tool=fs.open;path=$T/ok/f;access=w;rule=fs.write[0]"

check "kwitnessd is still running" kwd_alive
finish
