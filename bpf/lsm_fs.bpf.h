/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* fs: file_open, the path_* hooks, inode_setattr, inode_setxattr,
 * inode_removexattr and, where the kernel has them, inode_set_acl,
 * inode_remove_acl and file_truncate, judged against fs.read, fs.write and
 * fs.deny. */
#ifndef KWITNESS_LSM_FS_BPF_H
#define KWITNESS_LSM_FS_BPF_H

#include "base.bpf.h"
#include "maps.bpf.h"
#include "session.bpf.h"
#include "lsm_path.bpf.h"

#define KW_FMODE_READ 0x1
#define KW_FMODE_WRITE 0x2

/* Mounts of one filesystem looked at, and judged, for a hook that sees only
 * a dentry (inode_setattr, inode_setxattr, inode_removexattr); at most
 * KW_SB_CANDS of them are judged. */
#define KW_SB_MOUNTS_SCAN 256

/* A superblock's mounts: a list_head through mount.mnt_instance up to 6.17,
 * a NULL-terminated chain through mount.mnt_next_for_sb from 6.18 on. */
struct super_block___kw61 {
	struct list_head s_mounts;
} __attribute__((preserve_access_index));

struct mount___kw618 {
	struct mount___kw618 *mnt_next_for_sb;
	struct mnt_namespace *mnt_ns;
	struct vfsmount mnt;
} __attribute__((preserve_access_index));

struct super_block___kw618 {
	struct mount___kw618 *s_mounts;
} __attribute__((preserve_access_index));


SEC("lsm/file_open")
int BPF_PROG(kw_lsm_file_open, struct file *file, int ret)
{
	__u32 mode, want = 0, access = 0;
	struct kw_ctx c;

	if (ret || !kw_session_find(&c, KW_CLASS_FS))
		return ret;
	mode = BPF_CORE_READ(file, f_mode);
	if (mode & KW_FMODE_READ) {
		want |= KW_WANT(KW_PK_READ);
		access |= KW_ACC_READ;
	}
	if (mode & KW_FMODE_WRITE) {
		want |= KW_WANT(KW_PK_WRITE);
		access |= KW_ACC_WRITE;
	}
	if (!want) { /* open(O_RDONLY|O_WRONLY): no data access, judged as a read */
		want = KW_WANT(KW_PK_READ);
		access = KW_ACC_READ;
	}
	return kw_path_hook(&c, KW_EV_FS_OPEN, access, want, BPF_CORE_READ(file, f_path.mnt),
			    BPF_CORE_READ(file, f_path.dentry), NULL, EACCES);
}

static __always_inline int kw_pathop(__u32 op, const struct path *dir, struct dentry *leaf)
{
	struct kw_ctx c;

	if (!kw_session_find(&c, KW_CLASS_FS))
		return 0;
	return kw_path_hook(&c, KW_EV_FS_PATHOP, op, KW_WANT(KW_PK_WRITE), BPF_CORE_READ(dir, mnt),
			    BPF_CORE_READ(dir, dentry), leaf, EACCES);
}

SEC("lsm/path_unlink")
int BPF_PROG(kw_lsm_path_unlink, const struct path *dir, struct dentry *dentry, int ret)
{
	return ret ? ret : kw_pathop(KW_PATHOP_UNLINK, dir, dentry);
}

SEC("lsm/path_mkdir")
int BPF_PROG(kw_lsm_path_mkdir, const struct path *dir, struct dentry *dentry, umode_t mode,
	     int ret)
{
	return ret ? ret : kw_pathop(KW_PATHOP_MKDIR, dir, dentry);
}

SEC("lsm/path_rmdir")
int BPF_PROG(kw_lsm_path_rmdir, const struct path *dir, struct dentry *dentry, int ret)
{
	return ret ? ret : kw_pathop(KW_PATHOP_RMDIR, dir, dentry);
}

SEC("lsm/path_mknod")
int BPF_PROG(kw_lsm_path_mknod, const struct path *dir, struct dentry *dentry, umode_t mode,
	     unsigned int dev, int ret)
{
	return ret ? ret : kw_pathop(KW_PATHOP_MKNOD, dir, dentry);
}

