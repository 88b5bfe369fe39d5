/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Paths for the BPF-LSM hooks: built, judged against the session's path rules
 * and recorded, the same way for every hook that names a file (fs, exec,
 * net.unix, mount).
 *
 * Paths come from walking the dentry and mount chain up to the root of the
 * task's mount namespace (bpf_d_path is not allowed on the path_* hooks, and
 * one walker keeps one meaning of a path). A path that does not fit
 * KW_PATH_MAX, or is deeper than KW_PATH_DEPTH components, is judged with
 * KW_EVF_TRUNCATED, and one whose walk does not end at the namespace's root
 * mount with KW_EVF_DETACHED: neither is ever allowed.
 *
 * Every BPF-LSM program chains the previous LSM's verdict, then - for a task
 * in a tagged session governing the class - decides, records through
 * session.bpf.h (the same sequence numbers, ring buffers and drop accounting
 * as the cgroup hooks) and returns 0 or a negative errno. They are loaded only
 * where lsm programs can be (user/bpf/lsm.c turns autoload off otherwise), so
 * nothing newer than Linux 6.1 is used in them. */
#ifndef KWITNESS_LSM_PATH_BPF_H
#define KWITNESS_LSM_PATH_BPF_H

#include "base.bpf.h"
#include "maps.bpf.h"
#include "session.bpf.h"
#include "kwitness/abi/lsm_map.h"

/* Path rules of every session: (slot, prefix) -> which lists hold it. */
KW_SPARSE_MAP(BPF_MAP_TYPE_HASH, 65536, struct kw_path_key, struct kw_path_val)
kw_path_rules SEC(".maps");

#include "kwitness/abi/path_match.h"

/* Components walked per path; a power of two (indices are masked). */
#define KW_PATH_DEPTH 64
/* Mounts of a dentry's filesystem kept as candidates for a hook that sees
 * only a dentry (lsm_fs.bpf.h). */
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
		/* 8 bytes of a constant are one immediate store; a string
		 * constant of another size would need a .rodata map */
		if (magic == KW_PIPEFS_MAGIC) {
			__builtin_memcpy(sc->path, "pipe:[\0\0", 8);
			pos = 6;
		} else {
			__builtin_memcpy(sc->path, "socket:[", 8);
			pos = 8;
		}
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
		__builtin_memcpy(sc->path, "anon:\0\0\0", 8); /* 8: as above */
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

/* One path of a session's task: build, judge (move: as kw_path_judge_ex),
 * record. The caller found the session first, so untagged tasks pay no
 * pointer chasing. */
static __always_inline int kw_path_hook_ex(struct kw_ctx *c, __u16 kind, __u32 access, __u32 want,
					   struct vfsmount *mnt, struct dentry *dentry,
					   struct dentry *leaf, int err, int move)
{
	struct kw_lsm_scratch *sc;
	__u16 rule;
	int permit;

	sc = kw_scratch();
	if (!sc)
		return kw_fail_closed(c, kind, -err);
	kw_path_build(sc, mnt, dentry, leaf);
	permit = kw_path_judge_ex(sc, c->slot, want, &rule, move);
	return kw_path_record(c, sc, kind, access, permit, rule, err);
}

static __always_inline int kw_path_hook(struct kw_ctx *c, __u16 kind, __u32 access, __u32 want,
					struct vfsmount *mnt, struct dentry *dentry,
					struct dentry *leaf, int err)
{
	return kw_path_hook_ex(c, kind, access, want, mnt, dentry, leaf, err, 0);
}

#endif
