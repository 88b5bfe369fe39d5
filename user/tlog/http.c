/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal HTTP/1.1, see http.h. */
#include <errno.h>
#include <stdbool.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "tlog/http.h"
#include "tlog/note.h"

int http_url_parse(const char *url, struct http_url *out)
{
	const char *h, *slash, *colon;
	size_t hl;

	memset(out, 0, sizeof(*out));
	if (strncmp(url, "http://", 7))
		return -EINVAL;
	h = url + 7;
	slash = strchr(h, '/');
	hl = slash ? (size_t)(slash - h) : strlen(h);
	colon = memchr(h, ':', hl);
	if (colon) {
		size_t pl = hl - (size_t)(colon - h) - 1;

		if (pl == 0 || pl >= sizeof(out->port) || strspn(colon + 1, "0123456789") < pl)
			return -EINVAL;
		memcpy(out->port, colon + 1, pl);
		hl = (size_t)(colon - h);
	} else {
		strcpy(out->port, "80");
	}
	if (hl == 0 || hl >= sizeof(out->host))
		return -EINVAL;
	memcpy(out->host, h, hl);
	if (slash) {
		size_t pl = strlen(slash);

		while (pl && slash[pl - 1] == '/')
			pl--;
		if (pl >= sizeof(out->path) || strpbrk(slash, " \r\n"))
			return -EINVAL;
		memcpy(out->path, slash, pl);
	}
	return 0;
}

static int set_timeouts(int fd)
{
	struct timeval tv = { .tv_sec = HTTP_TIMEOUT_S };

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	return 0;
}

static int connect_to(const struct http_url *u)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int fd = -1, e;

	e = getaddrinfo(u->host, u->port, &hints, &res);
	if (e)
		return -EHOSTUNREACH;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		if (!set_timeouts(fd) && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd >= 0 ? fd : -ECONNREFUSED;
}

/* Reads until the peer closes (the request said Connection: close), within
 * HTTP_TIMEOUT_S in all: a peer that trickles a byte per read timeout does
 * not hold the caller longer. */
static int read_all(int fd, size_t max, struct kw_buf *out)
{
	struct timespec start, now;
	char buf[4096];

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > HTTP_TIMEOUT_S)
			return -ETIMEDOUT;
		n = read(fd, buf, sizeof(buf));

		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (out->len + (size_t)n > max)
			return -EMSGSIZE;
		if (kw_buf_append(out, buf, (size_t)n))
			return -ENOMEM;
	}
}

int http_post(const struct http_url *url, const char *suffix, const char *body, size_t len,
	      size_t max, struct kw_buf *resp)
{
	return http_post_auth(url, suffix, NULL, body, len, max, resp);
}

static int post_with(const struct http_url *url, const char *suffix, const char *authorization,
		     const char *content_type, const char *body, size_t len, size_t max,
		     struct kw_buf *resp);

int http_post_auth(const struct http_url *url, const char *suffix, const char *authorization,
		   const char *body, size_t len, size_t max, struct kw_buf *resp)
{
	return post_with(url, suffix, authorization, "text/plain", body, len, max, resp);
}

int http_post_json(const struct http_url *url, const char *body, size_t len, size_t max,
		   struct kw_buf *resp)
{
	return post_with(url, "", NULL, "application/json", body, len, max, resp);
}

static int post_with(const struct http_url *url, const char *suffix, const char *authorization,
		     const char *content_type, const char *body, size_t len, size_t max,
		     struct kw_buf *resp)
{
	struct kw_buf raw = { 0 };
	char head[1024];
	const char *end, *sp;
	int fd, n, ret, status;

	if (authorization && strpbrk(authorization, "\r\n"))
		return -EINVAL;
	n = snprintf(head, sizeof(head),
		     "POST %s%s HTTP/1.1\r\nHost: %s:%s\r\nContent-Length: %zu\r\n%s%s%s"
		     "Content-Type: %s\r\nConnection: close\r\n\r\n",
		     url->path, suffix, url->host, url->port, len, authorization ? "Authorization: " : "",
		     authorization ? authorization : "", authorization ? "\r\n" : "", content_type);
	if (n < 0 || (size_t)n >= sizeof(head))
		return -ENAMETOOLONG;
	fd = connect_to(url);
	if (fd < 0)
		return fd;
	ret = kw_write_all(fd, head, (size_t)n);
	if (!ret)
		ret = kw_write_all(fd, body, len);
	if (!ret)
		ret = read_all(fd, max + HTTP_HEAD_MAX, &raw);
	close(fd);
	if (ret)
		goto out;
	ret = -EPROTO;
	if (raw.len < 12 || strncmp(raw.data, "HTTP/1.", 7) || raw.data[8] != ' ')
		goto out;
	status = atoi(raw.data + 9);
	end = memmem(raw.data, raw.len, "\r\n\r\n", 4);
	if (status < 100 || status > 599 || !end)
		goto out;
	/* The body is what follows the head (the connection closed at its end). */
	sp = end + 4;
	kw_buf_reset(resp);
	if ((size_t)(raw.data + raw.len - sp) > max) {
		ret = -EMSGSIZE;
		goto out;
	}
	ret = kw_buf_append(resp, sp, (size_t)(raw.data + raw.len - sp)) ? -ENOMEM : status;
out:
	kw_buf_free(&raw);
	return ret;
}

