/* SPDX-License-Identifier: Apache-2.0 */
/* Sessions, consumed: a session's ring buffer read into its reorder window,
 * events emitted in sequence order into its decision log, gaps given up,
 * quiet logs flushed on the tick; and a session's memory made and freed.
 * The other phases: session_open.c, session_close.c, session_status.c. A
 * session lives in one slot of the kernel's session table. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <syslog.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <linux/magic.h>

#include "collector/decision.h"
#include "collector/proc_entry.h"
#include "bpf/hooks.h"
#include "checkpoint.h"
#include "dns_proxy.h"
#include "fanout.h"
#include "kwd.h"
#include "lineage.h"
#include "session.h"
#include "util.h"
#include "wakeup.h"
#include "metrics.h"

void kwd_session_free(struct kwd_session *s)
{
	if (!s)
		return;
	kwd_commit_release(s->d, s);
	if (s->ring_fd >= 0)
		epoll_ctl(s->d->epfd, EPOLL_CTL_DEL, s->ring_fd, NULL);
	kwd_ring_unmap(&s->ring);
	kwd_dns_free(s->dns);
	s->dns = NULL;
	kw_reorder_free(&s->ro);
	kwd_lineage_free(s->lineage);
	kwd_ckpt_free(s->ckpt);
	kw_logwriter_abort(&s->log);
	if (s->cgroup_fd >= 0)
		close(s->cgroup_fd);
	kw_policy_free(s->pol);
	free(s->sandbox_id);
	free(s->image_digest);
	free(s->cgroup_path);
	free(s->cgroup_rel);
	free(s->bundle);
	free(s->model_provider);
	free(s->model_id);
	free(s->data_class);
	json_decref(s->record_evidence);
	for (int i = 0; i < KW_WL_N; i++)
		free(s->workload[i]);
	free(s->log_path);
	free(s->policy_path);
	free(s->record_path);
	json_decref(s->seal.record);
	free(s);
}

/* ---- consuming decisions ---------------------------------------------- */

static void maybe_skip_gap(struct kwd_session *s, int64_t now);

/* Reorder window output: one event in sequence order, into the log. */
static int emit_event(void *ctx, const void *data, size_t len)
{
	struct kwd_session *s = ctx;
	const struct kw_event_hdr *h = data;
	const struct kw_ev_net *net = data;
	int e;

	/* its line goes into the log buffer now: once that is written, the
	 * ring buffer may let go of every record numbered below */
	if (h->seq + 1 > s->emitted_below)
		s->emitted_below = h->seq + 1;
	if (h->kind == KWD_EV_COLLECTOR || h->kind == KWD_EV_COLLECTOR_PROC)
		e = kw_logwriter_append(&s->log, (const char *)(h + 1), len - sizeof(*h));
	else if (kw_is_proc_kind(h->kind))
		e = kwd_lineage_write(s, data, len);
	else if (kwd_lineage_decision(s, data, len), (h->flags & KW_EVF_VIA) && len >= sizeof(*net))
		e = kw_logwriter_event_via(&s->log, data, len, s->d->boot_to_realtime_ns,
					   kwd_dns_via_name(s->dns, net->via_seq));
	else
		e = kw_logwriter_event(&s->log, data, len, s->d->boot_to_realtime_ns);
	if (e == -EINVAL) {
		s->bad_events++;
		return 0;
	}
	if (e)
		return e;
	if (h->kind == KWD_EV_COLLECTOR_PROC || kw_is_proc_kind(h->kind))
		return 0; /* numbered, not a decision */
	s->decisions++;
	if (h->decision == KW_DENY)
		s->denials++;
	kwd_metrics_decision(h->kind, h->decision == KW_DENY);
	return 0;
}

/* The programs stamp each event with its session's slot and the slot's
 * generation, and write it to that session's ring buffer: one that names
 * another session (a slot reused, a corrupt record) is not believed. */
static bool event_is_ours(const struct kwd_session *s, const void *data)
{
	struct kw_event_hdr h;

	memcpy(&h, data, sizeof(h));
	return h.slot == s->slot && h.generation == s->generation;
}

/* Numbers given up without the kernel's word for each (the gap too old, an
 * event too far ahead) lose their kw_lost marks too: a mark left behind could
 * pass for a later number's. */
static void forget_given_up(struct kwd_session *s, uint64_t from)
{
	kw_hooks_lost_forget(s->d->hooks, s->slot, from, s->ro.next);
}

static void jump_to(struct kwd_session *s, uint64_t seq)
{
	uint64_t from = s->ro.next;

	s->skipped += kw_reorder_jump(&s->ro, seq);
	forget_given_up(s, from);
}

