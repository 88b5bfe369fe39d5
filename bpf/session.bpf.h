/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Finding the session of the current task and recording a decision. Used by
 * every hook, cgroup and LSM alike:
 *
 *	struct kw_ctx c;
 *	if (!kw_session_find(&c, KW_CLASS_X))
 *		return ALLOW;                       // untagged or class not governed
 *	(an LSM hook lets an earlier LSM's refusal stand first:
 *	 if (ret || !kw_session_find(&c, KW_CLASS_X)) return ret;)
 *	permit = <evaluate the rules>;
 *	e = kw_record_decision(&c, KW_EV_X, permit, rule, sizeof(*e), &verdict);
 *	if (e) { <fill the object fields>; kw_event_submit(e); }
 *	return verdict ? ALLOW : DENY;
 */
#ifndef KWITNESS_SESSION_BPF_H
#define KWITNESS_SESSION_BPF_H

#include "base.bpf.h"
#include "maps.bpf.h"

enum { KW_WAKE_DEFAULT = 0, KW_WAKE_FORCE = 1, KW_WAKE_NONE = 2 };
/* Batched wakeups: one decision in this many looks at the ring buffer
 * (a power of two). */
#define KW_WAKE_SAMPLE 16

struct kw_ctx {
	struct kw_session *s;
	__u64 cgroup_id;
	__u32 slot;
};

/* The live session a task's tag names, or -1. */
static __always_inline int kw_tag_slot(struct kw_task_tag *tag)
{
	__u32 *live;

	if (!tag)
		return -1;
	live = bpf_map_lookup_elem(&kw_slot_live, &tag->slot);
	if (!live || !*live || *live != tag->generation)
		return -1;
	return (int)tag->slot;
}

/* 1 when the current task belongs to a live session, whatever it governs
 * (the resolver guard holds for every session task): its cgroup is tagged,
 * or else the task carries the session's tag. Fills c. */
static __always_inline int kw_session_of_task(struct kw_ctx *c)
{
	__u64 task;
	__u32 *slot;
	int tagged;

	c->cgroup_id = bpf_get_current_cgroup_id();
	slot = bpf_map_lookup_elem(&kw_cgroups, &c->cgroup_id);
	if (slot) {
		c->slot = *slot;
	} else {
		task = bpf_get_current_task();
		tagged = kw_tag_slot(bpf_map_lookup_elem(&kw_task_tags, &task));
		if (tagged < 0)
			return 0;
		c->slot = (__u32)tagged;
	}
	c->s = bpf_map_lookup_elem(&kw_sessions, &c->slot);
	return c->s != 0;
}

/* 1 when the current task belongs to a session that governs class_bit: its
 * cgroup is tagged, or else the task carries the session's tag (it left the
 * session's cgroups: a session follows its tasks). Fills c. While no session
 * governs any class of class_bit, a task costs one array read (kw_governed);
 * an untagged one otherwise two hash lookups (cgroup id, task address). */
static __always_inline int kw_session_find(struct kw_ctx *c, __u32 class_bit)
{
	__u32 zero = 0, *governed;

	governed = bpf_map_lookup_elem(&kw_governed, &zero);
	if (!governed || !(*governed & class_bit))
		return 0;
	return kw_session_of_task(c) && (c->s->classes & class_bit) != 0;
}

/* A permit under record: deny: counted, never written. */
static __always_inline void kw_count_unrecorded(struct kw_ctx *c)
{
	__sync_fetch_and_add(&c->s->unrecorded, 1);
}

/* pid (tgid), uid, comm and process start time (the process reference,
 * with pid) of the current task, as bpf_get_current_pid_tgid,
 * bpf_get_current_uid_gid and bpf_get_current_comm give them, read straight
 * from the task: one helper call instead of three. The uid is the kuid, the
 * uid in the initial user namespace, as the helper returns it; comm is copied
 * whole (the kernel keeps it NUL-terminated; the collector reads up to the
 * NUL). Sleepable programs keep the helpers: there task->cred is not read
 * under RCU. sleepable must be a compile-time constant. */
static __always_inline void kw_task_facts(struct kw_event_hdr *h, int sleepable)
{
	if (!sleepable) {
		struct task_struct *t = bpf_get_current_task_btf();

		h->pid = t->tgid;
		h->uid = t->cred->uid.val;
		__builtin_memcpy(h->comm, t->comm, sizeof(h->comm));
		h->start_ns = t->group_leader->start_boottime;
	} else {
		struct task_struct *t = (struct task_struct *)bpf_get_current_task();

		h->pid = bpf_get_current_pid_tgid() >> 32;
		h->uid = (__u32)bpf_get_current_uid_gid();
		bpf_get_current_comm(h->comm, sizeof(h->comm));
		h->start_ns = BPF_CORE_READ(t, group_leader, start_boottime);
	}
}

/* Marks seq as dropped in kw_lost so the collector gives it up at once. The
 * locked OR is a full barrier (x86), after the add that handed seq out. */
static __always_inline void kw_mark_lost(__u32 slot, __u64 seq)
{
	struct kw_lost *l = bpf_map_lookup_elem(&kw_lost, &slot);

	if (l)
		__sync_fetch_and_or(&l->bits[(seq / 64) & (KW_LOST_BITS / 64 - 1)],
				    1ULL << (seq & 63));
}

