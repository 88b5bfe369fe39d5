/* SPDX-License-Identifier: Apache-2.0 */
/* A small sequential HTTP server, see server.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/buf.h"
#include "tlog/server.h"

int tlog_server_listen(struct tlog_server *s, const char *listen_at, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai;
	char host[256], port[16];
	const char *colon = strrchr(listen_at, ':');
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd, one = 1, e;

	s->fd = -1;
	if (!colon || colon == listen_at || (size_t)(colon - listen_at) >= sizeof(host) ||
	    strlen(colon + 1) >= sizeof(port) || !colon[1]) {
		snprintf(err, errlen, "--listen wants ADDR:PORT (port 0: any free one)");
		return -EINVAL;
	}
	memcpy(host, listen_at, (size_t)(colon - listen_at));
	host[colon - listen_at] = '\0';
	strcpy(port, colon + 1);
	if (getaddrinfo(host, port, &hints, &ai)) {
		snprintf(err, errlen, "cannot resolve %s", listen_at);
		return -EADDRNOTAVAIL;
	}
	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) < 0 ||
	    getnameinfo((struct sockaddr *)&ss, sl, s->host, sizeof(s->host), s->port,
			sizeof(s->port), NI_NUMERICHOST | NI_NUMERICSERV)) {
		e = errno;
		snprintf(err, errlen, "listen on %s: %s", listen_at, strerror(e));
		freeaddrinfo(ai);
		if (fd >= 0)
			close(fd);
		return e ? -e : -EIO;
	}
	freeaddrinfo(ai);
	s->fd = fd;
	return 0;
}

/* One request on c, as tlog_server_run answers it. */
void tlog_server_serve_one(int c, size_t max_body, struct kw_buf *buf, tlog_server_handler h,
			   void *ctx)
{
	struct http_request req;
	int e = http_read_request(c, max_body, buf, &req);

	if (!e)
		h(ctx, &req, c);
	else if (e == -EMSGSIZE)
		http_respond(c, 413, "text/plain", NULL, "too large\n", 10);
	else if (e == -EINVAL)
		http_respond(c, 400, "text/plain", NULL, "bad request\n", 12);
}

int tlog_server_run(struct tlog_server *s, size_t max_body, tlog_server_handler h, void *ctx,
		    char *err, size_t errlen)
{
	struct kw_buf buf = { 0 };
	int ret;

	for (;;) {
		int c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE)
				continue;
			ret = -errno;
			snprintf(err, errlen, "accept: %s", strerror(errno));
			break;
		}
		tlog_server_serve_one(c, max_body, &buf, h, ctx);
		close(c);
	}
	kw_buf_free(&buf);
	close(s->fd);
	s->fd = -1;
	return ret;
}
