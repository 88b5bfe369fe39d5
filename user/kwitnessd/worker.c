/* SPDX-License-Identifier: Apache-2.0 */
/* The I/O worker: one thread that does the collector's blocking file work —
 * decision log chunks and their transcript hash, and at close the last
 * lines, fsync, and the record (build, sign, self-verify, atomic write). The
 * epoll loop only formats and queues, so neither a slow disk (dirty-page
 * throttling, a 30 ms fsync) nor SHA-256 stops it from emptying ring
 * buffers. Jobs run in queue order, so a
 * log's chunks are written before its seal. Sealed jobs go to a queue that
 * the loop drains when the eventfd says so (kwd_worker_done); replies and
 * frees happen there. The worker knows nothing of sessions or clients. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <syslog.h>
#include <unistd.h>

#include "collector/transcript.h"
#include "checkpoint.h"
#include "kwd.h"
#include "publisher.h"
#include "ring.h"
#include "segwrite.h"
#include "thread.h"
#include "util.h"
#include "worker.h"

struct kwd_worker {
	struct kwd *d;
	struct kwd_thread t; /* its lock: both queues and the spares */
	struct kwd_job *head, *tail;  /* to do */
	struct kwd_job *done, *done_tail; /* back to the loop, oldest first */
	int efd;
	/* write errors per fd, worker-only */
	int *fd_err;
	size_t fd_err_cap;
	struct kwd_segs *segs; /* logs cut into segments, by fd, worker-only */
	/* log chunk buffers written and kept for the next chunks (under lock) */
	struct kw_buf spare[KWD_SPARE_BUFS];
	int n_spare;
	/* Log backlog (under lock): bytes of queued chunks, not yet written;
	 * while they fit in backlog_max a chunk's ring buffer space is freed
	 * when it is queued, not once it is written (worker.h). */
	uint64_t backlog, backlog_max, backlog_peak, backlog_full;
};

/* Under w->t.lock: keeps a written chunk's buffer for the next chunk, or frees
 * it (spares full, or larger than a chunk grows). */
static void keep_spare(struct kwd_worker *w, char *data, size_t cap)
{
	if (data && w->n_spare < KWD_SPARE_BUFS && cap <= KWD_SPARE_BUF_MAX) {
		w->spare[w->n_spare].data = data;
		w->spare[w->n_spare].cap = cap;
		w->spare[w->n_spare++].len = 0;
	} else {
		free(data);
	}
}

int kwd_worker_spare(struct kwd *d, struct kw_buf *out)
{
	struct kwd_worker *w = d->worker;
	int got = 0;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->t.lock);
	if (w->n_spare) {
		*out = w->spare[--w->n_spare];
		out->data[0] = '\0';
		got = 1;
	}
	pthread_mutex_unlock(&w->t.lock);
	return got;
}

/* Remembers the first write error of fd (err 0: none) for its SEAL job. */
static void note_error(struct kwd_worker *w, int fd, int err)
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

static int peek_error(struct kwd_worker *w, int fd)
{
	return fd >= 0 && (size_t)fd < w->fd_err_cap ? w->fd_err[fd] : 0;
}

static int take_error(struct kwd_worker *w, int fd)
{
	int e = 0;

	if (fd >= 0 && (size_t)fd < w->fd_err_cap) {
		e = w->fd_err[fd];
		w->fd_err[fd] = 0;
	}
	return e;
}

/* Writes a chunk of whole lines, or nothing: a failed write is cut back to
 * where the chunk began, so the log never holds a torn line. A full disk
 * (ENOSPC, EDQUOT) is waited out: the chunk is tried again every
 * KWD_DISK_RETRY_MS while the events behind it wait in the kernel's ring
 * buffer (not released), then fail closed when it is full. At stop the
 * chunk is given up unwritten and unreleased: the next collector reads
 * those events again. Returns 0 when written. */
