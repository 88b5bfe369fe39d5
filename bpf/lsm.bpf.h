/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* BPF-LSM programs: fs (file_open, path_*, inode_setattr, inode_setxattr,
 * inode_removexattr), exec (bprm_check_security), proc (task_kill,
 * ptrace_access_check, file_send_sigiotask), mount (sb_mount, move_mount,
 * sb_umount, sb_pivotroot, fs_context_parse_param), net.unix
 * (unix_stream_connect, unix_may_send). Each chains the previous LSM's verdict, then - for a
 * task in a tagged session governing the class - decides, records through
 * session.bpf.h (the same sequence numbers, ring buffers and drop accounting
 * as the cgroup hooks) and returns 0 or a negative errno.
 *
 * Paths come from walking the dentry and mount chain up to the root of the
 * task's mount namespace, the same way for every hook (bpf_d_path is not
 * allowed on the path_* hooks, and one walker keeps one meaning of a path).
 * A path that does not fit KW_PATH_MAX, or is deeper than KW_PATH_DEPTH
 * components, is judged with KW_EVF_TRUNCATED, and one whose walk does not
 * end at the namespace's root mount with KW_EVF_DETACHED: neither is ever
 * allowed.
 *
 * Loaded only where lsm programs can be (user/bpf/lsm.c turns autoload off
 * otherwise), so nothing newer than Linux 6.1 is used here. */
#ifndef KWITNESS_LSM_BPF_H
#define KWITNESS_LSM_BPF_H

#include "kwitness/abi/lsm_map.h"

/* Path rules of every session: (slot, prefix) -> which lists hold it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct kw_path_key);
	__type(value, struct kw_path_val);
} kw_path_rules SEC(".maps");

#include "kwitness/abi/path_match.h"
#include "lsm_slot.bpf.h"

#define KW_FMODE_READ 0x1
#define KW_FMODE_WRITE 0x2
#define KW_PTRACE_MODE_NOAUDIT 0x04

/* Components walked per path; a power of two (indices are masked). */
#define KW_PATH_DEPTH 64
/* Mounts of one filesystem looked at, and judged, for a hook that sees only
 * a dentry (inode_setattr, inode_setxattr, inode_removexattr). */
#define KW_SB_MOUNTS_SCAN 256
#define KW_SB_CANDS 4

/* Why the walk stopped. */
enum { KW_END_NONE, KW_END_TOP, KW_END_DROOT };

/* Filesystems whose files have no path (their magic numbers, a stable ABI). */
#define KW_PIPEFS_MAGIC 0x50495045
#define KW_SOCKFS_MAGIC 0x534F434B

/* Per-CPU scratch: the path is built in path[] (spill[] takes a component
 * read that overruns the end) and copied into key for the prefix scan. The
 * walk, the writer and the scan are bpf_loop callbacks that keep their state
 * here, so the verifier checks each body once. LSM programs run with
 * migration disabled and never sleep here. */
struct kw_lsm_scratch {
	char path[KW_PATH_MAX];
	char spill[KW_PATH_MAX];
	struct kw_path_key key;
	struct kw_path_scan scan;
	__u64 comps[KW_PATH_DEPTH]; /* dentries, leaf first */
	__u64 w_mnt, w_dentry, w_root; /* walk position: struct mount *, dentry, mount root */
	__u64 cands[KW_SB_CANDS];      /* mounts in the task's namespace of a dentry's sb */
	__u64 any_mnt;                 /* a mount of that sb in any namespace */
	__u64 it_pos, it_head, it_ns;  /* the sb's mount list walk */
	__u64 a_mnt, a_dentry, a_leaf; /* kw_path_build_g's arguments */
	__u32 n_cands;
	__u32 it_more;   /* the mount list was longer than the scan */
	__u32 n;         /* components in comps */
	__u32 pos;       /* bytes written to path */
	__u32 len;       /* final path length */
	__u32 truncated; /* the path is longer or deeper than we keep */
	__u32 detached;  /* the path is not under the task's root mount */
	__u32 end;       /* KW_END_* */
	__u32 walk_done;
	__u32 rule;      /* kw_path_judge_g's deciding rule */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kw_lsm_scratch);
} kw_lsm_scratch SEC(".maps");

/* Linux 6.1 layouts newer kernels changed (CO-RE flavours: only the fields
 * named here are relocated, and only in the programs that use them). */
struct mount___kw61 {
	struct list_head mnt_instance; /* on the superblock's s_mounts */
	struct mnt_namespace *mnt_ns;
	struct vfsmount mnt;
} __attribute__((preserve_access_index));

