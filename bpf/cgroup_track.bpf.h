/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Keeps kw_cgroups in step with the cgroup tree: a cgroup made under a tagged
 * cgroup joins its session, a removed one leaves. Attached globally. Only the
 * cgroup2 (default) hierarchy counts: cgroup ids are per hierarchy, so a v1
 * cgroup may share an id with a tagged v2 one. A session adds at most
 * KW_SESSION_MAX_CGROUPS; a descendant that cannot be tagged (quota, or the
 * table full) is counted in untracked and logged, never silently left out. */
#ifndef KWITNESS_CGROUP_TRACK_BPF_H
#define KWITNESS_CGROUP_TRACK_BPF_H

#include "base.bpf.h"
#include "maps.bpf.h"
#include "session.bpf.h"
#include "proc_track.bpf.h"

/* hierarchy_id of the cgroup2 root (cgrp_dfl_root); v1 hierarchies count from 1.
 * Checked on the hybrid test host by tests/kernel/test_hooks_direct.sh. */
#define KW_DFL_HIERARCHY_ID 0

static __always_inline int kw_cgroup_is_v2(struct cgroup *cgrp)
{
	return BPF_CORE_READ(cgrp, root, hierarchy_id) == KW_DFL_HIERARCHY_ID;
}

/* Logs an untracked descendant in the session's ring buffer, numbered like a
 * decision (a lost event is a dropped one). Always recorded, whatever the
 * record mode: it makes the session incomplete. */
static __always_inline void kw_log_untracked(struct kw_session *sess, __u32 slot, __u64 parent_id,
					     __u64 id, __u16 why)
{
	struct kw_ev_cgroup *e;
	void *rb;
	__u64 seq;

	__sync_fetch_and_add(&sess->untracked, 1);
	seq = __sync_fetch_and_add(&sess->next_seq, 1);
	rb = bpf_map_lookup_elem(&kw_ringbufs, &slot);
	e = rb ? bpf_ringbuf_reserve(rb, sizeof(*e), 0) : NULL;
	if (!e) {
		__sync_fetch_and_add(&sess->dropped, 1);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->h.seq = seq;
	e->h.ts_ns = bpf_ktime_get_boot_ns();
	e->h.cgroup_id = parent_id;
	e->h.pid = bpf_get_current_pid_tgid() >> 32;
	e->h.uid = (__u32)bpf_get_current_uid_gid();
	e->h.slot = slot;
	e->h.generation = sess->generation;
	e->h.kind = KW_EV_CGROUP_UNTRACKED;
	e->h.rule = why;
	e->h.decision = KW_DENY;
	bpf_get_current_comm(e->h.comm, sizeof(e->h.comm));
	e->h.start_ns = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), group_leader,
				      start_boottime);
	e->child_cgroup = id;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(kw_cgroup_mkdir, struct cgroup *cgrp, const char *path)
{
	struct cgroup_subsys_state *parent_css;
	struct kw_session *sess;
	struct cgroup *parent;
	__u64 id, parent_id;
	__u32 *slot, s;

	if (!kw_cgroup_is_v2(cgrp))
		return 0;
	parent_css = BPF_CORE_READ(cgrp, self.parent);
	if (!parent_css)
		return 0;
	/* self is the first member of struct cgroup */
	parent = container_of(parent_css, struct cgroup, self);
	parent_id = BPF_CORE_READ(parent, kn, id);
	slot = bpf_map_lookup_elem(&kw_cgroups, &parent_id);
	if (!slot)
		return 0;
	s = *slot;
	id = BPF_CORE_READ(cgrp, kn, id);
	sess = bpf_map_lookup_elem(&kw_sessions, &s);
	if (!sess)
		return 0;
	if (__sync_fetch_and_add(&sess->cgroups, 1) >= KW_SESSION_MAX_CGROUPS) {
		__sync_fetch_and_add(&sess->cgroups, -1);
		kw_log_untracked(sess, s, parent_id, id, KW_UNTRACKED_QUOTA);
		return 0;
	}
	if (bpf_map_update_elem(&kw_cgroups, &id, &s, BPF_ANY)) {
		__sync_fetch_and_add(&sess->cgroups, -1);
		kw_log_untracked(sess, s, parent_id, id, KW_UNTRACKED_MAP_FULL);
	}
	return 0;
}

SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(kw_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	__u32 *slot, s;
	__u64 id;

	if (!kw_cgroup_is_v2(cgrp))
		return 0;
	id = BPF_CORE_READ(cgrp, kn, id);
	slot = bpf_map_lookup_elem(&kw_cgroups, &id);
	if (!slot)
		return 0;
	s = *slot;
	if (bpf_map_delete_elem(&kw_cgroups, &id) == 0) {
		struct kw_session *sess = bpf_map_lookup_elem(&kw_sessions, &s);

		if (sess)
			__sync_fetch_and_add(&sess->cgroups, -1);
	}
	return 0;
}

/* ---- A session follows its tasks ----
 * Membership by cgroup alone ends when a task writes its pid into another
 * cgroup's cgroup.procs or is cloned into one (clone3 CLONE_INTO_CGROUP). So
 * every session task also carries a tag (kw_task_tags): set when it joins a
 * tagged cgroup, inherited at fork, and given by kw_tag_existing at open.
 * kw_session_find falls back to it, and the cgroup programs are attached at
 * the cgroup2 root, so a tagged task is decided wherever it goes. Leaving the session's cgroups is recorded
 * (KW_EV_CGROUP_MOVE). */

static __always_inline __u64 kw_task_cgroup_id(struct task_struct *t)
{
	return BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
}

static __always_inline struct kw_task_tag *kw_task_tag_of(struct task_struct *task)
{
	__u64 key = (__u64)task;

	return bpf_map_lookup_elem(&kw_task_tags, &key);
}

/* Tags task with the session in slot (its current generation); a thread
 * group leader also by tgid. */
static __always_inline void kw_tag_task(struct task_struct *task, __u32 slot)
{
	struct kw_session *s = bpf_map_lookup_elem(&kw_sessions, &slot);
	struct kw_task_tag t = { .slot = slot };
	__u64 key = (__u64)task;
	__u32 tgid;

	if (!s)
		return;
	t.generation = s->generation;
	kw_mark_task(task);
	bpf_map_update_elem(&kw_task_tags, &key, &t, BPF_ANY);
	tgid = BPF_CORE_READ(task, tgid);
	if (tgid == BPF_CORE_READ(task, pid))
		bpf_map_update_elem(&kw_tgid_tags, &tgid, &t, BPF_ANY);
}

/* Records that a session task (target) now runs in cgroup dst outside the
 * session's cgroups. The decision is a permit: the move happened and the
 * session keeps deciding for the task there. */
static __always_inline void kw_record_move(__u32 slot, __u32 target_pid, __u64 dst, __u32 how)
{
	struct kw_ev_proc *e;
	struct kw_ctx c;
	int verdict;

	c.slot = slot;
	c.s = bpf_map_lookup_elem(&kw_sessions, &c.slot);
	if (!c.s || !c.s->classes)
		return;
	c.cgroup_id = dst;
	e = kw_record_decision(&c, KW_EV_CGROUP_MOVE, 1, KW_RULE_DEFAULT, sizeof(*e), &verdict);
	if (e) {
		e->target_pid = target_pid;
		e->sig_or_mode = how;
		e->target_cgroup = dst;
		kw_event_submit(e);
	}
}

/* A child of a task in no session: clone3(CLONE_INTO_CGROUP) may still
 * start it in a session's cgroup. It joins that session there, as a task
 * written into the cgroup's cgroup.procs does (kw_task_attach): tagged and
 * marked, so it is followed should it leave, and its own exec and fork look. */
