/* SPDX-License-Identifier: Apache-2.0 */
/* BPF-LSM part of the loader (bpf/lsm_*.bpf.h): before load, turns off the
 * lsm programs that kw_probe_plan says cannot run on this kernel (the whole
 * skeleton fails to load if one program does), attaches them, and writes
 * each session's path rules (kw_path_rules) and settings (kw_lsm_slots). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kwitness/abi/lsm_map.h"
#include "policy/policy.h"
#include "bpf/probe.h"
#include "kwitness.skel.h"
#include "lsm.h"
#include "pin.h"

struct kw_lsm_prog {
	uint32_t class_bit;
	size_t prog_off; /* offset of the program pointer in skel->progs */
	size_t link_off; /* offset of the link pointer in skel->links */
};

#define CG_(cls, name, type, sec)
#define LSM_(cls, name, hook, args, need)                                           \
	{ KW_CLASS_##cls, offsetof(struct kwitness_bpf, progs.name),                 \
	  offsetof(struct kwitness_bpf, links.name) },
static const struct kw_lsm_prog kw_lsm_progs[] = { KW_CLASS_PROGRAMS(CG_, LSM_) };
#undef CG_
#undef LSM_
_Static_assert(KW_PK_READ == KW_PATH_READ && KW_PK_WRITE == KW_PATH_WRITE &&
	       KW_PK_DENY == KW_PATH_DENY && KW_PK_EXEC == KW_PATH_EXEC &&
	       KW_PK_UNIX == KW_PATH_UNIX, "kw_path_val.rule is indexed by enum kw_path_kind");
#define KW_N_LSM_PROGS (sizeof(kw_lsm_progs) / sizeof(kw_lsm_progs[0]))
_Static_assert(KW_N_LSM_PROGS == KW_PLAN_N_LSM, "kw_probe_plan.lsm_prog follows kw_lsm_progs");

static struct bpf_program *lsm_prog(struct kwitness_bpf *skel, const struct kw_lsm_prog *p)
{
	return *(struct bpf_program **)((char *)skel + p->prog_off);
}

static struct bpf_link **lsm_link(struct kwitness_bpf *skel, const struct kw_lsm_prog *p)
{
	return (struct bpf_link **)((char *)skel + p->link_off);
}

uint32_t kw_lsm_prepare(struct kwitness_bpf *skel, const struct kw_probe_plan *plan)
{
	uint32_t provide = plan->classes & KW_CLASS_LSM_MASK;
	size_t i;

	/* the programs that fit this kernel's hooks, of the classes it can
	 * serve; an LSM program of a cgroup class extends it where its hook
	 * exists */
	for (i = 0; i < KW_N_LSM_PROGS; i++)
		bpf_program__set_autoload(lsm_prog(skel, &kw_lsm_progs[i]),
					  plan->lsm_prog[i] &&
					  (!(kw_lsm_progs[i].class_bit & KW_CLASS_LSM_MASK) ||
					   (provide & kw_lsm_progs[i].class_bit)));
	/* inode flags: judged at inode_file_setattr where it is loaded, at
	 * the ioctls elsewhere (bpf/lsm_fs.bpf.h) */
	skel->rodata->kw_fileattr_hook =
		bpf_program__autoload(skel->progs.kw_lsm_inode_file_setattr) ? 1 : 0;
	/* one exec program: the one that hashes serves exec as well */
	if (provide & KW_CLASS_EXEC_DIGEST)
		bpf_program__set_autoload(skel->progs.kw_lsm_bprm_check, false);
	return provide;
}

int kw_lsm_prog_index(struct kwitness_bpf *skel, const char *name, uint32_t *class_bit)
{
	size_t i;

	for (i = 0; i < KW_N_LSM_PROGS; i++)
		if (!strcmp(bpf_program__name(lsm_prog(skel, &kw_lsm_progs[i])), name)) {
			*class_bit = kw_lsm_progs[i].class_bit;
			return (int)i;
		}
	return -1;
}

