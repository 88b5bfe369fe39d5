/* SPDX-License-Identifier: Apache-2.0 */
/* Decisions as lines on kwitnessd's log stream:
 *   kwitnessd: decision session=ID {canonical entry, as in the log}
 * A subscriber of the decision fan-out, as watch clients and the OTLP
 * exporter are: the entry's bytes as the log took them, from a bounded
 * queue, on this thread, through kwd_log (which escapes what a sandbox chose
 * and goes to syslog or stderr). What the queue could not hold is counted
 * and said: the log, not this stream, is the evidence. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "decision_syslog.h"
#include "fanout.h"
#include "kwd.h"
#include "thread.h"
#include "util.h"

static struct {
	struct kwd_fanout *fanout;
	struct kwd_fan_sub *sub;
	struct kwd_thread t; /* its wake_fd: written by the fan-out too */
	_Atomic uint64_t sent, too_long;
} q = { .t.wake_fd = -1 };

int kwd_syslog_decisions_parse(const char *v, enum kwd_syslog_decisions *out)
{
	if (!strcmp(v, "deny"))
		*out = KWD_SYSLOG_DENY;
	else if (!strcmp(v, "all"))
		*out = KWD_SYSLOG_ALL;
	else if (!strcmp(v, "off"))
		*out = KWD_SYSLOG_OFF;
	else
		return -EINVAL;
	return 0;
}

/* Says every decision queued; the collector's own entries and proc entries
 * are not decisions. */
static void drain(void)
{
	struct kwd_fan_entry *e;
	uint64_t missed;
	bool ended;

	while ((e = kwd_fanout_pop(q.fanout, q.sub, &missed, &ended))) {
		if (e->decision && e->len > KWD_SYSLOG_LINE_MAX)
			atomic_fetch_add_explicit(&q.too_long, 1, memory_order_relaxed);
		else if (e->decision) {
			kwd_log(NULL, LOG_NOTICE, "decision session=%s %s", e->session, e->line);
			atomic_fetch_add_explicit(&q.sent, 1, memory_order_relaxed);
		}
		free(e);
	}
}

static void *syslog_thread(void *arg)
{
	uint64_t said = 0;

	(void)arg;
	while (!kwd_thread_stopping(&q.t)) {
		struct pollfd p = { .fd = q.t.wake_fd, .events = POLLIN };
		uint64_t v, dropped;

		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			break;
		if (read(q.t.wake_fd, &v, sizeof(v)) < 0)
			(void)0;
		drain();
		kwd_decision_syslog_counts(&v, &dropped);
		if (dropped != said) {
			kwd_log(NULL, LOG_WARNING,
				"decision lines: %llu not sent (queue full or too long); the logs hold them",
				(unsigned long long)(dropped - said));
			said = dropped;
		}
	}
	return NULL;
}

int kwd_decision_syslog_start(struct kwd *d, char *err, size_t errlen)
{
	struct kwd_fan_filter filt = { .peer = { .uid = 0 },
				       .denials = d->cfg.syslog_decisions == KWD_SYSLOG_DENY,
				       .queue_max = KWD_SYSLOG_QUEUE };
	int e;

	if (d->cfg.syslog_decisions == KWD_SYSLOG_OFF)
		return 0;
	q.fanout = d->fanout;
	e = kwd_thread_init(&q.t, KWD_THREAD_EVENTFD);
	q.sub = e ? NULL : kwd_fanout_subscribe(d->fanout, &filt, q.t.wake_fd);
	if (!q.sub) {
		snprintf(err, errlen, "decision lines: %s", e ? strerror(-e) : "no fan-out subscription");
		return -ENOMEM;
	}
	return kwd_thread_start(&q.t, d, "kwd-syslog", 0, syslog_thread, NULL, err, errlen);
}

void kwd_decision_syslog_stop(struct kwd *d)
{
	(void)d;
	if (q.t.running) {
		kwd_thread_stop(&q.t);
		drain(); /* what was queued before the stop */
	}
	if (q.sub)
		kwd_fanout_unsubscribe(q.fanout, q.sub);
	q.sub = NULL;
	kwd_thread_destroy(&q.t);
}

void kwd_decision_syslog_counts(uint64_t *sent, uint64_t *dropped)
{
	uint64_t queued = 0, missed = 0;

	if (q.sub)
		kwd_fanout_counts(q.fanout, q.sub, &queued, &missed);
	*sent = atomic_load_explicit(&q.sent, memory_order_relaxed);
	*dropped = missed + atomic_load_explicit(&q.too_long, memory_order_relaxed);
}
