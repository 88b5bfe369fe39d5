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
	struct kw_path_ref p = { 0 };
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
	p.mnt = BPF_CORE_READ(file, f_path.mnt);
	p.dentry = BPF_CORE_READ(file, f_path.dentry);
	return kw_path_hook(&c, KW_EV_FS_OPEN, access, want, &p, NULL, EACCES);
}

static __always_inline int kw_pathop(__u32 op, const struct path *dir, struct dentry *leaf)
{
	struct kw_path_ref p = { .leaf = leaf };
	struct kw_ctx c;

	if (!kw_session_find(&c, KW_CLASS_FS))
		return 0;
	p.mnt = BPF_CORE_READ(dir, mnt);
	p.dentry = BPF_CORE_READ(dir, dentry);
	return kw_path_hook(&c, KW_EV_FS_PATHOP, op, KW_WANT(KW_PK_WRITE), &p, NULL, EACCES);
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

/* Link and rename write two paths: the source is judged too, since a hard
 * link or a rename gives the file a second name that other rules would
 * judge. */
SEC("lsm/path_link")
int BPF_PROG(kw_lsm_path_link, struct dentry *old_dentry, const struct path *new_dir,
	     struct dentry *new_dentry, int ret)
{
	struct kw_path_ref from = { .leaf = old_dentry }, to = { .leaf = new_dentry };
	struct kw_ctx c;

	if (ret || !kw_session_find(&c, KW_CLASS_FS))
		return ret;
	/* a hard link stays on one mount: the source's parent chain is on new_dir's */
	from.mnt = to.mnt = BPF_CORE_READ(new_dir, mnt);
	from.dentry = BPF_CORE_READ(old_dentry, d_parent);
	to.dentry = BPF_CORE_READ(new_dir, dentry);
	return kw_path_hook(&c, KW_EV_FS_PATHOP, KW_PATHOP_LINK, KW_WANT(KW_PK_WRITE), &from, &to,
			    EACCES);
}

SEC("lsm/path_rename")
int BPF_PROG(kw_lsm_path_rename, const struct path *old_dir, struct dentry *old_dentry,
	     const struct path *new_dir, struct dentry *new_dentry, unsigned int flags, int ret)
{
	struct kw_path_ref from = { .leaf = old_dentry }, to = { .leaf = new_dentry };
	struct kw_ctx c;

	if (ret || !kw_session_find(&c, KW_CLASS_FS))
		return ret;
	from.mnt = BPF_CORE_READ(old_dir, mnt);
	from.dentry = BPF_CORE_READ(old_dir, dentry);
	to.mnt = BPF_CORE_READ(new_dir, mnt);
	to.dentry = BPF_CORE_READ(new_dir, dentry);
	return kw_path_hook(&c, KW_EV_FS_PATHOP, KW_PATHOP_RENAME, KW_WANT(KW_PK_WRITE), &from,
			    &to, EACCES);
}

#endif
