/* SPDX-License-Identifier: Apache-2.0 */
/* Group commit of log appends, see publish_batch.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/publish_batch.h"
#include "tlog/anchor.h"
#include "tlog/cosign.h"
#include "tlog/log.h"
#include "tlog/proof.h"

static void fail_all(struct kw_publish_job *const *jobs, size_t n, int ret, const char *why)
{
	for (size_t i = 0; i < n; i++) {
		if (jobs[i]->ret)
			continue;
		jobs[i]->ret = ret;
		snprintf(jobs[i]->why, jobs[i]->whylen, "%s", why);
	}
}

/* The witnesses asked once for the new checkpoint, the policy checked: 0,
 * or -errno with why. */
static int cosign(const struct kw_publish *pub, struct tlog_log *l, struct tlog_note *n,
		  struct tlog_checkpoint *cp, char *why, size_t whylen)
{
	const struct kw_buf *note;
	size_t cosigned = 0;

	why[0] = '\0';
	for (size_t i = 0; i < pub->nwitnesses; i++) {
		char wwhy[256];

		/* A witness that fails is one cosignature fewer; the policy decides. */
		if (tlog_log_cosign(l, pub->witnesses[i].submit, pub->witnesses[i].ctx, wwhy,
				    sizeof(wwhy)))
			snprintf(why, whylen, "witness %zu: %s", i + 1, wwhy);
	}
	note = tlog_log_checkpoint(l);
	if (tlog_note_parse(note->data, note->len, n) ||
	    tlog_checkpoint_parse(n->text, n->text_len, cp)) {
		snprintf(why, whylen, "log: the new checkpoint does not parse");
		return -EBADMSG;
	}
	if (pub->policy && tlog_policy_check(pub->policy, n, cp, &cosigned) != TLOG_POLICY_OK) {
		char prev[256];

		snprintf(prev, sizeof(prev), "%.255s", why);
		snprintf(why, whylen, "witness policy not met (%zu cosigned)%s%.255s", cosigned,
			 prev[0] ? "; " : "", prev);
		return -EPERM;
	}
	return 0;
}

/* Each job's proof, made and written under DIR/kwitness/ (the files reach
 * the disk together, one flush after the last). */
static void prove_all(struct tlog_log *l, const struct tlog_checkpoint *cp,
		      struct kw_publish_job *const *jobs, const uint64_t *index, size_t n)
{
	const struct kw_buf *note = tlog_log_checkpoint(l);
	struct tlog_proof *p = calloc(1, sizeof(*p));
	int dirfd = tlog_log_dirfd(l), flushed;

	for (size_t i = 0; i < n; i++) {
		struct kw_publish_job *j = jobs[i];

		if (j->ret)
			continue;
		j->ret = p ? tlog_prove(dirfd, index[i], cp->size, &cp->root, note->data, note->len,
					p) : -ENOMEM;
		if (!j->ret)
			j->ret = tlog_proof_format(p, j->proof);
		if (!j->ret)
			j->ret = kw_publish_proof_file(dirfd, j->url, j->proof, n == 1);
		if (j->ret)
			snprintf(j->why, j->whylen, "proof: %s", strerror(-j->ret));
	}
	free(p);
	if (n == 1)
		return;
	/* One flush of the file system for the batch's proof files and names. */
	flushed = syncfs(dirfd) < 0 ? -errno : 0;
	if (flushed)
		fail_all(jobs, n, flushed, "proof: cannot flush the proof files");
}

