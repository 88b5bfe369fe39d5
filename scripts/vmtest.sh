#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# VM test harness: boots Debian's own cloud kernel (6.1, CONFIG_BPF_LSM=y) under
# qemu with software emulation, with an initramfs holding busybox, bash, the
# project's binaries and test scripts. Inside, tests/vm/init runs the BPF-LSM
# tests (tests/vm/test_*.sh), the cgroup kernel tests (tests/kernel/test_*.sh)
# and the LSM benchmark, and prints their TAP lines on the serial console.
# This script prints those lines and exits non-zero when a test failed or the
# VM never reported. Without qemu or the kernel package it prints one skip line.
# Env: KW_VM_TIMEOUT (seconds, default 3600: emulated, one host thread), KW_VM_TCG_THREAD
# (single, the default, or multi: see the boot section), KW_VM_TESTS (space-separated test
# script paths to run instead of all), KW_VM_BENCH=0|1 (the LSM benchmark; by
# default after a full run only), KW_VM_KLOG=N (console log level, default 1;
# 4 shows kernel warnings and stack traces), KW_VM_KEEP=1 keeps the staging folder,
# KT_VM_FULL=1 (suites that run a smaller form in the VM run every part).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VMDIR=$ROOT/build/vm
TIMEOUT=${KW_VM_TIMEOUT:-3600}
MARKER=KWITNESS-VM-DONE

skip_all() { echo "ok 1 # SKIP vm: $*"; echo "1..1"; exit 0; }
fail_all() { echo "not ok 1 - vm: $*"; echo "1..1"; exit 1; }

