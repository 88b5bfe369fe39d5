/* SPDX-License-Identifier: Apache-2.0 */
/* BPF-LSM part of the loader (bpf/lsm_*.bpf.h): loads only the programs of
 * the classes `kwitness probe` finds working (the whole skeleton fails to
 * load if one program does), attaches them, and writes each session's path
 * rules (kw_path_rules) and settings (kw_lsm_slots). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kwitness/abi/lsm_map.h"
#include "kwitness/path_compile.h"
#include "kwitness/probe.h"
#include "kwitness.skel.h"
#include "lsm.h"

struct kw_lsm_prog {
	uint32_t class_bit;
	size_t prog_off; /* offset of the program pointer in skel->progs */
	size_t link_off; /* offset of the link pointer in skel->links */
	const char *hook; /* the LSM hook (kwitness probe checks the kernel has it) */
};

#define CG_(cls, name, type, sec)
#define LSM_(cls, name, hook)                                                       \
	{ KW_CLASS_##cls, offsetof(struct kwitness_bpf, progs.name),                 \
	  offsetof(struct kwitness_bpf, links.name), #hook },
static const struct kw_lsm_prog kw_lsm_progs[] = { KW_CLASS_PROGRAMS(CG_, LSM_) };
#undef CG_
#undef LSM_
#define KW_N_LSM_PROGS (sizeof(kw_lsm_progs) / sizeof(kw_lsm_progs[0]))

static struct bpf_program *lsm_prog(struct kwitness_bpf *skel, const struct kw_lsm_prog *p)
{
	return *(struct bpf_program **)((char *)skel + p->prog_off);
}

static struct bpf_link **lsm_link(struct kwitness_bpf *skel, const struct kw_lsm_prog *p)
{
	return (struct bpf_link **)((char *)skel + p->link_off);
}

void kw_lsm_prepare(struct kwitness_bpf *skel, uint32_t classes)
{
	size_t i;

	for (i = 0; i < KW_N_LSM_PROGS; i++)
		bpf_program__set_autoload(lsm_prog(skel, &kw_lsm_progs[i]),
					  (classes & kw_lsm_progs[i].class_bit) != 0);
}

int kw_lsm_attach(struct kwitness_bpf *skel)
{
	struct bpf_link *link;
	size_t i;
	int err;

	for (i = 0; i < KW_N_LSM_PROGS; i++) {
		struct bpf_program *prog = lsm_prog(skel, &kw_lsm_progs[i]);

		if (!bpf_program__autoload(prog) || *lsm_link(skel, &kw_lsm_progs[i]))
			continue;
		link = bpf_program__attach_lsm(prog);
		if (!link) {
			err = -errno ?: -EINVAL;
			goto fail;
		}
		*lsm_link(skel, &kw_lsm_progs[i]) = link; /* destroyed with the skeleton */
	}
	return 0;
fail:
	for (i = 0; i < KW_N_LSM_PROGS; i++) {
		bpf_link__destroy(*lsm_link(skel, &kw_lsm_progs[i]));
		*lsm_link(skel, &kw_lsm_progs[i]) = NULL;
	}
	return err;
}

int kw_lsm_session_add(struct kwitness_bpf *skel, uint32_t slot, const struct kw_policy *pol)
{
	int rules_fd = bpf_map__fd(skel->maps.kw_path_rules);
	int slots_fd = bpf_map__fd(skel->maps.kw_lsm_slots);
	struct kw_lsm_slot cfg = { 0 };
	struct kw_path_entry *e;
	size_t i, n;
	int err;

	if (slot >= KW_MAX_SESSIONS)
		return -EINVAL;
	if (rules_fd < 0 || slots_fd < 0)
		return -EBADF;
	cfg.mount_allow = pol->mount_allow;
	cfg.signal_outside = pol->signal_outside;
	if (bpf_map_update_elem(slots_fd, &slot, &cfg, BPF_ANY))
		return -errno;
	err = kw_path_compile(pol, slot, &e, &n);
	for (i = 0; !err && i < n; i++)
		if (bpf_map_update_elem(rules_fd, &e[i].key, &e[i].val, BPF_ANY))
			err = -errno;
	free(e);
	if (err)
		kw_lsm_session_remove(skel, slot);
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
	return err;
}
