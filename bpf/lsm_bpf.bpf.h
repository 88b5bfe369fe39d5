/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* bpf: the bpf(2) system call. Inside a session it is refused unless
 * bpf.allow: a sandboxed root could otherwise load programs, read or change
 * maps (kwitness's own among them, by id) and detach links. */
#ifndef KWITNESS_LSM_BPF_BPF_H
#define KWITNESS_LSM_BPF_BPF_H

#include "base.bpf.h"
#include "maps.bpf.h"
#include "session.bpf.h"
#include "lsm_slot.bpf.h"

static __always_inline int kw_bpf_decide(int cmd)
{
	struct kw_lsm_slot *cfg;
	struct kw_ev_bpf *e;
	struct kw_ctx c;
	int permit, verdict;

	if (!kw_session_find(&c, KW_CLASS_BPF))
		return 0;
	cfg = bpf_map_lookup_elem(&kw_lsm_slots, &c.slot);
	permit = cfg && cfg->bpf_allow;
	e = kw_record_decision(&c, KW_EV_BPF, permit, permit ? 0 : KW_RULE_DEFAULT, sizeof(*e),
			       &verdict);
	if (e) {
		e->cmd = (__u32)cmd;
		e->pad = 0;
		kw_event_submit(e);
	}
	return verdict ? 0 : -EPERM;
}

/* up to 6.15: bpf(cmd, attr, size) */
SEC("lsm/bpf")
int BPF_PROG(kw_lsm_bpf, int cmd, union bpf_attr *attr, unsigned int size, int ret)
{
	if (ret)
		return ret;
	return kw_bpf_decide(cmd);
}

/* from 6.16: bpf(cmd, attr, size, kernel); the kernel's own calls (a light
 * skeleton loading) are no task's decision */
SEC("lsm/bpf")
int BPF_PROG(kw_lsm_bpf_kernel, int cmd, union bpf_attr *attr, unsigned int size, bool kernel,
	     int ret)
{
	if (ret)
		return ret;
	if (kernel)
		return 0;
	return kw_bpf_decide(cmd);
}

#endif
