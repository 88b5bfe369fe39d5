#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Exec digests (run inside the VM by scripts/vmtest.sh): every fs.exec entry
# carries the SHA-256 of the executed file as the kernel computed it, and
# exec.allow can name builds. Each digest is checked against the test's own
# sha256sum of the file (busybox's, computed in userspace), and the file's
# dev/ino against stat. Skipped where kwitness probe says the kernel cannot
# hash an executed file; a failure where it says it can.
. "$(dirname "$0")/../lib.sh"
. "$KW_ROOT/tests/kernel/kwd_lib.sh"

LP=$KW_BUILD/tests/kw-lsmprobe
[ -x "$LP" ] || kt_skip_all "$LP not built"
kwd_require
if "$KW" probe 2>/dev/null | grep -q '^lsm.exec_digest *yes'; then
	kt_skip_all() { not_ok "$* (kwitness probe says this kernel hashes executed files)"; finish; }
fi
KT_PIN=/sys/fs/bpf/kwx-$$ # pinned: the close race below reads the kernel's counters
kwd_start --pin-dir "$KT_PIN"
kwd_has_hook exec.digest || kt_skip_feature exec.digest "the kernel cannot hash executed files ($(uname -r))"

D=/tmp/xdig.$$ V=/tmp/xdig-verity.$$ VDEV=
mkdir -p "$D/a" "$D/b" "$D/c"
cleanup_xd() {
	mountpoint -q "$V" 2>/dev/null && umount "$V"
	[ -n "$VDEV" ] && losetup -d "$VDEV" 2>/dev/null
	rm -rf "$D" "$V" "$V.img"
	kwd_cleanup
}
trap cleanup_xd EXIT

# Two builds: busybox (static) and the same with bytes appended (still runs).
cp /bin/busybox "$D/build-a"
cp /bin/busybox "$D/build-b"
printf '\n# another build\n' >>"$D/build-b"
A=$(sha256sum "$D/build-a" | cut -d' ' -f1)
B=$(sha256sum "$D/build-b" | cut -d' ' -f1)
BB=$(sha256sum "$(readlink -f /bin/sh)" | cut -d' ' -f1)
LPD=$(sha256sum "$LP" | cut -d' ' -f1)
[ "$A" != "$B" ] || kt_fail_all "the two builds have one digest"
printf '#!/bin/sh\necho ok\n' >"$D/a/s.sh"
chmod 755 "$D/a/s.sh"
S=$(sha256sum "$D/a/s.sh" | cut -d' ' -f1)

# install BUILD PATH: the build's bytes into PATH, in place (same inode)
install_build() { cat "$1" >"$2" && chmod 755 "$2"; }

# run CGROUP ARGS...: "PID RESULT" of kw-lsmprobe ARGS in CGROUP
run() {
	local cg=$1 out pid res
	shift
	out=$(cg_run "$cg" sh -c 'echo $$; exec "$@"' sh "$LP" "$@")
	pid=$(sed -n 1p <<<"$out") res=$(sed -n 2p <<<"$out")
	echo "$pid $res"
}

# entry PID PATH: the pid's last fs.exec entry of PATH
entry() {
	decisions "$LOG" | grep "\"pid\":$1," | grep '"tool":"fs.exec"' |
		grep "\"path\":\"$2\"" | tail -n 1
}

# the file system's device of a file as the log writes it: "major:minor"
devfs() {
	local d
	d=$(stat -c %d "$1")
	# glibc's encoding of a dev_t: major bits 8-19 and 32-43, minor 0-7 and 20-31
	printf '%d:%d' $(((d >> 8) & 0xfff | ((d >> 32) & ~0xfff))) $(((d & 0xff) | ((d >> 12) & ~0xff)))
}

# ---- 1. a path policy: digests logged for every exec ----
policy_session paths enforce deny \
	"\"exec\":{\"allow\":[\"$D/a\",\"/bin\",\"$KW_BUILD/tests\",\"memfd:\"]}" ||
	kt_fail_all "session with exec.allow paths does not open"