struct super_block___kw61 {
	struct list_head s_mounts;
} __attribute__((preserve_access_index));

static __always_inline struct kw_lsm_scratch *kw_scratch(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&kw_lsm_scratch, &zero);
}

/* The root mount of the current task's mount namespace. */
static __always_inline __u64 kw_ns_root(void)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();

	return (__u64)BPF_CORE_READ(t, nsproxy, mnt_ns, root);
}

/* One step up: from a dentry to its parent, or across a mount to the
 * mountpoint in the parent mount. Stops at the top mount of the tree. */
static long kw_walk_cb(__u32 i, void *unused)
{
	struct kw_lsm_scratch *sc = kw_scratch();
	struct mount *mnt, *parent;
	struct dentry *d, *up;

	if (!sc)
		return 1;
	mnt = (struct mount *)sc->w_mnt;
	d = (struct dentry *)sc->w_dentry;
	if (sc->w_dentry == sc->w_root) {
		parent = BPF_CORE_READ(mnt, mnt_parent);
		if (!parent || parent == mnt) {
			sc->end = KW_END_TOP;
			sc->walk_done = 1;
			return 1;
		}
		sc->w_dentry = (__u64)BPF_CORE_READ(mnt, mnt_mountpoint);
		sc->w_mnt = (__u64)parent;
		sc->w_root = (__u64)BPF_CORE_READ(parent, mnt.mnt_root);
		return 0;
	}
	up = BPF_CORE_READ(d, d_parent);
	if (!up || up == d) {
		/* a filesystem root that is not the mount's root: a file with no
		 * path (memfd, pipe, ...), a disconnected dentry, or a dentry
		 * outside this mount */
		sc->end = KW_END_DROOT;
		sc->walk_done = 1;
		return 1;
	}
	if (sc->n >= KW_PATH_DEPTH) {
		sc->truncated = 1;
		sc->walk_done = 1;
		return 1;
	}
	sc->comps[sc->n & (KW_PATH_DEPTH - 1)] = (__u64)d;
	sc->n++;
	sc->w_dentry = (__u64)up;
	return 0;
}

/* Writes component k from the top: "/" name. */
static long kw_write_cb(__u32 k, void *unused)
{
	struct kw_lsm_scratch *sc = kw_scratch();
	const unsigned char *name;
	struct dentry *d;
	__u32 pos;
	long r;

	if (!sc || k >= sc->n)
		return 1;
	pos = sc->pos;
	if (pos >= KW_PATH_MAX - 1) {
		sc->truncated = 1;
		return 1;
	}
	d = (struct dentry *)sc->comps[(sc->n - 1 - k) & (KW_PATH_DEPTH - 1)];
	sc->path[pos & (KW_PATH_MAX - 1)] = '/';
	pos++;
	name = BPF_CORE_READ(d, d_name.name);
	r = bpf_probe_read_kernel_str(&sc->path[pos & (KW_PATH_MAX - 1)], KW_PATH_MAX, name);
	if (r <= 1) { /* unreadable or empty name: the path is not known */
		sc->truncated = 1;
		r = 1;
	}
	sc->pos = pos + (__u32)(r - 1);
	return 0;
}

static long kw_scan_cb(__u32 k, void *unused)
{
	struct kw_lsm_scratch *sc = kw_scratch();
	int lookup;

	if (!sc)
		return 1;
	if (kw_path_scan_at(&sc->scan, &sc->key, k, &lookup))
		return 1;
	if (lookup)
		kw_path_scan_hit(&sc->scan, bpf_map_lookup_elem(&kw_path_rules, &sc->key));
	kw_path_scan_next(&sc->scan, &sc->key);
	return 0;
}

/* Names a file that has no path: "memfd:NAME" (the name memfd_create gave
 * it), "pipe:[INO]", "socket:[INO]", else "anon:NAME" ("anon:[eventfd]"). */