int kw_lsm_attach(struct kwitness_bpf *skel, const char *pin_dir, bool reuse)
{
	struct bpf_link *link;
	size_t i;
	int err;

	for (i = 0; i < KW_N_LSM_PROGS; i++) {
		struct bpf_program *prog = lsm_prog(skel, &kw_lsm_progs[i]);

		if (!bpf_program__autoload(prog) || *lsm_link(skel, &kw_lsm_progs[i]))
			continue;
		link = kw_hooks_global_link(prog, pin_dir, reuse);
		if (!link) {
			err = -errno ?: -EINVAL;
			goto fail;
		}
		*lsm_link(skel, &kw_lsm_progs[i]) = link; /* destroyed with the skeleton */
	}
	/* An earlier collector may have run the other exec program (the kernel
	 * could hash then, or not): its pinned link would judge every exec a
	 * second time. Removed only now, so no exec goes unjudged meanwhile. */
	if (bpf_program__autoload(skel->progs.kw_lsm_bprm_check_digest))
		kw_hooks_global_unpin(pin_dir, bpf_program__name(skel->progs.kw_lsm_bprm_check));
	else if (bpf_program__autoload(skel->progs.kw_lsm_bprm_check))
		kw_hooks_global_unpin(pin_dir,
				      bpf_program__name(skel->progs.kw_lsm_bprm_check_digest));
	return 0;
fail:
	for (i = 0; i < KW_N_LSM_PROGS; i++) {
		if (pin_dir && !reuse && *lsm_link(skel, &kw_lsm_progs[i]))
			bpf_link__unpin(*lsm_link(skel, &kw_lsm_progs[i]));
		bpf_link__destroy(*lsm_link(skel, &kw_lsm_progs[i]));
		*lsm_link(skel, &kw_lsm_progs[i]) = NULL;
	}
	return err;
}

static bool path_kind_governed(uint8_t kind, uint32_t classes)
{
	switch (kind) {
	case KW_PK_READ:
	case KW_PK_WRITE:
	case KW_PK_DENY:
		return classes & KW_CLASS_FS;
	case KW_PK_EXEC:
		return classes & KW_CLASS_EXEC;
	case KW_PK_UNIX:
		return classes & KW_CLASS_UNIX;
	}
	return false;
}

/* Marks every proper ancestor of an fs.deny path ("/a/b" for "/a/b/c", "/a",
 * "/") with KW_PK_BELOW, so renaming or linking it is refused. */