SEC("lsm/path_symlink")
int BPF_PROG(kw_lsm_path_symlink, const struct path *dir, struct dentry *dentry,
	     const char *old_name, int ret)
{
	return ret ? ret : kw_pathop(KW_PATHOP_SYMLINK, dir, dentry);
}

SEC("lsm/path_truncate")
int BPF_PROG(kw_lsm_path_truncate, const struct path *path, int ret)
{
	return ret ? ret : kw_pathop(KW_PATHOP_TRUNCATE, path, NULL);
}

/* Metadata is writing: mode, owner, times and extended attributes. */
SEC("lsm/path_chmod")
int BPF_PROG(kw_lsm_path_chmod, const struct path *path, umode_t mode, int ret)
{
#ifdef KW_TEST_REFUSE
	/* A test build only (build/refuse, tests/vm/test_load.sh): a read above
	 * the stack frame, which every verifier refuses. */
	asm volatile("r0 = *(u64 *)(r10 + 8)" ::: "r0");
#endif
	return ret ? ret : kw_pathop(KW_PATHOP_CHMOD, path, NULL);
}

SEC("lsm/path_chown")
int BPF_PROG(kw_lsm_path_chown, const struct path *path, __u64 uid, __u64 gid, int ret)
{
	return ret ? ret : kw_pathop(KW_PATHOP_CHOWN, path, NULL);
}

/* One mount of the superblock: kept as a candidate when it is in the
 * task's mount namespace (sc->it_ns). */
static __always_inline void kw_sb_mount_seen(struct kw_lsm_scratch *sc, __u64 ns, __u64 mnt)
{
	if (!sc->any_mnt)
		sc->any_mnt = mnt;
	if (ns == sc->it_ns) {
		if (sc->n_cands < KW_SB_CANDS)
			sc->cands[sc->n_cands & (KW_SB_CANDS - 1)] = mnt;
		sc->n_cands++;
	}
}

/* Walks a superblock's mount list (up to 6.17), from sc->it_pos to it_head. */
static long kw_sb_mounts_cb(__u32 i, void *unused)
{
	struct kw_lsm_scratch *sc = kw_scratch();
	struct mount___kw61 *m;
	struct list_head *pos;

	if (!sc)
		return 1;
	pos = (struct list_head *)sc->it_pos;
	if (!pos || (__u64)pos == sc->it_head) {
		sc->it_more = 0;
		return 1;
	}
	m = (void *)pos - bpf_core_field_offset(struct mount___kw61, mnt_instance);
	kw_sb_mount_seen(sc, (__u64)BPF_CORE_READ(m, mnt_ns), (__u64)&m->mnt);
	sc->it_pos = (__u64)BPF_CORE_READ(pos, next);
	return 0;
}

/* Walks a superblock's mount chain (6.18 on), from sc->it_pos to NULL. */
static long kw_sb_chain_cb(__u32 i, void *unused)
{
	struct kw_lsm_scratch *sc = kw_scratch();
	struct mount___kw618 *m;

	if (!sc)
		return 1;
	m = (struct mount___kw618 *)sc->it_pos;
	if (!m) {
		sc->it_more = 0;
		return 1;
	}
	kw_sb_mount_seen(sc, (__u64)BPF_CORE_READ(m, mnt_ns), (__u64)&m->mnt);
	sc->it_pos = (__u64)BPF_CORE_READ(m, mnt_next_for_sb);
	return 0;
}

/* A hook that sees only a dentry: the object is judged at every path it has
 * in the task's mount namespace (each mount of its filesystem it is under, up
 * to KW_SB_CANDS), and refused when any of them is. With no such path it is
 * detached: refused. */