static __always_inline void kw_pseudo_name(struct kw_lsm_scratch *sc, struct dentry *d)
{
	const unsigned char *name = BPF_CORE_READ(d, d_name.name);
	unsigned long magic = BPF_CORE_READ(d, d_sb, s_magic);
	__u64 ino, div;
	__u32 pos = 0, i;
	long r;

	if (magic == KW_PIPEFS_MAGIC || magic == KW_SOCKFS_MAGIC) {
		/* byte by byte: a string constant would need a .rodata map */
		if (magic == KW_PIPEFS_MAGIC) {
			sc->path[0] = 'p';
			sc->path[1] = 'i';
			sc->path[2] = 'p';
			sc->path[3] = 'e';
			pos = 4;
		} else {
			sc->path[0] = 's';
			sc->path[1] = 'o';
			sc->path[2] = 'c';
			sc->path[3] = 'k';
			sc->path[4] = 'e';
			sc->path[5] = 't';
			pos = 6;
		}
		sc->path[pos++ & 63] = ':';
		sc->path[pos++ & 63] = '[';
		ino = BPF_CORE_READ(d, d_inode, i_ino);
		div = 1;
		for (i = 0; i < 19 && ino / div >= 10; i++)
			div *= 10;
		for (i = 0; i < 20 && div; i++) {
			sc->path[pos++ & 63] = '0' + (char)(ino / div % 10);
			div /= 10;
		}
		sc->path[pos++ & 63] = ']';
		sc->len = pos & 63;
		return;
	}
	r = bpf_probe_read_kernel_str(sc->spill, 8, name);
	if (r == 8 && sc->spill[0] == 'm' && sc->spill[1] == 'e' && sc->spill[2] == 'm' &&
	    sc->spill[3] == 'f' && sc->spill[4] == 'd' && sc->spill[5] == ':') {
		r = bpf_probe_read_kernel_str(sc->path, KW_PATH_MAX, name);
	} else {
		sc->path[0] = 'a';
		sc->path[1] = 'n';
		sc->path[2] = 'o';
		sc->path[3] = 'n';
		sc->path[4] = ':';
		pos = 5;
		r = bpf_probe_read_kernel_str(&sc->path[5], KW_PATH_MAX - 5, name);
	}
	if (r < 1) { /* unreadable: "anon:" or "memfd:" alone says what it is */
		r = 1;
		sc->truncated = 1;
	}
	pos += (__u32)(r - 1);
	if (pos >= KW_PATH_MAX - 1) {
		pos = KW_PATH_MAX - 1;
		sc->truncated = 1;
	}
	sc->path[pos & (KW_PATH_MAX - 1)] = 0;
	sc->len = pos;
}

/* Builds the path of dentry (on vfsmnt), plus "/" + leaf's name when leaf is
 * set, into sc->path / sc->len / sc->truncated / sc->detached: the path from
 * the root of the task's mount namespace. A walk that ends elsewhere - on a
 * detached mount (open_tree, fsmount), in another namespace's tree, or at a
 * disconnected dentry - is marked detached, unless any_root (the path is
 * only reported: a socket's bound path, a mount point). A file with no path
 * at all is named by kw_pseudo_name.
 * A global function: the verifier checks it once per program, however many
 * times the program builds a path. It works on the per-CPU scratch the caller
 * holds, and takes its pointers from it (a_mnt, a_dentry, a_leaf: a global
 * function takes no kernel pointers); they are only read through
 * bpf_probe_read_kernel. */
__noinline int kw_path_build_g(int any_root)
{
	struct kw_lsm_scratch *sc = kw_scratch(); /* a map value (a map key may not be plain memory) */
	struct vfsmount *vfsmnt;
	struct dentry *dentry;
	__u64 leaf_;
	__u32 pos;

	if (!sc)
		return 0;
	vfsmnt = (struct vfsmount *)sc->a_mnt;
	dentry = (struct dentry *)sc->a_dentry;
	leaf_ = sc->a_leaf;
	sc->truncated = 0;
	sc->detached = 0;
	sc->walk_done = 0;
	sc->end = KW_END_NONE;
	sc->n = 0;
	sc->pos = 0;
	__builtin_memset(sc->path, 0, sizeof(sc->path));
	if (leaf_) {
		sc->comps[0] = leaf_;
		sc->n = 1;
	}
	sc->w_mnt = (__u64)((void *)vfsmnt - bpf_core_field_offset(struct mount, mnt));
	sc->w_dentry = (__u64)dentry;
	sc->w_root = (__u64)BPF_CORE_READ(vfsmnt, mnt_root);
	bpf_loop(2 * KW_PATH_DEPTH, kw_walk_cb, NULL, 0);
	if (!sc->walk_done)
		sc->truncated = 1;
	if (sc->end == KW_END_DROOT && sc->n == 0) {
		/* the object is its own filesystem root and no mount's: memfd,
		 * pipe, socket, anon inode (or an unlinked, disconnected file:
		 * on a mount of a namespace, it is marked detached too) */
		struct mount___kw61 *m = (void *)sc->w_mnt;
		__u64 ns = (__u64)BPF_CORE_READ(m, mnt_ns);

		kw_pseudo_name(sc, dentry);
		/* kernel-internal mounts: MNT_NS_INTERNAL (ERR_PTR(-EINVAL)) or none */
		if (ns && ns < (__u64)-4095 && !any_root)
			sc->detached = 1;
		return 0;
	}
	if (!any_root) {
		if (sc->end == KW_END_DROOT)
			sc->detached = 1;
		else if (sc->end == KW_END_TOP && sc->w_mnt != kw_ns_root())
			sc->detached = 1;
	}
	bpf_loop(KW_PATH_DEPTH, kw_write_cb, NULL, 0);
	pos = sc->pos;
	if (sc->n == 0) {
		sc->path[0] = '/';
		pos = 1;
	}
	if (pos > KW_PATH_MAX - 1) {
		pos = KW_PATH_MAX - 1;
		sc->truncated = 1;
	}
	sc->path[pos & (KW_PATH_MAX - 1)] = 0;
	sc->len = pos;
	return 0;
}

