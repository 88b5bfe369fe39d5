/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* dev.allow (cgroup/dev): the most specific device rule decides; lookup order
 * exact (major, minor), then (major, any), then (any, any). */
#ifndef KWITNESS_DEV_BPF_H
#define KWITNESS_DEV_BPF_H

#include "base.bpf.h"
#include "maps.bpf.h"
#include "session.bpf.h"

/* Device rules: (slot, type, major|any, minor|any) -> allowed access. */
KW_SPARSE_MAP(BPF_MAP_TYPE_HASH, 65536, struct kw_dev_key, struct kw_dev_rule)
kw_dev_rules SEC(".maps");

SEC("cgroup/dev")
int kw_dev(struct bpf_cgroup_dev_ctx *ctx)
{
	__u32 type = ctx->access_type & 0xffff, access = ctx->access_type >> 16;
	struct kw_dev_key key = {};
	struct kw_dev_rule *r;
	__u16 rule = KW_RULE_DEFAULT;
	struct kw_ev_dev *e;
	struct kw_ctx c;
	int permit = 0, verdict;

	if (!kw_session_find(&c, KW_CLASS_DEV))
		return 1;

	key.slot = c.slot;
	key.type = type;
	key.major = ctx->major;
	key.minor = ctx->minor;
	r = bpf_map_lookup_elem(&kw_dev_rules, &key);
	if (!r) {
		key.minor = KW_DEV_ANY;
		r = bpf_map_lookup_elem(&kw_dev_rules, &key);
	}
	if (!r) {
		key.major = KW_DEV_ANY;
		r = bpf_map_lookup_elem(&kw_dev_rules, &key);
	}
	if (r) {
		rule = r->rule;
		permit = (access & ~r->access) == 0;
	}

	e = kw_record_decision(&c, KW_EV_DEV, permit, rule, sizeof(*e), &verdict);
	if (e) {
		e->type = type;
		e->major = ctx->major;
		e->minor = ctx->minor;
		e->access = access;
		kw_event_submit(e);
	}
	return verdict;
}

#endif
