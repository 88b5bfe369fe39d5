#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Ways around the BPF-LSM path, signal, mount and unix rules (run inside the
# VM by scripts/vmtest.sh; skipped where the LSM classes are unavailable).
# Each attack first runs outside any session, where it works (the control:
# the bypass is real on this kernel), then inside an enforcing session, where
# it is refused with the class's errno and its denial is in the log with its
# fields. Where the attack is how an unprivileged user would go about it, it
# also runs as uid 65534 in a new user and mount namespace (kw-lsmprobe -u).
. "$(dirname "$0")/../lib.sh"
. "$KW_ROOT/tests/kernel/kwd_lib.sh"

LP=$KW_BUILD/tests/kw-lsmprobe
[ -x "$LP" ] || kt_skip_all "$LP not built"
kwd_require
if "$KW" probe 2>/dev/null | grep -q '^lsm.file *yes'; then
	kt_skip_all() { not_ok "$* (kwitness probe says this kernel runs lsm programs)"; finish; }
fi
kwd_start
for c in fs exec proc mount net.unix; do
	kwd_has_hook "$c" || kt_skip_all "the $c hooks are unavailable on this kernel ($(uname -r))"
done

T=/tmp/kwa S=/tmp/kwa-sock
mkdir -p "$S" "$T"
chmod 755 "$T" "$S"
# a mount the umount case can take away
mkdir -p "$T/mnt2"
mount -t tmpfs kwtest "$T/mnt2"

# Fresh files before every operation (the controls really do what they ask).
fixtures() {
	rm -rf "$T/etc" "$T/ok" "$T/no" "$T/mnt"
	mkdir -p "$T/etc" "$T/ok/sub" "$T/ok/mnt" "$T/ok/bin" "$T/no" "$T/mnt"
	echo kwitness-vm >"$T/etc/hostname"
	echo secret >"$T/ok/sub/secret"
	echo data >"$T/no/f"
	echo data >"$T/ok/f"
	chmod 644 "$T/no/f" "$T/ok/f"
	"$LP" setxattr "$T/no/f" >/dev/null
	"$LP" setxattr "$T/ok/f" >/dev/null
	echo data >"$T/no/acl"
	cp "$LP" "$T/ok/bin/evil"
	chmod -R a+rX "$T"
	# after the chmod, which would widen the ACL's mask
	chmod 644 "$T/no/acl"
	"$LP" setacl "$T/no/acl" >/dev/null
}

# outside: datagram receivers, one the policy names and one it does not
"$LP" dgram-listen "$S/ok.dgram" "$KT_TMP/got-ok" >"$KT_TMP/d1" &
D1=$!
"$LP" dgram-listen "$S/no.dgram" "$KT_TMP/got-no" >"$KT_TMP/d2" &
D2=$!
for _ in $(seq 50); do grep -q ok "$KT_TMP/d1" && grep -q ok "$KT_TMP/d2" && break; sleep 0.1; done
TARGETS=()
cleanup_escape() {
	kill "$D1" "$D2" "${TARGETS[@]}" 2>/dev/null
	umount -l "$T/mnt2" "$T/ok/mnt" "$T/mnt" 2>/dev/null
	rm -rf "$T" "$S"
	kwd_cleanup
}
trap cleanup_escape EXIT

# The issue's policy: everything readable, one folder writable, three paths
# denied, exec from /bin and the helpers only, no signals out, no mounts,
# one unix socket.
# memfd: is readable so that a memfd exec reaches the exec rule.
POLICY="\"fs\":{\"read\":[\"/\",\"memfd:\"],\"write\":[\"$T/ok\"],
\"deny\":[\"$T/etc/hostname\",\"$T/ok/secret\",\"$T/ok/sub/secret\"]},
\"exec\":{\"allow\":[\"$KW_BUILD/tests\",\"/bin\",\"/usr/bin\"]},\"proc\":{},\"mount\":{},
\"net\":{\"unix\":[\"$S/ok.dgram\"]}"

