// SPDX-License-Identifier: Apache-2.0
/* Kernel decision events -> canonical decision-log entries (docs/policy.md,
 * docs/decision-log.md): the members every entry has, then the kind's own
 * (its formatter in event_format.c, by KW_EVENT_TABLE). Events come from the
 * kernel but are still treated as bytes: sizes are checked, strings are
 * bounded and written lossy. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "collector/decision.h"
#include "collector/entry.h"
#include "collector/event_format.h"
#include "collector/proc_entry.h"
#include "kwitness/abi/event.h"
#include "jcs/jcs.h"
#include "policy/policy.h"

int kw_event_seq(const void *data, size_t size, uint64_t *seq)
{
	const struct kw_event_hdr *h = data;

	if (!data || size < sizeof(*h))
		return -EINVAL;
	memcpy(seq, &h->seq, sizeof(*seq));
	return 0;
}

int kw_event_to_entry(const void *data, size_t size, int64_t boot_to_realtime_ns,
		      struct kw_buf *out)
{
	return kw_event_to_entry_via(data, size, boot_to_realtime_ns, NULL, out);
}

int kw_event_to_entry_via(const void *data, size_t size, int64_t boot_to_realtime_ns,
			  const char *via, struct kw_buf *out)
{
	const struct kw_event_format *f;
	struct kw_event_hdr h;
	struct entry ent, *e = &ent;
	size_t start;
	int64_t real_ns;
	char rule[48], ref[KW_PROC_REF_MAX];
	int ret = 0;

	if (!data || !out || size < sizeof(h))
		return -EINVAL;
	start = out->len;
	memcpy(&h, data, sizeof(h));
	if (kw_is_proc_kind(h.kind)) {
		struct kw_proc_facts pf;

		ret = kw_proc_event_facts(data, size, boot_to_realtime_ns, &pf);
		return ret ? ret : kw_proc_facts_entry(&pf, out);
	}
	/* seq counts decisions and ts is microseconds: both stay far below
	 * 2^53 (centuries of decisions, the year 2255); more means a corrupt
	 * event, not a value to write. */
	if (h.seq > (uint64_t)JCS_MAX_SAFE_INT || h.ts_ns > (uint64_t)INT64_MAX ||
	    __builtin_add_overflow((int64_t)h.ts_ns, boot_to_realtime_ns, &real_ns))
		return -EINVAL;
	e->present = 0;
	e->room = 0;
	e->err = 0;
	e->n_scratch = 0;

	/* common members */
	add_id(e, M_CGROUP, h.cgroup_id);
	add_lossy(e, M_COMM, h.comm, strnlen(h.comm, sizeof(h.comm)));
	add_plain(e, M_DECISION, h.decision == KW_PERMIT ? "permit" : "deny");
	add_bool(e, M_ENFORCED, h.decision != KW_PERMIT && h.enforced);
	add_int(e, M_PID, h.pid);
	if (h.start_ns)
		add_plainn(e, M_PROC, ref, kw_proc_ref(ref, h.pid, h.start_ns));
	add_plain(e, M_RULE, kw_rule_name(h.kind, h.rule, rule, sizeof(rule)));
	add_int(e, M_SEQ, (int64_t)h.seq);
	add_int(e, M_TS, real_ns / 1000);
	add_int(e, M_UID, h.uid);

	/* the kind's own members (KW_EVENT_TABLE) */
	f = h.kind < KW_EV_LIMIT ? &kw_event_formats[h.kind] : NULL;
	if (!f || !f->format || size < f->record_size)
		ret = -EINVAL;
	else
		ret = f->format(e, &h, data, f, via);
	if (!ret)
		ret = kw_entry_emit(e, out);
	if (ret && out->len > start) {
		/* a member the emitter refused: no half entry stays behind */
		out->len = start;
		out->data[start] = '\0';
	}
	return ret == -EILSEQ ? -EINVAL : ret;
}
