/* SPDX-License-Identifier: Apache-2.0 */
/* Level 2 off the log path. With `log = DIR`, sealing a record means
 * appending to the transparency log and asking each witness to cosign:
 * network calls that a hung witness holds for HTTP_TIMEOUT_S each. They run
 * here, on a thread of their own, never on the I/O worker that writes every
 * session's decision log: a stalled witness delays only the close replies
 * of the records it holds, never a decision. The queue is bounded
 * (KWD_PUBLISH_QUEUE_MAX): past it the worker seals the record without
 * transparency at once. A record sealed without its Level 2 (a failed
 * step, a full queue) is said in the log and retried later
 * (KWD_PUBLISH_RETRY_S, at most KWD_PUBLISH_TRIES times, at most
 * KWD_PUBLISH_RETRY_MAX records waiting): the record file is signed again
 * with its URL and rewritten, its proof beside it. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "collector/publish.h"
#include "kwd.h"
#include "publisher.h"
#include "thread.h"
#include "util.h"
#include "worker.h"

struct retry {
	char *path;
	int64_t due_ms;
	unsigned tries;
};

struct kwd_publisher {
	struct kwd *d;
	struct kwd_thread t; /* its lock: the queue, the retries and the counts */
	struct kwd_job *head, *tail;
	unsigned queued;
	bool busy;          /* a record is being published */
	struct retry retry[KWD_PUBLISH_RETRY_MAX];
	unsigned n_retry;
	struct kwd_publish_counters n;
};

static int64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Under p->t.lock: the record at path waits for another try. */
static void want_retry(struct kwd_publisher *p, const char *path, unsigned tries)
{
	char *copy;

	if (tries >= KWD_PUBLISH_TRIES || p->n_retry == KWD_PUBLISH_RETRY_MAX ||
	    !(copy = strdup(path))) {
		p->n.given_up++;
		kwd_log(NULL, LOG_WARNING, "record %s stays without transparency: %s", path,
			tries >= KWD_PUBLISH_TRIES ? "no more tries" : "too many records wait");
		return;
	}
	p->retry[p->n_retry++] = (struct retry){ copy, mono_ms() + KWD_PUBLISH_RETRY_S * 1000, tries };
}

bool kwd_publisher_take(struct kwd *d, struct kwd_job *job)
{
	struct kwd_publisher *p = d->publisher;
	bool took = false;

	if (!p)
		return false;
	pthread_mutex_lock(&p->t.lock);
	if (!kwd_thread_stopping(&p->t) && p->queued < KWD_PUBLISH_QUEUE_MAX) {
		job->next = NULL;
		if (p->tail)
			p->tail->next = job;
		else
			p->head = job;
		p->tail = job;
		p->queued++;
		took = true;
		pthread_cond_signal(&p->t.wake);
	} else {
		p->n.queue_full++;
	}
	pthread_mutex_unlock(&p->t.lock);
	return took;
}

void kwd_publisher_unlogged(struct kwd *d, const char *record_path, const char *why)
{
	struct kwd_publisher *p = d->publisher;

	kwd_log(NULL, LOG_WARNING, "record %s not logged (no transparency): %s; retried in %d s",
		record_path, why, KWD_PUBLISH_RETRY_S);
	if (!p)
		return;
	pthread_mutex_lock(&p->t.lock);
	p->n.unlogged++;
	want_retry(p, record_path, 0);
	pthread_mutex_unlock(&p->t.lock);
}

/* A record sealed without transparency, signed again with its URL and
 * logged; the proof is written first, then the record. 0 when logged. */
static int republish(struct kwd *d, const char *path, char *why, size_t whylen)
{
	struct kw_buf text = { 0 }, proof = { 0 }, out = { 0 };
	char proof_path[4200];
	json_t *rec = NULL;
	int e;

	e = kw_read_regular_file(path, KWD_RECORD_MAX, &text);
	if (e) {
		snprintf(why, whylen, "%s", strerror(-e));
		goto out;
	}
	rec = jcs_parse(text.data ? text.data : "", text.len, NULL);
	if (!rec || !json_is_object(rec)) {
		e = -EBADMSG;
		snprintf(why, whylen, "not a JSON object");
		goto out;
	}
	if (json_object_get(rec, "transparency"))
		goto out; /* logged already */
	json_object_del(rec, "signature");
	e = kw_publish_record(rec, d->key, d->publish, &proof, why, whylen);
	if (e)
		goto out; /* the file stays as it is */
	snprintf(proof_path, sizeof(proof_path), "%s.tlog-proof", path);
	e = kw_write_file_atomic(proof_path, proof.data, proof.len, 0644);
	if (!e)
		e = jcs_dump(rec, &out) ?: kw_buf_putc(&out, '\n');
	if (!e)
		e = kw_write_file_atomic(path, out.data, out.len, 0644);
	if (e)
		snprintf(why, whylen, "writing it: %s", strerror(-e));
out:
	json_decref(rec);
	kw_buf_free(&text);
	kw_buf_free(&proof);
	kw_buf_free(&out);
	return e;
}

/* Under p->t.lock: the first retry that is due, taken out of the list; or
 * -1, with *wait_ms until the next one (or -1: none waits). */