# CASES: NAME|OP|ERRNO|FIELDS. OP (kw-lsmprobe arguments) works outside a
# session and fails with ERRNO inside; FIELDS ("key=value;...") are what its
# denial entry holds.
CASES=(
	# a clone of a tree is a detached mount: paths in it are not the sandbox's
	"tree-open|tree-open $T/etc hostname r|EACCES|tool=fs.open;path=/hostname;mount=detached;access=r;rule=fs:default"
	"tree-open-userns|-u tree-open $T/etc hostname r|EACCES|tool=fs.open;path=/hostname;mount=detached;access=r;rule=fs:default"
	"tree-proc|tree-proc $T/etc hostname|EACCES|tool=fs.open;path=/hostname;mount=detached;access=r;rule=fs:default"
	# (an exec opens the file first: fs.read refuses it there)
	"tree-exec|tree-exec $T/ok bin/evil|EACCES|tool=fs.open;path=/bin/evil;mount=detached;access=r;rule=fs:default"
	# attaching it is a mount
	"tree-move|tree-move $T/etc $T/mnt hostname r|EPERM|tool=fs.move_mount;path=$T/mnt;rule=mount:default"
	"tree-move-userns|-u tree-move $T/etc $T/mnt hostname r|EPERM|tool=fs.move_mount;path=$T/mnt;rule=mount:default"
	"tree-move-write|tree-move $T/etc $T/ok/mnt hostname a|EPERM|tool=fs.move_mount;path=$T/ok/mnt;rule=mount:default"
	"fsconfig|fsconfig tmpfs|EPERM|tool=fs.fsconfig;fstype=tmpfs;rule=mount:default"
	"umount|umount $T/mnt2|EPERM|tool=fs.umount;path=$T/mnt2;rule=mount:default"
	# metadata is writing
	"chmod|chmod $T/no/f|EACCES|tool=fs.chmod;path=$T/no/f;access=w;rule=fs:default"
	"chown|chown $T/no/f|EACCES|tool=fs.chown;path=$T/no/f;access=w;rule=fs:default"
	"utimes|utimes $T/no/f|EACCES|tool=fs.utimes;path=$T/no/f;access=w;rule=fs:default"
	"setxattr|setxattr $T/no/f|EACCES|tool=fs.setxattr;path=$T/no/f;access=w;rule=fs:default"
	"removexattr|removexattr $T/no/f|EACCES|tool=fs.removexattr;path=$T/no/f;access=w;rule=fs:default"
	# POSIX ACLs are extended attributes on every kernel (6.2 on: their own hooks)
	"setacl|setacl $T/no/f|EACCES|tool=fs.setxattr;path=$T/no/f;access=w;rule=fs:default"
	"removeacl|removeacl $T/no/acl|EACCES|tool=fs.removexattr;path=$T/no/acl;access=w;rule=fs:default"
	# inode flags through a descriptor opened read-only
	"chattr|chattr $T/no/f|EACCES|tool=fs.chattr;path=$T/no/f;access=w;rule=fs:default"
	# a descriptor opened for writing outside the session (run_op opens it as fd 3)
	"ftruncate-fd|ftruncate-fd 3|EACCES|tool=fs.truncate;path=$T/no/f;access=w;rule=fs:default"
	# unix datagrams
	"dgram|dgram $S/no.dgram|EACCES|tool=net.unix;path=$S/no.dgram;access=send;rule=net.unix:default"
	"dgram-connect|dgram-connect $S/no.dgram|EACCES|tool=net.unix;path=$S/no.dgram;access=send;rule=net.unix:default"
	# renaming an ancestor of a denied path
	"rename-ancestor|rename $T/ok/sub $T/ok/sub2|EACCES|tool=fs.rename;path=$T/ok/sub;access=w;rule=fs.deny[2]"
	# files with no path
	"memfd-exec|memfd-exec kwtest|EACCES|tool=fs.exec;path=memfd:kwtest;access=x;rule=exec:default"
	"pipe-reopen|pipe-reopen|EACCES|tool=fs.open;access=r;rule=fs:default"
)
# operations to do in the session whose control cannot run here (the VM's
# root is the initramfs, which pivot_root refuses): NAME|OP|ERRNO|FIELDS
SESSION_ONLY=(
	"pivot-root|pivot-root $T/mnt2|EPERM|tool=fs.pivot_root;path=$T/mnt2;rule=mount:default"
)

