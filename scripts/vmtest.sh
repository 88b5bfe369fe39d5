#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# VM test harness: boots one of Debian's own cloud kernels (KW_VM_KERNEL: 6.1,
# the default, 6.12 or newest; each CONFIG_BPF_LSM=y) under
# qemu with software emulation, with an initramfs holding busybox, bash, the
# project's binaries and test scripts. Inside, tests/vm/init runs the BPF-LSM
# tests (tests/vm/test_*.sh), the cgroup kernel tests (tests/kernel/test_*.sh)
# and the LSM benchmark, and prints their TAP lines on the serial console.
# Suites that span boots (MULTI_BOOT: the power-loss test) then boot it again,
# driven from the host, with a disk image kept from one boot to the next.
# This script prints those lines and exits non-zero when a test failed or the
# VM never reported. Without qemu or the kernel package it prints one skip line.
# Env: KW_VM_KERNEL (6.1, 6.12 or newest: the kernel matrix below),
# KW_VM_RELO_ONLY=1 (no boot: the offline CO-RE check against that kernel's BTF), KW_VM_TIMEOUT (seconds, default 3600: emulated, one host thread), KW_VM_TCG_THREAD
# (single, the default, or multi: see the boot section), KW_VM_TESTS (space-separated test
# script paths to run instead of all), KW_VM_BENCH=0|1 (the LSM benchmark; by
# default after a full run only), KW_VM_KLOG=N (console log level, default 1;
# 4 shows kernel warnings and stack traces), KW_VM_KEEP=1 keeps the staging folder
# (and the multi-boot suites' disk images),
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

# ---- the kernel: one of Debian's cloud kernels, cached in build/vm ----
# KW_VM_KERNEL picks it (the kernel matrix, docs/lsm.md):
#   6.1     Debian 12 (bookworm): the suite apt already uses, its current
#           linux-image-cloud-amd64
#   6.12    Debian 13 (trixie), pinned by package name
#   newest  Debian unstable (sid), pinned by package name
# The other suites come from the same mirror apt already uses, through apt
# lists kept under build/vm/apt (the host's apt configuration is not
# changed). When a pinned package has left the mirror, that suite's current
# cloud kernel is taken and named. A kernel that cannot be fetched (and was
# never cached) is a skip with the reason, never a pass.
KERNEL=${KW_VM_KERNEL:-6.1}
case $KERNEL in
6.1) SUITE=bookworm PIN= GLOB='6.1.*' ;;
6.12) SUITE=trixie PIN=linux-image-6.12.117+deb13-cloud-amd64 GLOB='6.12.*' ;;
newest) SUITE=sid PIN=linux-image-7.2.13+deb14-cloud-amd64 GLOB='[7-9].*' ;;
*) fail_all "KW_VM_KERNEL=$KERNEL: use 6.1, 6.12 or newest" ;;
esac
mkdir -p "$VMDIR"

# The Debian mirror in the host's apt sources (deb822 or one-line form).
debian_mirror() {
	local m
	m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
		awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }')
	[ -n "$m" ] || m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }')
	echo "${m:-http://deb.debian.org/debian}"
}

# apt for another suite: lists, cache and sources under build/vm/apt.
APT_OPTS=()
if [ "$SUITE" != bookworm ]; then
	APTDIR=$VMDIR/apt/$SUITE
	mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(debian_mirror) $SUITE main" \
		>"$APTDIR/sources.list"
	APT_OPTS=(-o "Dir::Etc::SourceList=$APTDIR/sources.list" -o Dir::Etc::SourceParts=/nonexistent
		-o "Dir::State::Lists=$APTDIR/lists" -o "Dir::Cache=$APTDIR/cache"
		-o Dir::State::status=/dev/null -o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root)
fi
apt_q() { "$@" "${APT_OPTS[@]}" 2>/dev/null; }
meta_pkg() {
	apt_q apt-cache depends linux-image-cloud-amd64 |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}
# (awk reads to the end: under pipefail, a reader that quits early fails the pipe)
pkg_known() { apt_q apt-cache show "$1" | awk '/^Package:/ { f = 1 } END { exit !f }'; }
find_vmlinuz() { ls "$VMDIR"/vmlinuz-$GLOB 2>/dev/null | sort -V | tail -n 1; }