static int due_retry(struct kwd_publisher *p, struct retry *r, int64_t *wait_ms)
{
	int64_t now = mono_ms();

	*wait_ms = -1;
	for (unsigned i = 0; i < p->n_retry; i++) {
		if (p->retry[i].due_ms <= now) {
			*r = p->retry[i];
			p->retry[i] = p->retry[--p->n_retry];
			return 0;
		}
		if (*wait_ms < 0 || p->retry[i].due_ms - now < *wait_ms)
			*wait_ms = p->retry[i].due_ms - now;
	}
	return -1;
}

/* Under p->t.lock, released while the network is used. */
static void run_retry(struct kwd_publisher *p, struct retry *r)
{
	char why[512] = "";
	int e;

	p->busy = true;
	pthread_mutex_unlock(&p->t.lock);
	e = republish(p->d, r->path, why, sizeof(why));
	if (e)
		kwd_log(NULL, LOG_WARNING, "record %s: transparency try %u failed: %s", r->path,
			r->tries + 1, why);
	else
		kwd_log(NULL, LOG_NOTICE, "record %s logged on try %u", r->path, r->tries + 1);
	pthread_mutex_lock(&p->t.lock);
	p->busy = false;
	if (e) {
		want_retry(p, r->path, r->tries + 1);
	} else {
		p->n.retry_logged++;
		if (p->n.unlogged)
			p->n.unlogged--; /* it has its Level 2 now */
	}
	free(r->path);
}

/* Under p->t.lock, released while the network is used: seals the job's
 * record with its transparency (without, once stopping) and hands it back
 * to the loop. */
static void run_seal(struct kwd_publisher *p, struct kwd_job *job)
{
	char log_why[256] = "";
	bool stopping = kwd_thread_stopping(&p->t);

	p->busy = true;
	pthread_mutex_unlock(&p->t.lock);
	kwd_job_seal(job, stopping ? NULL : job->publish, log_why, sizeof(log_why));
	if (stopping && !job->err)
		kwd_publisher_unlogged(p->d, job->record_path, "kwitnessd stopped first");
	else if (log_why[0] && !job->err)
		kwd_publisher_unlogged(p->d, job->record_path, log_why);
	pthread_mutex_lock(&p->t.lock);
	p->busy = false;
	if (!stopping && !log_why[0] && !job->err)
		p->n.logged++;
	pthread_mutex_unlock(&p->t.lock);
	kwd_worker_finish(p->d, job);
	pthread_mutex_lock(&p->t.lock);
}

static void *publisher_main(void *arg)
{
	struct kwd_publisher *p = arg;

	pthread_mutex_lock(&p->t.lock);
	for (;;) {
		struct kwd_job *job = p->head;
		struct retry r;
		int64_t wait_ms;

		if (job) {
			p->head = job->next;
			if (!p->head)
				p->tail = NULL;
			p->queued--;
			run_seal(p, job);
			continue;
		}
		if (kwd_thread_stopping(&p->t))
			break; /* retries left wait: said in the log */
		if (!due_retry(p, &r, &wait_ms)) {
			run_retry(p, &r);
			continue;
		}
		if (wait_ms < 0) {
			pthread_cond_wait(&p->t.wake, &p->t.lock);
		} else {
			struct timespec t;

			clock_gettime(CLOCK_REALTIME, &t);
			t.tv_sec += wait_ms / 1000;
			t.tv_nsec += (wait_ms % 1000) * 1000000;
			if (t.tv_nsec >= 1000000000) {
				t.tv_sec++;
				t.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&p->t.wake, &p->t.lock, &t);
		}
	}
	pthread_mutex_unlock(&p->t.lock);
	return NULL;
}

int kwd_publisher_start(struct kwd *d, char *err, size_t errlen)
{
	struct kwd_publisher *p;
	int e;

	if (!d->publish)
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	p->d = d;
	e = kwd_thread_init(&p->t, 0) ?:
	    kwd_thread_start(&p->t, d, "kwd-publish", 0, publisher_main, p, err, errlen);
	if (e) {
		kwd_thread_destroy(&p->t);
		free(p);
		return e;
	}
	d->publisher = p;
	return 0;
}

json_t *kwd_publisher_status(struct kwd *d)
{
	struct kwd_publisher *p = d->publisher;
	struct kwd_publish_counters n;
	unsigned queued, retry;
	bool busy;

	if (!p)
		return NULL;
	pthread_mutex_lock(&p->t.lock);
	n = p->n;
	queued = p->queued;
	retry = p->n_retry;
	busy = p->busy;
	pthread_mutex_unlock(&p->t.lock);
	return json_pack("{s:I, s:I, s:b, s:I, s:I, s:I, s:I, s:I, s:I}", "queued", (json_int_t)queued,
			 "queue_max", (json_int_t)KWD_PUBLISH_QUEUE_MAX, "busy", busy, "logged",
			 (json_int_t)n.logged, "unlogged", (json_int_t)n.unlogged, "queue_full",
			 (json_int_t)n.queue_full, "retry_waiting", (json_int_t)retry,
			 "retry_logged", (json_int_t)n.retry_logged, "given_up",
			 (json_int_t)n.given_up);
}

void kwd_publisher_stop(struct kwd *d)
{
	struct kwd_publisher *p = d->publisher;

	if (!p)
		return;
	kwd_thread_stop(&p->t);
	for (unsigned i = 0; i < p->n_retry; i++) {
		kwd_log(NULL, LOG_WARNING, "record %s stays without transparency: kwitnessd stopped",
			p->retry[i].path);
		free(p->retry[i].path);
	}
	kwd_thread_destroy(&p->t);
	free(p);
	d->publisher = NULL;
}