# run_op CGROUP|- OP...: prints "PID RESULT" of kw-lsmprobe OP, in CGROUP or untagged
run_op() {
	local cg=$1 out pid res
	shift
	fixtures
	# fd 3: $T/no/f opened for writing here, outside any session
	if [ "$cg" = - ]; then
		# shellcheck disable=SC2068
		out=$(sh -c 'echo $$; exec "$@"' sh "$LP" $@ 2>/dev/null 3<>"$T/no/f")
	else
		# shellcheck disable=SC2068
		out=$(cg_run "$cg" sh -c 'echo $$; exec "$@"' sh "$LP" $@ 2>/dev/null 3<>"$T/no/f")
	fi
	{ read -r pid; read -r res; } <<<"$out"
	echo "$pid $res"
}

# the controls: every attack works outside a session
declare -A cres=() after=()
for c in "${CASES[@]}"; do
	IFS='|' read -r name op errno fields <<<"$c"
	# shellcheck disable=SC2086
	r=$(run_op - $op); cres[$name]=${r#* }
	case $name in
	tree-move-write) after[$name]=$(cat "$T/etc/hostname" | tr '\n' ' ') ;;
	rename-ancestor) after[$name]=$(cat "$T/ok/sub2/secret" 2>/dev/null) ;;
	chmod) after[$name]=$(stat -c %a "$T/no/f") ;;
	setacl) after[$name]=$(stat -c %a "$T/no/f") ;;
	ftruncate-fd) after[$name]=$(stat -c %s "$T/no/f") ;;
	esac
done
# signals through file ownership: the target outside dies
# alive PID: "alive", or "dead" (gone or a zombie)
alive() {
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && echo alive || echo dead
}
sleep 86400 & t=$!; TARGETS+=("$t")
r=$(run_op - sigio "$t" 0); sleep 0.3; cres[sigio]="${r#* } $(alive "$t")"
sleep 86400 & t=$!; TARGETS+=("$t")
r=$(run_op - sigio "$t" 9); sleep 0.3; cres[sigio-kill]="${r#* } $(alive "$t")"
sleep 0.3
got_no_before=$(grep -c got "$KT_TMP/got-no" 2>/dev/null)

for c in "${CASES[@]}"; do
	IFS='|' read -r name op errno fields <<<"$c"
	expect_eq "$name: control, outside a session the attack works" ok "${cres[$name]}"
done
expect_eq "tree-move-write: control wrote through the moved clone" "kwitness-vm x " "${after[tree-move-write]}"
expect_eq "rename-ancestor: control read the denied file at its new name" secret "${after[rename-ancestor]}"
expect_eq "chmod: control changed the mode" 777 "${after[chmod]}"
expect_eq "setacl: control, the ACL changed the mode" 674 "${after[setacl]}"
expect_eq "ftruncate-fd: control truncated the file" 0 "${after[ftruncate-fd]}"
expect_eq "sigio: control, SIGIO killed the process outside" "ok dead" "${cres[sigio]}"
expect_eq "sigio-kill: control, F_SETSIG 9 killed the process outside" "ok dead" "${cres[sigio-kill]}"
expect_eq "dgram: control datagrams were delivered" 2 "${got_no_before:-0}"

# the same in one enforcing session
if ! policy_session "escape" enforce deny "$POLICY"; then
	not_ok "session opens"
	finish
fi
declare -A dpid=() dres=()
for c in "${CASES[@]}" "${SESSION_ONLY[@]}"; do
	IFS='|' read -r name op errno fields <<<"$c"
	# shellcheck disable=SC2086
	r=$(run_op "$cg" $op); dpid[$name]=${r%% *} dres[$name]=${r#* }
	case $name in
	tree-move-write) after[$name]=$(cat "$T/etc/hostname" | tr '\n' ' ') ;;
	chmod) after[$name]=$(stat -c %a "$T/no/f") ;;
	setacl) after[$name]=$(stat -c %a "$T/no/f") ;;
	removeacl) after[$name]=$(stat -c %a "$T/no/acl") ;;
	ftruncate-fd) after[$name]=$(stat -c %s "$T/no/f") ;;
	esac