static __always_inline int kw_dentry_hook(struct kw_ctx *c, __u32 op, struct dentry *dentry)
{
	void *sb = BPF_CORE_READ(dentry, d_sb);
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct kw_lsm_scratch *sc;
	__u32 i, judged = 0, more, last = 0, built = 0;
	__u16 rule = KW_RULE_DEFAULT, r;
	int permit = 1;

	/* overridden credentials: the kernel acting on its own behalf (overlayfs
	 * writing its upper layer after the overlay path was judged) */
	if (BPF_CORE_READ(t, cred) != BPF_CORE_READ(t, real_cred))
		return 0;
	sc = kw_scratch();
	if (!sc)
		return kw_fail_closed(c, KW_EV_FS_PATHOP, -EACCES);
	sc->it_ns = (__u64)BPF_CORE_READ(t, nsproxy, mnt_ns);
	sc->it_more = 1;
	sc->n_cands = 0;
	sc->any_mnt = 0;
	/* the layout this kernel has (the other branch's relocations fail and
	 * are never run) */
	if (bpf_core_field_exists(struct mount___kw618, mnt_next_for_sb)) {
		struct super_block___kw618 *sb618 = sb;

		sc->it_head = 0;
		sc->it_pos = (__u64)BPF_CORE_READ(sb618, s_mounts);
		bpf_loop(KW_SB_MOUNTS_SCAN, kw_sb_chain_cb, NULL, 0);
	} else {
		struct super_block___kw61 *sb61 = sb;

		sc->it_head = (__u64)&sb61->s_mounts;
		sc->it_pos = (__u64)BPF_CORE_READ(sb61, s_mounts.next);
		bpf_loop(KW_SB_MOUNTS_SCAN, kw_sb_mounts_cb, NULL, 0);
	}
	more = sc->it_more || sc->n_cands > KW_SB_CANDS;
	for (i = 0; i < KW_SB_CANDS; i++) {
		if (i >= sc->n_cands)
			break;
		kw_path_build(sc, (struct vfsmount *)sc->cands[i & (KW_SB_CANDS - 1)], dentry, NULL);
		built = i;
		if (sc->end == KW_END_DROOT) /* not under this mount's root */
			continue;
		judged++;
		last = i;
		if (!kw_path_judge(sc, c->slot, KW_WANT(KW_PK_WRITE), &r)) {
			permit = 0;
			rule = r;
			break;
		}
		rule = r;
	}
	if (permit && judged && built != last) { /* record the path that was judged */
		kw_path_build(sc, (struct vfsmount *)sc->cands[last & (KW_SB_CANDS - 1)], dentry, NULL);
		kw_path_judge(sc, c->slot, KW_WANT(KW_PK_WRITE), &rule);
	}
	if (permit && (!judged || more)) {
		/* no path in this namespace, or more than were judged */
		if (sc->any_mnt && !judged)
			kw_path_build(sc, (struct vfsmount *)sc->any_mnt, dentry, NULL);
		if (!judged)
			sc->detached = 1;
		if (more)
			sc->truncated = 1;
		permit = kw_path_judge(sc, c->slot, KW_WANT(KW_PK_WRITE), &rule);
	}
	return kw_path_record(c, sc, KW_EV_FS_PATHOP, op, permit, rule, EACCES);
}

#define KW_ATTR_MODE (1 << 0)
#define KW_ATTR_UID (1 << 1)
#define KW_ATTR_GID (1 << 2)
#define KW_ATTR_SIZE (1 << 3)
#define KW_ATTR_ATIME (1 << 4)
#define KW_ATTR_MTIME (1 << 5)

/* Times (utimes, utimensat, futimens). Mode, owner and size changes come
 * through path_chmod, path_chown and path_truncate, which saw the path. */
static __always_inline int kw_setattr(struct dentry *dentry, struct iattr *attr)
{
	unsigned int valid;
	struct kw_ctx c;

	if (!kw_session_find(&c, KW_CLASS_FS))
		return 0;
	valid = BPF_CORE_READ(attr, ia_valid);
	if (!(valid & (KW_ATTR_ATIME | KW_ATTR_MTIME)) ||
	    (valid & (KW_ATTR_MODE | KW_ATTR_UID | KW_ATTR_GID | KW_ATTR_SIZE)))
		return 0;
	return kw_dentry_hook(&c, KW_PATHOP_UTIMES, dentry);
}

/* The hook's prototype up to 6.2: (dentry, iattr). */
SEC("lsm/inode_setattr")
int BPF_PROG(kw_lsm_inode_setattr, struct dentry *dentry, struct iattr *attr, int ret)
{
	return ret ? ret : kw_setattr(dentry, attr);
}