void kw_publish_logged_many(const struct kw_publish *pub, struct kw_publish_job *const *jobs,
			    size_t n)
{
	struct kw_buf *entries = calloc(n ? n : 1, sizeof(*entries));
	const void **e = calloc(n ? n : 1, sizeof(*e));
	size_t *len = calloc(n ? n : 1, sizeof(*len));
	uint64_t *index = calloc(n ? n : 1, sizeof(*index));
	struct kw_publish_job **ok = calloc(n ? n : 1, sizeof(*ok));
	struct tlog_log *l = NULL;
	struct tlog_note note;
	struct tlog_checkpoint cp;
	char why[600];
	uint64_t first;
	size_t m = 0;
	int ret;

	for (size_t i = 0; i < n; i++) {
		jobs[i]->ret = 0;
		jobs[i]->why[0] = '\0';
	}
	if (!entries || !e || !len || !index || !ok) {
		fail_all(jobs, n, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (anchor_claim_bytes(jobs[i]->rec, &entries[i])) {
			jobs[i]->ret = -EINVAL;
			snprintf(jobs[i]->why, jobs[i]->whylen, "log: the record has no anchor-v1 form");
			continue;
		}
		e[m] = entries[i].data;
		len[m] = entries[i].len;
		ok[m++] = jobs[i];
	}
	if (!m)
		goto out;
	ret = tlog_log_open(pub->log_dir, pub->log_key, &l);
	if (ret) {
		snprintf(why, sizeof(why), "log: open %s: %s", pub->log_dir, strerror(-ret));
		fail_all(ok, m, ret, why);
		goto out;
	}
	/* The log stays locked throughout so the checkpoint proven is the one
	 * cosigned. */
	ret = tlog_log_append(l, e, len, m, &first);
	if (ret) {
		snprintf(why, sizeof(why), "log: append: %s", strerror(-ret));
		fail_all(ok, m, ret, why);
		goto out;
	}
	ret = cosign(pub, l, &note, &cp, why, sizeof(why));
	if (ret) {
		fail_all(ok, m, ret, why);
		goto out;
	}
	/* A witness that failed without sinking the policy is still said. */
	for (size_t i = 0; i < m; i++) {
		index[i] = first + i;
		snprintf(ok[i]->why, ok[i]->whylen, "%s", why);
	}
	prove_all(l, &cp, ok, index, m);
out:
	tlog_log_close(l);
	for (size_t i = 0; entries && i < n; i++)
		kw_buf_free(&entries[i]);
	free(entries);
	free(e);
	free(len);
	free(index);
	free(ok);
}

static void *batcher_loop(void *arg)
{
	struct kw_publish_batcher *b = arg;
	struct kw_publish_job **batch = calloc(KW_PUBLISH_BATCH_MAX, sizeof(*batch));

	pthread_mutex_lock(&b->mu);
	for (;;) {
		size_t n = 0;

		while (!b->head && !b->stop)
			pthread_cond_wait(&b->more, &b->mu);
		if (!b->head)
			break;
		/* Everything that queued while the last batch committed. */
		while (b->head && n < KW_PUBLISH_BATCH_MAX && batch) {
			batch[n++] = b->head;
			b->head = b->head->next;
		}
		if (!b->head)
			b->tail = &b->head;
		pthread_mutex_unlock(&b->mu);
		if (batch)
			kw_publish_logged_many(b->pub, batch, n);
		pthread_mutex_lock(&b->mu);
		if (!batch) { /* no room to batch in: each job fails alone */
			struct kw_publish_job *j = b->head;

			b->head = j->next;
			if (!b->head)
				b->tail = &b->head;
			j->ret = -ENOMEM;
			snprintf(j->why, j->whylen, "out of memory");
			j->done = true;
		}
		for (size_t i = 0; i < n; i++)
			batch[i]->done = true;
		b->batches++;
		b->jobs += n;
		pthread_cond_broadcast(&b->done);
	}
	pthread_mutex_unlock(&b->mu);
	free(batch);
	return NULL;
}

int kw_publish_batcher_start(struct kw_publish_batcher *b, const struct kw_publish *pub)
{
	int e;

	memset(b, 0, sizeof(*b));
	b->pub = pub;
	b->tail = &b->head;
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->more, NULL);
	pthread_cond_init(&b->done, NULL);
	e = pthread_create(&b->thread, NULL, batcher_loop, b);
	b->started = e == 0;
	return -e;
}

int kw_publish_batcher_submit(struct kw_publish_batcher *b, struct kw_publish_job *job)
{
	job->done = false;
	job->next = NULL;
	pthread_mutex_lock(&b->mu);
	*b->tail = job;
	b->tail = &job->next;
	pthread_cond_signal(&b->more);
	while (!job->done)
		pthread_cond_wait(&b->done, &b->mu);
	pthread_mutex_unlock(&b->mu);
	return job->ret;
}

void kw_publish_batcher_stop(struct kw_publish_batcher *b)
{
	if (!b->started)
		return;
	pthread_mutex_lock(&b->mu);
	b->stop = true;
	pthread_cond_signal(&b->more);
	pthread_mutex_unlock(&b->mu);
	pthread_join(b->thread, NULL);
	b->started = false;
}
