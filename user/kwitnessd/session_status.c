/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness status and list: the sessions a client may see, the hooks, the
 * spool. */
#include <stdio.h>
#include <string.h>

#include "bpf/hooks.h"
#include "dns_proxy.h"
#include "checkpoint_tlog.h"
#include "kwd.h"
#include "session.h"
#include "publisher.h"
#include "spool.h"
#include "worker.h"

/* ---- status ------------------------------------------------------------- */

void kwd_class_names(uint32_t mask, struct kw_buf *out)
{
	for (unsigned b = 0; b < KW_CLASS_COUNT; b++) {
		if (!(mask & (1u << b)))
			continue;
		if (out->len)
			kw_buf_putc(out, ',');
		kw_buf_puts(out, kw_class_name(1u << b) ? kw_class_name(1u << b) : "?");
	}
	if (!out->data)
		kw_buf_puts(out, "");
}

json_t *kwd_status(struct kwd *d, bool sessions_only, const struct kwd_peer *peer)
{
	json_t *list = json_array(), *reply;
	uint32_t avail;

	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
		struct kwd_session *s = d->slots[i];
		struct kw_session c = { 0 };
		struct kw_buf hooks = { 0 };

		if (!s || !kwd_authz_session(peer, s->owner))
			continue;
		kw_hooks_session_counters(d->hooks, s->slot, &c);
		kwd_class_names(s->pol->classes, &hooks);
		json_array_append_new(
			list,
			json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:s, s:s, s:I, s:I, s:I, s:I, "
				  "s:I, s:I, s:I, s:I, s:I, s:I}",
				  KW_F_SESSION, s->id, KW_F_SANDBOX_ID, s->sandbox_id, KW_F_CGROUP,
				  s->cgroup_path, KW_F_SLOT, (json_int_t)s->slot, KW_F_OPENED_US,
				  (json_int_t)s->opened_us, KW_F_MODE, kw_mode_name(s->pol->mode),
				  KW_F_HOOKS, hooks.data ? hooks.data : "", KW_F_STATE,
				  s->state == KWD_S_OPEN ? "open" : "closing", KW_F_DECISIONS,
				  (json_int_t)s->decisions, KW_F_DENIALS, (json_int_t)s->denials,
				  KW_F_DROPPED, (json_int_t)c.dropped, KW_F_UNRECORDED,
				  (json_int_t)c.unrecorded, KW_F_NEXT_SEQ, (json_int_t)c.next_seq,
				  KW_F_PENDING, (json_int_t)s->ro.pending, KW_F_GAPS_MARKED,
				  (json_int_t)s->skipped_marked, KW_F_GAPS_UNMARKED,
				  (json_int_t)(s->skipped - s->skipped_marked), KW_F_LOG_BYTES,
				  (json_int_t)(s->log.bytes + s->log.out.len), KW_F_RINGBUF_SIZE,
				  (json_int_t)s->ring.size));
		json_object_set_new(json_array_get(list, json_array_size(list) - 1),
				    KW_F_RINGBUF_USED,
				    json_integer((json_int_t)kwd_ring_used(&s->ring)));
		if (s->dns)
			json_object_set_new(json_array_get(list, json_array_size(list) - 1), KW_F_DNS,
					    kwd_dns_status(s->dns));
		kw_buf_free(&hooks);
	}
	if (sessions_only)
		return json_pack("{s:b, s:o}", KW_F_OK, 1, KW_F_SESSIONS, list);
	avail = kw_hooks_available(d->hooks);
	{
		json_t *a = json_array(), *u = json_array();

		for (unsigned b = 0; b < KW_CLASS_COUNT; b++) {
			const char *name = kw_class_name(1u << b);

			if (!name)
				continue;
			if (avail & (1u << b)) {
				json_array_append_new(a, json_string(name));
			} else {
				const char *r = kw_hooks_unavailable_reason(d->hooks, 1u << b);

				json_array_append_new(u, json_pack("{s:s, s:s}", KW_F_CLASS, name,
								   KW_F_REASON, r ? r : "not loaded"));
			}
		}
		reply = json_pack("{s:b, s:o, s:o, s:o, s:s, s:s, s:I, s:s}", KW_F_OK, 1, KW_F_SESSIONS,
				  list, KW_F_HOOKS_AVAILABLE, a, KW_F_HOOKS_UNAVAILABLE, u, KW_F_PROGRAMS,
				  d->programs ? d->programs : "", KW_F_STATE_DIR, d->cfg.state_dir,
				  KW_F_RINGBUF_SIZE, (json_int_t)d->cfg.ringbuf_size, KW_F_KERNEL,
				  d->host.kernel);
	}
	if (reply) {
		json_t *spool = kwd_spool_status(d), *tlog = kwd_publisher_status(d);
		json_t *ckpt, *backlog = kwd_worker_backlog_status(d);

		if (spool)
			json_object_set_new(reply, KW_F_ESTATE, spool);
		if (tlog && (ckpt = kwd_ckpt_tlog_status(d)))
			json_object_set_new(tlog, "checkpoints", ckpt);
		if (tlog)
			json_object_set_new(reply, KW_F_TRANSPARENCY, tlog);
		if (backlog)
			json_object_set_new(reply, "log_backlog", backlog);
		json_object_set_new(reply, KW_F_QUOTA,
				    json_pack("{s:I, s:I}", "max_sessions_per_user",
					      (json_int_t)d->cfg.user_sessions_max,
					      "root_reserved_sessions",
					      (json_int_t)d->cfg.root_reserved_sessions));
	}
	return reply;
}