# The kernel package (pinned, else the suite's current one), after one
# update of the lists when they do not know it.
pick_pkg() {
	local p
	local pass
	for pass in 1 2; do
		if [ -n "$PIN" ] && pkg_known "$PIN"; then echo "$PIN"; return; fi
		p=$(meta_pkg)
		if [ -n "$p" ]; then
			[ -z "$PIN" ] || echo "# vm: $PIN is no longer on the mirror; using $SUITE's $p" >&2
			echo "$p"; return
		fi
		[ $pass = 1 ] && apt_q apt-get update -qq >/dev/null
	done
}

# Downloads pkg (and, where Debian splits the image, the packages that hold
# vmlinuz, config and modules) and keeps vmlinuz, config and the loop module
# (the fs-verity test mounts an ext4 image through it) in build/vm.
fetch_kernel() { # pkg ver
	local pkg=$1 ver=$2 dl deps f ok=1
	dl=$(mktemp -d "$VMDIR/dl.XXXXXX")
	deps=$(apt_q apt-cache depends "$pkg" |
		awk -v v="$ver" '/Depends: linux-(binary|base|modules)-/ && index($2, v) { print $2 }')
	(cd "$dl" && apt_q apt-get download "$pkg" $deps >/dev/null) || ok=0
	if [ $ok = 1 ]; then
		for f in "$dl"/*.deb; do dpkg -x "$f" "$dl/root" || ok=0; done
	fi
	if [ $ok = 1 ]; then
		f=$(ls "$dl/root/boot/vmlinuz-$ver" "$dl/root/usr/lib/modules/$ver/vmlinuz" 2>/dev/null | head -n 1)
		[ -n "$f" ] && cp "$f" "$VMDIR/vmlinuz-$ver.part" || ok=0
		f=$(ls "$dl/root/boot/config-$ver" "$dl/root/usr/lib/modules/$ver/config" 2>/dev/null | head -n 1)
		[ -n "$f" ] && cp "$f" "$VMDIR/config-$ver"
		f=$(ls "$dl"/root/{,usr/}lib/modules/"$ver"/kernel/drivers/block/loop.ko* 2>/dev/null | head -n 1)
		case $f in
		*.ko) cp "$f" "$VMDIR/loop-$ver.ko" ;;
		*.ko.xz) xz -dc "$f" >"$VMDIR/loop-$ver.ko" ;;
		*.ko.zst) zstd -qdc "$f" >"$VMDIR/loop-$ver.ko" ;;
		esac
		[ $ok = 1 ] && mv "$VMDIR/vmlinuz-$ver.part" "$VMDIR/vmlinuz-$ver"
	fi
	rm -rf "$dl" "$VMDIR/vmlinuz-$ver.part"
}

VMLINUZ=
pkg=$(pick_pkg)
if [ -n "$pkg" ]; then
	ver=${pkg#linux-image-}
	[ -f "$VMDIR/vmlinuz-$ver" ] && [ -f "$VMDIR/loop-$ver.ko" ] || fetch_kernel "$pkg" "$ver"
	[ -f "$VMDIR/vmlinuz-$ver" ] && VMLINUZ=$VMDIR/vmlinuz-$ver
fi
# offline: an earlier download of this series will do
[ -n "$VMLINUZ" ] || VMLINUZ=$(find_vmlinuz)
[ -n "$VMLINUZ" ] || skip_all "could not obtain Debian's $KERNEL cloud kernel (${pkg:-no package: apt-get update for $SUITE failed}; apt-get download failed)"
KVER=${VMLINUZ##*/vmlinuz-}
RUNDIR=$VMDIR/run-$KERNEL
mkdir -p "$RUNDIR"

