/* SPDX-License-Identifier: Apache-2.0 */
/* The collector's I/O worker: one thread for the blocking file work (log
 * chunks; at close the last lines, fsync, and sealing the record), so the
 * thread that empties ring buffers never waits for a disk. Jobs run in the
 * order they were submitted. A SEAL job comes back, finished, through a queue
 * the submitter drains (kw_worker_done) when kw_worker_notify_fd is readable;
 * the worker itself knows nothing of what the job belongs to. */
#ifndef KWITNESS_COLLECTOR_WORKER_H
#define KWITNESS_COLLECTOR_WORKER_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "kwitness/digest.h"
#include "kwitness/key.h"
#include "kwitness/record.h"

/* KW_JOB_SEAL's stage when the log could not be finished (no record). */
#define KW_SEAL_NOT_RUN (-1)

enum kw_job_kind { KW_JOB_WRITE, KW_JOB_SEAL };

struct kw_job {
	enum kw_job_kind kind;
	int fd;                  /* a SEAL job closes it (after fsync) */
	char *data;              /* owned; written to fd, then freed */
	size_t len;
	/* SEAL: the record to seal once the log is on disk. The strings belong
	 * to owner, which is handed over until the job comes back. */
	void *owner;
	struct kw_record_input in;
	const struct kw_key *key;
	const char *record_path;
	char hash[KW_DIGEST_STR_MAX];
	uint64_t count;
	int err;                 /* an error seen before the worker ran (or by it) */
	/* SEAL, set by the worker */
	json_t *record;          /* the signed record (owned by the job's owner) */
	int stage;               /* enum kw_seal_stage, or KW_SEAL_NOT_RUN */
	char why[512];
	struct kw_job *next;
};

struct kw_worker;

/* Starts the thread. 0, or -errno with err. */
int kw_worker_start(struct kw_worker **out, char *err, size_t errlen);
/* An eventfd, readable when a SEAL job is done. */
int kw_worker_notify_fd(const struct kw_worker *w);
/* Queues a job (takes it; a WRITE job is freed by the worker, a SEAL job
 * comes back through kw_worker_done). */
void kw_worker_submit(struct kw_worker *w, struct kw_job *job);
/* kw_logwriter_submit_fn (ctx: the worker): the chunk as a WRITE job. */
int kw_worker_write(void *ctx, int fd, char *data, size_t len);
/* The next finished SEAL job, oldest first, or NULL. */
struct kw_job *kw_worker_done(struct kw_worker *w);
/* Runs every queued job, then stops the thread; finished jobs stay for
 * kw_worker_done. */
void kw_worker_stop(struct kw_worker *w);
/* After kw_worker_stop and the last kw_worker_done. */
void kw_worker_free(struct kw_worker *w);

#endif