/* From 6.3 on the mount's idmap comes first: (idmap, dentry, iattr). */
SEC("lsm/inode_setattr")
int BPF_PROG(kw_lsm_inode_setattr_idmap, void *idmap, struct dentry *dentry, struct iattr *attr,
	     int ret)
{
	return ret ? ret : kw_setattr(dentry, attr);
}

/* The mount's user namespace (6.1) or idmap (6.3+) comes first either way. */
SEC("lsm/inode_setxattr")
int BPF_PROG(kw_lsm_inode_setxattr, void *idmap, struct dentry *dentry, const char *name,
	     const void *value, size_t size, int flags, int ret)
{
	struct kw_ctx c;

	if (ret || !kw_session_find(&c, KW_CLASS_FS))
		return ret;
	return kw_dentry_hook(&c, KW_PATHOP_SETXATTR, dentry);
}

SEC("lsm/inode_removexattr")
int BPF_PROG(kw_lsm_inode_removexattr, void *idmap, struct dentry *dentry, const char *name,
	     int ret)
{
	struct kw_ctx c;

	if (ret || !kw_session_find(&c, KW_CLASS_FS))
		return ret;
	return kw_dentry_hook(&c, KW_PATHOP_REMOVEXATTR, dentry);
}

/* POSIX ACLs (6.2 on; 6.1 sends them through inode_setxattr and
 * inode_removexattr): logged as the extended-attribute operations they are,
 * the same entries on every kernel. */
SEC("lsm/inode_set_acl")
int BPF_PROG(kw_lsm_inode_set_acl, void *idmap, struct dentry *dentry, const char *acl_name,
	     void *kacl, int ret)
{
	struct kw_ctx c;

	if (ret || !kw_session_find(&c, KW_CLASS_FS))
		return ret;
	return kw_dentry_hook(&c, KW_PATHOP_SETXATTR, dentry);
}

SEC("lsm/inode_remove_acl")
int BPF_PROG(kw_lsm_inode_remove_acl, void *idmap, struct dentry *dentry, const char *acl_name,
	     int ret)
{
	struct kw_ctx c;

	if (ret || !kw_session_find(&c, KW_CLASS_FS))
		return ret;
	return kw_dentry_hook(&c, KW_PATHOP_REMOVEXATTR, dentry);
}

/* ftruncate(2) and open(O_TRUNC) (6.2 on; 6.1 sends both through
 * path_truncate): a truncate of the open file's path, as on 6.1. */
SEC("lsm/file_truncate")
int BPF_PROG(kw_lsm_file_truncate, struct file *file, int ret)
{
	struct kw_ctx c;

	if (ret || !kw_session_find(&c, KW_CLASS_FS))
		return ret;
	return kw_path_hook(&c, KW_EV_FS_PATHOP, KW_PATHOP_TRUNCATE, KW_WANT(KW_PK_WRITE),
			    BPF_CORE_READ(file, f_path.mnt), BPF_CORE_READ(file, f_path.dentry), NULL,
			    EACCES);
}

/* Inode flags (immutable, append-only, ...) are metadata, so writing. The
 * ioctls that set them reach file_ioctl (file_ioctl_compat for 32-bit
 * callers from 6.8 on); from 7.x inode_file_setattr sees them and
 * file_setattr(2) too, and the loader sets kw_fileattr_hook so that the
 * ioctl programs leave them to it (one entry per change). */
#define KW_FS_IOC_SETFLAGS 0x40086602   /* _IOW('f', 2, long) */
#define KW_FS_IOC32_SETFLAGS 0x40046602 /* _IOW('f', 2, int) */
#define KW_FS_IOC_FSSETXATTR 0x401c5820 /* _IOW('X', 32, struct fsxattr) */

const volatile __u32 kw_fileattr_hook = 0;

