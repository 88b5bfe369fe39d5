/* SPDX-License-Identifier: Apache-2.0 */
/* What reaches kwitnessd's metrics endpoint: a scraper's request head (the
 * first byte 0..127) or a metrics address from the command line or the
 * configuration (128..255). A request is 0 (read on), 1 (served, with a
 * target) or one of the statuses the endpoint sends; never read past its
 * bytes (ASan). An address accepted is a loopback one or a unix socket. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kwitnessd/metrics_request.h"

static void request(const uint8_t *data, size_t size)
{
	/* an exact-size copy, so ASan sees any read past the end */
	char *copy = malloc(size ? size : 1);
	struct kwd_metrics_request req = { 0 };
	int r;

	memcpy(copy, data, size);
	r = kwd_metrics_parse_request(copy, size, &req);
	if (r == 1 && req.target != KWD_MT_METRICS && req.target != KWD_MT_HEALTH)
		abort();
	if (r != 0 && r != 1 && r != 400 && r != 404 && r != 405 && r != 431)
		abort();
	if (r == 0 && size >= KWD_METRICS_REQUEST_MAX)
		abort(); /* the head can never grow past the buffer */
	free(copy);
}

static void address(const uint8_t *data, size_t size)
{
	char text[512], err[256];
	struct kwd_metrics_addr a;

	if (size >= sizeof(text))
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	err[0] = '\0';
	if (kwd_metrics_parse_addr(text, &a, err, sizeof(err))) {
		if (!err[0])
			abort();
		return;
	}
	if (a.is_unix) {
		if (a.unix_path[0] != '/')
			abort();
	} else if (a.sa.ss_family == AF_INET) {
		if ((ntohl(((struct sockaddr_in *)&a.sa)->sin_addr.s_addr) >> 24) != 127)
			abort();
	} else if (a.sa.ss_family != AF_INET6 ||
		   !IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&a.sa)->sin6_addr)) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] < 128)
		request(data + 1, size - 1);
	else
		address(data + 1, size - 1);
	return 0;
}
