/* SPDX-License-Identifier: Apache-2.0 */
/* The test helpers' one address parser: a numeric IPv4 or IPv6 address and a
 * port, as the suites pass them. */
#ifndef KW_TEST_SOCKADDR_TEXT_H
#define KW_TEST_SOCKADDR_TEXT_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* An address and port from text; 0, or -1 when it is not an address. */
static inline int sockaddr_parse(const char *host, const char *port, struct sockaddr_storage *ss,
				 socklen_t *len)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	char *end;
	long p;

	errno = 0;
	p = strtol(port, &end, 10);
	if (errno || end == port || *end || p < 0 || p > 65535)
		return -1;
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)p);
		*len = sizeof(*a4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)p);
		*len = sizeof(*a6);
		return 0;
	}
	return -1;
}

#endif
