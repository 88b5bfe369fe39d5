/* SPDX-License-Identifier: Apache-2.0 */
/* The loader's state (struct kw_hooks), shared by its units: load.c opens
 * and attaches, session.c gives sessions their slot, tag.c their members,
 * seq.c their numbers, and one rule writer per class (net.c, dev.c, dns.c,
 * lsm.c) their rules. See user/bpf/hooks.h for the contract. */
#ifndef KWITNESS_USER_BPF_STATE_H
#define KWITNESS_USER_BPF_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kwitness/abi/classes.h"
#include "bpf/hooks.h"
#include "bpf/probe.h"
#include "kwitness.skel.h"

/* The cgroup programs and the class each serves. */
struct kw_cg_prog {
	uint32_t class_bit;
	size_t off; /* offset of the program pointer in skel->progs */
	const char *section;
};

#define KW_N_CG_PROGS KW_PLAN_N_CG
extern const struct kw_cg_prog kw_cg_progs[KW_N_CG_PROGS];

struct kw_slot_state {
	bool used;
	bool tagged;
	int ringbuf_fd;
	size_t ringbuf_size;
};

struct kw_hooks {
	struct kwitness_bpf *skel;
	uint32_t available;
	char why[KW_CLASS_COUNT][KW_PROBE_REASON_MAX];
	struct bpf_link *tp_mkdir, *tp_rmdir;
	struct bpf_link *tp_fork, *tp_attach, *tp_free; /* a session follows its tasks */
	struct bpf_link *tp_exec; /* lineage: exec of session processes (NULL: none) */
	struct bpf_link *root_links[KW_N_CG_PROGS]; /* cgroup programs at the cgroup2 root */
	size_t ringbuf_size;
	uint32_t wakeup_bytes;
	char *pin_dir; /* NULL: nothing is pinned, sessions end with the process */
	struct kw_session *sessions_mm; /* kw_sessions, mapped (kw_hooks_take_seq) */
	size_t sessions_mm_len;
	struct kw_lost *lost_mm; /* kw_lost, mapped (kw_hooks_seq_lost) */
	size_t lost_mm_len;
	struct kw_slot_state slots[KW_MAX_SESSIONS];
	/* the processes the last session add found in its cgroups (tag.c) */
	struct kw_iter_proc *existing;
	size_t n_existing;
	uint32_t existing_slot;
};

static inline struct bpf_program *kw_cg_program(const struct kw_hooks *h,
						 const struct kw_cg_prog *p)
{
	return *(struct bpf_program **)((char *)h->skel + p->off);
}

/* kw_governed, the class gate (session.c): recomputed from every slot's
 * classes. 0 or -errno. */
int kw_hooks_update_gate(struct kw_hooks *h);

#endif
