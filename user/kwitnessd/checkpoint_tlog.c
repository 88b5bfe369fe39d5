/* SPDX-License-Identifier: Apache-2.0 */
/* Checkpoints to the transparency log, off the log-writing and signing
 * threads. See checkpoint_tlog.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "collector/checkpoint.h"
#include "collector/publish.h"
#include "tlog/record_url.h"
#include "checkpoint_tlog.h"
#include "kwd.h"
#include "thread.h"
#include "util.h"

struct ckpt_item {
	char *proofs_path;
	char *line;
	size_t len;
	uint64_t n;
	char hash[KW_DIGEST_STR_MAX];
	struct ckpt_item *next;
};

static void item_free(struct ckpt_item *it);

struct kwd_ckpt_tlog {
	struct kwd *d;
	struct kwd_thread th; /* its lock: the queue and the counts */
	struct ckpt_item *head, *tail;
	unsigned queued;
	int64_t quiet_until_ms; /* after a failure: no checkpoint taken before */
	uint64_t logged, failed, dropped;
};

/* Under t->th.lock, after a failure: what waits is dropped and nothing is
 * taken for KWD_CKPT_TLOG_BACKOFF_S, so a stalled log or witness holds the
 * log's lock (which records need too) for one checkpoint at a time. */
static void back_off(struct kwd_ckpt_tlog *t)
{
	t->quiet_until_ms = kwd_now_ms() + KWD_CKPT_TLOG_BACKOFF_S * 1000;
	while (t->head) {
		struct ckpt_item *it = t->head;

		t->head = it->next;
		t->dropped++;
		item_free(it);
	}
	t->tail = NULL;
	t->queued = 0;
}

static void item_free(struct ckpt_item *it)
{
	if (!it)
		return;
	free(it->proofs_path);
	free(it->line);
	free(it);
}

/* {"checkpoint":"sha256:…","n":N,"proof":"<tlog-proof>"}, RFC 8785, one
 * line, appended and synced. */