static int write_chunk(struct kwd_worker *w, int fd, const char *data, size_t len)
{
	off_t start = lseek(fd, 0, SEEK_CUR);
	bool said = false;

	for (;;) {
		int e = kw_write_all(fd, data, len);

		if (!e) {
			if (said)
				kwd_log(NULL, LOG_NOTICE, "decision log writable again: %zu bytes written",
					len);
			return 0;
		}
		if (start >= 0 && (ftruncate(fd, start) < 0 || lseek(fd, start, SEEK_SET) < 0))
			start = -1;
		if ((e != -ENOSPC && e != -EDQUOT) || start < 0) {
			note_error(w, fd, e);
			return e;
		}
		if (!said)
			kwd_log(NULL, LOG_ERR, "decision log: %s: events wait in the kernel's ring "
				"buffer (then fail closed) until space returns", strerror(-e));
		said = true;
		if (kwd_thread_stopping(&w->t)) {
			note_error(w, fd, e);
			return e;
		}
		usleep(KWD_DISK_RETRY_MS * 1000);
	}
}

/* A chunk into the log, cut at a line into the next segment where the
 * log's bound says so. Returns 0 when written. */
static int write_log(struct kwd_worker *w, int fd, const char *data, size_t len)
{
	struct kwd_seg *s = kwd_segs_get(w->segs, fd);

	if (!s)
		return write_chunk(w, fd, data, len);
	while (len) {
		size_t part = kwd_seg_room(s, data, len);
		int e = part ? write_chunk(w, fd, data, part) : kwd_seg_roll(s, fd);

		if (!e && part)
			e = kwd_seg_wrote(s, data, part);
		if (e) {
			note_error(w, fd, e);
			return e;
		}
		data += part;
		len -= part;
	}
	return 0;
}

void kwd_job_seal(struct kwd_job *job, const struct kw_publish *pub, char *log_why,
		  size_t log_whylen)
{
	enum kw_seal_stage stage;

	job->in.transcript_hash = job->hash;
	job->in.call_count = job->count;
	job->in.iat = kwd_now_us() / 1000000;
	job->err = kw_seal_record_logged(&job->in, job->key, pub, job->record_path, &job->record,
					 &stage, job->why, sizeof(job->why), log_why, log_whylen);
	job->stage = (int)stage;
}

/* Returns false when a SEAL job went to the transparency thread, which
 * hands it back itself. */