# ---- the offline check (KW_VM_RELO_ONLY=1): no boot ----
# The object relocated against this kernel's BTF (taken out of vmlinuz: the
# compressed vmlinux ELF inside, its .BTF section; cached in build/vm):
# every CO-RE relocation without a target must be a layout this kernel does
# not have, with the other side standing (build/tests/kw-corecheck).
kernel_btf() { # vmlinuz out
	local z=$1 out=$2 kind off magic
	for magic in 'zstd \x28\xb5\x2f\xfd' 'lz4 \x02\x21\x4c\x18' 'xz \xfd\x37\x7a\x58\x5a\x00' 'gzip \x1f\x8b\x08'; do
		LC_ALL=C grep -obUaP "${magic#* }" "$z" 2>/dev/null | head -n 4 | cut -d: -f1 |
			sed "s/\$/ ${magic%% *}/"
	done | sort -n | while read -r off kind; do
		case $kind in
		zstd) tail -c +$((off + 1)) "$z" | zstd -dcq 2>/dev/null ;;
		lz4) tail -c +$((off + 1)) "$z" | lz4 -dcq 2>/dev/null ;;
		xz) tail -c +$((off + 1)) "$z" | xz -dcq 2>/dev/null ;;
		gzip) tail -c +$((off + 1)) "$z" | gzip -dcq 2>/dev/null ;;
		esac >"$out.elf"
		if [ "$(head -c 4 "$out.elf" | od -An -c | tr -d ' ')" = '177ELF' ] &&
			objcopy -O binary --only-section=.BTF "$out.elf" "$out.part" 2>/dev/null &&
			[ -s "$out.part" ]; then
			mv "$out.part" "$out"
			break
		fi
	done
	rm -f "$out.elf" "$out.part"
	[ -s "$out" ]
}
if [ "${KW_VM_RELO_ONLY:-0}" = 1 ]; then
	BTF=$VMDIR/btf-$KVER
	[ -s "$BTF" ] || kernel_btf "$VMLINUZ" "$BTF" ||
		fail_all "$KERNEL: could not take the BTF out of $(basename "$VMLINUZ")"
	[ -x build/tests/kw-corecheck ] || fail_all "build/tests/kw-corecheck missing: run 'make test-bins' first"
	out=$(build/tests/kw-corecheck build/kwitness.bpf.o "$BTF" 2>/dev/null)
	rc=$?
	n=0
	while IFS= read -r line; do
		case $line in
		"ok - "* | "not ok - "*)
			n=$((n + 1))
			echo "${line%% - *} $n - offline CO-RE, $KVER: ${line#* - }" ;;
		esac
	done <<<"$out"
	[ $n -gt 0 ] || { n=1; echo "not ok 1 - offline CO-RE, $KVER: kw-corecheck printed nothing (exit $rc)"; rc=1; }
	echo "1..$n"
	exit $rc
fi

# ---- the test lists ----
# Suites that span boots (tests/vm/init skips them in a full run): each runs
# after the main boot, driven from the host by tests/vm/<name>_host.sh, which
# boots the VM again and again with a disk image that outlives each boot and a
# phase on the kernel command line. MAIN_TESTS: what KW_VM_TESTS names for
# the main boot (empty: all but these).
MULTI_BOOT="tests/vm/test_power_loss.sh"
MAIN_TESTS= BOOT_TESTS=
for t in ${KW_VM_TESTS:-}; do
	case " $MULTI_BOOT " in *" $t "*) BOOT_TESTS="$BOOT_TESTS $t" ;; *) MAIN_TESTS="$MAIN_TESTS $t" ;; esac
done
[ -n "${KW_VM_TESTS:-}" ] || BOOT_TESTS=$MULTI_BOOT

# ---- the initramfs ----
STAGE=$RUNDIR/initramfs
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
LOOP_KO=$VMDIR/loop-$KVER.ko
[ -f "$LOOP_KO" ] && mkdir -p "$STAGE/kw/modules" && cp "$LOOP_KO" "$STAGE/kw/modules/loop.ko"
p=$(command -v mke2fs || echo /usr/sbin/mke2fs)
[ -x "$p" ] && copy_with_libs "$p" /usr/local/bin/mke2fs
[ -f /etc/mke2fs.conf ] && cp /etc/mke2fs.conf "$STAGE/etc/"
cp -r tests/lib.sh "$STAGE/kw/tests/"
for d in tests/kernel tests/vm examples; do
	[ -d "$d" ] && mkdir -p "$STAGE/kw/$d" && cp -r "$d"/. "$STAGE/kw/$d/"