install_build "$D/build-a" "$D/a/busybox"
INO_A=$(stat -c %i "$D/a/busybox") DEV_A=$(devfs "$D/a/busybox")
r=$(run "$cg" exec "$D/a/busybox" echo ok); p1=${r%% *} r1=${r#* }
install_build "$D/build-b" "$D/a/busybox"
r=$(run "$cg" exec "$D/a/busybox" echo ok); p2=${r%% *} r2=${r#* }
r=$(run "$cg" memfd-exec kwdigest); p3=${r%% *} r3=${r#* }
r=$(run "$cg" exec "$D/a/s.sh"); p4=${r%% *} r4=${r#* }
session_close "$sid" >/dev/null || kt_fail_all "session paths does not close"

expect_eq "static binary runs" ok "$r1"
line=$(entry "$p1" "$D/a/busybox")
check_entry "static binary: digest = sha256sum, dev/ino = stat" "$line" \
	"decision=permit;rule=exec.allow[0];digest=sha256:$A;ino=$INO_A;dev=$DEV_A" "$cg"
expect_eq "static binary on tmpfs: no fs-verity digest" "" "$(jfield "$line" verity_digest)"
echo "# an exec entry with its digest: $line"
expect_eq "swapped build runs" ok "$r2"
line=$(entry "$p2" "$D/a/busybox")
check_entry "swapped build at the same path: the new digest (nothing cached)" "$line" \
	"decision=permit;digest=sha256:$B;ino=$INO_A" "$cg"
expect_eq "memfd exec runs" ok "$r3"
line=$(entry "$p3" "memfd:kwdigest")
check_entry "memfd exec: digest of its content (kw-lsmprobe's sha256sum)" "$line" \
	"decision=permit;rule=exec.allow[3];digest=sha256:$LPD" "$cg"
expect_eq "script runs" ok "$r4"
line=$(entry "$p4" "$D/a/s.sh")
check_entry "script: the script's own digest" "$line" "decision=permit;digest=sha256:$S" "$cg"
[ -z "$(jfield "$line" interpreter)" ] && ok "script: its entry is not an interpreter pass" ||
	not_ok "script: its entry says interpreter"
line=$(entry "$p4" "$(readlink -f /bin/sh)")
check_entry "script: the interpreter's digest, marked as the interpreter" "$line" \
	"decision=permit;digest=sha256:$BB;interpreter=true" "$cg"
# the proc entries (docs/decision-log.md, "proc"): each exec's entry carries
# the digest of the fs.exec decision that let it run
proc_exec() { # PID EXE: the pid's last proc exec entry of EXE
	grep '"tool":"proc"' "$LOG" | grep "\"pid\":$1," | grep '"event":"exec"' |
		grep "\"exe\":\"$2\"" | tail -n 1
}
for c in "$p1 $D/a/busybox $A static binary" "$p2 $D/a/busybox $B swapped build" \
	"$p4 $D/a/s.sh $S script (the script's digest, not its interpreter's)"; do
	read -r pid exe want what <<<"$c"
	line=$(proc_exec "$pid" "$exe")
	got=$(jfield "$line" digest)
	if [ "$got" = "sha256:$want" ] && [ -n "$(jfield "$line" proc)" ]; then
		ok "proc entry of the $what: digest = sha256sum"
	else
		not_ok "proc entry of the $what: digest $got, want sha256:$want"
		echo "#   $line"
	fi
done
check "paths: record verifies" verify_record

# ---- 2. a digest-only rule: that build anywhere, no other build ----
policy_session digest enforce deny \
	"\"exec\":{\"allow\":[\"$KW_BUILD/tests\",\"/bin\",\"sha256:$A\",\"sha256:$LPD\"]}" ||
	kt_fail_all "session with an exec.allow digest does not open"
install_build "$D/build-a" "$D/b/busybox"
r=$(run "$cg" exec "$D/b/busybox" echo ok); p1=${r%% *} r1=${r#* }
install_build "$D/build-b" "$D/b/busybox"
r=$(run "$cg" exec "$D/b/busybox" echo ok); p2=${r%% *} r2=${r#* }
# a build on a detached mount (a clone of $D/t): its path is not the
# sandbox's, its digest is known
mkdir -p "$D/t" && cp "$LP" "$D/t/lp"
r=$(run "$cg" tree-exec "$D/t" lp); p3=${r%% *} r3=${r#* }
session_close "$sid" >/dev/null || kt_fail_all "session digest does not close"
expect_eq "digest rule: that build runs from a detached mount" ok "$r3"
check_entry "digest rule: the detached exec, with its digest" "$(entry "$p3" /lp)" \
	"decision=permit;mount=detached;rule=exec.allow[3];digest=sha256:$LPD" "$cg"
expect_eq "digest rule: that build runs" ok "$r1"
check_entry "digest rule: permit names it" "$(entry "$p1" "$D/b/busybox")" \
	"decision=permit;rule=exec.allow[2];digest=sha256:$A" "$cg"
expect_eq "digest rule: another build at the same path is refused" EACCES "$r2"
check_entry "digest rule: the refusal, with the other build's digest" "$(entry "$p2" "$D/b/busybox")" \
	"decision=deny;enforced=true;rule=exec:default;digest=sha256:$B" "$cg"
check "digest: record verifies" verify_record

# ---- 3. {path, sha256}: only that build at that path ----
policy_session pinned enforce deny \
	"\"exec\":{\"allow\":[\"$KW_BUILD/tests\",\"/bin\",{\"path\":\"$D/c/busybox\",\"sha256\":\"sha256:$A\"}]}" ||
	kt_fail_all "session with a pinned exec.allow entry does not open"
install_build "$D/build-a" "$D/c/busybox"
r=$(run "$cg" exec "$D/c/busybox" echo ok); p1=${r%% *} r1=${r#* }
install_build "$D/build-b" "$D/c/busybox"
r=$(run "$cg" exec "$D/c/busybox" echo ok); p2=${r%% *} r2=${r#* }
# the pinned build elsewhere: its path has no rule
install_build "$D/build-a" "$D/b/busybox"
r=$(run "$cg" exec "$D/b/busybox" echo ok); p3=${r%% *} r3=${r#* }
session_close "$sid" >/dev/null || kt_fail_all "session pinned does not close"
expect_eq "pinned: that build at that path runs" ok "$r1"
check_entry "pinned: permit names the entry" "$(entry "$p1" "$D/c/busybox")" \
	"decision=permit;rule=exec.allow[2];digest=sha256:$A" "$cg"
expect_eq "pinned: another build at that path is refused" EACCES "$r2"
check_entry "pinned: the refusal says digest_mismatch" "$(entry "$p2" "$D/c/busybox")" \
	"decision=deny;enforced=true;rule=exec.allow[2]:digest_mismatch;digest=sha256:$B" "$cg"
expect_eq "pinned: that build elsewhere is refused" EACCES "$r3"
check_entry "pinned: elsewhere is the default deny" "$(entry "$p3" "$D/b/busybox")" \
	"decision=deny;rule=exec:default;digest=sha256:$A" "$cg"
check "pinned: record verifies" verify_record

# ---- 4. record "deny": a permit is not hashed (nor logged), a refusal is ----
# (the kernel skips the hash for a permit it will not record, unless the
# policy names digests)
pol=$(policy_file rdeny "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"record\":\"deny\",
\"exec\":{\"allow\":[\"$KW_BUILD/tests\",\"/bin\",\"$D/a\"]}}")
cg=$(cg_make rdeny)
sid=$(session_open "$cg" "$pol")
[ -n "$sid" ] || kt_fail_all "session with record deny does not open"
install_build "$D/build-b" "$D/b/busybox"
r=$(run "$cg" exec "$D/a/busybox" echo ok); p1=${r%% *} r1=${r#* }
r=$(run "$cg" exec "$D/b/busybox" echo ok); p2=${r%% *} r2=${r#* }
session_close "$sid" >/dev/null || kt_fail_all "session rdeny does not close"
expect_eq "record deny: allowed exec runs" ok "$r1"
expect_eq "record deny: the permit is not logged" "" "$(entry "$p1" "$D/a/busybox")"
expect_eq "record deny: refused exec" EACCES "$r2"
check_entry "record deny: the refusal carries the digest" "$(entry "$p2" "$D/b/busybox")" \
	"decision=deny;rule=exec:default;digest=sha256:$B" "$cg"
[ "$(jfield "$(trailer "$LOG")" unrecorded)" -ge 1 ] 2>/dev/null &&
	ok "record deny: permits counted as unrecorded" ||
	not_ok "record deny: permits counted as unrecorded ($(trailer "$LOG"))"

# ---- 5. fs-verity: a file that has a verity digest logs it too ----
# An ext4 image with the verity feature, mounted through the loop module;
# the expected digest is the kernel's own FS_IOC_MEASURE_VERITY answer.
verity_setup() {
	[ -f "$KW_ROOT/modules/loop.ko" ] || { echo "no loop module in the VM"; return 1; }
	command -v mke2fs >/dev/null || { echo "no mke2fs in the VM"; return 1; }
	[ -e /dev/loop0 ] || insmod "$KW_ROOT/modules/loop.ko" || { echo "insmod loop.ko failed"; return 1; }
	for _ in $(seq 20); do [ -e /dev/loop0 ] && break; sleep 0.1; done
	dd if=/dev/zero of="$V.img" bs=1M count=32 2>/dev/null &&
		mke2fs -q -F -t ext4 -b 4096 -O verity "$V.img" >/dev/null 2>&1 ||
		{ echo "mke2fs -O verity failed"; return 1; }
	VDEV=$(losetup -f) && losetup "$VDEV" "$V.img" || { echo "losetup failed"; return 1; }
	mkdir -p "$V" && mount -t ext4 "$VDEV" "$V" || { echo "mounting the ext4 image failed"; return 1; }
	cp "$D/build-a" "$V/busybox" && chmod 755 "$V/busybox"
	[ "$("$LP" verity-enable "$V/busybox")" = ok ] || { echo "FS_IOC_ENABLE_VERITY failed"; return 1; }
}
if why=$(verity_setup); then
	VD=$("$LP" verity-measure "$V/busybox")
	policy_session verity enforce deny \
		"\"exec\":{\"allow\":[\"$KW_BUILD/tests\",\"/bin\",\"$V\"]}" ||
		kt_fail_all "session for the fs-verity file does not open"
	r=$(run "$cg" exec "$V/busybox" echo ok); p1=${r%% *} r1=${r#* }
	session_close "$sid" >/dev/null || kt_fail_all "session verity does not close"
	expect_eq "fs-verity file runs" ok "$r1"
	line=$(entry "$p1" "$V/busybox")
	check_entry "fs-verity file: verity_digest = FS_IOC_MEASURE_VERITY, digest = sha256sum" \
		"$line" "decision=permit;digest=sha256:$A;verity_digest=$VD" "$cg"
	[[ $VD =~ ^sha256:[0-9a-f]{64}$ ]] && [ "$VD" != "sha256:$A" ] &&
		ok "fs-verity digest is its own (not the content's SHA-256)" ||
		not_ok "fs-verity digest is its own ($VD)"
else
	skip "fs-verity: $why"
fi

# ---- close race: closes while two loops exec (each exec hashed) ----
# The sleepable program is outside the close's RCU grace period; the close
# waits for its kw_sleepers count instead. The kernel's next_seq, read after
# the close replied, is never past the trailer's.
# next_seq SLOT: the kernel's next sequence number of a session slot
next_seq() {
	bpftool map lookup pinned "$KT_PIN/kw_sessions" key $(($1 & 255)) $(($1 >> 8)) 0 0 -j |
		jq -r '.formatted.value.next_seq // .value.next_seq'
}
bad=0 rounds=0
for i in $(seq "${KT_EXEC_RACES:-8}"); do
	policy_session "xrace$i" enforce deny "\"exec\":{\"allow\":[\"/\"]}" || continue
	slot=$("$KW" session list --socket "$KT_SOCK" --json |
		jq -r --arg s "$sid" '.sessions[] | select(.session == $s) | .slot')
	cg_run "$cg" sh -c 'while :; do /bin/true; done' &
	l1=$!
	cg_run "$cg" sh -c 'while :; do /bin/true; done' &
	l2=$!
	# close at a random moment once the loops are exec'ing in the session
	for _ in $(seq 200); do
		[ "$(next_seq "$slot")" -gt 0 ] 2>/dev/null && break
		sleep 0.05
	done
	sleep 0.0$((RANDOM % 10))
	out=$("$KW" session close --socket "$KT_SOCK" --json "$sid")
	after=$(next_seq "$slot")
	t=$(trailer "$(jq -r .log_path <<<"$out")")
	kill "$l1" "$l2" 2>/dev/null
	wait "$l1" "$l2" 2>/dev/null
	rounds=$((rounds + 1))
	if [ -z "$after" ] || [ -z "$(jfield "$t" next_seq)" ] || [ "$after" -gt "$(jfield "$t" next_seq)" ] ||
		[ "$(jfield "$t" decisions)" -eq 0 ]; then
		bad=$((bad + 1))
		echo "# race $i: kernel next_seq after close $after, trailer $t"
	fi
done
check "close race: $rounds closes under exec loops, each with decisions, kernel next_seq never past the trailer's" \
	test "$rounds" -gt 0 -a "$bad" -eq 0
if grep -q 'sleepable program was still numbering' "$KT_TMP/kwitnessd.log"; then
	not_ok "close race: a sleepable program outlived a close's wait"
else
	ok "close race: no sleepable program outlived a close's wait"
fi

check "kwitnessd is still running" kwd_alive

# ---- 6. the exec program outlives the collector, and follows a task out ----
# A collector with its own pin folder: its exec link is pinned like every
# other, so after a kill -9 the kernel goes on hashing and judging execs,
# also of a task that moved itself out of the session's cgroup; the next
# collector resumes the session and logs them.
kwd_stop || not_ok "the first collector stops"
KT_PIN=/sys/fs/bpf/kwxd-$$
rm -f "$KT_SOCK"
kwd_start --pin-dir "$KT_PIN"
# busybox finds its applet by its own name: the builds keep it
mkdir -p "$D/d/a" "$D/d/b"
install_build "$D/build-a" "$D/d/a/busybox"
install_build "$D/build-b" "$D/d/b/busybox"
policy_session survive enforce deny \
	"\"exec\":{\"allow\":[\"$KW_BUILD/tests\",\"/bin\",\"sha256:$A\"]}" ||
	kt_fail_all "pinned collector: session does not open"
check "pinned collector: the hashing exec program's link is pinned" \
	test -e "$KT_PIN/links/kw_lsm_bprm_check_digest"
{ kill -KILL "$KT_DPID"; wait "$KT_DPID"; } 2>/dev/null
KT_DPID=
r=$(run "$cg" exec "$D/d/a/busybox" echo ok); p1=${r%% *} r1=${r#* }
r=$(run "$cg" exec "$D/d/b/busybox" echo ok); p2=${r%% *} r2=${r#* }
out=$(cg_run "$cg" sh -c 'echo $$; echo $$ >"$1/cgroup.procs" && exec "$2" exec "$3" echo ok' \
	sh "${KT_CG%/*}" "$LP" "$D/d/b/busybox")
p3=$(sed -n 1p <<<"$out") r3=$(sed -n 2p <<<"$out")
rm -f "$KT_SOCK"
kwd_start --pin-dir "$KT_PIN"
closed=
for _ in $(seq 100); do
	session_close "$sid" >/dev/null && { closed=1; break; }
	sleep 0.1
done
[ -n "$closed" ] || kt_fail_all "pinned collector: the resumed session does not close"
expect_eq "no collector: that build runs" ok "$r1"
check_entry "no collector: its permit, with its digest, is in the resumed log" \
	"$(entry "$p1" "$D/d/a/busybox")" "decision=permit;rule=exec.allow[2];digest=sha256:$A" "$cg"
expect_eq "no collector: another build is refused" EACCES "$r2"
check_entry "no collector: the refusal, with the other build's digest" "$(entry "$p2" "$D/d/b/busybox")" \
	"decision=deny;enforced=true;rule=exec:default;digest=sha256:$B" "$cg"
expect_eq "no collector: a task that left the cgroup is still refused" EACCES "$r3"
line=$(decisions "$LOG" | grep "\"pid\":$p3," | grep '"tool":"fs.exec"' | tail -n 1)
expect_eq "no collector: the escaped task's refusal is logged, with its digest" \
	"deny sha256:$B" "$(jfield "$line" decision) $(jfield "$line" digest)"
expect_eq "no collector: its move is logged" 1 \
	"$(decisions "$LOG" | grep '"tool":"cgroup.move"' | grep -c "\"target_pid\":$p3[,}]")"
expect_eq "pinned collector: resumed once, complete" "1 true" \
	"$(grep -c '"tool":"kwitness.resume"' "$LOG") $(jfield "$(trailer "$LOG")" complete)"
check "pinned collector: record verifies" verify_record
finish
