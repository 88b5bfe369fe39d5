/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* mount: sb_mount, move_mount, sb_umount, sb_pivotroot and
 * fs_context_parse_param. Changing the mount tree is refused inside a session
 * unless mount.allow; the record names the mount point. */
#ifndef KWITNESS_LSM_MOUNT_BPF_H
#define KWITNESS_LSM_MOUNT_BPF_H

#include "base.bpf.h"
#include "maps.bpf.h"
#include "session.bpf.h"
#include "lsm_path.bpf.h"
#include "lsm_slot.bpf.h"

/* Judges a change of the mount tree: refused unless mount.allow. The record
 * names the mount point (any_root: reported as the kernel walks it). */
static __always_inline int kw_mount_hook(__u32 op, struct vfsmount *mnt, struct dentry *dentry)
{
	struct kw_lsm_scratch *sc;
	struct kw_lsm_slot *cfg;
	struct kw_ctx c;
	int permit;

	if (!kw_session_find(&c, KW_CLASS_MOUNT))
		return 0;
	cfg = bpf_map_lookup_elem(&kw_lsm_slots, &c.slot);
	permit = cfg && cfg->mount_allow;
	sc = kw_scratch();
	if (!sc)
		return kw_fail_closed(&c, KW_EV_MOUNT, -EPERM);
	kw_path_build_ex(sc, mnt, dentry, NULL, 1);
	return kw_path_record(&c, sc, KW_EV_MOUNT, op, permit, permit ? 0 : KW_RULE_DEFAULT, EPERM);
}

SEC("lsm/sb_mount")
int BPF_PROG(kw_lsm_sb_mount, const char *dev_name, const struct path *path, const char *type,
	     unsigned long flags, void *data, int ret)
{
	if (ret)
		return ret;
	return kw_mount_hook(KW_MOUNTOP_MOUNT, BPF_CORE_READ(path, mnt), BPF_CORE_READ(path, dentry));
}

/* move_mount(2): attaching a detached tree (open_tree, fsmount) or moving a
 * mount; the record names the target. */
SEC("lsm/move_mount")
int BPF_PROG(kw_lsm_move_mount, const struct path *from_path, const struct path *to_path, int ret)
{
	if (ret)
		return ret;
	return kw_mount_hook(KW_MOUNTOP_MOVE, BPF_CORE_READ(to_path, mnt),
			     BPF_CORE_READ(to_path, dentry));
}

/* umount(2) would uncover what a mount hides. */
SEC("lsm/sb_umount")
int BPF_PROG(kw_lsm_sb_umount, struct vfsmount *mnt, int flags, int ret)
{
	if (ret)
		return ret;
	return kw_mount_hook(KW_MOUNTOP_UMOUNT, mnt, BPF_CORE_READ(mnt, mnt_root));
}

/* pivot_root(2) changes what every path is relative to. */
SEC("lsm/sb_pivotroot")
int BPF_PROG(kw_lsm_sb_pivotroot, const struct path *old_path, const struct path *new_path,
	     int ret)
{
	if (ret)
		return ret;
	return kw_mount_hook(KW_MOUNTOP_PIVOT_ROOT, BPF_CORE_READ(new_path, mnt),
			     BPF_CORE_READ(new_path, dentry));
}

/* fsconfig(2) setting an option of a new or picked filesystem (fsopen,
 * fspick). Under mount.allow it is not a decision of its own (the mount is
 * judged where it attaches: sb_mount, move_mount), so nothing is recorded;
 * otherwise it is refused and recorded with the filesystem type. The options
 * of a mount(2) pass here too: they are not judged again. */
SEC("lsm/fs_context_parse_param")
int BPF_PROG(kw_lsm_fs_param, struct fs_context *fc, struct fs_parameter *param, int ret)
{
	struct kw_lsm_scratch *sc;
	struct kw_lsm_slot *cfg;
	const char *type;
	struct kw_ctx c;
	__u64 owner;
	long r;

	if (ret || !kw_session_find(&c, KW_CLASS_MOUNT))
		return ret;
	cfg = bpf_map_lookup_elem(&kw_lsm_slots, &c.slot);
	if (cfg && cfg->mount_allow)
		return 0;
	/* fsconfig(2) parses under the context's uapi_mutex, held by this task;
	 * mount(2) parses its options without it, after sb_mount judged it */
	owner = BPF_CORE_READ(fc, uapi_mutex.owner.counter);
	if ((owner & ~0x7UL) != (__u64)bpf_get_current_task())
		return 0;
	sc = kw_scratch();
	if (!sc)
		return kw_fail_closed(&c, KW_EV_MOUNT, -EPERM);
	__builtin_memset(sc->path, 0, sizeof(sc->path));
	sc->truncated = 0;
	sc->detached = 0;
	type = BPF_CORE_READ(fc, fs_type, name);
	r = bpf_probe_read_kernel_str(sc->path, 64, type);
	sc->len = r > 1 ? (__u32)(r - 1) & 63 : 0;
	return kw_path_record(&c, sc, KW_EV_MOUNT, KW_MOUNTOP_FSCONFIG, 0, KW_RULE_DEFAULT, EPERM);
}


#endif
