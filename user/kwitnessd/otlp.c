/* SPDX-License-Identifier: Apache-2.0 */
/* The OTLP/HTTP logs exporter, see otlp.h. Each decision becomes one log
 * record: body the entry's canonical bytes, attributes kwitness.session and
 * kwitness.seq (to find it in the signed log), kwitness.tool and
 * kwitness.decision; a deny is WARN, a permit INFO. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "tlog/http.h"
#include "fanout.h"
#include "kwd.h"
#include "otlp.h"
#include "thread.h"
#include "util.h"

struct kwd_otlp {
	struct kwd *d;
	struct kwd_thread t; /* its wake_fd: written by the fan-out too */
	struct http_url url;
	struct kwd_fan_sub *sub;
	uint64_t sent, batches, failed; /* records sent; requests; records given up */
};

static json_t *attr_str(const char *key, const char *v)
{
	return json_pack("{s:s, s:{s:s}}", "key", key, "value", "stringValue", v ? v : "");
}

/* One log record for an entry, or NULL (not JSON: not sent). */
static json_t *log_record(const struct kwd_fan_entry *e, int64_t now_ns)
{
	json_t *entry = json_loadb(e->line, e->len, 0, NULL), *rec;
	const char *decision = json_string_value(json_object_get(entry, "decision"));
	json_int_t ts = json_integer_value(json_object_get(entry, "ts"));
	char seq[24], t[24], obs[24];

	if (!entry)
		return NULL;
	snprintf(seq, sizeof(seq), "%" PRIu64, e->seq);
	snprintf(t, sizeof(t), "%lld", (long long)ts * 1000);
	snprintf(obs, sizeof(obs), "%lld", (long long)now_ns);
	/* int64 and fixed64 as decimal strings, as the OTLP/JSON mapping says */
	rec = json_pack("{s:s, s:s, s:i, s:s, s:{s:s%}, s:[o, {s:s, s:{s:s}}, o, o]}", "timeUnixNano", t,
			"observedTimeUnixNano", obs, "severityNumber", e->deny ? 13 : 9, "severityText",
			e->deny ? "WARN" : "INFO", "body", "stringValue", e->line, e->len, "attributes",
			attr_str("kwitness.session", e->session), "key", "kwitness.seq", "value",
			"intValue", seq, attr_str("kwitness.tool", json_string_value(json_object_get(entry, "tool"))),
			attr_str("kwitness.decision", decision));
	json_decref(entry);
	return rec;
}

static char *request_body(struct kwd_otlp *o, json_t *records)
{
	json_t *req = json_pack("{s:[{s:{s:[o, o]}, s:[{s:{s:s}, s:o}]}]}", "resourceLogs", "resource",
				"attributes", attr_str("service.name", "kwitnessd"),
				attr_str("host.name", o->d->host.hostname), "scopeLogs", "scope", "name",
				"kwitness", "logRecords", records);
	char *text = req ? json_dumps(req, JSON_COMPACT) : NULL;

	json_decref(req);
	return text;
}

static bool retryable(int status)
{
	return status < 0 || status == 408 || status == 429 || status >= 500;
}

