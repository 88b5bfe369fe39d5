/* SPDX-License-Identifier: Apache-2.0 */
/* The little HTTP/1.1 the log and the witness speak: a client for one POST
 * (the tlog-witness add-checkpoint call), and a server side that reads one
 * bounded request and writes one response per connection. Plain http:// only;
 * put TLS in front (nginx, a bastion) when the network is not trusted — the
 * payloads are signed either way. */
#ifndef KWITNESS_TLOG_HTTP_H
#define KWITNESS_TLOG_HTTP_H

#include <stddef.h>

#include "lib/buf.h"

#define HTTP_HEAD_MAX 8192
#define HTTP_TIMEOUT_S 10

struct http_url {
	char host[256];
	char port[8];
	char path[512]; /* the prefix, without a trailing slash ("" for /) */
};

/* http://HOST[:PORT][/PREFIX]; 0 or -EINVAL. */
int http_url_parse(const char *url, struct http_url *out);
/* POSTs body to url->path + suffix. Returns the HTTP status with the body in
 * resp (at most max bytes), or -errno. */
int http_post(const struct http_url *url, const char *suffix, const char *body, size_t len,
	      size_t max, struct kw_buf *resp);
/* The same with an Authorization header (NULL: none). */
int http_post_auth(const struct http_url *url, const char *suffix, const char *authorization,
		   const char *body, size_t len, size_t max, struct kw_buf *resp);

/* POSTs a JSON body (Content-Type: application/json) to the url as given. */
int http_post_json(const struct http_url *url, const char *body, size_t len, size_t max,
		   struct kw_buf *resp);

struct http_request {
	char method[8];
	char path[1024];
	size_t content_length;
	char authorization[256];
	const char *body; /* into the buffer given to http_parse_request */
	size_t body_len;
};

/* Parses a request head and body held in buf (len bytes). Returns 0 when the
 * request is complete, -EAGAIN when more bytes are needed, -EMSGSIZE past
 * max_body or HTTP_HEAD_MAX, -EINVAL for anything else malformed. */
int http_parse_request(const char *buf, size_t len, size_t max_body, struct http_request *req);
/* Reads one request from fd (bounded, with the timeout above). */
int http_read_request(int fd, size_t max_body, struct kw_buf *buf, struct http_request *req);
/* Writes a response with Content-Length and Connection: close. */
int http_respond(int fd, int status, const char *content_type, const char *extra_headers,
		 const void *body, size_t len);
const char *http_status_text(int status);

#endif
