/* SPDX-License-Identifier: Apache-2.0 */
#ifndef KWITNESSD_WORKER_H
#define KWITNESSD_WORKER_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "lib/buf.h"
#include "trace/record.h"
#include "collector/seal.h"

/* Written log chunk buffers the I/O thread keeps for the next chunks (a
 * busy log would otherwise grow each one from nothing: copies, page faults
 * and the unmapping's TLB flushes), and the largest it keeps. At most
 * KWD_SPARE_BUFS * KWD_SPARE_BUF_MAX bytes held (8 MiB). Two per busy
 * session for eight: with four, eight busy sessions spent 15% of the loop
 * zeroing new pages (bench_collector kmulti). */
#define KWD_SPARE_BUFS 16
#define KWD_SPARE_BUF_MAX (512 * 1024)
/* A full disk: a log chunk is tried again this often. */
#define KWD_DISK_RETRY_MS 200

struct kwd;
struct kw_transcript;
struct kw_publish;
struct kwd_ckpt;

/* Work for the I/O thread, in order: a session's bundle file (at open), log
 * chunks, then the session's seal. */
#define KWD_SEAL_NOT_RUN (-1) /* the log could not be finished: no record */
/* CHECKPOINT: owner is a checkpoint request (checkpoint.c), made from tr
 * once the chunks before it are hashed. */
/* SEGMENTS: fd, segment seg_n of the log at path (1: the log itself), is cut
 * into segments of len bytes (segwrite.h). */
enum kwd_job_kind { KWD_JOB_WRITE, KWD_JOB_FILE, KWD_JOB_SEAL, KWD_JOB_CHECKPOINT, KWD_JOB_SEGMENTS };
struct kwd_job {
	enum kwd_job_kind kind;
	int fd;                  /* closed (after fsync) by a SEAL job */
	char *data;              /* owned */
	size_t len;
	size_t cap;              /* WRITE: data's allocation, for the spares */
	/* FILE: data written to path atomically (synced), or without data
	 * path synced; a failure's -errno goes to *result, which the job's
	 * owner reads once a later SEAL job came back */
	char *path;              /* owned */
	int *result;
	/* WRITE, SEAL: once data is in the file, its lines are hashed into the
	 * session's transcript (the loop no longer touches it) and the ring
	 * buffer's consumer position moves to release (NULL: nothing) */
	struct kw_transcript *tr;
	unsigned long *cons;
	uint64_t release;
	/* WRITE: the ring space may be freed when queued, within log_backlog
	 * (only for sessions under on_record_failure: allow) */
	bool backlog_ok;
	/* SEAL: the record to seal once the log is on disk. The strings belong
	 * to the session, which is handed over until the job comes back. */
	void *owner;
	struct kw_record_input in;
	const struct kw_key *key;
	const char *record_path;
	const struct kw_publish *publish; /* NULL: no transparency log */
	struct kwd_ckpt *ckpt;   /* the session's checkpoints, named in the close entry */
	uint64_t seg_n;          /* SEGMENTS: the segment fd is */
	int err;                 /* an error seen before the worker ran (or by it) */
	/* SEAL, set by the worker */
	char hash[KW_DIGEST_STR_MAX]; /* the transcript, finished after the last lines */
	uint64_t count;
	json_t *record;          /* the signed record (owned) */
	int stage;               /* enum kw_seal_stage, or KWD_SEAL_NOT_RUN */
	char why[512];
	struct kwd_job *next;
};

/* worker.c: one thread for blocking file work (log writes, fsync, records),
 * so the loop keeps consuming ring buffers while a disk is slow. */
int kwd_worker_start(struct kwd *d, char *err, size_t errlen);
/* Queues a job (takes it; a SEAL job comes back through kwd_worker_done). */
void kwd_worker_submit(struct kwd *d, struct kwd_job *job);
/* Queues a log chunk (data: len bytes of whole lines in a buffer of cap,
 * which the worker keeps as a spare once written); once written, the lines
 * are hashed into *tr and *cons moves to release (cons may be NULL). With
 * backlog_ok (a session under on_record_failure: allow) and while the queued
 * chunks fit in kwitnessd.conf's log_backlog, *cons moves now instead: a
 * crash (or a stop on a full disk) then loses what was queued, and the next
 * collector counts it as a gap, where without the backlog it would read
 * those events again from the ring buffer. Under deny a permitted action's
 * event stays in the ring buffer until its line is in the file. */
int kwd_worker_write(struct kwd *d, int fd, char *data, size_t len, size_t cap,
		     struct kw_transcript *tr, unsigned long *cons, uint64_t release,
		     bool backlog_ok);
/* The log backlog: {max_bytes, bytes, peak_bytes, full_chunks} (full_chunks:
 * chunks queued past max_bytes, whose ring space waited for their write), or
 * NULL before the worker starts. */
json_t *kwd_worker_backlog_status(struct kwd *d);
/* Main thread: a written chunk's buffer into *out (len 0), 1; or 0 (none
 * spare: *out untouched). */
int kwd_worker_spare(struct kwd *d, struct kw_buf *out);
/* Main thread: the next SEAL job the worker has finished, oldest first, or
 * NULL. The loop drains these when the worker's eventfd is readable. */
struct kwd_job *kwd_worker_done(struct kwd *d);
/* Runs every queued job and stops the thread; finished jobs stay for
 * kwd_worker_done. */
void kwd_worker_stop(struct kwd *d);
/* Any thread: a SEAL job is finished, back to the loop (kwd_worker_done). */
void kwd_worker_finish(struct kwd *d, struct kwd_job *job);
/* Seals a SEAL job's record once its log is on disk (pub NULL: without
 * transparency); log_why says why a record was not logged. */
void kwd_job_seal(struct kwd_job *job, const struct kw_publish *pub, char *log_why,
		  size_t log_whylen);
/* After kwd_worker_stop and the last kwd_worker_done. */
void kwd_worker_free(struct kwd *d);

#endif
