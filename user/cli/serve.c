/* SPDX-License-Identifier: Apache-2.0 */
/* A small sequential HTTP server, see serve.h. Each connection has the
 * timeouts of tlog/http.c, so a slow client holds the service for at most
 * that long; put nginx in front for public read traffic. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kwitness/buf.h"
#include "serve.h"

int cli_serve(const char *cmd, const char *listen_at, size_t max_body, serve_handler h, void *ctx)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai;
	char host[256], port[16], shost[NI_MAXHOST], sport[NI_MAXSERV];
	const char *colon = strrchr(listen_at, ':');
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct kw_buf buf = { 0 };
	int fd, one = 1;

	if (!colon || colon == listen_at || (size_t)(colon - listen_at) >= sizeof(host) ||
	    strlen(colon + 1) >= sizeof(port) || !colon[1]) {
		fprintf(stderr, "kwitness %s: --listen wants ADDR:PORT (port 0: any free one)\n", cmd);
		return 2;
	}
	memcpy(host, listen_at, (size_t)(colon - listen_at));
	host[colon - listen_at] = '\0';
	strcpy(port, colon + 1);
	if (getaddrinfo(host, port, &hints, &ai)) {
		fprintf(stderr, "kwitness %s: cannot resolve %s\n", cmd, listen_at);
		return 1;
	}
	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) < 0 ||
	    getnameinfo((struct sockaddr *)&ss, sl, shost, sizeof(shost), sport, sizeof(sport),
			NI_NUMERICHOST | NI_NUMERICSERV)) {
		fprintf(stderr, "kwitness %s: listen on %s: %s\n", cmd, listen_at, strerror(errno));
		freeaddrinfo(ai);
		if (fd >= 0)
			close(fd);
		return 1;
	}
	freeaddrinfo(ai);
	signal(SIGPIPE, SIG_IGN);
	printf("listening on http://%s%s%s:%s\n", strchr(shost, ':') ? "[" : "", shost,
	       strchr(shost, ':') ? "]" : "", sport);
	fflush(stdout);
	for (;;) {
		struct http_request req;
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		int e;

		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE)
				continue;
			fprintf(stderr, "kwitness %s: accept: %s\n", cmd, strerror(errno));
			break;
		}
		e = http_read_request(c, max_body, &buf, &req);
		if (!e)
			h(ctx, &req, c);
		else if (e == -EMSGSIZE)
			http_respond(c, 413, "text/plain", NULL, "too large\n", 10);
		else if (e == -EINVAL)
			http_respond(c, 400, "text/plain", NULL, "bad request\n", 12);
		close(c);
	}
	kw_buf_free(&buf);
	close(fd);
	return 1;
}