int http_parse_request(const char *buf, size_t len, size_t max_body, struct http_request *req)
{
	const char *end = memmem(buf, len, "\r\n\r\n", 4), *p, *line_end, *sp1, *sp2;
	size_t head_len;
	bool have_length = false;

	memset(req, 0, sizeof(*req));
	if (!end)
		return len > HTTP_HEAD_MAX ? -EMSGSIZE : -EAGAIN;
	head_len = (size_t)(end - buf) + 4;
	if (head_len > HTTP_HEAD_MAX)
		return -EMSGSIZE;
	/* Request line: METHOD SP PATH SP HTTP/1.x */
	line_end = memmem(buf, head_len, "\r\n", 2);
	sp1 = memchr(buf, ' ', (size_t)(line_end - buf));
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(line_end - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || (size_t)(sp1 - buf) >= sizeof(req->method) ||
	    (size_t)(sp2 - sp1 - 1) >= sizeof(req->path) || sp2 - sp1 < 2 ||
	    line_end - sp2 != 9 || strncmp(sp2 + 1, "HTTP/1.", 7))
		return -EINVAL;
	/* Checked on the raw bytes: a NUL must not end them early. */
	for (const char *c = buf; c < sp1; c++)
		if (*c < 'A' || *c > 'Z')
			return -EINVAL;
	for (const char *c = sp1 + 1; c < sp2; c++)
		if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f)
			return -EINVAL;
	if (sp1 == buf)
		return -EINVAL;
	memcpy(req->method, buf, (size_t)(sp1 - buf));
	memcpy(req->path, sp1 + 1, (size_t)(sp2 - sp1 - 1));
	/* Headers: the two the services read; no chunked bodies. */
	for (p = line_end + 2; p < end; p = line_end + 2) {
		const char *colon, *v;
		size_t nl, vl;

		line_end = memmem(p, (size_t)(end + 2 - p), "\r\n", 2);
		for (const char *c = p; c < line_end; c++)
			if (((unsigned char)*c < 0x20 && *c != '\t') || *c == 0x7f)
				return -EINVAL;
		colon = memchr(p, ':', (size_t)(line_end - p));
		if (!colon)
			return -EINVAL;
		nl = (size_t)(colon - p);
		v = colon + 1;
		while (v < line_end && (*v == ' ' || *v == '\t'))
			v++;
		vl = (size_t)(line_end - v);
		if (nl == 14 && !strncasecmp(p, "Content-Length", 14)) {
			uint64_t n;

			if (have_length || tlog_parse_u64(v, vl, &n))
				return -EINVAL;
			if (n > max_body)
				return -EMSGSIZE;
			req->content_length = (size_t)n;
			have_length = true;
		} else if (nl == 17 && !strncasecmp(p, "Transfer-Encoding", 17)) {
			return -EINVAL;
		} else if (nl == 13 && !strncasecmp(p, "Authorization", 13)) {
			if (vl >= sizeof(req->authorization))
				return -EINVAL;
			memcpy(req->authorization, v, vl);
		}
	}
	if (len - head_len < req->content_length)
		return -EAGAIN;
	if (len - head_len > req->content_length)
		return -EINVAL; /* no pipelining */
	req->body = end + 4;
	req->body_len = req->content_length;
	return 0;
}

int http_read_request(int fd, size_t max_body, struct kw_buf *buf, struct http_request *req)
{
	char chunk[4096];
	int ret = set_timeouts(fd);
	struct timespec start, now;

	kw_buf_reset(buf);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!ret) {
		ssize_t n;

		/* A whole request within the timeout: a client that trickles
		 * bytes cannot hold a sequential server for longer. */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > HTTP_TIMEOUT_S)
			return -ETIMEDOUT;
		n = read(fd, chunk, sizeof(chunk));

		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (buf->len + (size_t)n > HTTP_HEAD_MAX + max_body)
			return -EMSGSIZE;
		if (kw_buf_append(buf, chunk, (size_t)n))
			return -ENOMEM;
		ret = http_parse_request(buf->data, buf->len, max_body, req);
		if (ret == -EAGAIN)
			ret = 0;
		else
			return ret;
	}
	return ret;
}

const char *http_status_text(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 413: return "Content Too Large";
	case 422: return "Unprocessable Entity";
	default: return "Internal Server Error";
	}
}

int http_respond(int fd, int status, const char *content_type, const char *extra_headers,
		 const void *body, size_t len)
{
	char head[1024];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
			 "Connection: close\r\n\r\n",
			 status, http_status_text(status), content_type, len,
			 extra_headers ? extra_headers : "");
	int ret;

	if (n < 0 || (size_t)n >= sizeof(head))
		return -EINVAL;
	ret = kw_write_all(fd, head, (size_t)n);
	if (!ret && len)
		ret = kw_write_all(fd, body, len);
	return ret;
}
