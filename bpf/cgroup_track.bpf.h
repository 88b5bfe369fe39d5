/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Keeps kw_cgroups in step with the cgroup tree: a cgroup made under a tagged
 * cgroup joins its session, a removed one leaves. Attached globally. Only the
 * cgroup2 (default) hierarchy counts: cgroup ids are per hierarchy, so a v1
 * cgroup may share an id with a tagged v2 one. A session adds at most
 * KW_SESSION_MAX_CGROUPS; a descendant that cannot be tagged (quota, or the
 * table full) is counted in untracked and logged, never silently left out. */
#ifndef KWITNESS_CGROUP_TRACK_BPF_H
#define KWITNESS_CGROUP_TRACK_BPF_H

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

#endif
