/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP service of the log (kwitness tlog serve) and the witness
 * (kwitness witness serve): one connection at a time (the log: a fixed
 * number at once), one bounded request each (http.c), so a slow client
 * holds a connection slot for at most http.c's timeouts; put nginx in front
 * for public read traffic. */
#ifndef KWITNESS_TLOG_SERVER_H
#define KWITNESS_TLOG_SERVER_H

#include <netdb.h>
#include <stddef.h>

#include "tlog/http.h"

typedef void (*tlog_server_handler)(void *ctx, const struct http_request *req, int fd);

struct tlog_server {
	int fd;
	char host[NI_MAXHOST]; /* where it listens, numeric */
	char port[NI_MAXSERV];
};

/* Listens on ADDR:PORT (port 0: any free one). 0, -EINVAL when listen_at is
 * not ADDR:PORT, or another -errno; err says why either way. */
int tlog_server_listen(struct tlog_server *s, const char *listen_at, char *err, size_t errlen);
/* Serves requests of at most max_body bytes with h until accepting fails:
 * returns -errno with err, and closes the socket. */
int tlog_server_run(struct tlog_server *s, size_t max_body, tlog_server_handler h, void *ctx,
		    char *err, size_t errlen);

/* The same with nthreads connections served at once (at most
 * TLOG_SERVER_THREADS_MAX; 0: that many), for a handler that may block or
 * be slow (server_threads.c). h is called from several threads at once. */
#define TLOG_SERVER_THREADS_MAX 64
int tlog_server_run_threads(struct tlog_server *s, size_t max_body, tlog_server_handler h,
			    void *ctx, unsigned nthreads, char *err, size_t errlen);
/* One request read from c and handed to h (or answered 400/413). */
void tlog_server_serve_one(int c, size_t max_body, struct kw_buf *buf, tlog_server_handler h,
			   void *ctx);

#endif
