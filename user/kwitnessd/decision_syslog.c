// SPDX-License-Identifier: Apache-2.0
/* Decisions as lines on kwitnessd's log stream:
 *   kwitnessd: decision session=ID {canonical entry, as in the log}
 * The loop formats the entry a second time (only the ones asked for) into a
 * single-producer single-consumer ring of KWD_SYSLOG_QUEUE lines; the
 * thread here takes them off and hands them to kwd_log (which escapes
 * what a sandbox chose and goes to syslog or stderr). A full ring drops the
 * line, counts it, and the thread says how many it missed: the log, not
 * this stream, is the evidence. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <syslog.h>
#include <unistd.h>

#include "collector/decision.h"
#include "decision_syslog.h"
#include "dns_proxy.h"
#include "kwd.h"
#include "session.h"
#include "util.h"

static struct {
	enum kwd_syslog_decisions mode;
	char *slot[KWD_SYSLOG_QUEUE];
	_Atomic uint64_t head; /* next to take (the thread) */
	_Atomic uint64_t tail; /* next to fill (the loop) */
	_Atomic uint64_t sent, dropped;
	int wake_fd, stop_fd;
	pthread_t thread;
	bool running;
	struct kw_buf entry; /* the loop's formatting buffer */
} q = { .wake_fd = -1, .stop_fd = -1 };

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

/* One writer each: a plain load and store. */
static void bump(_Atomic uint64_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

void kwd_decision_syslog(struct kwd_session *s, const void *data, size_t len)
{
	const struct kw_event_hdr *h = data;
	const struct kw_ev_net *net = data;
	uint64_t tail, head;
	const char *via = NULL;
	char *line;
	int n;

	if (!q.running || (q.mode == KWD_SYSLOG_DENY && h->decision != KW_DENY))
		return;
	tail = atomic_load_explicit(&q.tail, memory_order_relaxed);
	head = atomic_load_explicit(&q.head, memory_order_acquire);
	if (tail - head >= KWD_SYSLOG_QUEUE) {
		bump(&q.dropped);
		return;
	}
	kw_buf_reset(&q.entry);
	if (h->kind == KWD_EV_COLLECTOR) {
		if (kw_buf_append(&q.entry, h + 1, len - sizeof(*h))) {
			bump(&q.dropped);
			return;
		}
	} else {
		if ((h->flags & KW_EVF_VIA) && len >= sizeof(*net))
			via = kwd_dns_via_name(s->dns, net->via_seq);
		if (kw_event_to_entry_via(data, len, s->d->boot_to_realtime_ns, via, &q.entry) ||
		    q.entry.len > KWD_SYSLOG_LINE_MAX) {
			bump(&q.dropped);
			return;
		}
	}
	line = malloc(q.entry.len + 64);
	if (!line) {
		bump(&q.dropped);
		return;
	}
	n = snprintf(line, q.entry.len + 64, "decision session=%s %.*s", s->id, (int)q.entry.len,
		     q.entry.data);
	(void)n;
	q.slot[tail % KWD_SYSLOG_QUEUE] = line;
	atomic_store_explicit(&q.tail, tail + 1, memory_order_release);
	if (write(q.wake_fd, &(uint64_t){ 1 }, sizeof(uint64_t)) < 0)
		(void)0; /* the counter is full: the thread is awake anyway */
}

static void drain(void)
{
	uint64_t head = atomic_load_explicit(&q.head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&q.tail, memory_order_acquire);

	for (; head < tail; head++) {
		char *line = q.slot[head % KWD_SYSLOG_QUEUE];

		q.slot[head % KWD_SYSLOG_QUEUE] = NULL;
		atomic_store_explicit(&q.head, head + 1, memory_order_release);
		kwd_log(NULL, LOG_NOTICE, "%s", line);
		free(line);
		bump(&q.sent);
	}
}

static void *syslog_thread(void *arg)
{
	uint64_t said = 0;

	(void)arg;
	for (;;) {
		struct pollfd p[2] = { { .fd = q.wake_fd, .events = POLLIN },
				       { .fd = q.stop_fd, .events = POLLIN } };
		uint64_t v, dropped;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (read(q.wake_fd, &v, sizeof(v)) < 0)
			(void)0;
		drain();
		dropped = atomic_load_explicit(&q.dropped, memory_order_relaxed);
		if (dropped != said) {
			kwd_log(NULL, LOG_WARNING,
				"decision lines: %llu not sent (queue full or too long); the logs hold them",
				(unsigned long long)(dropped - said));
			said = dropped;
		}
		if (p[1].revents)
			break;
	}
	return NULL;
}

int kwd_decision_syslog_start(struct kwd *d, char *err, size_t errlen)
{
	int e;

	q.mode = d->cfg.syslog_decisions;
	if (q.mode == KWD_SYSLOG_OFF)
		return 0;
	q.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	q.stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q.wake_fd < 0 || q.stop_fd < 0 || kw_buf_reserve(&q.entry, 1024)) {
		snprintf(err, errlen, "decision lines: %s", strerror(errno ? errno : ENOMEM));
		return -ENOMEM;
	}
	e = pthread_create(&q.thread, NULL, syslog_thread, NULL);
	if (e) {
		snprintf(err, errlen, "decision lines thread: %s", strerror(e));
		return -e;
	}
	q.running = true;
	return 0;
}

void kwd_decision_syslog_stop(struct kwd *d)
{
	(void)d;
	if (q.running) {
		q.running = false;
		if (write(q.stop_fd, &(uint64_t){ 1 }, sizeof(uint64_t)) < 0)
			(void)0;
		pthread_join(q.thread, NULL);
		drain(); /* what was queued before the stop */
	}
	if (q.wake_fd >= 0)
		close(q.wake_fd);
	if (q.stop_fd >= 0)
		close(q.stop_fd);
	q.wake_fd = q.stop_fd = -1;
	kw_buf_free(&q.entry);
}

void kwd_decision_syslog_counts(uint64_t *sent, uint64_t *dropped)
{
	*sent = atomic_load_explicit(&q.sent, memory_order_relaxed);
	*dropped = atomic_load_explicit(&q.dropped, memory_order_relaxed);
}