done
sleep 86400 & t=$!; TARGETS+=("$t"); sigio_t=$t
r=$(run_op "$cg" sigio "$t" 0); sleep 0.3
dpid[sigio]=${r%% *} dres[sigio]="${r#* } $(alive "$t")"
sleep 86400 & t=$!; TARGETS+=("$t"); sigkill_t=$t
r=$(run_op "$cg" sigio "$t" 9); sleep 0.3
dpid[sigio-kill]=${r%% *} dres[sigio-kill]="${r#* } $(alive "$t")"
# the same helper, allowed: a datagram to the socket net.unix names
r=$(run_op "$cg" dgram "$S/ok.dgram"); okd_pid=${r%% *} okd_res=${r#* }
sleep 0.3
got_no_after=$(grep -c got "$KT_TMP/got-no" 2>/dev/null)
if ! session_close "$sid" >/dev/null; then
	not_ok "session closes"
	finish
fi

# one_denial NAME ERRNO FIELDS: the operation failed with ERRNO and its pid
# has exactly one denial entry, holding FIELDS.
one_denial() {
	local name=$1 errno=$2 fields=$3 line n
	expect_eq "$name: refused in the session with $errno" "$errno" "${dres[$name]}"
	line=$(decisions "$LOG" | grep "\"pid\":${dpid[$name]}," | grep '"decision":"deny"')
	n=$(grep -c . <<<"$line")
	if [ -z "$line" ] || [ "$n" -ne 1 ]; then
		not_ok "$name: one denial entry (found $n)"
		decisions "$LOG" | grep "\"pid\":${dpid[$name]}," | tail -n 3 | sed 's/^/#   /'
	else
		check_entry "$name: denial entry fields" "$line" "decision=deny;enforced=true;$fields" "$cg"
	fi
}
for c in "${CASES[@]}" "${SESSION_ONLY[@]}"; do
	IFS='|' read -r name op errno fields <<<"$c"
	one_denial "$name" "$errno" "$fields"
done
expect_eq "tree-move-write: the denied file is unchanged" "kwitness-vm " "${after[tree-move-write]}"
expect_eq "chmod: the mode is unchanged" 644 "${after[chmod]}"
expect_eq "setacl: the mode is unchanged" 644 "${after[setacl]}"
expect_eq "removeacl: the ACL is still there" 674 "${after[removeacl]}"
expect_eq "ftruncate-fd: the file keeps its data" 5 "${after[ftruncate-fd]}"
expect_eq "dgram: no datagram reached the socket outside net.unix" "${got_no_before:-0}" "${got_no_after:-0}"
expect_eq "dgram-allowed: a datagram to the socket net.unix names goes" ok "$okd_res"
line=$(decisions "$LOG" | grep "\"pid\":$okd_pid," | grep '"tool":"net.unix"')
bad=$(entry_mismatch "$line" "decision=permit;access=send;path=$S/ok.dgram;rule=net.unix[0]")
if [ -z "$bad" ]; then ok "dgram-allowed: permit entry"; else not_ok "dgram-allowed: permit entry:$bad"; fi
line=$(decisions "$LOG" | grep "\"pid\":${dpid[pipe-reopen]}," | grep '"decision":"deny"')
case $(jfield "$line" path) in
"pipe:["*"]") ok "pipe-reopen: the pipe is logged by kind and inode" ;;
*) not_ok "pipe-reopen: path $(jfield "$line" path) (want pipe:[INO])" ;;
esac
# signals: the write went through, the signal did not, and its denial names the target
dres[sigio]=${dres[sigio]% *}:${dres[sigio]#* } dres[sigio-kill]=${dres[sigio-kill]% *}:${dres[sigio-kill]#* }
expect_eq "sigio: in the session the process outside survives" "ok:alive" "${dres[sigio]}"
expect_eq "sigio-kill: in the session the process outside survives" "ok:alive" "${dres[sigio-kill]}"
for s in "sigio|$sigio_t|29" "sigio-kill|$sigkill_t|9"; do
	IFS='|' read -r name tpid sig <<<"$s"
	line=$(decisions "$LOG" | grep "\"pid\":${dpid[$name]}," | grep '"tool":"proc.sigio"' | head -n 1)
	if [ -z "$line" ]; then
		not_ok "$name: denial entry"
	else
		check_entry "$name: denial entry names the target" "$line" \
			"decision=deny;enforced=true;tool=proc.sigio;target_pid=$tpid;signal=$sig;rule=proc:default" "$cg"
	fi
done
expect_eq "trailer complete" true "$(jfield "$(trailer "$LOG")" complete)"
check "record verifies with log and bundle (kwitness verify)" verify_record

# ---- the exec rule alone (no fs section: the exec hook is what judges) ----
EXEC_CASES=(
	"tree-exec-x|tree-exec $T/ok bin/evil|EACCES|tool=fs.exec;path=/bin/evil;mount=detached;access=x;rule=exec:default"
	"memfd-exec-x|memfd-exec kwtest|EACCES|tool=fs.exec;path=memfd:kwtest;access=x;rule=exec:default"
)
if policy_session "escape-exec" enforce deny "\"exec\":{\"allow\":[\"$KW_BUILD/tests\",\"/bin\",\"/usr/bin\"]}"; then
	for c in "${EXEC_CASES[@]}"; do
		IFS='|' read -r name op errno fields <<<"$c"
		# shellcheck disable=SC2086
		r=$(run_op "$cg" $op); dpid[$name]=${r%% *} dres[$name]=${r#* }
	done
	if session_close "$sid" >/dev/null; then
		for c in "${EXEC_CASES[@]}"; do
			IFS='|' read -r name op errno fields <<<"$c"
			one_denial "$name" "$errno" "$fields"
		done
	else
		not_ok "exec session closes"
	fi
else
	not_ok "exec session opens"
fi

# ---- what a policy can allow ----
allowed_case() { # NAME SECTION OP FIELDS: OP proceeds, its permit names the rule
	local name=$1 section=$2 op=$3 fields=$4 cg sid out pid res line bad tool
	tool=$(sed -n 's/^tool=\([^;]*\).*/\1/p' <<<"$fields")
	policy_session "$name" enforce deny "$section" || { not_ok "$name: session opens"; return; }
	# shellcheck disable=SC2086
	out=$(run_op "$cg" $op)
	pid=${out%% *} res=${out#* }
	session_close "$sid" >/dev/null || { not_ok "$name: session closes"; return; }
	expect_eq "$name: operation proceeds" ok "$res"
	line=$(decisions "$LOG" | grep "\"pid\":$pid," | grep "\"tool\":\"$tool\"" | tail -n 1)
	bad=$(entry_mismatch "$line" "decision=permit;$fields")
	if [ -z "$bad" ]; then ok "$name: permit entry names the rule"; else
		not_ok "$name: permit entry:$bad"
		echo "#   $line"
	fi
}
allowed_case memfd-exec-allowed \
	"\"exec\":{\"allow\":[\"$KW_BUILD/tests\",\"/bin\",\"memfd:kwtest\"]}" "memfd-exec kwtest" \
	"tool=fs.exec;path=memfd:kwtest;rule=exec.allow[2]"
allowed_case chmod-allowed "\"fs\":{\"read\":[\"/\"],\"write\":[\"$T/ok\"]}" "chmod $T/ok/f" \
	"tool=fs.chmod;path=$T/ok/f;rule=fs.write[0]"
allowed_case utimes-allowed "\"fs\":{\"read\":[\"/\"],\"write\":[\"$T/ok\"]}" "utimes $T/ok/f" \
	"tool=fs.utimes;path=$T/ok/f;rule=fs.write[0]"

check "kwitnessd is still running" kwd_alive
finish
