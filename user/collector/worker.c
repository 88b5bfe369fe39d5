/* SPDX-License-Identifier: Apache-2.0 */
/* The I/O worker, see worker.h. The loop that empties ring buffers only
 * formats, hashes and queues, so a slow disk (dirty-page throttling, a 30 ms
 * fsync) never stops it. Jobs run in queue order, so a log's chunks are
 * written before its seal. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "kwitness/buf.h"
#include "collector/seal.h"
#include "collector/worker.h"

struct kw_worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct kw_job *head, *tail;  /* to do */
	struct kw_job *done, *done_tail; /* back to the loop, oldest first */
	bool stop;
	int efd;
	/* write errors per fd, worker-only */
	int *fd_err;
	size_t fd_err_cap;
};

/* Remembers the first write error of fd (err 0: none) for its SEAL job. */
static void note_error(struct kw_worker *w, int fd, int err)
{
	if (fd < 0 || !err)
		return;
	if ((size_t)fd >= w->fd_err_cap) {
		size_t cap = (size_t)fd * 2 + 64;
		int *n = realloc(w->fd_err, cap * sizeof(*n));

		if (!n)
			return;
		memset(n + w->fd_err_cap, 0, (cap - w->fd_err_cap) * sizeof(*n));
		w->fd_err = n;
		w->fd_err_cap = cap;
	}
	if (!w->fd_err[fd])
		w->fd_err[fd] = err;
}

static int take_error(struct kw_worker *w, int fd)
{
	int e = 0;

	if (fd >= 0 && (size_t)fd < w->fd_err_cap) {
		e = w->fd_err[fd];
		w->fd_err[fd] = 0;
	}
	return e;
}

static void run_job(struct kw_worker *w, struct kw_job *job)
{
	enum kw_seal_stage stage;
	int e;

	if (job->data && job->fd >= 0)
		note_error(w, job->fd, kw_write_all(job->fd, job->data, job->len));
	free(job->data);
	job->data = NULL;
	if (job->kind != KW_JOB_SEAL)
		return;
	e = job->err;
	if (job->fd >= 0) {
		int we = take_error(w, job->fd);

		if (!e)
			e = we;
		if (fsync(job->fd) < 0 && !e)
			e = -errno;
		if (close(job->fd) < 0 && !e)
			e = -errno;
		job->fd = -1;
	}
	job->err = e;
	if (e)
		return;
	/* The log is on disk: seal what it holds. */
	job->in.transcript_hash = job->hash;
	job->in.call_count = job->count;
	job->in.iat = (int64_t)time(NULL);
	job->err = kw_seal_record(&job->in, job->key, job->record_path, &job->record, &stage,
				  job->why, sizeof(job->why));
	job->stage = (int)stage;
}

static void *worker_main(void *arg)
{
	struct kw_worker *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct kw_job *job = w->head;

		if (!job) {
			if (w->stop)
				break;
			pthread_cond_wait(&w->wake, &w->lock);
			continue;
		}
		w->head = job->next;
		if (!w->head)
			w->tail = NULL;
		pthread_mutex_unlock(&w->lock);

		run_job(w, job);

		pthread_mutex_lock(&w->lock);
		if (job->kind == KW_JOB_SEAL) {
			uint64_t one = 1;

			job->next = NULL;
			if (w->done_tail)
				w->done_tail->next = job;
			else
				w->done = job;
			w->done_tail = job;
			if (write(w->efd, &one, sizeof(one)) < 0)
				(void)0;
		} else {
			free(job);
		}
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int kw_worker_start(struct kw_worker **out, char *err, size_t errlen)
{
	struct kw_worker *w = calloc(1, sizeof(*w));
	int e;

	*out = NULL;
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->wake, NULL);
	w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->efd < 0) {
		e = -errno;
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		free(w);
		return e;
	}
	e = pthread_create(&w->thread, NULL, worker_main, w);
	if (e) {
		snprintf(err, errlen, "I/O thread: %s", strerror(e));
		close(w->efd);
		free(w);
		return -e;
	}
	*out = w;
	return 0;
}

int kw_worker_notify_fd(const struct kw_worker *w)
{
	return w->efd;
}

void kw_worker_submit(struct kw_worker *w, struct kw_job *job)
{
	job->next = NULL;
	pthread_mutex_lock(&w->lock);
	if (w->tail)
		w->tail->next = job;
	else
		w->head = job;
	w->tail = job;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
}

int kw_worker_write(void *ctx, int fd, char *data, size_t len)
{
	struct kw_job *job = calloc(1, sizeof(*job));

	if (!job) {
		free(data);
		return -ENOMEM;
	}
	job->kind = KW_JOB_WRITE;
	job->fd = fd;
	job->data = data;
	job->len = len;
	kw_worker_submit(ctx, job);
	return 0;
}

struct kw_job *kw_worker_done(struct kw_worker *w)
{
	struct kw_job *job;
	uint64_t n;

	if (read(w->efd, &n, sizeof(n)) < 0)
		(void)0; /* EAGAIN: nothing new since the last drain */
	pthread_mutex_lock(&w->lock);
	job = w->done;
	if (job) {
		w->done = job->next;
		if (!w->done)
			w->done_tail = NULL;
		job->next = NULL;
	}
	pthread_mutex_unlock(&w->lock);
	return job;
}

void kw_worker_stop(struct kw_worker *w)
{
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
}

void kw_worker_free(struct kw_worker *w)
{
	if (!w)
		return;
	close(w->efd);
	free(w->fd_err);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->wake);
	free(w);
}