static int mark_ancestors(int rules_fd, uint32_t slot, const struct kw_path_rule *r)
{
	struct kw_path_key key;
	struct kw_path_val val;
	size_t len = r->len;
	int k;

	if (r->path[0] != '/')
		return 0;
	while (len > 1) {
		while (len > 1 && r->path[len - 1] != '/')
			len--;
		if (len > 1)
			len--; /* drop the slash: "/a/b/" -> "/a/b" */
		memset(&key, 0, sizeof(key));
		key.slot = slot;
		key.len = (uint32_t)len;
		memcpy(key.path, r->path, len);
		if (bpf_map_lookup_elem(rules_fd, &key, &val)) {
			for (k = 0; k < KW_PK_N; k++)
				val.rule[k] = KW_PATH_NONE;
		}
		if (val.rule[KW_PK_BELOW] == KW_PATH_NONE || val.rule[KW_PK_BELOW] > r->index)
			val.rule[KW_PK_BELOW] = r->index;
		if (bpf_map_update_elem(rules_fd, &key, &val, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* The index the kernel reports for exec.allow path p: its first listing. */
static uint16_t exec_rule_of(const struct kw_policy *pol, const struct kw_path_rule *p)
{
	uint16_t first = p->index;
	size_t i;

	for (i = 0; i < pol->n_paths; i++)
		if (pol->paths[i].kind == KW_PK_EXEC && pol->paths[i].index < first &&
		    !strcmp(pol->paths[i].path, p->path))
			first = pol->paths[i].index;
	return first;
}

/* exec.allow digests into kw_exec_digests (layout: kwitness/abi/lsm_map.h). */
static int add_exec_digests(int fd, uint32_t slot, const struct kw_policy *pol)
{
	struct kw_exec_digest_key key;
	uint16_t val;
	size_t i;

	for (i = 0; i < pol->n_exec_digests; i++) {
		memset(&key, 0, sizeof(key));
		key.slot = slot;
		key.rule = KW_EXEC_ANY_PATH;
		memcpy(key.sha256, pol->exec_digests[i].sha256, KW_SHA256_LEN);
		val = pol->exec_digests[i].index;
		/* a digest listed twice: the first listing names it */
		if (bpf_map_update_elem(fd, &key, &val, BPF_NOEXIST) && errno != EEXIST)
			return -errno;
	}
	for (i = 0; i < pol->n_paths; i++) {
		const struct kw_path_rule *r = &pol->paths[i];

		if (r->kind != KW_PK_EXEC || !r->pinned)
			continue;
		memset(&key, 0, sizeof(key));
		key.slot = slot;
		key.rule = exec_rule_of(pol, r);
		key.pinned = 1;
		val = key.rule;
		if (bpf_map_update_elem(fd, &key, &val, BPF_ANY))
			return -errno;
		key.pinned = 0;
		memcpy(key.sha256, r->sha256, KW_SHA256_LEN);
		val = r->index;
		if (bpf_map_update_elem(fd, &key, &val, BPF_NOEXIST) && errno != EEXIST)
			return -errno;
	}
	return 0;
}

int kw_lsm_session_add(struct kwitness_bpf *skel, uint32_t slot, const struct kw_policy *pol)
{
	int rules_fd = bpf_map__fd(skel->maps.kw_path_rules);
	int slots_fd = bpf_map__fd(skel->maps.kw_lsm_slots);
	struct kw_lsm_slot cfg = { 0 };
	struct kw_path_key key;
	struct kw_path_val val;
	size_t i;
	int k, err;

	if (slot >= KW_MAX_SESSIONS)
		return -EINVAL;
	if (rules_fd < 0 || slots_fd < 0)
		return -EBADF;
	cfg.mount_allow = pol->mount_allow;
	cfg.bpf_allow = pol->bpf_allow;
	cfg.signal_outside = pol->signal_outside;
	cfg.exec_digests = (pol->classes & KW_CLASS_EXEC_DIGEST) != 0;
	if (bpf_map_update_elem(slots_fd, &slot, &cfg, BPF_ANY))
		return -errno;

	for (i = 0; i < pol->n_paths; i++) {
		const struct kw_path_rule *r = &pol->paths[i];

		if (r->kind < KW_PK_READ || r->kind >= KW_PK_N || r->len == 0 ||
		    r->len >= KW_PATH_MAX || (r->path[0] != '/' && !kw_path_object_name(r->path)) ||
		    r->index >= 0xfff) {
			err = -EINVAL;
			goto fail;
		}
		if (!path_kind_governed(r->kind, pol->classes))
			continue;
		memset(&key, 0, sizeof(key)); /* the kernel hashes every byte */
		key.slot = slot;
		key.len = r->len;
		memcpy(key.path, r->path, r->len);
		if (bpf_map_lookup_elem(rules_fd, &key, &val)) {
			for (k = 0; k < KW_PK_N; k++)
				val.rule[k] = KW_PATH_NONE;
		}
		/* a path listed twice in one list: the first listing names it */
		if (val.rule[r->kind] == KW_PATH_NONE || val.rule[r->kind] > r->index)
			val.rule[r->kind] = r->index;
		if (bpf_map_update_elem(rules_fd, &key, &val, BPF_ANY)) {
			err = -errno;
			goto fail;
		}
		if (r->kind == KW_PK_DENY) {
			err = mark_ancestors(rules_fd, slot, r);
			if (err)
				goto fail;
		}
	}
	if (pol->classes & KW_CLASS_EXEC) {
		err = add_exec_digests(bpf_map__fd(skel->maps.kw_exec_digests), slot, pol);
		if (err)
			goto fail;
	}
	return 0;
fail:
	kw_lsm_session_remove(skel, slot);
	return err;
}

static int remove_exec_digests(int fd, uint32_t slot)
{
	struct kw_exec_digest_key key, next;
	int err = 0, more;

	if (fd < 0)
		return -EBADF;
	more = bpf_map_get_next_key(fd, NULL, &next) == 0;
	while (more) {
		key = next;
		more = bpf_map_get_next_key(fd, &key, &next) == 0;
		if (key.slot != slot)
			continue;
		if (bpf_map_delete_elem(fd, &key) && errno != ENOENT && !err)
			err = -errno;
	}
	return err;
}

int kw_lsm_session_remove(struct kwitness_bpf *skel, uint32_t slot)
{
	int rules_fd = bpf_map__fd(skel->maps.kw_path_rules);
	int slots_fd = bpf_map__fd(skel->maps.kw_lsm_slots);
	struct kw_lsm_slot cfg = { 0 };
	struct kw_path_key key, next;
	int err = 0, more;

	if (slot >= KW_MAX_SESSIONS)
		return -EINVAL;
	if (rules_fd < 0 || slots_fd < 0)
		return -EBADF;
	if (bpf_map_update_elem(slots_fd, &slot, &cfg, BPF_ANY))
		err = -errno;
	/* walk the keys; deleting the current key restarts from the first one */
	more = bpf_map_get_next_key(rules_fd, NULL, &next) == 0;
	while (more) {
		key = next;
		more = bpf_map_get_next_key(rules_fd, &key, &next) == 0;
		if (key.slot != slot)
			continue;
		if (bpf_map_delete_elem(rules_fd, &key) && errno != ENOENT && !err)
			err = -errno;
	}
	return remove_exec_digests(bpf_map__fd(skel->maps.kw_exec_digests), slot) ?: err;
}
