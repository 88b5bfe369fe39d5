// SPDX-License-Identifier: Apache-2.0
/* What the metrics say and where each number comes from. Counters the loop
 * bumps are single-writer atomics (a relaxed load and store: no locked
 * instruction on the decision path). Gauges and the kernel's per-session
 * counters are gathered by the loop once a second into a snapshot; the loop
 * only ever try-locks it, so the metrics thread copying it cannot stall the
 * loop. Labels are bounded: the decision kinds of KW_EVENT_TABLE, a few
 * reasons, and per-session series only when asked for, at most
 * KWD_METRICS_SESSION_LABELS_MAX of them. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "kwitness/abi/events.h"
#include "client/protocol.h"
#include "bpf/hooks.h"
#include "bpf/object_digest.h"
#include "decision_syslog.h"
#include "dns_proxy.h"
#include "checkpoint_tlog.h"
#include "kwd.h"
#include "metrics.h"
#include "metrics_request.h"
#include "publisher.h"
#include "session.h"
#include "spool.h"
#include "util.h"

/* /healthz: the loop must have ticked this recently... */
#define KWD_HEALTH_TICK_MAX_MS 2000
/* ...and no session's ring buffer be fuller than this (per mille). */
#define KWD_HEALTH_FILL_MAX 900
#define KWD_SNAPSHOT_EVERY_MS 1000

/* Decision kinds, and one more row for the collector's own (dns.query). */
#define KWD_M_KINDS (KW_EV_LIMIT + 1)
#define KWD_M_KIND_COLLECTOR KW_EV_LIMIT

#define TOOL_(id, value, record, format, tool, rules, section, single) [value] = tool,
static const char *const kind_tool[KWD_M_KINDS] = { KW_EVENT_TABLE(TOOL_)[KWD_M_KIND_COLLECTOR] =
								 "dns.query" };
#undef TOOL_

struct session_sample {
	char id[33];
	uint64_t decisions, denials, ring_used, ring_size;
};

/* Sums over sessions: those gone (kept by the loop) plus those in slots. */
struct session_sums {
	uint64_t kernel_dropped, unrecorded, bad_events, gaps_marked, gaps_unmarked;
};

struct snapshot {
	bool valid;
	int64_t taken_ms;
	uint32_t hooks_available;
	unsigned sessions, closing, clients;
	uint64_t client_bytes;
	struct session_sums sums;
	uint64_t ring_used, ring_size;
	unsigned fill_max_permille; /* the fullest ring buffer */
	unsigned labelled, unlabelled;
	struct session_sample per_session[KWD_METRICS_SESSION_LABELS_MAX];
};