static void ring_sample(void *ctx, const void *data, size_t size)
{
	struct kwd_session *s = ctx;
	uint64_t seq;
	int e;

	if (kw_event_seq(data, size, &seq) < 0 || size < sizeof(struct kw_event_hdr)) {
		/* Its number never arrives: the trailer counts it as a gap. */
		kwd_log(s->d, LOG_ERR, "session %s: a ring buffer record of %zu bytes has no header",
			s->id, size);
		return;
	}
	if (((const struct kw_event_hdr *)data)->kind >= KWD_EV_COLLECTOR) {
		/* no program writes those kinds: a record that claims it is not believed */
		s->bad_events++;
		return;
	}
	if (!event_is_ours(s, data)) {
		kwd_log(s->d, LOG_ERR, "session %s: event %llu names another session", s->id,
			(unsigned long long)seq);
		s->bad_events++;
		return;
	}
	if (seq < s->resume_floor) {
		/* read again after a restart: its line is already in the log */
		s->duplicates++;
		return;
	}
	e = kw_reorder_push(&s->ro, seq, data, size);
	if (e == -ENOSPC) {
		/* Far ahead of the window: what is missing before it is given up
		 * (the trailer counts it; nothing after it is held back). */
		jump_to(s, seq);
		e = kw_reorder_push(&s->ro, seq, data, size);
	}
	if (e) {
		s->bad_events++;
		kwd_log(s->d, LOG_ERR, "session %s: event %llu lost in the collector: %s", s->id,
			(unsigned long long)seq, strerror(-e));
	}
}

void kwd_session_read_ring(struct kwd_session *s)
{
	kwd_ring_read(&s->ring, ring_sample, s);
	kwd_lineage_flush(s);
}

/* kwd_dns_env.emit: an entry the collector writes itself (dns.query) under
 * a sequence number it took from the session's kernel counter goes through
 * the reorder window like a kernel record. */
int kwd_session_push_collector(struct kwd_session *s, const struct kw_event_hdr *h,
			       const char *line, size_t len)
{
	char *rec = malloc(sizeof(*h) + len);
	int e;

	if (!rec)
		return -ENOMEM;
	memcpy(rec, h, sizeof(*h));
	memcpy(rec + sizeof(*h), line, len);
	e = kw_reorder_push(&s->ro, h->seq, rec, sizeof(*h) + len);
	if (e == -ENOSPC) {
		jump_to(s, h->seq);
		e = kw_reorder_push(&s->ro, h->seq, rec, sizeof(*h) + len);
	}
	free(rec);
	return e;
}

static int push_collector(void *ctx, const struct kw_event_hdr *h, const char *line, size_t len)
{
	return kwd_session_push_collector(ctx, h, line, len);
}

int kwd_session_dns_start(struct kwd_session *s, struct kw_dns_steer *steer, char *err,
			  size_t errlen)
{
	const struct kwd_dns_env env = {
		.d = s->d, .session = s->id, .slot = s->slot, .generation = s->generation,
		.pol = s->pol, .emit = push_collector, .ctx = s,
	};

	return kwd_dns_start(&env, &s->dns, steer, err, errlen);
}

/* The log backlog is for sessions that chose availability over the record
 * (on_record_failure: allow); under deny the event of a permitted action
 * stays in the ring buffer, which outlives kwitnessd, until it is written. */
static bool backlog_ok(const struct kwd_session *s)
{
	return s->pol && s->pol->on_failure == KW_ONFAIL_ALLOW;
}

/* kw_logwriter_submit_fn: a chunk of whole lines goes to the I/O thread with
 * the ring buffer position it frees once written. */
static int session_submit(void *ctx, int fd, struct kw_buf *out)
{
	struct kwd_session *s = ctx;
	uint64_t rel = kwd_ring_releasable(&s->ring, s->emitted_below);
	struct kw_buf chunk = *out;

	memset(out, 0, sizeof(*out));
	kwd_worker_spare(s->d, out);
	return kwd_worker_write(s->d, fd, chunk.data, chunk.len, chunk.cap, &s->log.tr, s->ring.cons,
				rel, backlog_ok(s));
}

/* Queues the buffered lines, or (nothing buffered) just the release of
 * records already written or read twice. */
static void session_flush(struct kwd_session *s)
{
	uint64_t before = s->ring.release_pos;

	if (s->log.out.len) {
		kw_logwriter_flush(&s->log);
		return;
	}
	if (s->log.submit && kwd_ring_releasable(&s->ring, s->emitted_below) > before)
		kwd_worker_write(s->d, s->log.fd, NULL, 0, 0, NULL, s->ring.cons, s->ring.release_pos,
				 backlog_ok(s));
}

void kwd_session_ring_ready(struct kwd_session *s)
{
	int n = kwd_ring_read(&s->ring, ring_sample, s);

	kwd_lineage_flush(s);

	/* The kernel frees ring buffer space only once lines are written:
	 * hand them over before a quarter of it is held. */
	if (kwd_ring_used(&s->ring) > s->ring.size / 4)
		session_flush(s);
	if (n > 0) {
		/* Busy: its tail below the wakeup mark is fetched every
		 * KWD_POLL_MS for a while. */
		s->hot_until_ms = kwd_now_ms() + KWD_HOT_MS;
		if (s->hot_until_ms > s->d->poll_until_ms)
			s->d->poll_until_ms = s->hot_until_ms;
	}
	if (s->ro.pending)
		maybe_skip_gap(s, kwd_now_ms());
	kwd_ckpt_maybe(s, 0); /* by count: due by time only on the tick */
}

