/* SPDX-License-Identifier: Apache-2.0 */
/* The verifying thread ahead of the writer, see ingest_pipe.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "estate/ingest_pipe.h"

/* Entries in flight: enough to ride over a slow commit or COPY block,
 * small enough to stay in the caches (each slot holds a 4 KiB object). */
#define PIPE_SLOTS 512

struct slot {
	struct estate_entry e;
	char *buf;                   /* the line, then its string columns */
	size_t cap;
};

/* One verifying thread for the whole ingest, given one record at a time:
 * a thread per record cost its creation and, at its exit, the return of
 * its stack to the kernel (madvise, a TLB flush on every core): about
 * 1.3 s of system time per million entries. */
struct estate_pipe {
	pthread_mutex_t mu;
	pthread_cond_t not_full, not_empty, wake;
	pthread_t thread;
	bool started, quit, job;     /* job: a record given, not yet verified */
	uint64_t head, tail;         /* entries put, entries taken */
	bool done, stop;
	int (*verify)(void *arg);
	void *arg;
	int verify_rc;
	struct slot slots[PIPE_SLOTS];
};

struct estate_pipe *estate_pipe_new(void)
{
	struct estate_pipe *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->not_full, NULL);
	pthread_cond_init(&p->not_empty, NULL);
	pthread_cond_init(&p->wake, NULL);
	return p;
}

void estate_pipe_free(struct estate_pipe *p)
{
	if (!p)
		return;
	if (p->started) {
		pthread_mutex_lock(&p->mu);
		p->quit = true;
		pthread_cond_signal(&p->wake);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->thread, NULL);
	}
	for (size_t i = 0; i < PIPE_SLOTS; i++)
		free(p->slots[i].buf);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->not_full);
	pthread_cond_destroy(&p->not_empty);
	pthread_cond_destroy(&p->wake);
	free(p);
}

struct estate_entry *estate_pipe_slot(struct estate_pipe *p, uint64_t line, const char *text,
				      size_t len, bool *oom)
{
	struct slot *s;
	bool stop;

	pthread_mutex_lock(&p->mu);
	while (!p->stop && p->head - p->tail == PIPE_SLOTS)
		pthread_cond_wait(&p->not_full, &p->mu);
	stop = p->stop;
	pthread_mutex_unlock(&p->mu);
	if (stop)
		return NULL;
	/* Slots from tail on are the writer's until taken; head is ours. */
	s = &p->slots[p->head % PIPE_SLOTS];
	if (s->cap < 2 * len + 1) {
		char *b = realloc(s->buf, 2 * len + 1);

		if (!b) {
			*oom = true;
			return NULL;
		}
		s->buf = b;
		s->cap = 2 * len + 1;
	}
	memcpy(s->buf, text, len);
	if (estate_entry_parse_canonical(&s->e, line, s->buf, len, s->buf + len)) {
		/* Not an object with a tool: the log check judges the log; the
		 * row still keeps the line. */
		memset(&s->e, 0, sizeof(s->e));
		s->e.line = line;
		s->e.tool = "";
		s->e.text = s->buf;
		s->e.len = len;
	}
	return &s->e;
}

void estate_pipe_push(struct estate_pipe *p)
{
	pthread_mutex_lock(&p->mu);
	p->head++;
	pthread_cond_signal(&p->not_empty);
	pthread_mutex_unlock(&p->mu);
}

static void *verify_thread(void *arg)
{
	struct estate_pipe *p = arg;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		int rc;

		while (!p->job && !p->quit)
			pthread_cond_wait(&p->wake, &p->mu);
		if (!p->job)
			break;
		pthread_mutex_unlock(&p->mu);
		rc = p->verify(p->arg);
		pthread_mutex_lock(&p->mu);
		p->job = false;
		p->verify_rc = rc;
		p->done = true;
		pthread_cond_signal(&p->not_empty);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int estate_pipe_run(struct estate_pipe *p, int (*verify)(void *arg), void *arg,
		    int (*store)(void *ctx, struct estate_entry *e), void *ctx, int *store_rc)
{
	uint64_t from, to;
	int e;

	*store_rc = 0;
	if (!p->started) {
		e = pthread_create(&p->thread, NULL, verify_thread, p);
		if (e) {
			errno = e;
			return -1;
		}
		p->started = true;
	}
	/* The thread is idle between records: it waits for job. */
	pthread_mutex_lock(&p->mu);
	p->head = p->tail = 0;
	p->done = p->stop = false;
	p->verify = verify;
	p->arg = arg;
	p->job = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->mu);
	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (p->head == p->tail && !p->done)
			pthread_cond_wait(&p->not_empty, &p->mu);
		from = p->tail;
		to = p->head;
		pthread_mutex_unlock(&p->mu);
		if (from == to)
			break; /* done, and every entry taken */
		/* What was put so far, a quarter ring at a time: one lock per
		 * run of entries, and room for the verifier early. */
		if (to - from > PIPE_SLOTS / 4)
			to = from + PIPE_SLOTS / 4;
		for (uint64_t i = from; i < to; i++) {
			struct estate_entry *en = &p->slots[i % PIPE_SLOTS].e;

			if (!*store_rc)
				*store_rc = store(ctx, en);
			estate_entry_clear(en);
		}
		pthread_mutex_lock(&p->mu);
		p->tail = to;
		p->stop = *store_rc != 0;
		pthread_cond_signal(&p->not_full);
		pthread_mutex_unlock(&p->mu);
	}
	/* done was set after verify returned: the thread waits for the next. */
	return p->verify_rc;
}