static int store_proof(const struct ckpt_item *it, const struct kw_buf *proof)
{
	json_t *j = json_pack("{s:s, s:I, s:s%}", "checkpoint", it->hash, "n", (json_int_t)it->n,
			      "proof", proof->data ? proof->data : "", proof->len);
	struct kw_buf out = { 0 };
	int fd, e;

	if (!j)
		return -ENOMEM;
	e = jcs_dump(j, &out) ?: kw_buf_putc(&out, '\n');
	json_decref(j);
	fd = e ? -1 : open(it->proofs_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (!e && fd < 0)
		e = -errno;
	if (!e)
		e = kw_write_all(fd, out.data, out.len);
	if (!e && fsync(fd) < 0)
		e = -errno;
	if (fd >= 0)
		close(fd);
	kw_buf_free(&out);
	return e;
}

/* Steps 4 to 6 of a record's Level 2 for the signed checkpoint line. */
static int log_one(struct kwd *d, const struct ckpt_item *it, char *why, size_t whylen)
{
	json_t *c = jcs_parse(it->line, it->len, NULL);
	struct kw_buf proof = { 0 };
	char url[TLOG_RECORD_URL_MAX];
	int e;

	if (!c) {
		snprintf(why, whylen, "the checkpoint line does not parse");
		return -EBADMSG;
	}
	e = tlog_record_url(d->publish->log_key->name, c, url);
	if (e)
		snprintf(why, whylen, "transparency URL: %s", strerror(-e));
	else
		e = kw_publish_logged(c, d->publish, url, &proof, why, whylen);
	if (!e) {
		e = store_proof(it, &proof);
		if (e)
			snprintf(why, whylen, "%s: %s", it->proofs_path, strerror(-e));
	}
	json_decref(c);
	kw_buf_free(&proof);
	return e;
}

static void *tlog_main(void *arg)
{
	struct kwd_ckpt_tlog *t = arg;

	pthread_mutex_lock(&t->th.lock);
	for (;;) {
		struct ckpt_item *it = t->head;
		char why[600] = "";
		int e;

		if (kwd_thread_stopping(&t->th))
			break;
		if (!it) {
			pthread_cond_wait(&t->th.wake, &t->th.lock);
			continue;
		}
		t->head = it->next;
		if (!t->head)
			t->tail = NULL;
		t->queued--;
		pthread_mutex_unlock(&t->th.lock);
		e = log_one(t->d, it, why, sizeof(why));
		if (e)
			kwd_log(NULL, LOG_WARNING, "checkpoint %" PRIu64 " of %s not logged: %s", it->n,
				it->proofs_path, why);
		pthread_mutex_lock(&t->th.lock);
		if (e) {
			t->failed++;
			back_off(t);
		} else
			t->logged++;
		item_free(it);
	}
	pthread_mutex_unlock(&t->th.lock);
	return NULL;
}

int kwd_ckpt_tlog_start(struct kwd *d, char *err, size_t errlen)
{
	struct kwd_ckpt_tlog *t;
	int e;

	if (!d->cfg.checkpoint_tlog)
		return 0;
	if (!d->publish) {
		snprintf(err, errlen, "checkpoint_tlog = true needs the transparency log (log = DIR)");
		return -EINVAL;
	}
	if (!d->cfg.checkpoint_interval && !d->cfg.checkpoint_entries) {
		snprintf(err, errlen, "checkpoint_tlog = true needs checkpoints "
			 "(checkpoint_interval or checkpoint_entries above 0)");
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	t->d = d;
	e = kwd_thread_init(&t->th, 0) ?:
	    kwd_thread_start(&t->th, d, "kwd-ckpt-tlog", 0, tlog_main, t, err, errlen);
	if (e) {
		kwd_thread_destroy(&t->th);
		free(t);
		return e;
	}
	d->ckpt_tlog = t;
	return 0;
}

void kwd_ckpt_tlog_submit(struct kwd *d, const char *ckpt_path, uint64_t n, const char *hash,
			  const char *line, size_t len)
{
	struct kwd_ckpt_tlog *t = d->ckpt_tlog;
	struct ckpt_item *it;
	bool full, quiet;

	if (!t)
		return;
	pthread_mutex_lock(&t->th.lock);
	full = t->queued >= KWD_CKPT_TLOG_QUEUE_MAX;
	quiet = kwd_now_ms() < t->quiet_until_ms;
	if (full || quiet)
		t->dropped++;
	pthread_mutex_unlock(&t->th.lock);
	if (full || quiet) {
		kwd_log(NULL, LOG_WARNING, "checkpoint %" PRIu64 " of %s not logged: %s", n, ckpt_path,
			full ? "the transparency queue is full (the log or a witness stalls)" :
			"the last one failed; none is logged for a while");
		return;
	}
	it = calloc(1, sizeof(*it));
	if (it && (it->line = malloc(len)) &&
	    asprintf(&it->proofs_path, "%s%s", ckpt_path, KW_CKPT_TLOG_SUFFIX) < 0)
		it->proofs_path = NULL;
	if (!it || !it->line || !it->proofs_path) {
		item_free(it);
		pthread_mutex_lock(&t->th.lock);
		t->dropped++;
		pthread_mutex_unlock(&t->th.lock);
		return;
	}
	memcpy(it->line, line, len);
	it->len = len;
	it->n = n;
	snprintf(it->hash, sizeof(it->hash), "%s", hash);
	pthread_mutex_lock(&t->th.lock);
	if (t->tail)
		t->tail->next = it;
	else
		t->head = it;
	t->tail = it;
	t->queued++;
	pthread_cond_signal(&t->th.wake);
	pthread_mutex_unlock(&t->th.lock);
}

json_t *kwd_ckpt_tlog_status(struct kwd *d)
{
	struct kwd_ckpt_tlog *t = d->ckpt_tlog;
	json_t *j;

	if (!t)
		return NULL;
	pthread_mutex_lock(&t->th.lock);
	j = json_pack("{s:I, s:I, s:I, s:I, s:I}", "queued", (json_int_t)t->queued, "queue_max",
		      (json_int_t)KWD_CKPT_TLOG_QUEUE_MAX, "logged", (json_int_t)t->logged, "failed",
		      (json_int_t)t->failed, "dropped", (json_int_t)t->dropped);
	pthread_mutex_unlock(&t->th.lock);
	return j;
}

void kwd_ckpt_tlog_stop(struct kwd *d)
{
	struct kwd_ckpt_tlog *t = d->ckpt_tlog;

	if (!t)
		return;
	kwd_thread_stop(&t->th);
	for (struct ckpt_item *it = t->head, *next; it; it = next) {
		next = it->next;
		kwd_log(NULL, LOG_WARNING, "checkpoint %" PRIu64 " of %s not logged: kwitnessd stopped",
			it->n, it->proofs_path);
		item_free(it);
	}
	kwd_thread_destroy(&t->th);
	free(t);
	d->ckpt_tlog = NULL;
}
