// SPDX-License-Identifier: Apache-2.0
/* The metrics endpoint: its own thread, its own poll set, answering
 * GET /metrics and GET /healthz over HTTP/1.x, one request per connection.
 * Nothing here touches the loop's state but the snapshot and counters
 * metrics.c publishes. Every scraper is treated as hostile: a request head
 * of at most KWD_METRICS_REQUEST_MAX bytes, KWD_METRICS_CONN_MAX connections
 * at once (one more is told 503 and closed), and KWD_METRICS_DEADLINE_MS
 * from accept to the last byte written, after which it is dropped; all
 * sockets are non-blocking, so one slow client cannot hold up another. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "harden.h"
#include "kwd.h"
#include "metrics.h"
#include "metrics_request.h"
#include "thread.h"
#include "util.h"

#define KWD_METRICS_CONN_MAX 8
#define KWD_METRICS_DEADLINE_MS 5000

struct conn {
	int fd;
	int64_t deadline_ms;
	size_t in_len;
	char in[KWD_METRICS_REQUEST_MAX];
	struct kw_buf out; /* the response, once the request is read */
	size_t out_off;
	bool writing;
};

static struct {
	struct kwd *d;
	int listen_fd;
	struct kwd_thread t; /* its wake_fd: polled for the stop */
	struct kwd_metrics_addr addr;
	struct conn conns[KWD_METRICS_CONN_MAX];
} h = { .listen_fd = -1, .t.wake_fd = -1 };

static int listen_unix(struct kwd *d, char *err, size_t errlen)
{
	char dir[sizeof(h.addr.unix_path)], *slash;
	struct stat st;
	mode_t old;
	int e;

	/* The folder must be root's alone: else the node could be swapped. */
	snprintf(dir, sizeof(dir), "%s", h.addr.unix_path);
	slash = strrchr(dir, '/');
	slash[slash == dir] = '\0';
	e = kwd_check_dir("metrics socket folder", dir, err, errlen);
	if (e)
		return e;
	if (lstat(h.addr.unix_path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "metrics: %s exists and is not a socket",
				 h.addr.unix_path);
			return -EEXIST;
		}
		unlink(h.addr.unix_path); /* left by a collector that stopped */
	}
	(void)d;
	old = umask(0177); /* 0600: root scrapes it, or a proxy running as root */
	e = bind(h.listen_fd, (struct sockaddr *)&h.addr.sa, h.addr.len);
	umask(old);
	return e < 0 ? -errno : 0;
}

int kwd_metrics_listen(struct kwd *d, char *err, size_t errlen)
{
	int one = 1, e;

	h.d = d;
	if (!d->cfg.metrics_addr)
		return 0;
	e = kwd_metrics_parse_addr(d->cfg.metrics_addr, &h.addr, err, errlen);
	if (e)
		return e;
	h.listen_fd = socket(h.addr.sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	e = h.listen_fd < 0 ? -errno : kwd_thread_init(&h.t, KWD_THREAD_EVENTFD);
	if (e) {
		snprintf(err, errlen, "metrics: socket: %s", strerror(-e));
		return e;
	}
	if (h.addr.is_unix) {
		e = listen_unix(d, err, errlen);
		if (e && !err[0])
			snprintf(err, errlen, "metrics: %s: %s", h.addr.unix_path, strerror(-e));
	} else {
		setsockopt(h.listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		e = bind(h.listen_fd, (struct sockaddr *)&h.addr.sa, h.addr.len) < 0 ? -errno : 0;
		if (e)
			snprintf(err, errlen, "metrics: %s: %s", d->cfg.metrics_addr, strerror(-e));
	}
	if (!e && listen(h.listen_fd, 16) < 0) {
		e = -errno;
		snprintf(err, errlen, "metrics: listen: %s", strerror(errno));
	}
	return e;
}

static void conn_close(struct conn *c)
{
	close(c->fd);
	kw_buf_free(&c->out);
	c->fd = -1;
	c->in_len = c->out_off = 0;
	c->writing = false;
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	default: return "Service Unavailable";
	}
}

/* The whole response into c->out: head, and the body unless HEAD. */
static void respond(struct conn *c, int status, const char *type, const struct kw_buf *body,
		    bool head_only)
{
	char head[256];
	size_t blen = body ? body->len : 0;
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
			 status, reason(status), type, blen);

	kw_buf_reset(&c->out);
	if (kw_buf_append(&c->out, head, (size_t)n) ||
	    (!head_only && blen && kw_buf_append(&c->out, body->data, blen))) {
		conn_close(c);
		return;
	}
	c->writing = true;
	c->out_off = 0;
}