/* Posts one batch, retrying with backoff; true when the collector took it. */
static bool post_batch(struct kwd_otlp *o, const char *body, size_t n)
{
	unsigned delay = KWD_OTLP_BACKOFF_MS;
	int status = -EIO;

	for (int i = 0; i < KWD_OTLP_TRIES; i++) {
		struct kw_buf resp = { 0 };

		status = http_post_json(&o->url, body, strlen(body), 64 * 1024, &resp);
		kw_buf_free(&resp);
		o->batches++;
		if (status >= 200 && status < 300)
			return true;
		if (!retryable(status) || kwd_thread_stopping(&o->t))
			break;
		for (unsigned slept = 0; slept < delay && !kwd_thread_stopping(&o->t); slept += 50)
			usleep(50 * 1000);
		delay = delay * 2 > KWD_OTLP_BACKOFF_MAX_MS ? KWD_OTLP_BACKOFF_MAX_MS : delay * 2;
	}
	kwd_log(o->d, LOG_WARNING, "otlp: %zu record(s) not taken by %s:%s%s: %s%d", n, o->url.host,
		o->url.port, o->url.path, status < 0 ? "" : "HTTP ",
		status < 0 ? -status : status);
	return false;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Takes up to KWD_OTLP_BATCH queued decisions, waiting up to the linger
 * for more once the first came. */
static size_t take_batch(struct kwd_otlp *o, json_t *records)
{
	struct pollfd p = { .fd = o->t.wake_fd, .events = POLLIN };
	size_t n = 0;
	int64_t first = 0;

	while (n < KWD_OTLP_BATCH) {
		uint64_t missed, v;
		bool ended;
		struct kwd_fan_entry *e = kwd_fanout_pop(o->d->fanout, o->sub, &missed, &ended);

		if (!e) {
			int64_t left = first ? KWD_OTLP_LINGER_MS - (now_ns() - first) / 1000000 : 1000;

			if (kwd_thread_stopping(&o->t) || left <= 0 || (n && !first))
				break;
			if (poll(&p, 1, (int)left) > 0)
				(void)!read(o->t.wake_fd, &v, sizeof(v));
			else if (n)
				break;
			continue;
		}
		if (e->missed_before)
			kwd_log(o->d, LOG_WARNING, "otlp: the queue was full: %" PRIu64 " decision(s) not exported",
				e->missed_before);
		if (e->seq != KWD_FAN_NO_SEQ) {
			json_t *rec = log_record(e, now_ns());

			if (rec && !json_array_append_new(records, rec)) {
				n++;
				if (!first)
					first = now_ns();
			}
		}
		free(e);
	}
	return n;
}

static void *otlp_main(void *arg)
{
	struct kwd_otlp *o = arg;

	for (;;) {
		json_t *records = json_array();
		size_t n = records ? take_batch(o, records) : 0;
		char *body = n ? request_body(o, records) : NULL;

		if (!n)
			json_decref(records);
		if (body) {
			if (post_batch(o, body, n))
				o->sent += n;
			else
				o->failed += n;
		} else if (n) {
			o->failed += n;
		}
		free(body);
		if (!n && kwd_thread_stopping(&o->t))
			break;
	}
	return NULL;
}

int kwd_otlp_start(struct kwd *d, char *err, size_t errlen)
{
	const struct kwd_export_config *x = &d->cfg.exports;
	struct kwd_fan_filter filt = { .peer = { .uid = 0 }, .denials = !x->otlp_all };
	struct kwd_otlp *o;
	int e;

	if (!x->otlp_endpoint[0])
		return 0;
	o = calloc(1, sizeof(*o));
	if (!o || http_url_parse(x->otlp_endpoint, &o->url)) {
		free(o);
		snprintf(err, errlen, "otlp_endpoint: %s", o ? "not an http:// URL" : "out of memory");
		return -EINVAL;
	}
	o->d = d;
	filt.queue_max = x->otlp_queue ?: KWD_OTLP_QUEUE_DEFAULT;
	e = kwd_thread_init(&o->t, KWD_THREAD_EVENTFD);
	o->sub = e ? NULL : kwd_fanout_subscribe(d->fanout, &filt, o->t.wake_fd);
	if (!o->sub) {
		e = e ?: -ENOMEM;
		snprintf(err, errlen, "otlp exporter: %s", strerror(-e));
	} else {
		e = kwd_thread_start(&o->t, d, "kwd-otlp", 0, otlp_main, o, err, errlen);
	}
	if (e) {
		if (o->sub)
			kwd_fanout_unsubscribe(d->fanout, o->sub);
		kwd_thread_destroy(&o->t);
		free(o);
		return e;
	}
	d->otlp = o;
	kwd_log(d, LOG_INFO, "otlp: exporting %s to %s", x->otlp_all ? "every decision" : "denials",
		x->otlp_endpoint);
	return 0;
}

void kwd_otlp_stop(struct kwd *d)
{
	struct kwd_otlp *o = d->otlp;
	uint64_t queued, missed;

	if (!o)
		return;
	kwd_thread_stop(&o->t);
	kwd_fanout_counts(d->fanout, o->sub, &queued, &missed);
	kwd_log(d, LOG_INFO, "otlp: %" PRIu64 " record(s) exported in %" PRIu64 " request(s), %" PRIu64
		" given up, %" PRIu64 " missed (queue full)", o->sent, o->batches, o->failed, missed);
	kwd_fanout_unsubscribe(d->fanout, o->sub);
	kwd_thread_destroy(&o->t);
	free(o);
	d->otlp = NULL;
}
