/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP service with several connections at once, see server.h: a fixed
 * pool of threads, each accepting on the one socket and serving its
 * connection to the end, so a handler may block (a batched append waits for
 * its batch) without holding the others. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/buf.h"
#include "tlog/server.h"

struct pool {
	struct tlog_server *s;
	size_t max_body;
	tlog_server_handler h;
	void *ctx;
	pthread_mutex_t mu;
	int failed; /* the first accept error: -errno, 0 while serving */
};

static void *serve_loop(void *arg)
{
	struct pool *p = arg;
	struct kw_buf buf = { 0 };

	for (;;) {
		int c = accept4(p->s->fd, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE ||
			    errno == ENFILE)
				continue;
			pthread_mutex_lock(&p->mu);
			if (!p->failed)
				p->failed = -errno;
			pthread_mutex_unlock(&p->mu);
			break;
		}
		tlog_server_serve_one(c, p->max_body, &buf, p->h, p->ctx);
		close(c);
	}
	kw_buf_free(&buf);
	return NULL;
}

int tlog_server_run_threads(struct tlog_server *s, size_t max_body, tlog_server_handler h,
			    void *ctx, unsigned nthreads, char *err, size_t errlen)
{
	struct pool p = { .s = s, .max_body = max_body, .h = h, .ctx = ctx,
			  .mu = PTHREAD_MUTEX_INITIALIZER };
	pthread_t t[TLOG_SERVER_THREADS_MAX];
	unsigned started = 0;

	if (nthreads < 1 || nthreads > TLOG_SERVER_THREADS_MAX)
		nthreads = TLOG_SERVER_THREADS_MAX;
	while (started < nthreads && !pthread_create(&t[started], NULL, serve_loop, &p))
		started++;
	if (!started) {
		snprintf(err, errlen, "cannot start a thread");
		close(s->fd);
		s->fd = -1;
		return -EAGAIN;
	}
	/* The threads end only when accepting fails: then every one does. */
	for (unsigned i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	snprintf(err, errlen, "accept: %s", strerror(-p.failed));
	close(s->fd);
	s->fd = -1;
	return p.failed;
}
