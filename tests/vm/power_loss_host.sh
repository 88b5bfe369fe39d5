# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The host side of tests/vm/test_power_loss.sh, sourced by scripts/vmtest.sh
# (vm_boot, vm_report, vm_ok, vm_not_ok): an ext4 image for kwitnessd's state
# folder; boot 1 runs the session and ends in a sysrq reset; while the VM is
# off, a copy of the image gets one byte of a vouched log line changed, on
# the raw disk; boot 2 mounts both and checks what kwitnessd and verify make
# of them.
pl_run() {
	local dir=$RUNDIR/power-loss img copy log1 log2 path off bs blk pblk byte new
	local suite=tests/vm/test_power_loss.sh
	rm -rf "$dir"
	mkdir -p "$dir"
	img=$dir/state.img copy=$dir/tampered.img log1=$dir/console-1.log log2=$dir/console-2.log
	for t in mkfs.ext4 e2fsck debugfs dumpe2fs; do
		command -v "$t" >/dev/null || { vm_ok "# SKIP power loss: $t (e2fsprogs) not installed"; return; }
	done
	truncate -s 64M "$img" && mkfs.ext4 -q -F -b 4096 "$img" ||
		{ vm_not_ok "power loss: mkfs.ext4 of the state image"; return; }
	drive() { echo "-drive file=$1,if=none,format=raw,id=$2 -device nvme,drive=$2,serial=$2"; }

	# shellcheck disable=SC2046
	vm_boot "$log1" "kw.phase=1 kw.tests=$suite kw.disks=kw-state" $(drive "$img" kw-state)
	vm_report "$log1"
	grep -aqE '^ok [0-9]+ # SKIP' "$log1" && return
	# the boot ended in the reset, not in a shutdown
	if grep -aq '^# vm: power loss: echo b' "$log1" && grep -aq 'sysrq: Resetting' "$log1" &&
		! grep -aq 'reboot: Power down' "$log1" && [ "$qrc" = 0 ]; then
		vm_ok "power loss: boot 1 ended in a sysrq reset (console: sysrq: Resetting), not a power-off"
	else
		vm_not_ok "power loss: boot 1 ended in a sysrq reset (qemu exit $qrc; console's last lines:)"
		tail -n 5 "$log1" | sed 's/^/#   /'
		return
	fi
	if dumpe2fs -h "$img" 2>/dev/null | grep -q '^Filesystem features:.*needs_recovery'; then
		vm_ok "power loss: the image's ext4 was never unmounted (needs_recovery)"
	else
		vm_not_ok "power loss: the image's ext4 was never unmounted (needs_recovery)"
	fi

	# While the VM is off: a copy with one byte of a vouched line changed,
	# written to the raw image (not through any filesystem code). e2fsck
	# replays the journal first, as mounting it would, so that the file's
	# blocks are where its inode says.
	cp --sparse=always "$img" "$copy"
	e2fsck -fy "$copy" >"$dir/e2fsck.out" 2>&1
	[ $? -le 1 ] || { vm_not_ok "power loss: e2fsck of the copy"; sed 's/^/#   /' "$dir/e2fsck.out"; return; }
	path=/state/logs/$(debugfs -R 'ls /state/logs' "$copy" 2>/dev/null | tr -s ' ' '\n' |
		grep -m1 -E '^[0-9a-f]{32}\.jsonl$')
	debugfs -R "cat $path" "$copy" >"$dir/log" 2>/dev/null
	# line 3, a decision: the first digit of its pid
	off=$(awk 'NR < 3 { n += length($0) + 1 } NR == 3 { i = index($0, "\"pid\":"); print n + i + 5; exit }' "$dir/log")
	bs=$(dumpe2fs -h "$copy" 2>/dev/null | awk '/^Block size:/ { print $3 }')
	blk=$((off / bs))
	pblk=$(debugfs -R "bmap $path $blk" "$copy" 2>/dev/null)
	byte=$(tail -c +$((off + 1)) "$dir/log" | head -c 1)
	case $byte in [0-8]) new=$((byte + 1)) ;; 9) new=0 ;; *) new= ;; esac
	if [ -z "$new" ] || [ -z "$pblk" ] || [ "$pblk" = 0 ]; then
		vm_not_ok "power loss: found the byte to change ($path offset ${off:-?} '$byte', block ${pblk:-?})"
		return
	fi
	printf %s "$new" | dd of="$copy" bs=1 seek=$((pblk * bs + off % bs)) conv=notrunc status=none
	echo "# power loss: the copy's $path, byte $off: '$byte' -> '$new' (block $pblk on the raw image)"

	# shellcheck disable=SC2046
	vm_boot "$log2" "kw.phase=2 kw.tests=$suite kw.disks=kw-state,kw-tampered" \
		$(drive "$img" kw-state) $(drive "$copy" kw-tampered)
	vm_report "$log2"
	[ "${KW_VM_KEEP:-0}" = 1 ] || rm -f "$img" "$copy"
}
pl_run
