/* SPDX-License-Identifier: Apache-2.0 */
/* The untrusted input of the metrics endpoint, parsed without side effects
 * (fuzzed: tests/fuzz/fuzz_metrics_request.c): the address it listens on,
 * and a scraper's HTTP request. */
#ifndef KWITNESSD_METRICS_REQUEST_H
#define KWITNESSD_METRICS_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

/* A request's head may be at most this long. */
#define KWD_METRICS_REQUEST_MAX 4096

struct kwd_metrics_addr {
	bool is_unix;
	struct sockaddr_storage sa;
	socklen_t len;
	char unix_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

/* "HOST:PORT" with a loopback HOST (127.0.0.0/8, [::1], localhost) and a
 * port from 1 to 65535, or "unix:/absolute/path". 0, or -EINVAL with a
 * sentence in err. */
int kwd_metrics_parse_addr(const char *text, struct kwd_metrics_addr *out, char *err,
			   size_t errlen);

enum kwd_metrics_target { KWD_MT_METRICS = 1, KWD_MT_HEALTH };

struct kwd_metrics_request {
	enum kwd_metrics_target target;
	bool head; /* HEAD: the status and headers only */
};

/* Over the bytes read so far: 0 when the head is not complete yet; 1 when
 * it is and the request is one we serve (*req set); or an HTTP status to
 * answer with: 400 (malformed),
 * 404 (another path), 405 (another method), 431 (the head is too long). */
int kwd_metrics_parse_request(const char *buf, size_t len, struct kwd_metrics_request *req);

#endif