struct kwd_session *kwd_session_new(struct kwd *d)
{
	struct kwd_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->d = d;
	s->cgroup_fd = -1;
	s->ring_fd = -1;
	s->log.fd = -1;
	s->killed = -1;
	s->checkpoint_interval = -1;
	s->w.kind = KWD_W_RING;
	s->w.ptr = s;
	kw_reorder_init(&s->ro, emit_event, s);
	return s;
}

/* Maps the ring buffer and watches it (edge-triggered: records read but not
 * yet released keep it readable). From here on log chunks go to the I/O
 * thread. */
int kwd_session_attach_ring(struct kwd_session *s, int ringbuf_fd, size_t size, char *err,
			    size_t errlen)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.ptr = &s->w };
	int e = kwd_ring_map(&s->ring, ringbuf_fd, size);

	if (e) {
		snprintf(err, errlen, "mapping the ring buffer: %s", strerror(-e));
		return e;
	}
	if (epoll_ctl(s->d->epfd, EPOLL_CTL_ADD, ringbuf_fd, &ev) < 0) {
		e = -errno;
		snprintf(err, errlen, "epoll: %s", strerror(errno));
		kwd_ring_unmap(&s->ring);
		return e;
	}
	s->ring_fd = ringbuf_fd;
	s->log.submit = session_submit;
	s->log.submit_ctx = s;
	kwd_fanout_tap(s);
	kwd_ckpt_attach(s);
	return 0;
}

static bool seq_lost(void *ctx, uint64_t seq)
{
	struct kwd_session *s = ctx;

	return kw_hooks_seq_lost(s->d->hooks, s->slot, seq);
}

/* A gap is a number in flight (another CPU took it and has not written its
 * event yet) or a drop. The kernel marks drops in kw_lost: those are given up
 * at once, so the ring buffer, which lets go only below what was written, is
 * not held for them. A gap without a mark that stays open while the kernel
 * counts more drops than gaps given up is one of those drops too (its mark
 * overwritten): move past it after KWD_GAP_SKIP_MS, so the window does not
 * hold every later event. (A number that still arrives is written anyway.) */
static void maybe_skip_gap(struct kwd_session *s, int64_t now)
{
	struct kw_session c;
	uint64_t from, n = s->ro.pending ? kw_reorder_skip_lost(&s->ro, seq_lost, s) : 0;

	s->skipped += n;
	s->skipped_marked += n;
	if (!s->ro.pending) {
		s->gap_since_ms = 0;
		return;
	}
	if (!s->gap_since_ms || n) {
		s->gap_since_ms = now; /* a new gap */
		return;
	}
	if (now - s->gap_since_ms < KWD_GAP_SKIP_MS ||
	    kw_hooks_session_counters(s->d->hooks, s->slot, &c) || c.dropped <= s->skipped)
		return;
	from = s->ro.next;
	s->skipped += kw_reorder_skip(&s->ro);
	forget_given_up(s, from);
	s->gap_since_ms = s->ro.pending ? now : 0;
}

/* On the timer: old gaps, and log lines buffered by quiet sessions. */
void kwd_sessions_tick(struct kwd *d)
{
	int64_t now = kwd_now_ms();

	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
		struct kwd_session *s = d->slots[i];

		if (!s || s->state != KWD_S_OPEN)
			continue;
		/* What waits below the wakeup mark (and records the kernel
		 * did not wake for while earlier ones were not released). */
		if (kwd_ring_unread(&s->ring))
			kwd_session_ring_ready(s);
		maybe_skip_gap(s, now);
		kwd_dns_tick(s->dns, now);
		session_flush(s);
		kwd_ckpt_maybe(s, now);
		kwd_session_close_if_cgroup_gone(s, now);
	}
}

void kwd_sessions_poll(struct kwd *d)
{
	int64_t now = kwd_now_ms();

	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
		struct kwd_session *s = d->slots[i];

		/* An empty ring buffer costs two loads, not a consume call. */
		if (!s || s->state != KWD_S_OPEN || s->hot_until_ms <= now ||
		    !kwd_ring_unread(&s->ring))
			continue;
		kwd_session_ring_ready(s);
	}
}

void kwd_sessions_flush_all(struct kwd *d)
{
	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
		struct kwd_session *s = d->slots[i];

		if (!s || s->state != KWD_S_OPEN)
			continue;
		kwd_ring_read(&s->ring, ring_sample, s);
		/* events held for a gap stay unreleased in the ring buffer */
		session_flush(s);
	}
}

void kwd_sessions_release(struct kwd *d)
{
	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
		struct kwd_session *s = d->slots[i];

		if (!s)
			continue;
		d->slots[i] = NULL;
		d->n_sessions--;
		/* the pinned state and the ring buffer stay: the kernel goes on */
		s->ring_fd = -1;
		kwd_session_free(s);
	}
}