static __always_inline void kw_path_build_ex(struct kw_lsm_scratch *sc, struct vfsmount *vfsmnt,
					     struct dentry *dentry, struct dentry *leaf,
					     int any_root)
{
	sc->a_mnt = (__u64)vfsmnt;
	sc->a_dentry = (__u64)dentry;
	sc->a_leaf = (__u64)leaf;
	kw_path_build_g(any_root);
}

static __always_inline void kw_path_build(struct kw_lsm_scratch *sc, struct vfsmount *vfsmnt,
					  struct dentry *dentry, struct dentry *leaf)
{
	kw_path_build_ex(sc, vfsmnt, dentry, leaf, 0);
}

/* Judges sc->path for the wanted accesses (KW_WANT bits); 1 permit, 0 deny,
 * the deciding rule in sc->rule. move: the path is a rename or link source or
 * target (an ancestor of an fs.deny path is refused). Truncated and detached
 * paths are never allowed. A global function, like kw_path_build_g. */
__noinline int kw_path_judge_g(__u32 slot, __u32 want, int move)
{
	struct kw_lsm_scratch *sc = kw_scratch();
	__u16 rule = KW_RULE_DEFAULT;
	int unsure, permit;

	if (!sc)
		return 0;
	unsure = sc->truncated || sc->detached;
	__builtin_memcpy(sc->key.path, sc->path, KW_PATH_MAX);
	sc->key.slot = slot;
	sc->key.len = sc->len;
	kw_path_scan_init(&sc->scan, &sc->key, want);
	bpf_loop(KW_PATH_MAX, kw_scan_cb, NULL, 0);
	if (kw_path_scan_root(&sc->scan, &sc->key))
		kw_path_scan_hit(&sc->scan, bpf_map_lookup_elem(&kw_path_rules, &sc->key));
	if (move)
		permit = kw_path_decide_move(&sc->scan.res, want, unsure, &rule);
	else
		permit = kw_path_decide(&sc->scan.res, want, unsure, &rule);
	sc->rule = rule;
	return permit;
}

static __always_inline int kw_path_judge_ex(struct kw_lsm_scratch *sc, __u32 slot, __u32 want,
					    __u16 *rule, int move)
{
	int permit = kw_path_judge_g(slot, want, move);

	*rule = (__u16)sc->rule;
	return permit;
}

static __always_inline int kw_path_judge(struct kw_lsm_scratch *sc, __u32 slot, __u32 want,
					 __u16 *rule)
{
	return kw_path_judge_ex(sc, slot, want, rule, 0);
}

/* Records a path decision and returns the hook's verdict (0 or -err). */
static __always_inline int kw_path_record(struct kw_ctx *c, struct kw_lsm_scratch *sc,
					  __u16 kind, __u32 access, int permit, __u16 rule,
					  int err)
{
	struct kw_ev_path *e;
	int verdict;

	e = kw_record_decision(c, kind, permit, rule, sizeof(*e), &verdict);
	if (e) {
		e->access = access;
		e->path_len = sc->len;
		if (sc->truncated)
			e->h.flags |= KW_EVF_TRUNCATED;
		if (sc->detached)
			e->h.flags |= KW_EVF_DETACHED;
		__builtin_memcpy(e->path, sc->path, KW_PATH_MAX);
		kw_event_submit(e);
	}
	return verdict ? 0 : -err;
}

/* One path of a session's task: build, judge, record. The caller found the
 * session first, so untagged tasks pay no pointer chasing. */
static __always_inline int kw_path_hook(struct kw_ctx *c, __u16 kind, __u32 access, __u32 want,
					struct vfsmount *mnt, struct dentry *dentry,
					struct dentry *leaf, int err)
{
	struct kw_lsm_scratch *sc;
	__u16 rule;
	int permit;

