/* SPDX-License-Identifier: Apache-2.0 */
/* Group commit for a shared log writer (kwitness tlog serve): records that
 * arrive at once are appended in one batch, with one checkpoint, one round
 * of cosignatures and one flush of their proofs to disk, instead of about
 * ten fsyncs each. Each submitter is answered when its entry is durable and
 * its proof is made (publish.h, steps 4 to 6). */
#ifndef KWITNESS_COLLECTOR_PUBLISH_BATCH_H
#define KWITNESS_COLLECTOR_PUBLISH_BATCH_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "lib/buf.h"
#include "collector/publish.h"

/* The most records one batch takes: what a batch appends stays bounded. */
#define KW_PUBLISH_BATCH_MAX 1024

/* One record's steps 4 to 6: in rec and url; out ret (0 or -errno), proof,
 * why. */
struct kw_publish_job {
	const json_t *rec;
	const char *url;
	struct kw_buf *proof;
	char *why;
	size_t whylen;
	int ret;
	bool done;
	struct kw_publish_job *next;
};

/* Steps 4 to 6 for n records signed with their URLs, on pub's local log,
 * in one append. Each job's ret says how it went; a failure of the batch
 * (the append, the witness policy) is every job's. */
void kw_publish_logged_many(const struct kw_publish *pub, struct kw_publish_job *const *jobs,
			    size_t n);

/* Writes a record's proof where its URL points (DIR/kwitness/<name>),
 * atomically; sync: fsync it too (a batch flushes once instead). */
int kw_publish_proof_file(int dirfd, const char *url, const struct kw_buf *proof, bool sync);

/* A thread that takes the jobs submitted while it commits the previous
 * batch. Submitters wait; their number bounds the queue. */
struct kw_publish_batcher {
	const struct kw_publish *pub;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t more, done;
	struct kw_publish_job *head, **tail;
	bool stop, started;
	unsigned long batches, jobs; /* committed so far */
};

int kw_publish_batcher_start(struct kw_publish_batcher *b, const struct kw_publish *pub);
/* Queues job and waits until its batch is committed: returns job->ret. */
int kw_publish_batcher_submit(struct kw_publish_batcher *b, struct kw_publish_job *job);
/* Commits what is queued and ends the thread. */
void kw_publish_batcher_stop(struct kw_publish_batcher *b);

#endif
