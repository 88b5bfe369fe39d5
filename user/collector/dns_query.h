/* SPDX-License-Identifier: Apache-2.0 */
/* The dns.query entry: one DNS question a session asked, as kwitnessd's
 * resolver decided and answered it (docs/decision-log.md). Written by the
 * collector, not the kernel, under a sequence number taken from the
 * session's kernel counter, so it sits in order among the kernel's
 * decisions. */
#ifndef KWITNESS_COLLECTOR_DNS_QUERY_H
#define KWITNESS_COLLECTOR_DNS_QUERY_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/buf.h"
#include "policy/dns_wire.h"

/* Seconds an opened address stays open past its (clamped) TTL: a client
 * connects right after the answer, and the last use of a TTL-0 answer must
 * still find the address. */
#define KW_DNS_GRACE_S 2

struct kw_dns_query_entry {
	uint64_t seq;
	int64_t ts_us;               /* wall clock, microseconds */
	const struct kw_dns_question *q;
	bool permit;                 /* the policy lets the name be resolved */
	bool enforced;               /* a deny that was enforced (REFUSED) */
	const char *rule;            /* "net.connect[1]", "net.dns:default", ... */
	uint8_t rcode;               /* what the client got */
	const char *proto;           /* "udp" or "tcp" */
	const char *client;          /* "127.0.0.1:41234": the socket that asked */
	const struct kw_dns_answer *answer; /* NULL: no upstream answer */
	const uint32_t *granted_ttl; /* per answer->addrs[i]: the clamped TTL */
	const bool *opened;          /* per answer->addrs[i]: in the allow map */
	const char *error;           /* why upstream gave nothing ("timeout"), or NULL */
};

/* Appends the canonical entry (no newline). 0, -EINVAL, -ENOMEM. */
int kw_dns_query_entry(const struct kw_dns_query_entry *e, struct kw_buf *out);

#endif