	sc = kw_scratch();
	if (!sc)
		return kw_fail_closed(c, kind, -err);
	kw_path_build(sc, mnt, dentry, leaf);
	permit = kw_path_judge(sc, c->slot, want, &rule);
	return kw_path_record(c, sc, kind, access, permit, rule, err);
}

/* ---- fs ---- */

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

/* Metadata is writing: mode, owner, times and extended attributes. */
SEC("lsm/path_chmod")
int BPF_PROG(kw_lsm_path_chmod, const struct path *path, umode_t mode, int ret)
{
	return ret ? ret : kw_pathop(KW_PATHOP_CHMOD, path, NULL);
}

SEC("lsm/path_chown")
int BPF_PROG(kw_lsm_path_chown, const struct path *path, __u64 uid, __u64 gid, int ret)
{
	return ret ? ret : kw_pathop(KW_PATHOP_CHOWN, path, NULL);
}

/* Walks a superblock's mount list, keeping the mounts of the task's
 * namespace (sc->it_ns) as candidates. */
static long kw_sb_mounts_cb(__u32 i, void *unused)
{
	struct kw_lsm_scratch *sc = kw_scratch();
	struct mount___kw61 *m;
	struct list_head *pos;
	__u64 ns;

	if (!sc)
		return 1;
	pos = (struct list_head *)sc->it_pos;
	if (!pos || (__u64)pos == sc->it_head) {
		sc->it_more = 0;
		return 1;
	}
	m = (void *)pos - bpf_core_field_offset(struct mount___kw61, mnt_instance);
	ns = (__u64)BPF_CORE_READ(m, mnt_ns);
	if (!sc->any_mnt)
		sc->any_mnt = (__u64)&m->mnt;
	if (ns == sc->it_ns) {
		if (sc->n_cands < KW_SB_CANDS)
			sc->cands[sc->n_cands & (KW_SB_CANDS - 1)] = (__u64)&m->mnt;
		sc->n_cands++;
	}
	sc->it_pos = (__u64)BPF_CORE_READ(pos, next);
	return 0;
}

/* A hook that sees only a dentry: the object is judged at every path it has
 * in the task's mount namespace (each mount of its filesystem it is under, up
 * to KW_SB_CANDS), and refused when any of them is. With no such path it is
 * detached: refused. */
