/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Paths for the BPF-LSM programs: fs (lsm_fs.bpf.h), exec (lsm_exec.bpf.h),
 * mount (lsm_mount.bpf.h) and net.unix (lsm_unix.bpf.h). Each program chains
 * the previous LSM's verdict, then - for a task in a tagged session governing
 * the class - builds the path, judges it against the session's path rules
 * (kwitness/abi/path_match.h), records through session.bpf.h (the same
 * sequence numbers, ring buffers and drop accounting as the cgroup hooks) and
 * returns 0 or a negative errno.
 *
 * Paths come from walking the dentry and mount chain up to the root of the
 * task's mount namespace, the same way for every hook (bpf_d_path is not
 * allowed on the path_* hooks, and one walker keeps one meaning of a path).
 * A path that does not fit KW_PATH_MAX, or is deeper than KW_PATH_DEPTH
 * components, is judged with KW_EVF_TRUNCATED and never allowed.
 *
 * Loaded only where lsm programs can be (user/bpf/lsm.c turns autoload off
 * otherwise), so nothing newer than Linux 6.1 is used here. */
#ifndef KWITNESS_LSM_PATH_BPF_H
#define KWITNESS_LSM_PATH_BPF_H

#include "session.bpf.h"

static __always_inline struct kw_lsm_scratch *kw_scratch(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&kw_lsm_scratch, &zero);
}

/* One step up: from a dentry to its parent, or across a mount to the
 * mountpoint in the parent mount. Stops at the mount namespace's root. */
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
			sc->walk_done = 1;
			return 1;
		}
		sc->w_dentry = (__u64)BPF_CORE_READ(mnt, mnt_mountpoint);
		sc->w_mnt = (__u64)parent;
		sc->w_root = (__u64)BPF_CORE_READ(parent, mnt.mnt_root);
		return 0;
	}
	up = BPF_CORE_READ(d, d_parent);
	if (!up || up == d) { /* a filesystem root that is no mount's root: detached */
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

/* Builds the absolute path of dentry (on vfsmnt), plus "/" + leaf's name when
 * leaf is set, into sc->path / sc->len / sc->truncated. */
static __always_inline void kw_path_build(struct kw_lsm_scratch *sc, struct vfsmount *vfsmnt,
					  struct dentry *dentry, struct dentry *leaf)
{
	__u32 pos;

	sc->truncated = 0;
	sc->walk_done = 0;
	sc->n = 0;
	sc->pos = 0;
	__builtin_memset(sc->path, 0, sizeof(sc->path));
	if (leaf) {
		sc->comps[0] = (__u64)leaf;
		sc->n = 1;
	}
	sc->w_mnt = (__u64)((void *)vfsmnt - bpf_core_field_offset(struct mount, mnt));
	sc->w_dentry = (__u64)dentry;
	sc->w_root = (__u64)BPF_CORE_READ(vfsmnt, mnt_root);
	bpf_loop(2 * KW_PATH_DEPTH, kw_walk_cb, NULL, 0);
	if (!sc->walk_done)
		sc->truncated = 1;
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
}

/* Judges sc->path for the wanted accesses (KW_WANT bits); 1 permit, 0 deny. */
static __always_inline int kw_path_judge(struct kw_lsm_scratch *sc, __u32 slot, __u32 want,
					 __u16 *rule)
{
	__builtin_memcpy(sc->key.path, sc->path, KW_PATH_MAX);
	sc->key.slot = slot;
	sc->key.len = sc->len;
	kw_path_scan_init(&sc->scan, &sc->key, want);
	bpf_loop(KW_PATH_MAX, kw_scan_cb, NULL, 0);
	if (kw_path_scan_root(&sc->scan, &sc->key))
		kw_path_scan_hit(&sc->scan, bpf_map_lookup_elem(&kw_path_rules, &sc->key));
	return kw_path_decide(&sc->scan.res, want, sc->truncated, rule);
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
		__builtin_memcpy(e->path, sc->path, KW_PATH_MAX);
		kw_event_submit(e);
	}
	return verdict ? 0 : -err;
}

/* A path as a hook sees it: the directory entry on its mount, and a last
 * component (leaf) that is not in the tree yet (mkdir, a rename's target). */
struct kw_path_ref {
	struct vfsmount *mnt;
	struct dentry *dentry;
	struct dentry *leaf; /* NULL: dentry is the path's last component */
};

/* A session's task acts on path a (and b, when not NULL, must pass too):
 * build, judge, record one decision: the first refused path's, else the
 * last path's. The caller found the session first, so untagged tasks pay no
 * pointer chasing. */
static __always_inline int kw_path_hook(struct kw_ctx *c, __u16 kind, __u32 access, __u32 want,
					const struct kw_path_ref *a, const struct kw_path_ref *b,
					int err)
{
	struct kw_lsm_scratch *sc;
	__u16 rule;
	int permit;

	sc = kw_scratch();
	if (!sc)
		return kw_fail_closed(c, kind, -err);
	kw_path_build(sc, a->mnt, a->dentry, a->leaf);
	permit = kw_path_judge(sc, c->slot, want, &rule);
	if (permit && b) {
		kw_path_build(sc, b->mnt, b->dentry, b->leaf);
		permit = kw_path_judge(sc, c->slot, want, &rule);
	}
	return kw_path_record(c, sc, kind, access, permit, rule, err);
}

#endif