/* Accounts one decision and reserves its event. *verdict is 1 when the
 * operation may proceed, 0 when it must be refused. Returns the event with its
 * header filled (the caller fills the rest and calls kw_event_submit), or NULL
 * when nothing is to be written: a permit under record: deny (counted in
 * unrecorded) or a failed reservation (counted in dropped; the operation is
 * refused when the policy fails closed). size must be a compile-time constant;
 * so must sleepable, 1 in a sleepable program. */
static __always_inline void *kw_record_decision_in(struct kw_ctx *c, __u16 kind, int permit,
						   __u16 rule, __u64 size, int *verdict,
						   int sleepable)
{
	struct kw_session *s = c->s;
	int enforced = !permit && s->mode != KW_MODE_ADVISORY;
	struct kw_event_hdr *h;
	void *rb;
	__u64 seq;

	*verdict = !enforced;
	if (!permit)
		__sync_fetch_and_add(&s->denials, 1);
	else if (s->record == KW_RECORD_DENY) {
		kw_count_unrecorded(c);
		return NULL;
	}

	/* Number the decision before reserving its event: a decision whose
	 * event cannot be written leaves a gap in the log that the dropped
	 * counter accounts for, so the trailer's dropped count is exactly the
	 * set of missing sequence numbers; kw_lost says which they are. */
	seq = __sync_fetch_and_add(&s->next_seq, 1);
	rb = bpf_map_lookup_elem(&kw_ringbufs, &c->slot);
	h = rb ? bpf_ringbuf_reserve(rb, size, 0) : NULL;
	if (!h) {
		kw_mark_lost(c->slot, seq);
		__sync_fetch_and_add(&s->dropped, 1);
		if (s->on_failure == KW_ONFAIL_DENY)
			*verdict = 0;
		return NULL;
	}
	h->seq = seq;
	h->ts_ns = bpf_ktime_get_boot_ns();
	h->cgroup_id = c->cgroup_id;
	kw_task_facts(h, sleepable);
	h->slot = c->slot;
	h->generation = s->generation;
	h->kind = kind;
	h->rule = rule;
	h->decision = permit ? KW_PERMIT : KW_DENY;
	h->enforced = enforced;
	h->flags = 0;
	/* A wakeup is an interrupt raised on this CPU (a trap to the
	 * hypervisor in a virtual machine): microseconds, per event when the
	 * consumer keeps up. With wakeup_bytes set, wake the consumer only
	 * when the waiting data crossed a multiple of it since the session's
	 * last look: once per wakeup_bytes, not on every event while the
	 * consumer is behind (which made each decision cost ~10 us when it
	 * was). Reading the ring buffer's positions costs ~25 ns (its consumer
	 * position is another CPU's cache line), so only every
	 * KW_WAKE_SAMPLE-th decision of the session looks, and asks whether a
	 * crossing fell within the last KW_WAKE_SAMPLE events' worth of
	 * bytes. The consumer polls with a timeout too, which covers a
	 * crossing this misses (two CPUs' events, sizes that differ), and the
	 * ring buffer holds several crossings (8, as kwitnessd sizes it), so
	 * a miss is not a drop. kw_event_submit reads this mark in wake and
	 * clears it. */
	h->wake = KW_WAKE_DEFAULT;
	if (s->wakeup_bytes) {
		/* KW_WAKE_SAMPLE records' room in the ring (8-byte header,
		 * 8-byte aligned), at most wakeup_bytes: events so large that
		 * the window spans a whole wakeup_bytes wake while that much
		 * waits */
		__u64 window = KW_WAKE_SAMPLE * ((size + 8 + 7) & ~7ULL), avail;

		h->wake = KW_WAKE_NONE;
		if (!(seq & (KW_WAKE_SAMPLE - 1))) {
			if (window > s->wakeup_bytes)
				window = s->wakeup_bytes;
			avail = bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA);
			/* crossed: avail / wakeup_bytes != (avail - window) /
			 * wakeup_bytes, which is avail % wakeup_bytes < window */
			if (avail >= window && avail % s->wakeup_bytes < window)
				h->wake = KW_WAKE_FORCE;
		}
	}
	return h;
}

static __always_inline void *kw_record_decision(struct kw_ctx *c, __u16 kind, int permit,
						__u16 rule, __u64 size, int *verdict)
{
	return kw_record_decision_in(c, kind, permit, rule, size, verdict, 0);
}

/* A decision that could not even be evaluated (no scratch buffer): counted as
 * dropped, and refused when the policy fails closed. */
static __always_inline int kw_fail_closed(struct kw_ctx *c, __u16 kind, int err)
{
	__sync_fetch_and_add(&c->s->dropped, 1);
	return c->s->on_failure == KW_ONFAIL_DENY ? err : 0;
}

static __always_inline void kw_event_submit(void *e)
{
	struct kw_event_hdr *h = e;
	__u8 wake = h->wake;

	h->wake = 0;
	bpf_ringbuf_submit(e, wake == KW_WAKE_FORCE ? BPF_RB_FORCE_WAKEUP :
			      wake == KW_WAKE_NONE ? BPF_RB_NO_WAKEUP : 0);
}

#endif
