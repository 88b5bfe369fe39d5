/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* fs (BPF-LSM file_open and path_*): opens judged for read and write, the
 * path operations (mkdir, unlink, rename, ...) as writes. */
#ifndef KWITNESS_LSM_FS_BPF_H
#define KWITNESS_LSM_FS_BPF_H

#include "lsm_path.bpf.h"

#define KW_FMODE_READ 0x1
#define KW_FMODE_WRITE 0x2

SEC("lsm/file_open")
int BPF_PROG(kw_lsm_file_open, struct file *file, int ret)
{
	__u32 mode, want = 0, access = 0;
	struct kw_ctx c;

	if (ret)
		return ret;
	if (!kw_session_find(&c, KW_CLASS_FS))
		return 0;
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

/* Two paths, both written to: the source is judged too, since a hard link or
 * a rename gives the file a second name that other rules would judge. The
 * decision recorded is the first refused path's, else the new path's. */
static __always_inline int kw_two_paths(struct kw_ctx *c, __u32 op, struct vfsmount *old_mnt,
					struct dentry *old_dir, struct dentry *old_leaf,
					struct vfsmount *new_mnt, struct dentry *new_dir,
					struct dentry *new_leaf)
{
	struct kw_lsm_scratch *sc;
	__u16 rule;
	int permit;

	sc = kw_scratch();
	if (!sc)
		return kw_fail_closed(c, KW_EV_FS_PATHOP, -EACCES);
	kw_path_build(sc, old_mnt, old_dir, old_leaf);
	permit = kw_path_judge(sc, c->slot, KW_WANT(KW_PK_WRITE), &rule);
	if (permit) {
		kw_path_build(sc, new_mnt, new_dir, new_leaf);
		permit = kw_path_judge(sc, c->slot, KW_WANT(KW_PK_WRITE), &rule);
	}
	return kw_path_record(c, sc, KW_EV_FS_PATHOP, op, permit, rule, EACCES);
}

SEC("lsm/path_link")
int BPF_PROG(kw_lsm_path_link, struct dentry *old_dentry, const struct path *new_dir,
	     struct dentry *new_dentry, int ret)
{
	struct vfsmount *m;
	struct kw_ctx c;

	if (ret)
		return ret;
	if (!kw_session_find(&c, KW_CLASS_FS))
		return 0;
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

	if (ret)
		return ret;
	if (!kw_session_find(&c, KW_CLASS_FS))
		return 0;
	return kw_two_paths(&c, KW_PATHOP_RENAME, BPF_CORE_READ(old_dir, mnt),
			    BPF_CORE_READ(old_dir, dentry), old_dentry, BPF_CORE_READ(new_dir, mnt),
			    BPF_CORE_READ(new_dir, dentry), new_dentry);
}

#endif
