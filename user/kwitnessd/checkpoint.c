/* SPDX-License-Identifier: Apache-2.0 */
/* Interim checkpoints: when (loop), what (worker), signed and stored
 * (this thread). See checkpoint.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "collector/checkpoint.h"
#include "collector/transcript.h"
#include "checkpoint.h"
#include "checkpoint_tlog.h"
#include "kwd.h"
#include "session.h"
#include "thread.h"
#include "util.h"
#include "worker.h"

struct kwd_ckpt {
	struct kwd *d;
	/* loop only */
	int64_t interval_ms;
	uint64_t every;
	int64_t due_ms;
	uint64_t lines_asked, decisions_asked;
	/* the signing thread; pending and err under the signer's lock */
	int fd, log_fd;
	char *path; /* the checkpoints file */
	uint64_t n;
	char head[KW_DIGEST_STR_MAX];
	unsigned pending;
	int err;
};

struct kwd_ckpt_req {
	struct kwd_ckpt *k;
	struct kw_checkpoint c;
	int sync_fd; /* the log's current segment, or -1 (set by kwd_ckpt_take) */
	struct kwd_ckpt_req *next;
};

struct kwd_signer {
	struct kwd *d;
	struct kwd_thread t; /* its lock: the queue and each chain's pending and err */
	pthread_cond_t settled;
	struct kwd_ckpt_req *head, *tail;
	unsigned queued;
};

static struct kwd_signer *signer_of(struct kwd *d)
{
	return d->ckpt_signer;
}

/* Syncs the log (the lines a checkpoint vouches for must outlive a power
 * loss), signs, appends the line and syncs it. 0 or -errno. */
static int sign_one(struct kwd_signer *g, struct kwd_ckpt_req *r)
{
	struct kwd_ckpt *k = r->k;
	struct kw_buf line = { 0 };
	char hash[KW_DIGEST_STR_MAX];
	off_t start;
	int e;

	r->c.n = k->n + 1;
	snprintf(r->c.prev, sizeof(r->c.prev), "%s", k->head);
	if (fdatasync(r->sync_fd >= 0 ? r->sync_fd : k->log_fd) < 0)
		return -errno;
	e = kw_checkpoint_sign(&r->c, g->d->key, &line, hash);
	e = e ?: kw_buf_putc(&line, '\n');
	start = lseek(k->fd, 0, SEEK_END);
	e = e ?: kw_write_all(k->fd, line.data, line.len);
	if (!e && fsync(k->fd) < 0)
		e = -errno;
	if (e && start >= 0 && ftruncate(k->fd, start) < 0)
		kwd_log(NULL, LOG_ERR, "checkpoint file: a torn line stays: %s", strerror(errno));
	if (!e) {
		k->n = r->c.n;
		snprintf(k->head, sizeof(k->head), "%s", hash);
		kwd_ckpt_tlog_submit(g->d, k->path, k->n, hash, line.data, line.len - 1);
	}
	kw_buf_free(&line);
	return e;
}

/* Under g->t.lock: one request done, whatever became of it. */
static void done_locked(struct kwd_signer *g, struct kwd_ckpt_req *r, int e)
{
	if (e && !r->k->err) {
		r->k->err = e;
		kwd_log(NULL, LOG_ERR, "session %s: checkpoints stop: %s", r->c.session, strerror(-e));
	}
	r->k->pending--;
	pthread_cond_broadcast(&g->settled);
	if (r->sync_fd >= 0)
		close(r->sync_fd);
	free(r);
}

static void *signer_main(void *arg)
{
	struct kwd_signer *g = arg;

	pthread_mutex_lock(&g->t.lock);
	for (;;) {
		struct kwd_ckpt_req *r = g->head;
		int e = 0;

		if (!r) {
			if (kwd_thread_stopping(&g->t))
				break;
			pthread_cond_wait(&g->t.wake, &g->t.lock);
			continue;
		}
		g->head = r->next;
		if (!g->head)
			g->tail = NULL;
		g->queued--;
		if (!r->k->err) {
			pthread_mutex_unlock(&g->t.lock);
			e = sign_one(g, r);
			pthread_mutex_lock(&g->t.lock);
		}
		done_locked(g, r, e);
	}
	pthread_mutex_unlock(&g->t.lock);
	return NULL;
}

