/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* exec: bprm_check_security judged against exec.allow, by path and by the
 * executed file's digest (the sleepable program hashes it through IMA where
 * the kernel can). */
#ifndef KWITNESS_LSM_EXEC_BPF_H
#define KWITNESS_LSM_EXEC_BPF_H

#include "base.bpf.h"
#include "maps.bpf.h"
#include "session.bpf.h"
#include "lsm_path.bpf.h"
#include "lsm_slot.bpf.h"

/* The digests exec.allow names (layout and meaning: kwitness/abi/lsm_map.h). */
KW_SPARSE_MAP(BPF_MAP_TYPE_HASH, 16384, struct kw_exec_digest_key, __u16)
kw_exec_digests SEC(".maps");

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

/* The kernel's own answer (6.12 on; weak: 0 where the kernel lacks it, and
 * the verifier drops the branch that would call it). It fills a struct
 * fsverity_digest: algorithm, size, digest. The object built with
 * KW_NO_KFUNCS (kwitness-nokfunc.bpf.o) leaves it out: the loader takes that
 * one where vmlinux lacks the kfunc (user/bpf/hooks.c). */
#ifndef KW_NO_KFUNCS
extern int bpf_get_fsverity_digest(struct file *file, struct bpf_dynptr *digest_p) __ksym __weak;
#define KW_HAVE_VERITY_KFUNC() (bpf_get_fsverity_digest != 0)
#else
#define KW_HAVE_VERITY_KFUNC() 0
#define bpf_get_fsverity_digest(file, p) (-1)
#endif

struct kw_fsverity_digest {
	__u16 algorithm;
	__u16 size;
	__u8 digest[KW_VERITY_MAX];
};

/* Where the kfunc writes: a map value (6.12's bpf_dynptr_from_mem takes no
 * stack memory). Per CPU, as the path scratch (kw_lsm_scratch) is. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kw_fsverity_digest);
} kw_verity_scratch SEC(".maps");

/* The file's fs-verity digest into out; its length, or 0 when the file has
 * none (or this kernel has no fs-verity). Where the kfunc exists it answers
 * (7.2 has no i_verity_info to read); on 6.1 the inode's fs-verity state is
 * read as that kernel lays it out. */
static __always_inline __u32 kw_verity_digest(struct file *file, __u8 *out)
{
	struct inode___kwv *inode = (void *)BPF_CORE_READ(file, f_inode);
	struct fsverity_info___kw *vi;
	__u32 n;

	if (KW_HAVE_VERITY_KFUNC()) {
		struct kw_fsverity_digest *d;
		struct bpf_dynptr p;
		__u32 zero = 0;

		d = bpf_map_lookup_elem(&kw_verity_scratch, &zero);
		if (!d || bpf_dynptr_from_mem(d, sizeof(*d), 0, &p) ||
		    bpf_get_fsverity_digest(file, &p) < 0)
			return 0;
		n = d->size;
		if (n != 32 && n != 64)
			return 0;
		__builtin_memcpy(out, d->digest, KW_VERITY_MAX);
		return n;
	}
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
 * what runs. sleepable: called from the sleepable program (a constant). */
static __always_inline int kw_exec_decide(struct kw_ctx *c, struct linux_binprm *bprm,
					  const __u8 *digest, __u8 status, __s32 derr,
					  int sleepable)
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
	e = kw_record_decision_in(c, KW_EV_FS_EXEC, permit, rule, sizeof(*e), &verdict, sleepable);
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
	return kw_exec_decide(&c, bprm, digest, KW_DIGEST_UNSUPPORTED, 0, 0);
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
	r = kw_session_find(&c, KW_CLASS_EXEC) ? kw_exec_decide(&c, bprm, digest, status, derr, 1) : 0;
	kw_sleepers_add(-1);
	return (int)r;
}

#endif