static bool run_job(struct kwd_worker *w, struct kwd_job *job)
{
	char log_why[256] = "";
	int e;

	if (job->kind == KWD_JOB_FILE) {
		/* The fsyncs of the file and its folder: here, not on the
		 * loop (without data the loop wrote it already). */
		e = job->data ? kw_write_file_atomic(job->path, job->data, job->len, 0644) :
				kw_sync_file(job->path);
		if (e && job->result)
			*job->result = e;
		free(job->path);
		free(job->data);
		job->path = job->data = NULL;
		return true;
	}
	if (job->kind == KWD_JOB_SEGMENTS) {
		note_error(w, job->fd, kwd_segs_add(&w->segs, job->fd, job->path, job->seg_n, job->len));
		free(job->path);
		job->path = NULL;
		return true;
	}
	if (job->kind == KWD_JOB_CHECKPOINT) {
		kwd_ckpt_take(job->owner, job->tr, peek_error(w, job->fd), kwd_segs_dup(w->segs, job->fd));
		return true;
	}
	if (job->kind == KWD_JOB_SEAL && !job->err && job->ckpt)
		job->err = kwd_ckpt_bind_close(job->ckpt, &job->data, &job->len);
	/* The ring buffer lets go of the events only once their lines are
	 * in the file, and never past a chunk that could not be written
	 * (unless the chunk's session is under allow and its space was freed
	 * as it was queued, within the log backlog: backlog_add). The
	 * transcript takes the lines here, once written (and the ring buffer
	 * space freed): hashing costs about what formatting the line does,
	 * and off the loop it leaves the loop to empty ring buffers. */
	if (job->fd >= 0 && !peek_error(w, job->fd) &&
	    (!job->len || write_log(w, job->fd, job->data, job->len) == 0)) {
		if (job->cons)
			kwd_ring_release(job->cons, job->release);
		if (job->len && job->tr)
			note_error(w, job->fd, kw_transcript_append_lines(job->tr, job->data, job->len));
	}
	if (job->kind != KWD_JOB_SEAL)
		return true; /* the buffer goes to the spares, under the lock */
	free(job->data);
	job->data = NULL;
	e = job->err;
	if (job->tr) {
		/* finished on failure too: that frees it */
		int te = kw_transcript_final(job->tr, job->hash, &job->count);

		job->tr = NULL;
		if (!e)
			e = te;
	}
	if (job->fd >= 0) {
		int we = take_error(w, job->fd);

		if (!e)
			e = we;
		we = kwd_segs_finish(w->segs, job->fd);
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
		return true;
	/* The log is on disk: seal what it holds. The transparency log and
	 * its witnesses are network calls: never here, where every log is
	 * written, but on the transparency thread. */
	if (job->publish && kwd_publisher_take(w->d, job))
		return false;
	kwd_job_seal(job, NULL, log_why, sizeof(log_why));
	if (job->publish && !job->err)
		kwd_publisher_unlogged(w->d, job->record_path, "the transparency queue is full");
	return true;
}

/* Under w->t.lock: a SEAL job back to the loop, oldest first. */
static void finish_locked(struct kwd_worker *w, struct kwd_job *job)
{
	uint64_t one = 1;

	job->next = NULL;
	if (w->done_tail)
		w->done_tail->next = job;
	else
		w->done = job;
	w->done_tail = job;
	if (write(w->efd, &one, sizeof(one)) < 0)
		(void)0;
}

void kwd_worker_finish(struct kwd *d, struct kwd_job *job)
{
	struct kwd_worker *w = d->worker;

	pthread_mutex_lock(&w->t.lock);
	finish_locked(w, job);
	pthread_mutex_unlock(&w->t.lock);
}

static void *worker_main(void *arg)
{
	struct kwd_worker *w = arg;

	pthread_mutex_lock(&w->t.lock);
	for (;;) {
		struct kwd_job *job = w->head;

		if (!job) {
			if (kwd_thread_stopping(&w->t))
				break;
			pthread_cond_wait(&w->t.wake, &w->t.lock);
			continue;
		}
		w->head = job->next;
		if (!w->head)
			w->tail = NULL;
		pthread_mutex_unlock(&w->t.lock);

		if (!run_job(w, job)) {
			pthread_mutex_lock(&w->t.lock);
			continue; /* the transparency thread has it */
		}
		pthread_mutex_lock(&w->t.lock);
		if (job->kind == KWD_JOB_SEAL) {
			finish_locked(w, job);
		} else {
			if (job->kind == KWD_JOB_WRITE) {
				w->backlog -= job->len;
				keep_spare(w, job->data, job->cap);
			}
			free(job);
		}
	}
	pthread_mutex_unlock(&w->t.lock);
	return NULL;
}

int kwd_worker_start(struct kwd *d, char *err, size_t errlen)
{
	struct kwd_worker *w = calloc(1, sizeof(*w));
	struct epoll_event ev = { .events = EPOLLIN };
	int e;

	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	w->d = d;
	w->backlog_max = d->cfg.log_backlog;
	kwd_thread_init(&w->t, 0); /* no eventfd: it cannot fail */
	d->worker_w.kind = KWD_W_WORKER;
	ev.data.ptr = &d->worker_w;
	w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->efd < 0 || epoll_ctl(d->epfd, EPOLL_CTL_ADD, w->efd, &ev) < 0) {
		e = -errno;
		snprintf(err, errlen, "%s: %s", w->efd < 0 ? "eventfd" : "epoll", strerror(errno));
		goto fail;
	}
	/* ring space is released once this thread wrote it: it too must run */
	e = kwd_thread_start(&w->t, d, "kwd-io", KWD_THREAD_LOOP_PRIORITY, worker_main, w, err,
			     errlen);
	if (e)
		goto fail; /* closing efd takes it out of the epoll set */
	d->worker = w;
	return 0;
fail:
	if (w->efd >= 0)
		close(w->efd);
	kwd_thread_destroy(&w->t);
	free(w);
	return e;
}