static void serve(struct conn *c, const struct kwd_metrics_request *req)
{
	struct kw_buf body = { 0 };
	int status;

	if (req->target == KWD_MT_METRICS) {
		status = kwd_metrics_render(h.d, &body) ? 500 : 200;
		respond(c, status, "text/plain; version=0.0.4; charset=utf-8", &body, req->head);
	} else {
		status = kwd_metrics_health(h.d, &body);
		respond(c, status, "text/plain; charset=utf-8", &body, req->head);
	}
	kw_buf_free(&body);
}

static void on_readable(struct conn *c)
{
	struct kwd_metrics_request req;
	ssize_t n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);
	int r;

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		conn_close(c);
		return;
	}
	if (n < 0)
		return;
	c->in_len += (size_t)n;
	r = kwd_metrics_parse_request(c->in, c->in_len, &req);
	if (r == 1)
		serve(c, &req);
	else if (r > 1)
		respond(c, r, "text/plain; charset=utf-8", NULL, false);
}

static void on_writable(struct conn *c)
{
	ssize_t n = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off,
			 MSG_DONTWAIT | MSG_NOSIGNAL);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->out_off += (size_t)n;
	if (c->out_off == c->out.len)
		conn_close(c);
}

static void accept_all(void)
{
	static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 5\r\n"
				   "Connection: close\r\n\r\nbusy\n";
	int fd;

	while ((fd = accept4(h.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct conn *c = NULL;

		for (unsigned i = 0; i < KWD_METRICS_CONN_MAX && !c; i++)
			if (h.conns[i].fd < 0)
				c = &h.conns[i];
		if (!c) {
			/* every slot taken (a flood, or stalled scrapers): the
			 * newcomer hears so at once, best effort, and goes */
			if (send(fd, busy, sizeof(busy) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
				(void)0;
			close(fd);
			continue;
		}
		c->fd = fd;
		c->deadline_ms = kwd_now_ms() + KWD_METRICS_DEADLINE_MS;
	}
}

static void *metrics_thread(void *arg)
{
	struct pollfd pfd[KWD_METRICS_CONN_MAX + 2];

	(void)arg;
	for (;;) {
		int64_t now = kwd_now_ms(), wait = KWD_METRICS_DEADLINE_MS;
		unsigned n = 2;

		pfd[0] = (struct pollfd){ .fd = h.t.wake_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = h.listen_fd, .events = POLLIN };
		for (unsigned i = 0; i < KWD_METRICS_CONN_MAX; i++) {
			struct conn *c = &h.conns[i];

			if (c->fd < 0)
				continue;
			if (c->deadline_ms <= now) { /* slow or stalled: dropped */
				conn_close(c);
				continue;
			}
			if (c->deadline_ms - now < wait)
				wait = c->deadline_ms - now;
			pfd[n++] = (struct pollfd){ .fd = c->fd,
						    .events = c->writing ? POLLOUT : POLLIN };
		}
		if (poll(pfd, n, (int)wait) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		for (unsigned k = 2; k < n; k++) {
			struct conn *c = NULL;

			for (unsigned i = 0; i < KWD_METRICS_CONN_MAX && !c; i++)
				if (h.conns[i].fd == pfd[k].fd)
					c = &h.conns[i];
			if (!c || !pfd[k].revents)
				continue;
			if (c->writing)
				on_writable(c);
			else
				on_readable(c);
		}
		if (pfd[1].revents)
			accept_all();
	}
	return NULL;
}

int kwd_metrics_start(struct kwd *d, char *err, size_t errlen)
{
	int e;

	if (h.listen_fd < 0)
		return 0;
	for (unsigned i = 0; i < KWD_METRICS_CONN_MAX; i++)
		h.conns[i].fd = -1;
	e = kwd_thread_start(&h.t, d, "kwd-metrics", 0, metrics_thread, NULL, err, errlen);
	if (e)
		return e;
	kwd_log(d, LOG_NOTICE, "metrics on %s (/metrics, /healthz)", d->cfg.metrics_addr);
	return 0;
}

void kwd_metrics_stop(struct kwd *d)
{
	(void)d;
	if (h.t.running) {
		kwd_thread_stop(&h.t);
		for (unsigned i = 0; i < KWD_METRICS_CONN_MAX; i++)
			if (h.conns[i].fd >= 0)
				conn_close(&h.conns[i]);
	}
	if (h.listen_fd >= 0) {
		close(h.listen_fd);
		if (h.addr.is_unix)
			unlink(h.addr.unix_path);
	}
	kwd_thread_destroy(&h.t);
	h.listen_fd = -1;
}