command -v qemu-system-x86_64 >/dev/null || skip_all "qemu-system-x86_64 not installed"
command -v cpio >/dev/null || skip_all "cpio not installed"
BUSYBOX=
for b in /bin/busybox /usr/bin/busybox; do
	# only a static busybox runs in an initramfs without its libraries
	if [ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1; then BUSYBOX=$b; break; fi
done
[ -n "$BUSYBOX" ] || skip_all "busybox-static not installed"
[ -x build/kwitness ] || fail_all "build/kwitness missing: run 'make test-bins' first"

# ---- the kernel: Debian's current cloud image, cached in build/vm ----
mkdir -p "$VMDIR"
kernel_pkg() {
	apt-cache depends linux-image-cloud-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}
find_vmlinuz() { ls "$VMDIR"/vmlinuz-* 2>/dev/null | sort -V | tail -n 1; }
VMLINUZ=
pkg=$(kernel_pkg)
if [ -z "$pkg" ] && [ -z "$(find_vmlinuz)" ]; then
	apt-get update -qq >/dev/null 2>&1
	pkg=$(kernel_pkg)
fi
if [ -n "$pkg" ]; then
	ver=${pkg#linux-image-}
	if [ -f "$VMDIR/vmlinuz-$ver" ] && [ -f "$VMDIR/loop-$ver.ko" ]; then
		VMLINUZ=$VMDIR/vmlinuz-$ver
	else
		dl=$(mktemp -d "$VMDIR/dl.XXXXXX")
		if (cd "$dl" && apt-get download "$pkg" >/dev/null 2>&1); then
			# the loop driver is a module: the fs-verity test mounts an
			# ext4 image through it
			dpkg -x "$dl"/*.deb "$dl/root" &&
				cp "$dl/root/boot/vmlinuz-$ver" "$VMDIR/vmlinuz-$ver" &&
				cp "$dl/root/boot/config-$ver" "$VMDIR/config-$ver" &&
				VMLINUZ=$VMDIR/vmlinuz-$ver &&
				cp "$dl/root/lib/modules/$ver/kernel/drivers/block/loop.ko" \
					"$VMDIR/loop-$ver.ko"
		fi
		rm -rf "$dl"
		# an earlier download of this kernel still does
		[ -n "$VMLINUZ" ] || [ ! -f "$VMDIR/vmlinuz-$ver" ] || VMLINUZ=$VMDIR/vmlinuz-$ver
	fi
fi
# offline: an earlier download will do
[ -n "$VMLINUZ" ] || VMLINUZ=$(find_vmlinuz)
[ -n "$VMLINUZ" ] || skip_all "could not obtain Debian's cloud kernel (apt-get download ${pkg:-linux-image-cloud-amd64} failed)"

# ---- the initramfs ----
STAGE=$VMDIR/initramfs
rm -rf "$STAGE"
mkdir -p "$STAGE"/{bin,sbin,usr/bin,usr/local/bin,dev,proc,sys,tmp,run,etc,root,kw/build/tests,kw/build/bench,kw/tests}

copy_with_libs() { # binary [dest path in the VM]
	local bin=$1 dest=${2:-$1} lib
	mkdir -p "$STAGE$(dirname "$dest")"
	cp -L "$bin" "$STAGE$dest"
	# ldd lines: "libx.so => /path (addr)" or "/lib64/ld-linux-x86-64.so.2 (addr)"
	for lib in $(ldd "$bin" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }'); do
		[ -e "$STAGE$lib" ] && continue
		mkdir -p "$STAGE$(dirname "$lib")"
		cp -L "$lib" "$STAGE$lib"
	done
}

# bash first: the busybox links below must not shadow it (tests/lib.sh is bash)
copy_with_libs "$(command -v bash)" /bin/bash
cp "$BUSYBOX" "$STAGE/bin/busybox"
for applet in $("$BUSYBOX" --list); do
	[ -e "$STAGE/bin/$applet" ] || [ -L "$STAGE/bin/$applet" ] || ln -s busybox "$STAGE/bin/$applet"
done
# The ld.so path programs ask for is /lib64/...; on merged-/usr hosts ldd says so too.
for b in build/kwitness build/kwitnessd build/tests/* build/bench/*; do
	[ -f "$b" ] && [ -x "$b" ] && copy_with_libs "$b" "/kw/$b"
done
ln -s /bin/busybox "$STAGE/usr/bin/env"
# host tools the tests use that this busybox lacks or differs in (setpriv
# --reuid, comm, mountpoint, pgrep, ...), and bpftool/jq for independent checks; first in PATH
# and the container runtimes the OCI hook tests drive
for t in bpftool jq setpriv comm mountpoint pgrep flock nohup stdbuf runc crun ss; do
	p=$(command -v "$t") && copy_with_libs "$p" "/usr/local/bin/$t"
done
cp build/*.bpf.o "$STAGE/kw/build/" 2>/dev/null
# the loop module of this kernel and mke2fs, for the fs-verity test (an ext4 image)
LOOP_KO=$VMDIR/loop-${VMLINUZ##*/vmlinuz-}.ko
[ -f "$LOOP_KO" ] && mkdir -p "$STAGE/kw/modules" && cp "$LOOP_KO" "$STAGE/kw/modules/loop.ko"
p=$(command -v mke2fs || echo /usr/sbin/mke2fs)
[ -x "$p" ] && copy_with_libs "$p" /usr/local/bin/mke2fs
[ -f /etc/mke2fs.conf ] && cp /etc/mke2fs.conf "$STAGE/etc/"
cp -r tests/lib.sh "$STAGE/kw/tests/"
for d in tests/kernel tests/vm examples; do
	[ -d "$d" ] && mkdir -p "$STAGE/kw/$d" && cp -r "$d"/. "$STAGE/kw/$d/"
done
cp tests/vm/init "$STAGE/init"
chmod 755 "$STAGE/init"
echo "root:x:0:0:root:/root:/bin/sh" >"$STAGE/etc/passwd"
echo "root:x:0:" >"$STAGE/etc/group"
echo "nobody:x:65534:" >>"$STAGE/etc/group"
echo "nobody:x:65534:65534:nobody:/:/bin/false" >>"$STAGE/etc/passwd"
tr -d '-' </proc/sys/kernel/random/uuid >"$STAGE/etc/machine-id"
# the system resolver, for getaddrinfo in the egress-by-name suite: a server
# nobody runs (TEST-NET-1), which only a session's steering makes answer
printf '127.0.0.1 localhost\n::1 localhost\n' >"$STAGE/etc/hosts"
echo "hosts: files dns" >"$STAGE/etc/nsswitch.conf"
echo "nameserver 192.0.2.53" >"$STAGE/etc/resolv.conf"
echo "${KW_VM_TESTS:-}" >"$STAGE/kw/vm-tests"
# the benchmark runs after a full run, or when KW_VM_BENCH=1
bench=${KW_VM_BENCH:-}
[ -n "$bench" ] || { [ -z "${KW_VM_TESTS:-}" ] && bench=1 || bench=0; }
echo "$bench" >"$STAGE/kw/vm-bench"
echo "${KW_VM_KLOG:-1}" >"$STAGE/kw/vm-klog"
echo "${KT_VM_FULL:-}" >"$STAGE/kw/vm-full"

INITRD=$VMDIR/initrd.gz
(cd "$STAGE" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) >"$INITRD" ||
	fail_all "could not build the initramfs"
[ "${KW_VM_KEEP:-0}" = 1 ] || rm -rf "$STAGE"

# ---- boot ----
# A CPU stuck in the kernel for 120 s (twice watchdog_thresh; spurious ones
# under a starved emulation are shorter) panics the VM: the run ends at once,
# with the stuck CPU's stack on the console (a panic prints at every log level).
LOCKUP_ARGS="watchdog_thresh=60 softlockup_panic=1 softlockup_all_cpu_backtrace=1"
# One host thread runs both vCPUs in turn. With a thread per vCPU (multi,
# QEMU 7.2), full runs sometimes hung: a vCPU stuck for minutes at the first
# byte of bpf_lsm_file_free_security, just patched by text_poke_bp (a BPF
# trampoline attached or detached), with nothing else running there. That is
# what a vCPU executing a stale translation of the patched text would do (its
# int3 runs, the handler sees the new bytes and backs it up, again and again).
# Single-threaded TCG executes one vCPU at a time; it is slower.
TCG_THREAD=${KW_VM_TCG_THREAD:-single}
echo "# vm: booting $(basename "$VMLINUZ") under qemu (tcg), timeout ${TIMEOUT}s"
LOG=$VMDIR/console.log
start=$(date +%s)
timeout --foreground -k 10 "$TIMEOUT" qemu-system-x86_64 -accel tcg,thread="$TCG_THREAD" -m 1024 -smp 2 \
	-nographic -no-reboot -monitor none -serial stdio -display none \
	-kernel "$VMLINUZ" -initrd "$INITRD" \
	-append "console=ttyS0 quiet panic=-1 lsm=lockdown,capability,bpf $LOCKUP_ARGS" \
	</dev/null 2>&1 | tr -d '\r' >"$LOG"
qrc=${PIPESTATUS[0]}
echo "# vm: qemu exited $qrc after $(($(date +%s) - start))s; console log: $LOG"

# Print the VM's test lines (TAP and comments; each suite's plan is a comment
# by now); a kernel message in between is dropped. The plan, last, counts
# the results printed.
grep -aE '^(ok |not ok |#)' "$LOG"
n=$(grep -acE '^(ok |not ok )' "$LOG")
if ! grep -aq "^$MARKER" "$LOG"; then
	echo "not ok - vm: the VM never reported (qemu exit $qrc); last console lines:"
	tail -n 80 "$LOG" | sed 's/^/#   /'
	echo "1..$((n + 1))"
	exit 1
fi
if grep -aq '^not ok ' "$LOG"; then
	echo "1..$n"
	exit 1
fi
vrc=$(grep -a "^$MARKER" "$LOG" | sed -n "s/^$MARKER rc=\([0-9]*\).*/\1/p" | head -n 1)
if [ "${vrc:-1}" -ne 0 ]; then
	echo "not ok - vm: a suite inside the VM failed (rc=$vrc)"
	echo "1..$((n + 1))"
	exit 1
fi
echo "1..$n"
exit 0