/* Under w->t.lock: a log chunk is queued. While every queued chunk fits in
 * the backlog, its ring buffer space is freed now: a write held up by the
 * disk, or chunks queued behind others, then no longer stop the kernel from
 * recording (measured: chunks waited up to 72 ms for the I/O thread, a ring
 * buffer of 256 KiB holds ~10 ms at 200 k decisions/s). Past the bound the
 * space is freed once written, as without a backlog: the ring buffers then
 * fill and the kernel counts and marks what it cannot record. */
static void backlog_add(struct kwd_worker *w, struct kwd_job *job)
{
	w->backlog += job->len;
	if (w->backlog > w->backlog_peak)
		w->backlog_peak = w->backlog;
	if (!job->cons || !job->backlog_ok || !w->backlog_max)
		return;
	if (w->backlog > w->backlog_max) {
		w->backlog_full++;
		return;
	}
	kwd_ring_release(job->cons, job->release);
	job->cons = NULL;
}

void kwd_worker_submit(struct kwd *d, struct kwd_job *job)
{
	struct kwd_worker *w = d->worker;

	job->next = NULL;
	pthread_mutex_lock(&w->t.lock);
	if (job->kind == KWD_JOB_WRITE)
		backlog_add(w, job);
	if (w->tail)
		w->tail->next = job;
	else
		w->head = job;
	w->tail = job;
	pthread_cond_signal(&w->t.wake);
	pthread_mutex_unlock(&w->t.lock);
}

int kwd_worker_write(struct kwd *d, int fd, char *data, size_t len, size_t cap,
		     struct kw_transcript *tr, unsigned long *cons, uint64_t release,
		     bool backlog_ok)
{
	struct kwd_job *job = calloc(1, sizeof(*job));

	if (!job) {
		free(data);
		return -ENOMEM;
	}
	job->kind = KWD_JOB_WRITE;
	job->fd = fd;
	job->data = data;
	job->len = len;
	job->cap = cap;
	job->tr = tr;
	job->cons = cons;
	job->release = release;
	job->backlog_ok = backlog_ok;
	kwd_worker_submit(d, job);
	return 0;
}

struct kwd_job *kwd_worker_done(struct kwd *d)
{
	struct kwd_worker *w = d->worker;
	struct kwd_job *job;
	uint64_t n;

	if (!w)
		return NULL;
	if (read(w->efd, &n, sizeof(n)) < 0)
		(void)0; /* EAGAIN: nothing new since the last drain */
	pthread_mutex_lock(&w->t.lock);
	job = w->done;
	if (job) {
		w->done = job->next;
		if (!w->done)
			w->done_tail = NULL;
		job->next = NULL;
	}
	pthread_mutex_unlock(&w->t.lock);
	return job;
}

json_t *kwd_worker_backlog_status(struct kwd *d)
{
	struct kwd_worker *w = d->worker;
	json_t *o;

	if (!w)
		return NULL;
	pthread_mutex_lock(&w->t.lock);
	o = json_pack("{s:I, s:I, s:I, s:I}", "max_bytes", (json_int_t)w->backlog_max, "bytes",
		      (json_int_t)w->backlog, "peak_bytes", (json_int_t)w->backlog_peak,
		      "full_chunks", (json_int_t)w->backlog_full);
	pthread_mutex_unlock(&w->t.lock);
	return o;
}

void kwd_worker_stop(struct kwd *d)
{
	struct kwd_worker *w = d->worker;

	if (!w)
		return;
	kwd_thread_stop(&w->t);
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, w->efd, NULL);
}

void kwd_worker_free(struct kwd *d)
{
	struct kwd_worker *w = d->worker;

	if (!w)
		return;
	close(w->efd);
	free(w->fd_err);
	kwd_segs_free(w->segs);
	while (w->n_spare)
		free(w->spare[--w->n_spare].data);
	kwd_thread_destroy(&w->t);
	free(w);
	d->worker = NULL;
}