static __always_inline int kw_chattr_ioctl(struct file *file, unsigned int cmd)
{
	struct kw_ctx c;

	if (kw_fileattr_hook ||
	    (cmd != KW_FS_IOC_SETFLAGS && cmd != KW_FS_IOC32_SETFLAGS && cmd != KW_FS_IOC_FSSETXATTR) ||
	    !kw_session_find(&c, KW_CLASS_FS))
		return 0;
	return kw_path_hook(&c, KW_EV_FS_PATHOP, KW_PATHOP_CHATTR, KW_WANT(KW_PK_WRITE),
			    BPF_CORE_READ(file, f_path.mnt), BPF_CORE_READ(file, f_path.dentry), NULL,
			    EACCES);
}

SEC("lsm/file_ioctl")
int BPF_PROG(kw_lsm_file_ioctl_attr, struct file *file, unsigned int cmd, unsigned long arg,
	     int ret)
{
	return ret ? ret : kw_chattr_ioctl(file, cmd);
}

SEC("lsm/file_ioctl_compat")
int BPF_PROG(kw_lsm_file_ioctl_compat_attr, struct file *file, unsigned int cmd,
	     unsigned long arg, int ret)
{
	return ret ? ret : kw_chattr_ioctl(file, cmd);
}

SEC("lsm/inode_file_setattr")
int BPF_PROG(kw_lsm_inode_file_setattr, struct dentry *dentry, void *fa, int ret)
{
	struct kw_ctx c;

	if (ret || !kw_session_find(&c, KW_CLASS_FS))
		return ret;
	return kw_dentry_hook(&c, KW_PATHOP_CHATTR, dentry);
}

/* Two paths, both written to: the source is judged too, since a hard link or
 * a rename gives the file a second name that other rules would judge; and
 * neither may be an ancestor of an fs.deny path (moving a directory would
 * move the denied path out from under its rule). The decision recorded is
 * the first refused path's, else the new path's. */
static __always_inline int kw_two_paths(struct kw_ctx *c, __u32 op, struct vfsmount *old_mnt,
					struct dentry *old_dir, struct dentry *old_leaf,
					struct vfsmount *new_mnt, struct dentry *new_dir,
					struct dentry *new_leaf)
{
	struct kw_lsm_scratch *sc = kw_scratch();
	__u16 rule;

	if (!sc)
		return kw_fail_closed(c, KW_EV_FS_PATHOP, -EACCES);
	kw_path_build(sc, old_mnt, old_dir, old_leaf);
	if (!kw_path_judge_ex(sc, c->slot, KW_WANT(KW_PK_WRITE), &rule, 1))
		return kw_path_record(c, sc, KW_EV_FS_PATHOP, op, 0, rule, EACCES);
	return kw_path_hook_ex(c, KW_EV_FS_PATHOP, op, KW_WANT(KW_PK_WRITE), new_mnt, new_dir,
			       new_leaf, EACCES, 1);
}

SEC("lsm/path_link")
int BPF_PROG(kw_lsm_path_link, struct dentry *old_dentry, const struct path *new_dir,
	     struct dentry *new_dentry, int ret)
{
	struct vfsmount *m;
	struct kw_ctx c;

	if (ret || !kw_session_find(&c, KW_CLASS_FS))
		return ret;
	/* a hard link stays on one mount: the source's parent chain is on new_dir's */
	m = BPF_CORE_READ(new_dir, mnt);
	return kw_two_paths(&c, KW_PATHOP_LINK, m, BPF_CORE_READ(old_dentry, d_parent), old_dentry, m,
			    BPF_CORE_READ(new_dir, dentry), new_dentry);
}

SEC("lsm/path_rename")
int BPF_PROG(kw_lsm_path_rename, const struct path *old_dir, struct dentry *old_dentry,
	     const struct path *new_dir, struct dentry *new_dentry, unsigned int flags, int ret)
{
	struct kw_ctx c;

	if (ret || !kw_session_find(&c, KW_CLASS_FS))
		return ret;
	return kw_two_paths(&c, KW_PATHOP_RENAME, BPF_CORE_READ(old_dir, mnt),
			    BPF_CORE_READ(old_dir, dentry), old_dentry, BPF_CORE_READ(new_dir, mnt),
			    BPF_CORE_READ(new_dir, dentry), new_dentry);
}

#endif