done
# the probe's class list, which test_probe counts the probe's output against
mkdir -p "$STAGE/kw/user/bpf" && cp user/bpf/probe.h "$STAGE/kw/user/bpf/"
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
echo "$MAIN_TESTS" >"$STAGE/kw/vm-tests"
# the benchmark runs after a full run, or when KW_VM_BENCH=1
bench=${KW_VM_BENCH:-}
[ -n "$bench" ] || { [ -z "${KW_VM_TESTS:-}" ] && bench=1 || bench=0; }
echo "$bench" >"$STAGE/kw/vm-bench"
echo "${KW_VM_KLOG:-1}" >"$STAGE/kw/vm-klog"
echo "${KT_VM_FULL:-}" >"$STAGE/kw/vm-full"

INITRD=$RUNDIR/initrd.gz
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
# vm_boot LOG APPEND [QEMU ARGS...]: one boot, its console in LOG; APPEND
# goes on the kernel command line (kw.* arguments are tests/vm/init's).
# -no-reboot: a reset (sysrq 'b', a triple fault) ends qemu like a power-off.
vm_boot() {
	local log=$1 append=$2 start
	shift 2
	echo "# vm: booting $(basename "$VMLINUZ") under qemu (tcg) ${append:+($append) }timeout ${TIMEOUT}s"
	start=$(date +%s)
	timeout --foreground -k 10 "$TIMEOUT" qemu-system-x86_64 -accel tcg,thread="$TCG_THREAD" -m 1024 -smp 2 \
		-nographic -no-reboot -monitor none -serial stdio -display none \
		-kernel "$VMLINUZ" -initrd "$INITRD" "$@" \
		-append "console=ttyS0 quiet panic=-1 lsm=lockdown,capability,bpf $LOCKUP_ARGS $append" \
		</dev/null 2>&1 | tr -d '\r' >"$log"
	qrc=${PIPESTATUS[0]}
	echo "# vm: qemu exited $qrc after $(($(date +%s) - start))s; console log: $log"
}

# vm_report LOG: prints the boot's test lines (TAP and comments; each suite's
# plan is a comment by now; a kernel message in between is dropped), adds
# them to N, and sets FAILED when one failed, the VM never reported or a
# suite inside it failed.
N=0 FAILED=0
vm_report() {
	local log=$1 vrc
	grep -aE '^(ok |not ok |#)' "$log"
	N=$((N + $(grep -acE '^(ok |not ok )' "$log")))
	grep -aq '^not ok ' "$log" && FAILED=1
	if ! grep -aq "^$MARKER" "$log"; then
		echo "not ok - vm: the VM never reported (qemu exit $qrc); last console lines:"
		tail -n 80 "$log" | sed 's/^/#   /'
		N=$((N + 1)) FAILED=1
		return
	fi
	vrc=$(grep -a "^$MARKER" "$log" | sed -n "s/^$MARKER rc=\([0-9]*\).*/\1/p" | head -n 1)
	if [ "${vrc:-1}" -ne 0 ] && ! grep -aq '^not ok ' "$log"; then
		echo "not ok - vm: a suite inside the VM failed (rc=$vrc)"
		N=$((N + 1)) FAILED=1
	fi
}
# host-side results of a multi-boot driver
vm_ok() { N=$((N + 1)); echo "ok - $*"; }
vm_not_ok() { N=$((N + 1)) FAILED=1; echo "not ok - $*"; }

if [ -z "${KW_VM_TESTS:-}" ] || [ -n "$MAIN_TESTS" ]; then
	vm_boot "$RUNDIR/console.log" ""
	vm_report "$RUNDIR/console.log"
fi
# the multi-boot suites, each from its host-side driver
for t in $BOOT_TESTS; do
	d=${t%/test_*}/$(basename "${t#*/test_}" .sh)_host.sh
	[ -f "$d" ] || { vm_not_ok "vm: $t has no driver $d"; continue; }
	. "$d"
done
echo "1..$N"
exit $FAILED
