/* SPDX-License-Identifier: Apache-2.0 */
/* DNS messages (RFC 1035) as kwitnessd's per-session resolver sees them:
 * the question of a query, the answers of a response (A and AAAA, CNAME
 * chains followed), and the REFUSED / SERVFAIL replies it makes itself.
 * Every message comes from a hostile sandbox or an untrusted upstream: the
 * parsers read only inside the given length, follow at most a bounded
 * number of compression pointers, and only backwards. */
#ifndef KWITNESS_DNS_WIRE_H
#define KWITNESS_DNS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/net_names.h"

#define KW_DNS_HDR_LEN 12
/* The largest message over UDP or TCP (the TCP length prefix is 16 bits). */
#define KW_DNS_MSG_MAX 65535
/* Addresses and CNAME links one response may contribute. */
#define KW_DNS_MAX_ADDRS 32
#define KW_DNS_MAX_CNAMES 8

enum { KW_DNS_A = 1, KW_DNS_CNAME = 5, KW_DNS_AAAA = 28, KW_DNS_ANY = 255 };
enum { KW_DNS_NOERROR = 0, KW_DNS_FORMERR = 1, KW_DNS_SERVFAIL = 2, KW_DNS_NXDOMAIN = 3,
       KW_DNS_NOTIMP = 4, KW_DNS_REFUSED = 5 };

struct kw_dns_question {
	uint16_t id;
	uint16_t flags;      /* header flags as sent */
	uint16_t qtype, qclass;
	size_t end;          /* offset just past the question */
	bool valid_name;     /* the name is a host name (kw_name_normalise) */
	char name[KW_NAME_MAX + 1]; /* lowercase, no final dot ("" for the root) */
};

struct kw_dns_addr {
	uint8_t family;      /* 4 or 6 */
	uint8_t addr[16];
	uint32_t ttl;        /* seconds: the smaller of the record's and its CNAME links' */
};

struct kw_dns_answer {
	uint16_t id;
	uint8_t rcode;
	bool truncated;      /* TC: the client will retry over TCP */
	size_t n_addrs;
	struct kw_dns_addr addrs[KW_DNS_MAX_ADDRS];
	size_t n_cnames;     /* the chain from the question's name */
	char cnames[KW_DNS_MAX_CNAMES][KW_NAME_MAX + 1];
	size_t dropped_addrs; /* A/AAAA records past KW_DNS_MAX_ADDRS */
};

/* Parses a query: header (QR clear, opcode QUERY, one question, no answer
 * or authority records) and its question. 0, or -EINVAL with *why. */
int kw_dns_parse_query(const uint8_t *msg, size_t len, struct kw_dns_question *q, const char **why);

/* Parses an upstream's response to q: its id and question must be q's. The
 * answers kept are the A/AAAA records of q's name or of a name the CNAME
 * chain from q's name reaches (at most KW_DNS_MAX_CNAMES links, in class IN).
 * 0, or -EINVAL with *why (the response is then not to be used). */
int kw_dns_parse_answer(const uint8_t *msg, size_t len, const struct kw_dns_question *q,
			struct kw_dns_answer *a, const char **why);

/* Writes a reply to query (its first q->end bytes) with rcode and no
 * records: header id, opcode and RD copied, QR and RA set. Returns its
 * length, or 0 when out is too small. */
size_t kw_dns_reply_rcode(const uint8_t *query, const struct kw_dns_question *q, uint8_t rcode,
			  uint8_t *out, size_t cap);

/* "A", "AAAA", "CNAME", "ANY", ... or NULL for a type without a name here. */
const char *kw_dns_type_name(uint16_t type);
/* "NOERROR", "SERVFAIL", "NXDOMAIN", "REFUSED", ... or NULL. */
const char *kw_dns_rcode_name(uint8_t rcode);

#endif
