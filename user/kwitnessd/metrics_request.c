// SPDX-License-Identifier: Apache-2.0
/* Parsing what reaches the metrics endpoint: its address (from the command
 * line or the configuration) and the request line of a scraper. Metrics
 * leave the host only through what the operator puts in front of them, so
 * a TCP address must be a loopback one. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_request.h"

static int bad(char *err, size_t errlen, const char *text, const char *why)
{
	snprintf(err, errlen, "metrics address '%.200s': %s", text, why);
	return -EINVAL;
}

static int parse_unix(const char *text, struct kwd_metrics_addr *out, char *err, size_t errlen)
{
	const char *path = text + 5;
	struct sockaddr_un *un = (struct sockaddr_un *)&out->sa;

	if (path[0] != '/')
		return bad(err, errlen, text, "unix:PATH needs an absolute path");
	if (strlen(path) >= sizeof(un->sun_path))
		return bad(err, errlen, text, "the socket path is too long");
	out->is_unix = true;
	un->sun_family = AF_UNIX;
	memcpy(un->sun_path, path, strlen(path) + 1);
	memcpy(out->unix_path, path, strlen(path) + 1);
	out->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
	return 0;
}

int kwd_metrics_parse_addr(const char *text, struct kwd_metrics_addr *out, char *err,
			   size_t errlen)
{
	char host[64];
	const char *colon, *h = text;
	size_t hlen;
	unsigned long port;
	char *end;

	memset(out, 0, sizeof(*out));
	if (!strncmp(text, "unix:", 5))
		return parse_unix(text, out, err, errlen);
	colon = strrchr(text, ':');
	if (!colon || colon == text)
		return bad(err, errlen, text, "expected HOST:PORT or unix:PATH");
	hlen = (size_t)(colon - text);
	if (h[0] == '[') { /* [::1]:9464 */
		if (hlen < 2 || h[hlen - 1] != ']')
			return bad(err, errlen, text, "expected [IPV6]:PORT");
		h++;
		hlen -= 2;
	}
	if (hlen == 0 || hlen >= sizeof(host))
		return bad(err, errlen, text, "no host");
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || colon[1] == '-' || colon[1] == '+' || port == 0 ||
	    port > 65535)
		return bad(err, errlen, text, "the port must be a number from 1 to 65535");
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	{
		struct sockaddr_in *in4 = (struct sockaddr_in *)&out->sa;
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&out->sa;

		if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
			if ((ntohl(in4->sin_addr.s_addr) >> 24) != 127)
				return bad(err, errlen, text,
					   "not a loopback address (metrics listen on 127.0.0.0/8, "
					   "[::1] or unix:PATH; put a proxy in front to serve them further)");
			in4->sin_family = AF_INET;
			in4->sin_port = htons((uint16_t)port);
			out->len = sizeof(*in4);
			return 0;
		}
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
			if (!IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
				return bad(err, errlen, text,
					   "not a loopback address (metrics listen on 127.0.0.0/8, "
					   "[::1] or unix:PATH; put a proxy in front to serve them further)");
			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons((uint16_t)port);
			out->len = sizeof(*in6);
			return 0;
		}
	}
	return bad(err, errlen, text, "the host must be a numeric loopback address or localhost");
}

/* Where the head ends (after "\r\n\r\n" or "\n\n"), or 0. */
static size_t head_end(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

int kwd_metrics_parse_request(const char *buf, size_t len, struct kwd_metrics_request *req)
{
	size_t end = head_end(buf, len), mlen, plen;
	const char *sp1, *sp2, *path, *eol;

	if (!end)
		return len >= KWD_METRICS_REQUEST_MAX ? 431 : 0;
	if (end > KWD_METRICS_REQUEST_MAX)
		return 431;
	eol = memchr(buf, '\n', end);
	sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	if (!sp1)
		return 400;
	path = sp1 + 1;
	sp2 = memchr(path, ' ', (size_t)(eol - path));
	if (!sp2 || (size_t)(eol - sp2) < 9 || memcmp(sp2 + 1, "HTTP/1.", 7))
		return 400;
	mlen = (size_t)(sp1 - buf);
	plen = (size_t)(sp2 - path);
	memset(req, 0, sizeof(*req));
	if (mlen == 4 && !memcmp(buf, "HEAD", 4))
		req->head = true;
	else if (mlen != 3 || memcmp(buf, "GET", 3))
		return 405;
	/* a query string (Prometheus adds none, curl users might) is ignored */
	for (size_t i = 0; i < plen; i++)
		if (path[i] == '?')
			plen = i;
	if (plen == 8 && !memcmp(path, "/metrics", 8))
		req->target = KWD_MT_METRICS;
	else if (plen == 8 && !memcmp(path, "/healthz", 8))
		req->target = KWD_MT_HEALTH;
	else
		return 404;
	return 1;
}
