/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* sysctl.write (cgroup/sysctl): writes are permitted only when the policy says
 * so; reads are neither governed nor recorded. */
#ifndef KWITNESS_SYSCTL_BPF_H
#define KWITNESS_SYSCTL_BPF_H

#include "base.bpf.h"
#include "session.bpf.h"

SEC("cgroup/sysctl")
int kw_sysctl(struct bpf_sysctl *ctx)
{
	struct kw_ev_sysctl *e;
	struct kw_ctx c;
	int permit, verdict;
	long n;

	if (!ctx->write || !kw_session_find(&c, KW_CLASS_SYSCTL))
		return 1;
	permit = c.s->sysctl_write;

	/* rule 0: the section's one setting, "sysctl.write" */
	e = kw_record_decision(&c, KW_EV_SYSCTL, permit, 0, sizeof(*e), &verdict);
	if (e) {
		e->write = 1;
		n = bpf_sysctl_get_name(ctx, e->name, sizeof(e->name), 0);
		if (n < 0) {
			/* -E2BIG: truncated but NUL-terminated */
			e->h.flags |= KW_EVF_TRUNCATED;
			n = sizeof(e->name) - 1;
		}
		e->name_len = n;
		kw_event_submit(e);
	}
	return verdict;
}

#endif
