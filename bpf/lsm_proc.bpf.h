/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* proc (BPF-LSM task_kill, ptrace_access_check): a session may signal and
 * trace only its own processes - the target's cgroup maps to the same slot -
 * unless proc.signal_outside. */
#ifndef KWITNESS_LSM_PROC_BPF_H
#define KWITNESS_LSM_PROC_BPF_H

#include "session.bpf.h"

#define KW_PTRACE_MODE_NOAUDIT 0x04

/* Records a process decision; returns the hook's verdict. */
static __always_inline int kw_proc_decide(struct task_struct *target, __u16 kind, __u32 sig_or_mode)
{
	struct kw_lsm_slot *cfg;
	struct kw_ev_proc *e;
	struct kw_ctx c;
	__u64 target_cg;
	__u32 *tslot;
	__u16 rule = KW_RULE_DEFAULT;
	int permit, verdict;

	if (!kw_session_find(&c, KW_CLASS_PROC))
		return 0;
	target_cg = BPF_CORE_READ(target, cgroups, dfl_cgrp, kn, id);
	tslot = bpf_map_lookup_elem(&kw_cgroups, &target_cg);
	permit = tslot && *tslot == c.slot;
	if (!permit) {
		cfg = bpf_map_lookup_elem(&kw_lsm_slots, &c.slot);
		if (cfg && cfg->signal_outside) {
			permit = 1;
			rule = 0; /* "proc.signal_outside" */
		}
	}
	e = kw_record_decision(&c, kind, permit, rule, sizeof(*e), &verdict);
	if (e) {
		e->target_pid = BPF_CORE_READ(target, tgid);
		e->sig_or_mode = sig_or_mode;
		e->target_cgroup = target_cg;
		kw_event_submit(e);
	}
	return verdict ? 0 : -EPERM;
}

SEC("lsm/task_kill")
int BPF_PROG(kw_lsm_task_kill, struct task_struct *p, struct kernel_siginfo *info, int sig,
	     const struct cred *cred, int ret)
{
	if (ret)
		return ret;
	return kw_proc_decide(p, KW_EV_PROC_KILL, (__u32)sig);
}

SEC("lsm/ptrace_access_check")
int BPF_PROG(kw_lsm_ptrace, struct task_struct *child, unsigned int mode, int ret)
{
	if (ret)
		return ret;
	/* NOAUDIT checks are the kernel asking quietly (e.g. for /proc listings);
	 * they gate no tracing of their own and are not decisions to record */
	if (mode & KW_PTRACE_MODE_NOAUDIT)
		return 0;
	return kw_proc_decide(child, KW_EV_PROC_PTRACE, mode);
}

#endif