int kwd_ckpt_start(struct kwd *d, char *err, size_t errlen)
{
	struct kwd_signer *g;
	int e;

	e = kwd_ckpt_tlog_start(d, err, errlen);
	if (e || (!d->cfg.checkpoint_interval && !d->cfg.checkpoint_entries))
		return e;
	g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(err, errlen, "out of memory");
		kwd_ckpt_tlog_stop(d);
		return -ENOMEM;
	}
	g->d = d;
	pthread_cond_init(&g->settled, NULL);
	e = kwd_thread_init(&g->t, 0) ?:
	    kwd_thread_start(&g->t, d, "kwd-ckpt", 0, signer_main, g, err, errlen);
	if (e) {
		kwd_ckpt_tlog_stop(d);
		kwd_thread_destroy(&g->t);
		pthread_cond_destroy(&g->settled);
		free(g);
		return e;
	}
	d->ckpt_signer = g;
	return 0;
}

void kwd_ckpt_stop(struct kwd *d)
{
	struct kwd_signer *g = signer_of(d);

	if (!g)
		return;
	kwd_thread_stop(&g->t);
	kwd_ckpt_tlog_stop(d); /* after the last checkpoint was asked to be logged */
	kwd_thread_destroy(&g->t);
	pthread_cond_destroy(&g->settled);
	free(g);
	d->ckpt_signer = NULL;
}

/* A resumed chain: the last whole line of the file (a torn one is cut off)
 * must be our own checkpoint of this session. 0 or -errno. */
