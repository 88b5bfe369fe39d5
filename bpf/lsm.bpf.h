/* SPDX-License-Identifier: Apache-2.0 */
/* BPF-LSM programs: fs (file_open, path_*), exec (bprm_check_security), proc
 * (task_kill, ptrace_access_check), mount (sb_mount), net.unix
 * (unix_stream_connect). Each chains the previous LSM's verdict, then - for a
 * task in a tagged session governing the class - decides, records through
 * session.bpf.h (the same sequence numbers, ring buffers and drop accounting
 * as the cgroup hooks) and returns 0 or a negative errno.
 *
 * Paths come from walking the dentry and mount chain up to the root of the
 * task's mount namespace, the same way for every hook (bpf_d_path is not
 * allowed on the path_* hooks, and one walker keeps one meaning of a path).
 * A path that does not fit KW_PATH_MAX, or is deeper than KW_PATH_DEPTH
 * components, is judged with KW_EVF_TRUNCATED and never allowed.
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

#ifndef EACCES
#define EACCES 13
#endif
#ifndef EPERM
#define EPERM 1
#endif
#define KW_FMODE_READ 0x1
#define KW_FMODE_WRITE 0x2
#define KW_PTRACE_MODE_NOAUDIT 0x04

/* Components walked per path; a power of two (indices are masked). */
#define KW_PATH_DEPTH 64

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
	__u32 n;         /* components in comps */
	__u32 pos;       /* bytes written to path */
	__u32 len;       /* final path length */
	__u32 truncated; /* the path is longer or deeper than we keep */
	__u32 walk_done;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kw_lsm_scratch);
} kw_lsm_scratch SEC(".maps");

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

/* ---- exec ---- */

SEC("lsm/bprm_check_security")
int BPF_PROG(kw_lsm_bprm_check, struct linux_binprm *bprm, int ret)
{
	struct kw_ctx c;

	if (ret)
		return ret;
	if (!kw_session_find(&c, KW_CLASS_EXEC))
		return 0;
	/* runs once per binary handler pass: a script's interpreter is judged too */
	return kw_path_hook(&c, KW_EV_FS_EXEC, KW_ACC_EXEC, KW_WANT(KW_PK_EXEC),
			    BPF_CORE_READ(bprm, file, f_path.mnt),
			    BPF_CORE_READ(bprm, file, f_path.dentry), NULL, EACCES);
}

/* ---- net.unix ---- */

SEC("lsm/unix_stream_connect")
int BPF_PROG(kw_lsm_unix_connect, struct sock *sock, struct sock *other, struct sock *newsk,
	     int ret)
{
	struct unix_sock *u = (struct unix_sock *)other;
	struct kw_lsm_scratch *sc;
	struct dentry *d;
	struct kw_ctx c;
	__u16 rule = KW_RULE_DEFAULT;
	int permit = 0;

	if (ret)
		return ret;
	if (!kw_session_find(&c, KW_CLASS_UNIX))
		return 0;
	sc = kw_scratch();
	if (!sc)
		return kw_fail_closed(&c, KW_EV_NET_UNIX, -EACCES);
	d = BPF_CORE_READ(u, path.dentry);
	if (d) {
		kw_path_build(sc, BPF_CORE_READ(u, path.mnt), d, NULL);
		permit = kw_path_judge(sc, c.slot, KW_WANT(KW_PK_UNIX), &rule);
	} else {
		/* abstract (or unbound) socket: no path a rule can name, "@name";
		 * the name is addr->len bytes, not NUL-terminated */
		struct unix_address *addr = BPF_CORE_READ(u, addr);
		__u32 n = 0;
		int alen;

		__builtin_memset(sc->path, 0, sizeof(sc->path));
		sc->path[0] = '@';
		sc->truncated = 0;
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
	return kw_path_record(&c, sc, KW_EV_NET_UNIX, 0, permit, rule, EACCES);
}

#include "lsm_proc.bpf.h"

#endif
