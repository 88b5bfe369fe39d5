/* SPDX-License-Identifier: Apache-2.0 */
/* Prometheus metrics and /healthz (docs/operations.md). The collector's loop
 * counts into single-writer atomics and, once a second, publishes a snapshot
 * of its gauges; the metrics thread (metrics_http.c) only reads those, so a
 * scraper, slow or hostile, never holds up a decision on its way to the log. */
#ifndef KWITNESSD_METRICS_H
#define KWITNESSD_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

struct kwd;
struct kwd_session;

/* Per-session labels: at most this many sessions (metrics_session_labels). */
#define KWD_METRICS_SESSION_LABELS_MAX 64

/* Counters the loop thread bumps (only it: one writer, no atomic RMW). */
enum kwd_metric {
	KWD_M_SESSIONS_OPENED,
	KWD_M_SESSIONS_CLOSED,
	KWD_M_RESUMES,
	KWD_M_DNS_QUESTIONS,
	KWD_M_DNS_REFUSED,
	KWD_M_COUNT
};

/* config.c: the keys metrics (the command line's --metrics wins) and
 * metrics_session_labels. 0, or -EINVAL with "FILE:LINE: ..." in err. */
struct kwd_config;
int kwd_config_metrics(struct kwd_config *c, const char *key, const char *val, char *err,
		       size_t errlen, const char *file, unsigned line);

/* Loop thread. */
void kwd_metrics_count(enum kwd_metric m);
/* One decision entry written (h->kind, deny or not). */
void kwd_metrics_decision(unsigned kind, bool deny);
/* A session leaves its slot: its kernel counters move to the totals. */
void kwd_metrics_session_gone(struct kwd *d, const struct kwd_session *s);
/* Every timer tick: the heartbeat; once a second, the snapshot. */
void kwd_metrics_tick(struct kwd *d);
/* The time of the newest checkpoint (unix seconds), for
 * kwitness_checkpoint_age_seconds; any thread. */
void kwd_metrics_checkpoint(int64_t unix_s);

/* Metrics thread: the text exposition (format 0.0.4) into out. */
int kwd_metrics_render(struct kwd *d, struct kw_buf *out);
/* Metrics thread: 200 and "ok", or 503 and why, into out. */
int kwd_metrics_health(struct kwd *d, struct kw_buf *out);

/* metrics_http.c: --metrics ADDR. listen before daemon(), start after. */
int kwd_metrics_listen(struct kwd *d, char *err, size_t errlen);
int kwd_metrics_start(struct kwd *d, char *err, size_t errlen);
void kwd_metrics_stop(struct kwd *d);

#endif