static struct {
	_Atomic uint64_t counter[KWD_M_COUNT];
	_Atomic uint64_t decisions[KWD_M_KINDS][2];
	_Atomic int64_t heartbeat_ms;
	_Atomic int64_t checkpoint_s;
	struct session_sums gone; /* loop thread only */
	int64_t next_snapshot_ms; /* loop thread only */
	pthread_mutex_t lock;     /* snap */
	struct snapshot snap;
} m = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Single writer: a plain increment that readers see whole. */
static void bump(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static uint64_t get(_Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

void kwd_metrics_count(enum kwd_metric which)
{
	bump(&m.counter[which], 1);
}

void kwd_metrics_decision(unsigned kind, bool deny)
{
	unsigned row = kind == KWD_EV_COLLECTOR ? KWD_M_KIND_COLLECTOR : kind;

	if (row < KWD_M_KINDS && kind_tool[row])
		bump(&m.decisions[row][deny], 1);
}

void kwd_metrics_checkpoint(int64_t unix_s)
{
	atomic_store_explicit(&m.checkpoint_s, unix_s, memory_order_relaxed);
}

static void add_session(struct kwd *d, const struct kwd_session *s, struct session_sums *to)
{
	struct kw_session c = { 0 };

	kw_hooks_session_counters(d->hooks, s->slot, &c);
	to->kernel_dropped += c.dropped;
	to->unrecorded += c.unrecorded;
	to->bad_events += s->bad_events;
	to->gaps_marked += s->skipped_marked;
	to->gaps_unmarked += s->skipped - s->skipped_marked;
}

void kwd_metrics_session_gone(struct kwd *d, const struct kwd_session *s)
{
	add_session(d, s, &m.gone);
	kwd_metrics_count(KWD_M_SESSIONS_CLOSED);
}

static void sample_sessions(struct kwd *d, struct snapshot *n)
{
	n->sums = m.gone;
	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
		const struct kwd_session *s = d->slots[i];
		uint64_t used;

		if (!s)
			continue;
		add_session(d, s, &n->sums);
		if (s->state != KWD_S_OPEN)
			continue;
		used = kwd_ring_used(&s->ring);
		n->ring_used += used;
		n->ring_size += s->ring.size;
		if (s->ring.size && used * 1000 / s->ring.size > n->fill_max_permille)
			n->fill_max_permille = (unsigned)(used * 1000 / s->ring.size);
		if (n->labelled < d->cfg.metrics_session_labels) {
			struct session_sample *p = &n->per_session[n->labelled++];

			memcpy(p->id, s->id, sizeof(p->id));
			p->decisions = s->decisions;
			p->denials = s->denials;
			p->ring_used = used;
			p->ring_size = s->ring.size;
		} else {
			n->unlabelled++;
		}
	}
}

void kwd_metrics_tick(struct kwd *d)
{
	int64_t now = kwd_now_ms();
	struct snapshot *n = &m.snap;

	atomic_store_explicit(&m.heartbeat_ms, now, memory_order_relaxed);
	if (!d->cfg.metrics_addr || now < m.next_snapshot_ms)
		return;
	/* The scraper holds the lock only to copy: try again next tick. */
	if (pthread_mutex_trylock(&m.lock))
		return;
	memset(n, 0, sizeof(*n));
	n->valid = true;
	n->taken_ms = now;
	n->hooks_available = kw_hooks_available(d->hooks);
	n->sessions = d->n_sessions;
	n->closing = d->n_closing;
	n->clients = d->n_clients;
	n->client_bytes = d->client_mem;
	sample_sessions(d, n);
	pthread_mutex_unlock(&m.lock);
	m.next_snapshot_ms = now + KWD_SNAPSHOT_EVERY_MS;
}

/* ---- the metrics thread's side --------------------------------------- */

static int put(struct kw_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int put(struct kw_buf *b, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(line))
		return -EOVERFLOW;
	return kw_buf_append(b, line, (size_t)n);
}

static int family(struct kw_buf *b, const char *name, const char *type, const char *help)
{
	return put(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static int one(struct kw_buf *b, const char *name, const char *type, const char *help,
	       uint64_t v)
{
	int e = family(b, name, type, help);

	return e ?: put(b, "%s %" PRIu64 "\n", name, v);
}

static void snapshot_copy(struct snapshot *out)
{
	pthread_mutex_lock(&m.lock);
	*out = m.snap;
	pthread_mutex_unlock(&m.lock);
}

static int render_decisions(struct kw_buf *b)
{
	int e = family(b, "kwitness_decisions_total", "counter",
		       "Decision entries written to the logs, by kind and decision.");

	for (unsigned k = 0; k < KWD_M_KINDS && !e; k++)
		for (int deny = 0; deny < 2 && !e; deny++)
			if (kind_tool[k])
				e = put(b, "kwitness_decisions_total{tool=\"%s\",decision=\"%s\"} %" PRIu64 "\n",
					kind_tool[k], deny ? "deny" : "permit",
					get(&m.decisions[k][deny]));
	e = e ?: family(b, "kwitness_denials_total", "counter",
			"Deny entries written to the logs (all kinds).");
	if (!e) {
		uint64_t deny = 0;

		for (unsigned k = 0; k < KWD_M_KINDS; k++)
			deny += get(&m.decisions[k][1]);
		e = put(b, "kwitness_denials_total %" PRIu64 "\n", deny);
	}
	return e;
}

static int render_sessions(struct kw_buf *b, const struct snapshot *s)
{
	int e = family(b, "kwitness_sessions", "gauge", "Sessions in a slot, by state.");

	e = e ?: put(b, "kwitness_sessions{state=\"open\"} %u\n", s->sessions - s->closing);
	e = e ?: put(b, "kwitness_sessions{state=\"closing\"} %u\n", s->closing);
	e = e ?: one(b, "kwitness_sessions_opened_total", "counter", "Sessions opened.",
		     get(&m.counter[KWD_M_SESSIONS_OPENED]));
	e = e ?: one(b, "kwitness_sessions_closed_total", "counter",
		     "Sessions that left their slot (closed, record written or not).",
		     get(&m.counter[KWD_M_SESSIONS_CLOSED]));
	e = e ?: one(b, "kwitness_sessions_resumed_total", "counter",
		     "Sessions a previous collector left pinned, resumed by this one.",
		     get(&m.counter[KWD_M_RESUMES]));
	e = e ?: family(b, "kwitness_dropped_total", "counter",
			"Decisions not in the logs, by reason (ringbuf_full: the kernel could not "
			"reserve; undecodable: a record the collector refused).");
	e = e ?: put(b, "kwitness_dropped_total{reason=\"ringbuf_full\"} %" PRIu64 "\n",
		     s->sums.kernel_dropped);
	e = e ?: put(b, "kwitness_dropped_total{reason=\"undecodable\"} %" PRIu64 "\n",
		     s->sums.bad_events);
	e = e ?: family(b, "kwitness_sequence_gaps_total", "counter",
			"Sequence numbers given up as lost, by whether the kernel marked them.");
	e = e ?: put(b, "kwitness_sequence_gaps_total{mark=\"marked\"} %" PRIu64 "\n",
		     s->sums.gaps_marked);
	e = e ?: put(b, "kwitness_sequence_gaps_total{mark=\"unmarked\"} %" PRIu64 "\n",
		     s->sums.gaps_unmarked);
	e = e ?: one(b, "kwitness_unrecorded_total", "counter",
		     "Decisions the kernel made but could not record (its own count).",
		     s->sums.unrecorded);
	e = e ?: one(b, "kwitness_ringbuf_used_bytes", "gauge",
		     "Bytes waiting in the open sessions' ring buffers.", s->ring_used);
	e = e ?: one(b, "kwitness_ringbuf_size_bytes", "gauge",
		     "Bytes of the open sessions' ring buffers.", s->ring_size);
	e = e ?: family(b, "kwitness_ringbuf_fill_ratio_max", "gauge",
			"The fullest open session's ring buffer, used over size.");
	e = e ?: put(b, "kwitness_ringbuf_fill_ratio_max %u.%03u\n", s->fill_max_permille / 1000,
		     s->fill_max_permille % 1000);
	return e;
}

static int render_per_session(struct kw_buf *b, const struct snapshot *s)
{
	static const char *const names[] = { "kwitness_session_decisions_total",
					      "kwitness_session_denials_total",
					      "kwitness_session_ringbuf_used_bytes" };
	static const char *const helps[] = { "Decision entries of one open session.",
					     "Deny entries of one open session.",
					     "Bytes waiting in one open session's ring buffer." };
	int e = 0;

	for (unsigned f = 0; f < 3 && !e; f++) {
		e = family(b, names[f], f < 2 ? "counter" : "gauge", helps[f]);
		for (unsigned i = 0; i < s->labelled && !e; i++) {
			const struct session_sample *p = &s->per_session[i];
			uint64_t v = f == 0 ? p->decisions : f == 1 ? p->denials : p->ring_used;

			e = put(b, "%s{session=\"%s\"} %" PRIu64 "\n", names[f], p->id, v);
		}
	}
	return e ?: one(b, "kwitness_sessions_unlabelled", "gauge",
			"Open sessions beyond metrics_session_labels (not labelled).",
			s->unlabelled);
}

static int render_queues(struct kwd *d, struct kw_buf *b, const struct snapshot *s)
{
	json_t *pub = kwd_publisher_status(d), *spool = kwd_spool_status(d);
	json_t *ckpt = kwd_ckpt_tlog_status(d);
	int e;

	e = one(b, "kwitness_resolver_questions_total", "counter",
		"DNS questions the sessions' resolvers decided.", get(&m.counter[KWD_M_DNS_QUESTIONS]));
	e = e ?: one(b, "kwitness_resolver_refused_total", "counter",
		     "DNS questions refused by policy.", get(&m.counter[KWD_M_DNS_REFUSED]));
	e = e ?: one(b, "kwitness_control_clients", "gauge", "Clients on the control socket.",
		     s->clients);
	e = e ?: one(b, "kwitness_control_client_buffer_bytes", "gauge",
		     "Bytes the control clients' buffers hold.", s->client_bytes);
	if (pub) {
		e = e ?: one(b, "kwitness_witness_queue_depth", "gauge",
			     "Records waiting for the transparency log and its witnesses.",
			     (uint64_t)json_integer_value(json_object_get(pub, "queued")));
		e = e ?: one(b, "kwitness_witness_retry_waiting", "gauge",
			     "Records sealed without Level 2, waiting for another try.",
			     (uint64_t)json_integer_value(json_object_get(pub, "retry_waiting")));
		e = e ?: one(b, "kwitness_witness_failures_total", "counter",
			     "Records sealed without their transparency log entry.",
			     (uint64_t)json_integer_value(json_object_get(pub, "unlogged")));
		e = e ?: one(b, "kwitness_witness_given_up_total", "counter",
			     "Records left without Level 2 after every try.",
			     (uint64_t)json_integer_value(json_object_get(pub, "given_up")));
	}
	if (ckpt) {
		e = e ?: one(b, "kwitness_checkpoint_tlog_logged_total", "counter",
			     "Checkpoints logged in the transparency log, their proofs stored.",
			     (uint64_t)json_integer_value(json_object_get(ckpt, "logged")));
		e = e ?: one(b, "kwitness_checkpoint_tlog_dropped_total", "counter",
			     "Checkpoints not logged: the queue to the transparency log was full.",
			     (uint64_t)json_integer_value(json_object_get(ckpt, "dropped")));
	}
	if (spool)
		e = e ?: one(b, "kwitness_push_queue_depth", "gauge",
			     "Records spooled for `kwitness estate push`.",
			     (uint64_t)json_integer_value(json_object_get(spool, KW_F_ESTATE_BACKLOG)));
	json_decref(pub);
	json_decref(spool);
	json_decref(ckpt);
	return e;
}

static uint64_t count_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *de;
	uint64_t n = 0;

	if (!dir)
		return 0;
	while ((de = readdir(dir)))
		n += de->d_name[0] != '.';
	closedir(dir);
	return n > 0 ? n - 1 : 0; /* not the one opendir holds */
}

static int render_process(struct kw_buf *b)
{
	unsigned long long pages = 0, rss = 0;
	struct rlimit r = { 0 };
	FILE *f = fopen("/proc/self/statm", "re");
	int e;

	if (f) {
		if (fscanf(f, "%llu %llu", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	getrlimit(RLIMIT_NOFILE, &r);
	e = one(b, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
		(uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE));
	e = e ?: one(b, "process_open_fds", "gauge", "Number of open file descriptors.", count_fds());
	e = e ?: one(b, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
		     (uint64_t)r.rlim_cur);
	return e;
}

int kwd_metrics_render(struct kwd *d, struct kw_buf *b)
{
	static struct snapshot s; /* the metrics thread's own copy (too big for its stack) */
	/* hashed once: 1.5 MB of SHA-256 is not for every scrape */
	static char digest[KW_DIGEST_STR_MAX];
	int64_t ck = atomic_load_explicit(&m.checkpoint_s, memory_order_relaxed);
	int e;

	snapshot_copy(&s);
	if (!digest[0] && kw_bpf_object_digest(false, digest, sizeof(digest)))
		snprintf(digest, sizeof(digest), "unknown");
	e = family(b, "kwitness_build_info", "gauge", "The collector's version and BPF object.");
	e = e ?: put(b, "kwitness_build_info{version=\"%s\",bpf_object=\"%s\"} 1\n", kw_version(),
		     digest);
	e = e ?: one(b, "kwitness_hooks_attached", "gauge",
		     "Hook classes loaded and attachable (a bit mask as a count of classes).",
		     (uint64_t)__builtin_popcount(s.hooks_available));
	e = e ?: render_decisions(b);
	e = e ?: render_sessions(b, &s);
	if (d->cfg.metrics_session_labels)
		e = e ?: render_per_session(b, &s);
	e = e ?: render_queues(d, b, &s);
	if (d->cfg.syslog_decisions) {
		uint64_t sent, dropped;

		kwd_decision_syslog_counts(&sent, &dropped);
		e = e ?: family(b, "kwitness_decision_lines_total", "counter",
				"Decision lines for syslog_decisions, sent or dropped (queue full).");
		e = e ?: put(b, "kwitness_decision_lines_total{result=\"sent\"} %" PRIu64 "\n", sent);
		e = e ?: put(b, "kwitness_decision_lines_total{result=\"dropped\"} %" PRIu64 "\n",
			     dropped);
	}
	/* checkpoints (another part of the collector) report their time here */
	if (ck > 0)
		e = e ?: one(b, "kwitness_checkpoint_age_seconds", "gauge",
			     "Seconds since the newest checkpoint.",
			     (uint64_t)(time(NULL) > ck ? time(NULL) - ck : 0));
	e = e ?: render_process(b);
	return e;
}

int kwd_metrics_health(struct kwd *d, struct kw_buf *b)
{
	static struct snapshot s;
	int64_t beat = atomic_load_explicit(&m.heartbeat_ms, memory_order_relaxed);
	int64_t age = kwd_now_ms() - beat;
	char why[160] = "";

	(void)d;
	snapshot_copy(&s);
	if (!s.valid)
		snprintf(why, sizeof(why), "starting: the loop has not run yet");
	else if (!s.hooks_available)
		snprintf(why, sizeof(why), "not attached: no hook class loaded");
	else if (age > KWD_HEALTH_TICK_MAX_MS)
		snprintf(why, sizeof(why), "not keeping up: the loop last ran %lld ms ago",
			 (long long)age);
	else if (s.fill_max_permille > KWD_HEALTH_FILL_MAX)
		snprintf(why, sizeof(why), "not keeping up: a ring buffer is %u.%u%% full",
			 s.fill_max_permille / 10, s.fill_max_permille % 10);
	if (why[0]) {
		kw_buf_puts(b, why);
		kw_buf_putc(b, '\n');
		return 503;
	}
	kw_buf_puts(b, "ok\n");
	return 200;
}

/* ---- configuration ----------------------------------------------------- */

int kwd_config_metrics(struct kwd_config *c, const char *key, const char *val, char *err,
		       size_t errlen, const char *file, unsigned line)
{
	char why[400];
	char *copy, *end;
	unsigned long n;

	if (!strcmp(key, "metrics_session_labels")) {
		errno = 0;
		n = strtoul(val, &end, 10);
		if (errno || end == val || *end || *val == '-' || n > KWD_METRICS_SESSION_LABELS_MAX) {
			snprintf(err, errlen, "%s:%u: metrics_session_labels must be a number from 0 to %d",
				 file, line, KWD_METRICS_SESSION_LABELS_MAX);
			return -EINVAL;
		}
		c->metrics_session_labels = (unsigned)n;
		return 0;
	}
	{
		struct kwd_metrics_addr a;

		if (kwd_metrics_parse_addr(val, &a, why, sizeof(why))) {
			/* from the command line (no file): said here, exit 2 */
			if (!file)
				fprintf(stderr, "kwitnessd: --metrics: %s\n", why);
			else
				snprintf(err, errlen, "%s:%u: %s", file, line, why);
			return -EINVAL;
		}
	}
	if (file && c->metrics_addr)
		return 0; /* the command line wins over the file */
	copy = strdup(val);
	if (!copy)
		return -ENOMEM;
	free(c->metrics_addr);
	c->metrics_addr = copy;
	return 0;
}
