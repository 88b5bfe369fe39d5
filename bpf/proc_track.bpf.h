/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Process lineage: a session process that is forked or runs execve is
 * reported (KW_EV_PROC_FORK, KW_EV_PROC_EXEC) so the collector writes its
 * "proc" entry (docs/decision-log.md, "proc"). Only session tasks get this
 * far: fork is reported from kw_task_fork (cgroup_track.bpf.h), which
 * returns first for an untagged parent; so does the exec tracepoint, both
 * after kw_task_may_be_tagged, which reads the task alone. The events are
 * numbered like decisions and written whatever the record mode, so a lost
 * one is a dropped one (the session is incomplete). */
#ifndef KWITNESS_PROC_TRACK_BPF_H
#define KWITNESS_PROC_TRACK_BPF_H

#include "base.bpf.h"
#include "maps.bpf.h"
#include "session.bpf.h"

/* 1 when a mark may be missing from a session task (kw_unmarked). */
static __always_inline int kw_marks_incomplete(void)
{
	__u32 key = KW_UNMARKED_OPENING, *v;

	v = bpf_map_lookup_elem(&kw_unmarked, &key);
	if (v && *v)
		return 1;
	key = KW_UNMARKED_FAILED;
	v = bpf_map_lookup_elem(&kw_unmarked, &key);
	return v && *v;
}

static __always_inline int kw_task_marked(struct task_struct *task)
{
	return bpf_task_storage_get(&kw_task_marks, task, 0, 0) != 0;
}

/* 0 when task is surely in no session: it has no mark, and every session
 * task has one. The lineage programs run for every fork, exec and free on
 * the host; for a task in no session this is all they do (docs/hooks.md,
 * "A task in no session"). kw_unmarked is read before the mark: a read of
 * [KW_UNMARKED_OPENING] cleared by kwitnessd comes after the marks its task
 * iterator made (kwitnessd clears it after), so none of them is missed by a
 * program that began before the iterator reached its task. */
static __always_inline int kw_task_may_be_tagged(struct task_struct *task)
{
	return kw_marks_incomplete() || kw_task_marked(task);
}

/* The same for task running now (fork's parent, exec's task): also when
 * its thread group leader has a mark. A cgroup.procs write moves the whole
 * thread group but its tracepoint names the leader alone, so only the leader
 * is tagged and marked; its other threads are session tasks by their cgroup.
 * (The leader's task_struct lives as long as any of its threads.) */
static __always_inline int kw_running_may_be_tagged(struct task_struct *task)
{
	struct task_struct *leader = task->group_leader;

	return kw_task_may_be_tagged(task) || (leader != task && kw_task_marked(leader));
}

/* Marks task (see kw_task_marks). A mark that cannot be made (no memory,
 * or another task storage operation on this CPU) makes every untagged
 * test look from then on: set before the tag it stands for is written. */
static __always_inline void kw_mark_task(struct task_struct *task)
{
	__u32 key = KW_UNMARKED_FAILED, *failed;

	if (bpf_task_storage_get(&kw_task_marks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE))
		return;
	failed = bpf_map_lookup_elem(&kw_unmarked, &key);
	if (failed)
		*failed = 1;
}

/* Numbers a lineage event and fills its header's fixed part. */
static __always_inline void kw_proc_header(struct kw_ev_task *e, __u32 slot, struct kw_session *s,
					   __u16 kind)
{
	e->h.seq = __sync_fetch_and_add(&s->next_seq, 1);
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
}

/* A lineage event that could not be written: dropped, like a decision. */
static __always_inline void kw_proc_lost(__u32 slot, struct kw_session *s, __u64 seq)
{
	kw_mark_lost(slot, seq);
	__sync_fetch_and_add(&s->dropped, 1);
}

/* An exec event is built here, then copied into the ring buffer at its
 * size: the path and argv it carries, not their bounds. */
struct kw_ev_task_room {
	struct kw_ev_task t;
	char data[KW_PATH_MAX + KW_ARGV_MAX];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kw_ev_task_room);
} kw_proc_scratch SEC(".maps");

/* A new process (child, a thread group leader) forked by a task of the
 * session in slot. Called by kw_task_fork once it tagged the child. */
static __always_inline void kw_proc_fork(__u32 slot, struct task_struct *parent,
					 struct task_struct *child)
{
	struct kw_session *s;
	struct kw_ev_task *e;
	void *rb;

	if (BPF_CORE_READ(child, pid) != BPF_CORE_READ(child, tgid))
		return; /* a thread: the same process */
	s = bpf_map_lookup_elem(&kw_sessions, &slot);
	if (!s || !s->classes)
		return;
	rb = bpf_map_lookup_elem(&kw_ringbufs, &slot);
	e = rb ? bpf_ringbuf_reserve(rb, sizeof(*e), 0) : NULL;
	if (!e) {
		kw_proc_lost(slot, s, __sync_fetch_and_add(&s->next_seq, 1));
		return;
	}
	kw_proc_header(e, slot, s, KW_EV_PROC_FORK);
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
	__u32 zero = 0, *governed, path_len = 0;
	unsigned long start, end;
	struct kw_ev_task_room *e;
	struct kw_ctx c;
	__u64 n, size;
	void *rb;
	long len;

	if (!kw_running_may_be_tagged(t)) {
		/* an exec by a thread other than the leader (its old tid is
		 * not its pid now): the leader whose mark it went by is gone,
		 * so it looks, and takes a mark when it is a session task */
		if (old_pid == t->pid || !kw_session_of_task(&c))
			return 0;
		kw_mark_task(t);
	}
	governed = bpf_map_lookup_elem(&kw_governed, &zero);
	if (!governed || !*governed || !kw_session_of_task(&c) || !c.s->classes)
		return 0;
	e = bpf_map_lookup_elem(&kw_proc_scratch, &zero);
	if (!e) {
		kw_proc_lost(c.slot, c.s, __sync_fetch_and_add(&c.s->next_seq, 1));
		return 0;
	}
	kw_proc_header(&e->t, c.slot, c.s, KW_EV_PROC_EXEC);
	e->t.h.cgroup_id = c.cgroup_id;
	kw_task_facts(&e->t.h, 0);
	e->t.gid = t->cred->gid.val;
	e->t.ppid = t->real_parent->tgid;
	e->t.parent_start_ns = t->real_parent->group_leader->start_boottime;
	len = bpf_probe_read_kernel_str(e->data, KW_PATH_MAX, BPF_CORE_READ(bprm, filename));
	if (len > 0)
		path_len = ((__u32)len - 1) & (KW_PATH_MAX - 1);
	e->t.path_len = path_len;
	start = BPF_CORE_READ(t, mm, arg_start);
	end = BPF_CORE_READ(t, mm, arg_end);
	if (end > start) {
		n = end - start;
		e->t.argv_full = n > 0xffffffffULL ? 0xffffffffU : (__u32)n;
		if (n > KW_ARGV_MAX)
			n = KW_ARGV_MAX;
		/* arg pages were just written by execve: present */
		if (!bpf_probe_read_user(e->data + path_len, n, (void *)start))
			e->t.argv_len = (__u32)n;
	}
	size = sizeof(e->t) + path_len + e->t.argv_len;
	if (size > sizeof(*e))
		size = sizeof(*e);
	rb = bpf_map_lookup_elem(&kw_ringbufs, &c.slot);
	if (!rb || bpf_ringbuf_output(rb, e, size, 0))
		kw_proc_lost(c.slot, c.s, e->t.h.seq);
	return 0;
}

#endif