static __always_inline int kw_dentry_hook(struct kw_ctx *c, __u32 op, struct dentry *dentry)
{
	struct super_block___kw61 *sb = (void *)BPF_CORE_READ(dentry, d_sb);
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
	sc->it_head = (__u64)&sb->s_mounts;
	sc->it_pos = (__u64)BPF_CORE_READ(sb, s_mounts.next);
	sc->it_ns = (__u64)BPF_CORE_READ(t, nsproxy, mnt_ns);
	sc->it_more = 1;
	sc->n_cands = 0;
	sc->any_mnt = 0;
	bpf_loop(KW_SB_MOUNTS_SCAN, kw_sb_mounts_cb, NULL, 0);
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
SEC("lsm/inode_setattr")
int BPF_PROG(kw_lsm_inode_setattr, struct dentry *dentry, struct iattr *attr, int ret)
{
	unsigned int valid;
	struct kw_ctx c;

	if (ret)
		return ret;
	if (!kw_session_find(&c, KW_CLASS_FS))
		return 0;
	valid = BPF_CORE_READ(attr, ia_valid);
	if (!(valid & (KW_ATTR_ATIME | KW_ATTR_MTIME)) ||
	    (valid & (KW_ATTR_MODE | KW_ATTR_UID | KW_ATTR_GID | KW_ATTR_SIZE)))
		return 0;
	return kw_dentry_hook(&c, KW_PATHOP_UTIMES, dentry);
}

/* The mount's user namespace (6.1) or idmap (6.3+) comes first either way. */
SEC("lsm/inode_setxattr")
int BPF_PROG(kw_lsm_inode_setxattr, void *idmap, struct dentry *dentry, const char *name,
	     const void *value, size_t size, int flags, int ret)
{
	struct kw_ctx c;

	if (ret)
		return ret;
	if (!kw_session_find(&c, KW_CLASS_FS))
		return 0;
	return kw_dentry_hook(&c, KW_PATHOP_SETXATTR, dentry);
}

SEC("lsm/inode_removexattr")
int BPF_PROG(kw_lsm_inode_removexattr, void *idmap, struct dentry *dentry, const char *name,
	     int ret)
{
	struct kw_ctx c;

	if (ret)
		return ret;
	if (!kw_session_find(&c, KW_CLASS_FS))
		return 0;
	return kw_dentry_hook(&c, KW_PATHOP_REMOVEXATTR, dentry);
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
	struct kw_lsm_scratch *sc;
	__u16 rule;
	int permit;

	sc = kw_scratch();
	if (!sc)
		return kw_fail_closed(c, KW_EV_FS_PATHOP, -EACCES);
	kw_path_build(sc, old_mnt, old_dir, old_leaf);
	permit = kw_path_judge_ex(sc, c->slot, KW_WANT(KW_PK_WRITE), &rule, 1);
	if (permit) {
		kw_path_build(sc, new_mnt, new_dir, new_leaf);
		permit = kw_path_judge_ex(sc, c->slot, KW_WANT(KW_PK_WRITE), &rule, 1);
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

/* ---- exec ---- */

/* The digests exec.allow names (layout and meaning: kwitness/abi/lsm_map.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct kw_exec_digest_key);
	__type(value, __u16);
} kw_exec_digests SEC(".maps");

/* fs-verity's per-file state, 6.1 layout (fs/verity/fsverity_private.h; in
 * the kernel's BTF where CONFIG_FS_VERITY is set): the file digest that
 * FS_IOC_MEASURE_VERITY reports, and its size (32: SHA-256, 64: SHA-512). */
struct merkle_tree_params___kw {
	unsigned int digest_size;
} __attribute__((preserve_access_index));

struct fsverity_info___kw {
	struct merkle_tree_params___kw tree_params;
	__u8 file_digest[KW_VERITY_MAX];
} __attribute__((preserve_access_index));

struct inode___kwv {
	struct fsverity_info___kw *i_verity_info;
} __attribute__((preserve_access_index));

/* The file's fs-verity digest into out; its length, or 0 when the file has
 * none (or this kernel has no fs-verity). */
static __always_inline __u32 kw_verity_digest(struct file *file, __u8 *out)
{
	struct inode___kwv *inode = (void *)BPF_CORE_READ(file, f_inode);
	struct fsverity_info___kw *vi;
	__u32 n;

	if (!bpf_core_field_exists(inode->i_verity_info) ||
	    !bpf_core_field_exists(struct fsverity_info___kw, file_digest) ||
	    !bpf_core_field_exists(struct merkle_tree_params___kw, digest_size))
		return 0;
	vi = BPF_CORE_READ(inode, i_verity_info);
	if (!vi)
		return 0;
	n = BPF_CORE_READ(vi, tree_params.digest_size);
	if (n != 32 && n != 64)
		return 0;
	if (bpf_probe_read_kernel(out, KW_VERITY_MAX, &vi->file_digest))
		return 0;
	return n;
}

/* IMA's number for SHA-256 (enum hash_algo, a stable uapi-like value). */
#define KW_HASH_ALGO_SHA256 4
#define KW_IMA_DIGEST_MAX 64

/* Refines a path decision with the file's digest: a digest exec.allow names
 * on its own allows the file wherever it is; a path rule that requires
 * digests ({"path", "sha256"}) stands only when the file has one of them. */
static __always_inline int kw_exec_digest_judge(struct kw_ctx *c, int permit, __u16 *rule,
						const __u8 *sha256, int have)
{
	struct kw_exec_digest_key k = {};
	__u16 *ix;

	k.slot = c->slot;
	if (have) {
		k.rule = KW_EXEC_ANY_PATH;
		__builtin_memcpy(k.sha256, sha256, KW_SHA256_LEN);
		ix = bpf_map_lookup_elem(&kw_exec_digests, &k);
		if (ix) {
			*rule = KW_RULE_PATH(KW_PK_EXEC, *ix);
			return 1;
		}
	}
	if (!permit || *rule == KW_RULE_DEFAULT)
		return permit;
	k.rule = KW_RULE_PATH_INDEX(*rule);
	k.pinned = 1;
	__builtin_memset(k.sha256, 0, KW_SHA256_LEN);
	if (!bpf_map_lookup_elem(&kw_exec_digests, &k))
		return permit; /* the rule names a path only */
	if (have) {
		k.pinned = 0;
		__builtin_memcpy(k.sha256, sha256, KW_SHA256_LEN);
		ix = bpf_map_lookup_elem(&kw_exec_digests, &k);
		if (ix) {
			*rule = KW_RULE_PATH(KW_PK_EXEC, *ix);
			return 1;
		}
	}
	*rule = KW_RULE_PATH(KW_RULE_KIND_DIGEST_MISMATCH, k.rule);
	return 0;
}

/* Sleepable programs run outside classic RCU, so the grace period a close
 * waits for (synchronize_rcu) does not cover them. Each one counts itself
 * here while it looks at a session, numbers and records; the hash, which
 * may sleep for long, is outside. A close untags, waits for the grace period
 * (a full barrier on every CPU), then waits for this count to be 0 once: a
 * program that found the session open had incremented before the untag
 * (the fetching add is a full barrier), and has finished. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} kw_sleepers SEC(".maps");

static __always_inline void kw_sleepers_add(__s64 d)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&kw_sleepers, &zero), old;

	if (!n)
		return;
	old = __sync_fetch_and_add(n, d); /* the fetching form: a full barrier */
	barrier_var(old);
}

/* One exec pass (bprm_check_security runs once per binary handler: a
 * script, then its interpreter): the path and digest rules, then the record
 * with the file's identity and digest (status says whether there is one).
 * The file is the one exec opened and holds write-denied, so a digest is of
 * what runs. */
static __always_inline int kw_exec_decide(struct kw_ctx *c, struct linux_binprm *bprm,
					  const __u8 *digest, __u8 status, __s32 derr)
{
	struct kw_lsm_scratch *sc;
	struct kw_ev_exec *e;
	struct file *file = bprm->file;
	__u16 rule;
	int permit, verdict;

	sc = kw_scratch();
	if (!sc)
		return kw_fail_closed(c, KW_EV_FS_EXEC, -EACCES);
	kw_path_build(sc, BPF_CORE_READ(file, f_path.mnt), BPF_CORE_READ(file, f_path.dentry), NULL);
	permit = kw_path_judge(sc, c->slot, KW_WANT(KW_PK_EXEC), &rule);
	permit = kw_exec_digest_judge(c, permit, &rule, digest, status == KW_DIGEST_OK);
	e = kw_record_decision(c, KW_EV_FS_EXEC, permit, rule, sizeof(*e), &verdict);
	if (e) {
		e->p.access = KW_ACC_EXEC;
		e->p.path_len = sc->len;
		if (sc->truncated)
			e->p.h.flags |= KW_EVF_TRUNCATED;
		if (sc->detached)
			e->p.h.flags |= KW_EVF_DETACHED;
		/* binfmt_script and binfmt_misc point interp at the interpreter */
		if (BPF_CORE_READ(bprm, interp) != BPF_CORE_READ(bprm, filename))
			e->p.h.flags |= KW_EVF_INTERP;
		__builtin_memcpy(e->p.path, sc->path, KW_PATH_MAX);
		e->ino = BPF_CORE_READ(file, f_inode, i_ino);
		e->dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
		e->generation = BPF_CORE_READ(file, f_inode, i_generation);
		e->digest_status = status;
		e->pad[0] = e->pad[1] = 0;
		e->digest_err = derr;
		__builtin_memcpy(e->sha256, digest, KW_SHA256_LEN);
		e->verity_len = (__u8)kw_verity_digest(file, e->verity);
		if (!e->verity_len)
			__builtin_memset(e->verity, 0, KW_VERITY_MAX);
		kw_event_submit(e);
	}
	return verdict ? 0 : -EACCES;
}

/* Whether this exec, in session c, needs its digest. Under record: deny a
 * permit is not recorded: hash only when rules name digests or the exec is
 * refused; a permit settled here is counted in unrecorded. */
static __always_inline int kw_exec_wants_hash(struct kw_ctx *c, struct file *file)
{
	struct kw_lsm_slot *ls;
	struct kw_lsm_scratch *sc;
	__u16 rule;

	if (c->s->record != KW_RECORD_DENY)
		return 1;
	ls = bpf_map_lookup_elem(&kw_lsm_slots, &c->slot);
	sc = kw_scratch();
	if (!ls || ls->exec_digests || !sc)
		return 1;
	kw_path_build(sc, BPF_CORE_READ(file, f_path.mnt), BPF_CORE_READ(file, f_path.dentry), NULL);
	if (!kw_path_judge(sc, c->slot, KW_WANT(KW_PK_EXEC), &rule))
		return 1;
	kw_count_unrecorded(c);
	return 0;
}

/* Where the kernel cannot hash an executed file: the same judgement, every
 * entry saying digest_unavailable. */
SEC("lsm/bprm_check_security")
int BPF_PROG(kw_lsm_bprm_check, struct linux_binprm *bprm, int ret)
{
	__u8 digest[KW_IMA_DIGEST_MAX] = {};
	struct kw_ctx c;

	if (ret || !kw_session_find(&c, KW_CLASS_EXEC))
		return ret;
	return kw_exec_decide(&c, bprm, digest, KW_DIGEST_UNSUPPORTED, 0);
}

/* Sleepable, for bpf_ima_file_hash: IMA reads the file and hashes it. The
 * session is looked up again after the hash, the last call that can sleep: a
 * close that ran meanwhile has untagged it (and its slot may hold another
 * session now), so a closed session takes no number and no other session
 * gets this exec. */
SEC("lsm.s/bprm_check_security")
int BPF_PROG(kw_lsm_bprm_check_digest, struct linux_binprm *bprm, int ret)
{
	__u8 digest[KW_IMA_DIGEST_MAX] = {};
	struct file *file = bprm->file;
	__u8 status = KW_DIGEST_UNSUPPORTED;
	struct kw_ctx c;
	__s32 derr = 0;
	int hash;
	long r;

	if (ret)
		return ret;
	kw_sleepers_add(1);
	hash = kw_session_find(&c, KW_CLASS_EXEC) && kw_exec_wants_hash(&c, file);
	kw_sleepers_add(-1);
	if (!hash)
		return 0;

	r = bpf_ima_file_hash(file, digest, sizeof(digest));
	if (r == KW_HASH_ALGO_SHA256) {
		status = KW_DIGEST_OK;
	} else {
		status = r < 0 ? KW_DIGEST_ERROR : KW_DIGEST_ALGORITHM;
		derr = (__s32)r;
	}

	kw_sleepers_add(1);
	r = kw_session_find(&c, KW_CLASS_EXEC) ? kw_exec_decide(&c, bprm, digest, status, derr) : 0;
	kw_sleepers_add(-1);
	return (int)r;
}

/* ---- net.unix ---- */

/* Judges a connect or send to the unix socket other (its bound path, or
 * "@name" for an abstract one) against net.unix. */
static __always_inline int kw_unix_judge(struct kw_ctx *c, struct sock *other, __u32 access)
{
	struct unix_sock *u = (struct unix_sock *)other;
	struct kw_lsm_scratch *sc;
	struct dentry *d;
	__u16 rule = KW_RULE_DEFAULT;
	int permit = 0;

	sc = kw_scratch();
	if (!sc)
		return kw_fail_closed(c, KW_EV_NET_UNIX, -EACCES);
	d = BPF_CORE_READ(u, path.dentry);
	if (d) {
		/* the path the listener bound, in its own mount namespace */
		kw_path_build_ex(sc, BPF_CORE_READ(u, path.mnt), d, NULL, 1);
		permit = kw_path_judge(sc, c->slot, KW_WANT(KW_PK_UNIX), &rule);
	} else {
		/* abstract socket: no path a rule can name, "@name"; the name is
		 * addr->len bytes, not NUL-terminated */
		struct unix_address *addr = BPF_CORE_READ(u, addr);
		__u32 n = 0;
		int alen;

		__builtin_memset(sc->path, 0, sizeof(sc->path));
		sc->path[0] = '@';
		sc->truncated = 0;
		sc->detached = 0;
		if (addr) {
			alen = BPF_CORE_READ(addr, len);
			/* sun_family (2 bytes) and the leading NUL come first */
			if (alen > 3)
				n = alen - 3;
			if (n > KW_PATH_MAX - 2) {
				n = KW_PATH_MAX - 2;
				sc->truncated = 1;
			}
			if (n) {
				__u64 sz = n;

				/* a mask the compiler cannot drop: the verifier needs
				 * the bound on the very register passed on */
				asm volatile("%0 &= 255" : "+r"(sz));
				bpf_probe_read_kernel(&sc->path[1], sz,
						      (void *)addr->name[0].sun_path + 1);
			}
		}
		sc->len = 1 + n;
	}
	return kw_path_record(c, sc, KW_EV_NET_UNIX, access, permit, rule, EACCES);
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(kw_lsm_unix_connect, struct sock *sock, struct sock *other, struct sock *newsk,
	     int ret)
{
	struct kw_ctx c;

	if (ret)
		return ret;
	if (!kw_session_find(&c, KW_CLASS_UNIX))
		return 0;
	return kw_unix_judge(&c, other, KW_UNIX_CONNECT);
}

/* Datagrams: connect() of a datagram socket and every send. A peer with no
 * address at all is the other end of a socketpair: nothing to judge. */
SEC("lsm/unix_may_send")
int BPF_PROG(kw_lsm_unix_may_send, struct socket *sock, struct socket *other, int ret)
{
	struct sock *osk;
	struct kw_ctx c;

	if (ret)
		return ret;
	if (!kw_session_find(&c, KW_CLASS_UNIX))
		return 0;
	osk = BPF_CORE_READ(other, sk);
	if (!osk || !BPF_CORE_READ((struct unix_sock *)osk, addr))
		return 0;
	return kw_unix_judge(&c, osk, KW_UNIX_SEND);
}

#include "lsm_proc.bpf.h"

#endif
