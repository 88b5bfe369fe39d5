/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Process lineage: a session process that is forked or runs execve is
 * reported (KW_EV_PROC_FORK, KW_EV_PROC_EXEC) so the collector writes its
 * "proc" entry (docs/decision-log.md, "proc"). Only session tasks get this
 * far: fork is reported from kw_task_fork (cgroup_track.bpf.h), which
 * returns first for an untagged parent; the exec tracepoint returns after
 * the class gate and the session lookup every hook makes. The events are
 * numbered like decisions and written whatever the record mode, so a lost
 * one is a dropped one (the session is incomplete). */
#ifndef KWITNESS_PROC_TRACK_BPF_H
#define KWITNESS_PROC_TRACK_BPF_H

#include "base.bpf.h"
#include "maps.bpf.h"
#include "session.bpf.h"

/* Reserves a numbered lineage event for the session in slot; NULL when lost
 * (counted in dropped, marked in kw_lost). */
static __always_inline struct kw_ev_task *kw_proc_reserve(__u32 slot, struct kw_session *s,
							 __u16 kind)
{
	struct kw_ev_task *e;
	void *rb;
	__u64 seq;

	seq = __sync_fetch_and_add(&s->next_seq, 1);
	rb = bpf_map_lookup_elem(&kw_ringbufs, &slot);
	e = rb ? bpf_ringbuf_reserve(rb, sizeof(*e), 0) : NULL;
	if (!e) {
		kw_mark_lost(slot, seq);
		__sync_fetch_and_add(&s->dropped, 1);
		return NULL;
	}
	e->h.seq = seq;
	e->h.ts_ns = bpf_ktime_get_boot_ns();
	e->h.slot = slot;
	e->h.generation = s->generation;
	e->h.kind = kind;
	e->h.rule = KW_RULE_DEFAULT;
	e->h.decision = KW_PERMIT;
	e->h.enforced = 0;
	e->h.flags = 0;
	e->h.wake = 0;
	e->argv_len = 0;
	e->argv_full = 0;
	e->path_len = 0;
	e->pad = 0;
	return e;
}

/* A new process (child, a thread group leader) forked by a task of the
 * session in slot. Called by kw_task_fork once it tagged the child. */
static __always_inline void kw_proc_fork(__u32 slot, struct task_struct *parent,
					 struct task_struct *child)
{
	struct kw_session *s;
	struct kw_ev_task *e;

	if (BPF_CORE_READ(child, pid) != BPF_CORE_READ(child, tgid))
		return; /* a thread: the same process */
	s = bpf_map_lookup_elem(&kw_sessions, &slot);
	if (!s || !s->classes)
		return;
	e = kw_proc_reserve(slot, s, KW_EV_PROC_FORK);
	if (!e)
		return;
	e->h.cgroup_id = BPF_CORE_READ(child, cgroups, dfl_cgrp, kn, id);
	e->h.pid = BPF_CORE_READ(child, tgid);
	e->h.start_ns = BPF_CORE_READ(child, start_boottime);
	e->h.uid = BPF_CORE_READ(child, cred, uid.val);
	e->gid = BPF_CORE_READ(child, cred, gid.val);
	BPF_CORE_READ_STR_INTO(&e->h.comm, child, comm);
	e->ppid = BPF_CORE_READ(parent, tgid);
	e->parent_start_ns = BPF_CORE_READ(parent, group_leader, start_boottime);
	bpf_ringbuf_submit(e, 0);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(kw_proc_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u32 zero = 0, *governed;
	unsigned long start, end;
	struct kw_ev_task *e;
	struct kw_ctx c;
	__u64 n;
	long len;

	governed = bpf_map_lookup_elem(&kw_governed, &zero);
	if (!governed || !*governed || !kw_session_of_task(&c) || !c.s->classes)
		return 0;
	e = kw_proc_reserve(c.slot, c.s, KW_EV_PROC_EXEC);
	if (!e)
		return 0;
	e->h.cgroup_id = c.cgroup_id;
	kw_task_facts(&e->h, 0);
	e->gid = t->cred->gid.val;
	e->ppid = t->real_parent->tgid;
	e->parent_start_ns = t->real_parent->group_leader->start_boottime;
	len = bpf_probe_read_kernel_str(e->path, sizeof(e->path), BPF_CORE_READ(bprm, filename));
	if (len > 0)
		e->path_len = (__u32)len - 1;
	start = BPF_CORE_READ(t, mm, arg_start);
	end = BPF_CORE_READ(t, mm, arg_end);
	if (end > start) {
		n = end - start;
		e->argv_full = n > 0xffffffffULL ? 0xffffffffU : (__u32)n;
		if (n > KW_ARGV_MAX)
			n = KW_ARGV_MAX;
		/* arg pages were just written by execve: present */
		if (!bpf_probe_read_user(e->argv, n, (void *)start))
			e->argv_len = (__u32)n;
	}
	bpf_ringbuf_submit(e, 0);
	return 0;
}

#endif