static int chain_resume(struct kwd_ckpt *k, const char *path, const char *session)
{
	struct kw_buf text = { 0 };
	struct kw_checkpoint c;
	struct stat st;
	char why[256];
	const char *end, *p;
	int e = 0;

	/* the file opened (O_NOFOLLOW), read through that descriptor */
	if (fstat(k->fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size > (64 << 20))
		return -EINVAL;
	if (!st.st_size)
		return 0;
	e = kw_buf_reserve(&text, (size_t)st.st_size);
	if (!e && pread(k->fd, text.data, (size_t)st.st_size, 0) != st.st_size)
		e = -EIO;
	if (e)
		goto out;
	text.len = (size_t)st.st_size;
	end = memrchr(text.data, '\n', text.len);
	if (!end || (size_t)(end - text.data) + 1 < text.len) {
		e = ftruncate(k->fd, end ? end - text.data + 1 : 0) < 0 ? -errno : 0;
		if (e || !end)
			goto out;
	}
	p = end;
	while (p > text.data && p[-1] != '\n')
		p--;
	if (kw_checkpoint_read(p, (size_t)(end - p), k->d->key, &c, k->head, why, sizeof(why)) ||
	    strcmp(c.session, session)) {
		kwd_log(k->d, LOG_ERR, "session %s: %s: its last checkpoint is not ours (%s)", session,
			path, why);
		e = -EBADMSG;
		goto out;
	}
	k->n = c.n;
out:
	kw_buf_free(&text);
	return e;
}

void kwd_ckpt_attach(struct kwd_session *s)
{
	struct kwd *d = s->d;
	struct kwd_ckpt *k;
	char path[4300];
	int e = -ENOMEM;

	if (!signer_of(d) || s->ckpt || s->log.fd < 0)
		return;
	k = calloc(1, sizeof(*k));
	if (!k)
		goto fail;
	k->d = d;
	k->interval_ms = (int64_t)(s->checkpoint_interval >= 0 ? (uint64_t)s->checkpoint_interval :
							       d->cfg.checkpoint_interval) * 1000;
	k->every = d->cfg.checkpoint_entries;
	k->due_ms = kwd_now_ms() + k->interval_ms;
	k->lines_asked = s->log.entries;
	k->decisions_asked = s->decisions;
	k->log_fd = dup(s->log.fd);
	snprintf(path, sizeof(path), "%s%s", s->log_path, KW_CHECKPOINT_SUFFIX);
	k->path = strdup(path);
	k->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (k->log_fd < 0 || k->fd < 0 || !k->path) {
		e = k->path ? -errno : -ENOMEM;
		goto fail;
	}
	e = chain_resume(k, path, s->id);
	if (e)
		goto fail;
	s->ckpt = k;
	return;
fail:
	kwd_log(d, LOG_ERR, "session %s: no checkpoints: %s", s->id, strerror(-e));
	if (k) {
		if (k->fd >= 0)
			close(k->fd);
		if (k->log_fd >= 0)
			close(k->log_fd);
		free(k->path);
		free(k);
	}
}

void kwd_ckpt_maybe(struct kwd_session *s, int64_t now_ms)
{
	struct kwd_ckpt *k = s->ckpt;
	struct kwd_signer *g;
	struct kwd_ckpt_req *r;
	struct kwd_job *job;

	if (!k || s->state != KWD_S_OPEN || s->log.entries == k->lines_asked ||
	    ((!k->interval_ms || now_ms < k->due_ms) &&
	     (!k->every || s->decisions - k->decisions_asked < k->every)))
		return;
	g = signer_of(s->d);
	r = calloc(1, sizeof(*r));
	job = calloc(1, sizeof(*job));
	if (!r || !job) {
		free(r);
		free(job);
		return;
	}
	k->due_ms = (now_ms ? now_ms : kwd_now_ms()) + k->interval_ms;
	k->lines_asked = s->log.entries;
	k->decisions_asked = s->decisions;
	r->k = k;
	snprintf(r->c.session, sizeof(r->c.session), "%s", s->id);
	r->c.last_seq = s->emitted_below ? (int64_t)s->emitted_below - 1 : -1;
	r->c.decisions = s->decisions;
	r->c.denials = s->denials;
	r->c.gaps = s->skipped;
	r->c.dropped = s->skipped + s->bad_events;
	r->c.ts = kwd_now_us();
	pthread_mutex_lock(&g->t.lock);
	k->pending++;
	pthread_mutex_unlock(&g->t.lock);
	/* the lines it covers go first: jobs run in order */
	kw_logwriter_flush(&s->log);
	job->kind = KWD_JOB_CHECKPOINT;
	job->fd = s->log.fd;
	job->owner = r;
	job->tr = &s->log.tr;
	kwd_worker_submit(s->d, job);
}

void kwd_ckpt_take(void *req, const struct kw_transcript *tr, int write_err, int sync_fd)
{
	struct kwd_ckpt_req *r = req;
	struct kwd_signer *g = signer_of(r->k->d);
	int e = write_err;

	r->sync_fd = sync_fd;
	if (!e)
		e = kw_transcript_prefix(tr, r->c.prefix, &r->c.lines);
	pthread_mutex_lock(&g->t.lock);
	if (e || r->k->err || g->queued >= KWD_CKPT_QUEUE_MAX || !r->c.lines) {
		/* skipped: a later checkpoint covers these lines */
		done_locked(g, r, 0);
	} else {
		if (g->tail)
			g->tail->next = r;
		else
			g->head = r;
		g->tail = r;
		g->queued++;
		pthread_cond_signal(&g->t.wake);
	}
	pthread_mutex_unlock(&g->t.lock);
}

/* Waits until every checkpoint asked for is written. */
static void settle(struct kwd_ckpt *k)
{
	struct kwd_signer *g = signer_of(k->d);

	pthread_mutex_lock(&g->t.lock);
	while (k->pending)
		pthread_cond_wait(&g->settled, &g->t.lock);
	pthread_mutex_unlock(&g->t.lock);
}

int kwd_ckpt_bind_close(struct kwd_ckpt *k, char **data, size_t *len)
{
	static const char close_tool[] = "\"tool\":\"kwitness.close\"";
	char members[160], *line, *n;
	size_t at, m;

	if (!k)
		return 0;
	settle(k);
	if (!k->n)
		return 0;
	if (!*data || *len < 2 || (*data)[*len - 1] != '\n')
		return -EINVAL;
	line = memrchr(*data, '\n', *len - 1);
	line = line ? line + 1 : *data;
	at = (size_t)(line - *data);
	/* "checkpoint" < "checkpoints" < "complete": the close entry's first
	 * member sorts after both, so they go first and the line stays canonical */
	if (strncmp(line, "{\"complete\":", 12) ||
	    !memmem(line, *len - at, close_tool, sizeof(close_tool) - 1))
		return -EINVAL;
	m = (size_t)snprintf(members, sizeof(members), "\"checkpoint\":\"%s\",\"checkpoints\":%" PRIu64
			     ",", k->head, k->n);
	n = realloc(*data, *len + m);
	if (!n)
		return -ENOMEM;
	memmove(n + at + 1 + m, n + at + 1, *len - at - 1);
	memcpy(n + at + 1, members, m);
	*data = n;
	*len += m;
	return 0;
}

void kwd_ckpt_free(struct kwd_ckpt *k)
{
	if (!k)
		return;
	settle(k);
	close(k->fd);
	close(k->log_fd);
	free(k->path);
	free(k);
}