static __always_inline void kw_fork_outside(struct task_struct *parent, struct task_struct *child)
{
	__u64 ccg;
	__u32 *slot;

	if (child->cgroups == parent->cgroups)
		return;
	ccg = kw_task_cgroup_id(child);
	slot = bpf_map_lookup_elem(&kw_cgroups, &ccg);
	if (slot)
		kw_tag_task(child, *slot);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(kw_task_fork, struct task_struct *parent, struct task_struct *child)
{
	__u64 pcg, ccg;
	__u32 *slot, *cslot;
	int s;

	if (!kw_running_may_be_tagged(parent)) {
		kw_fork_outside(parent, child);
		return 0;
	}
	pcg = bpf_get_current_cgroup_id();
	slot = bpf_map_lookup_elem(&kw_cgroups, &pcg);
	if (slot)
		s = (int)*slot;
	else
		s = kw_tag_slot(kw_task_tag_of(parent));
	if (s < 0) {
		kw_fork_outside(parent, child);
		return 0;
	}
	kw_tag_task(child, (__u32)s);
	kw_proc_fork((__u32)s, parent, child);
	/* clone3(CLONE_INTO_CGROUP) puts the child elsewhere from the start */
	ccg = kw_task_cgroup_id(child);
	if (ccg == pcg)
		return 0;
	cslot = bpf_map_lookup_elem(&kw_cgroups, &ccg);
	if (!cslot || *cslot != (__u32)s)
		kw_record_move((__u32)s, BPF_CORE_READ(child, tgid), ccg, KW_MOVE_CLONE_INTO);
	return 0;
}

SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(kw_task_attach, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	__u64 dst_id;
	__u32 *slot;
	int s;

	if (!kw_cgroup_is_v2(dst))
		return 0;
	dst_id = BPF_CORE_READ(dst, kn, id);
	slot = bpf_map_lookup_elem(&kw_cgroups, &dst_id);
	s = kw_tag_slot(kw_task_tag_of(task));
	if (slot) {
		/* joining a session's cgroup: the task is that session's now */
		if (s != (int)*slot)
			kw_tag_task(task, *slot);
		return 0;
	}
	if (s >= 0)
		kw_record_move((__u32)s, BPF_CORE_READ(task, tgid), dst_id, KW_MOVE_PROCS);
	return 0;
}

/* A freed task's address may hold the next task: its tag goes first. A
 * task with no mark has none (a missed delete costs microseconds). */
SEC("tp_btf/sched_process_free")
int BPF_PROG(kw_task_free, struct task_struct *task)
{
	__u64 key = (__u64)task;
	__u32 tgid;

	if (!kw_task_may_be_tagged(task))
		return 0;
	if (bpf_map_delete_elem(&kw_task_tags, &key))
		return 0; /* it had no tag */
	tgid = BPF_CORE_READ(task, tgid);
	if (tgid == BPF_CORE_READ(task, pid))
		bpf_map_delete_elem(&kw_tgid_tags, &tgid);
	return 0;
}

/* Run once per session open (a task iterator read by kwitnessd): tags every
 * task, threads included, already in a tagged cgroup, so none that was there
 * before the session opened can leave unseen. */
SEC("iter/task")
int kw_tag_existing(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	__u64 cg;
	__u32 *slot;

	if (!task)
		return 0;
	cg = kw_task_cgroup_id(task);
	slot = bpf_map_lookup_elem(&kw_cgroups, &cg);
	if (!slot || kw_tag_slot(kw_task_tag_of(task)) == (int)*slot)
		return 0;
	kw_tag_task(task, *slot);
	/* a process (not a thread) found there: the collector lists it */
	if (BPF_CORE_READ(task, pid) == BPF_CORE_READ(task, tgid)) {
		struct kw_iter_proc p = { 0 };

		p.start_ns = BPF_CORE_READ(task, start_boottime);
		p.parent_start_ns = BPF_CORE_READ(task, real_parent, group_leader, start_boottime);
		p.cgroup_id = cg;
		p.slot = *slot;
		p.pid = BPF_CORE_READ(task, tgid);
		p.ppid = BPF_CORE_READ(task, real_parent, tgid);
		p.uid = BPF_CORE_READ(task, cred, uid.val);
		p.gid = BPF_CORE_READ(task, cred, gid.val);
		BPF_CORE_READ_STR_INTO(&p.comm, task, comm);
		bpf_seq_write(ctx->meta->seq, &p, sizeof(p));
	}
	return 0;
}

#endif
