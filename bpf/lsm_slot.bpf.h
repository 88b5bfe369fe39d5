/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Per-session settings of the LSM classes that are not path lists, written by
 * user/bpf/lsm.c (kw_lsm_session_add) beside the session's path rules. */
#ifndef KWITNESS_LSM_SLOT_BPF_H
#define KWITNESS_LSM_SLOT_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KW_MAX_SESSIONS);
	__type(key, __u32);
	__type(value, struct kw_lsm_slot);
} kw_lsm_slots SEC(".maps");

/* A decision that could not even be evaluated (no scratch buffer): counted as
 * dropped, and refused when the policy fails closed. */
static __always_inline int kw_fail_closed(struct kw_ctx *c, __u16 kind, int err)
{
	__sync_fetch_and_add(&c->s->dropped, 1);
	return c->s->on_failure == KW_ONFAIL_DENY ? err : 0;
}

#endif
