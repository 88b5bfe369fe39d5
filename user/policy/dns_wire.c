// SPDX-License-Identifier: Apache-2.0
/* DNS messages for kwitnessd's per-session resolver (RFC 1035, RFC 2181,
 * RFC 3596). Hostile input: bounded reads, compression pointers only
 * backwards and at most KW_DNS_PTR_HOPS of them. */
#include <errno.h>
#include <string.h>

#include "policy/dns_wire.h"

#define KW_DNS_PTR_HOPS 16
#define KW_DNS_CLASS_IN 1
#define KW_DNS_F_QR 0x8000
#define KW_DNS_F_TC 0x0200
#define KW_DNS_F_RD 0x0100
#define KW_DNS_F_RA 0x0080

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Reads the name at *off into out (lowercase, labels joined by '.', no
 * final dot; the root is ""), moving *off past it. *clean is false when a
 * label holds a byte a host name cannot ('.', controls, non-ASCII): such a
 * name matches no rule and no chain. 0 or -EINVAL. */
static int read_name(const uint8_t *msg, size_t len, size_t *off, bool allow_ptr,
		     char out[KW_NAME_MAX + 1], bool *clean)
{
	size_t pos = *off, o = 0, wire = 0;
	unsigned hops = 0;
	bool jumped = false;

	*clean = true;
	for (;;) {
		uint8_t b;

		if (pos >= len)
			return -EINVAL;
		b = msg[pos];
		if (b == 0) {
			if (!jumped)
				*off = pos + 1;
			break;
		}
		if ((b & 0xc0) == 0xc0) {
			size_t ptr;

			if (!allow_ptr || pos + 1 >= len || ++hops > KW_DNS_PTR_HOPS)
				return -EINVAL;
			ptr = (size_t)(b & 0x3f) << 8 | msg[pos + 1];
			/* strictly backwards: no loops, no forward reads */
			if (ptr >= pos)
				return -EINVAL;
			if (!jumped)
				*off = pos + 2;
			jumped = true;
			pos = ptr;
			continue;
		}
		if (b & 0xc0)
			return -EINVAL; /* extended label types (RFC 6891 obsoleted them) */
		if (pos + 1 + b > len)
			return -EINVAL;
		wire += 1u + b;
		if (wire + 1 > 255)
			return -EINVAL;
		if (o)
			out[o++] = '.';
		for (unsigned i = 0; i < b; i++) {
			uint8_t c = msg[pos + 1 + i];

			if (c >= 'A' && c <= 'Z')
				c = (uint8_t)(c - 'A' + 'a');
			if (c <= ' ' || c == '.' || c >= 0x7f) {
				*clean = false;
				c = '?';
			}
			out[o++] = (char)c;
		}
		pos += 1u + b;
	}
	/* 255 wire octets hold at most 253 presentation characters */
	out[o] = '\0';
	return 0;
}

/* Skips a resource record's fixed part; *rr gets type, class, ttl, rdata. */
struct rr {
	uint16_t type, klass;
	uint32_t ttl;
	size_t rdata, rdlen;
	bool clean;
	char owner[KW_NAME_MAX + 1];
};

static int read_rr(const uint8_t *msg, size_t len, size_t *off, struct rr *r)
{
	if (read_name(msg, len, off, true, r->owner, &r->clean))
		return -EINVAL;
	if (*off + 10 > len)
		return -EINVAL;
	r->type = get16(msg + *off);
	r->klass = get16(msg + *off + 2);
	r->ttl = get32(msg + *off + 4);
	/* RFC 2181 8: a TTL with the top bit set is zero */
	if (r->ttl & 0x80000000u)
		r->ttl = 0;
	r->rdlen = get16(msg + *off + 8);
	r->rdata = *off + 10;
	if (r->rdata + r->rdlen > len)
		return -EINVAL;
	*off = r->rdata + r->rdlen;
	return 0;
}

int kw_dns_parse_query(const uint8_t *msg, size_t len, struct kw_dns_question *q, const char **why)
{
	size_t off = KW_DNS_HDR_LEN;
	const char *nwhy;
	char raw[KW_NAME_MAX + 1];
	bool clean;

	memset(q, 0, sizeof(*q));
	*why = NULL;
	if (!msg || len < KW_DNS_HDR_LEN) {
		*why = "shorter than a header";
		return -EINVAL;
	}
	q->id = get16(msg);
	q->flags = get16(msg + 2);
	if (q->flags & KW_DNS_F_QR) {
		*why = "a response, not a query";
		return -EINVAL;
	}
	if ((q->flags >> 11) & 0xf) {
		*why = "not a standard query (opcode)";
		return -EINVAL;
	}
	if (get16(msg + 4) != 1 || get16(msg + 6) || get16(msg + 8) || get16(msg + 10) > 1) {
		*why = "not one question (or records beside it)";
		return -EINVAL;
	}
	if (read_name(msg, len, &off, false, raw, &clean) || off + 4 > len) {
		*why = "a malformed question";
		return -EINVAL;
	}
	q->qtype = get16(msg + off);
	q->qclass = get16(msg + off + 2);
	q->end = off + 4;
	if (clean && raw[0] &&
	    kw_name_normalise(raw, strlen(raw), false, q->name, NULL, &nwhy) == 0) {
		q->valid_name = true;
	} else {
		memcpy(q->name, raw, sizeof(q->name));
		q->valid_name = false;
	}
	return 0;
}

static size_t chain_index(const struct kw_dns_question *q, const struct kw_dns_answer *a,
			  const char *name)
{
	if (!strcmp(name, q->name))
		return 0;
	for (size_t i = 0; i < a->n_cnames; i++)
		if (!strcmp(name, a->cnames[i]))
			return i + 1;
	return (size_t)-1;
}

int kw_dns_parse_answer(const uint8_t *msg, size_t len, const struct kw_dns_question *q,
			struct kw_dns_answer *a, const char **why)
{
	uint32_t chain_ttl[KW_DNS_MAX_CNAMES + 1];
	size_t off = KW_DNS_HDR_LEN, ans_start, qd, an, i, k;
	uint16_t flags;
	struct rr r;

	memset(a, 0, sizeof(*a));
	*why = NULL;
	if (!msg || len < KW_DNS_HDR_LEN) {
		*why = "shorter than a header";
		return -EINVAL;
	}
	a->id = get16(msg);
	flags = get16(msg + 2);
	if (a->id != q->id || !(flags & KW_DNS_F_QR)) {
		*why = "not a response to this query";
		return -EINVAL;
	}
	a->rcode = (uint8_t)(flags & 0xf);
	a->truncated = (flags & KW_DNS_F_TC) != 0;
	qd = get16(msg + 4);
	an = get16(msg + 6);
	if (qd > 1 || (qd == 0 && a->rcode == KW_DNS_NOERROR && an)) {
		*why = "not the question asked";
		return -EINVAL;
	}
	if (qd == 1) {
		char name[KW_NAME_MAX + 1];
		bool clean;

		if (read_name(msg, len, &off, true, name, &clean) || off + 4 > len ||
		    !clean || strcmp(name, q->name) || get16(msg + off) != q->qtype ||
		    get16(msg + off + 2) != q->qclass) {
			*why = "not the question asked";
			return -EINVAL;
		}
		off += 4;
	}
	if (a->rcode != KW_DNS_NOERROR)
		return 0; /* nothing to open */
	ans_start = off;
	/* the CNAME chain from the question's name */
	chain_ttl[0] = UINT32_MAX;
	for (k = 0; k < KW_DNS_MAX_CNAMES; k++) {
		const char *cur = k ? a->cnames[k - 1] : q->name;
		bool found = false;

		off = ans_start;
		for (i = 0; i < an; i++) {
			char target[KW_NAME_MAX + 1];
			size_t t;
			bool clean;

			if (read_rr(msg, len, &off, &r)) {
				*why = "a malformed answer record";
				return -EINVAL;
			}
			if (r.type != KW_DNS_CNAME || r.klass != KW_DNS_CLASS_IN || !r.clean ||
			    strcmp(r.owner, cur))
				continue;
			t = r.rdata;
			if (read_name(msg, r.rdata + r.rdlen, &t, true, target, &clean) ||
			    t != r.rdata + r.rdlen) {
				*why = "a malformed CNAME";
				return -EINVAL;
			}
			if (!clean || chain_index(q, a, target) != (size_t)-1)
				break; /* a loop or a name no host has: the chain ends */
			memcpy(a->cnames[a->n_cnames], target, sizeof(target));
			chain_ttl[a->n_cnames + 1] = r.ttl < chain_ttl[a->n_cnames] ?
							     r.ttl : chain_ttl[a->n_cnames];
			a->n_cnames++;
			found = true;
			break;
		}
		if (!found)
			break;
	}
	/* the addresses of names on the chain */
	off = ans_start;
	for (i = 0; i < an; i++) {
		struct kw_dns_addr *d;
		size_t at;

		if (read_rr(msg, len, &off, &r)) {
			*why = "a malformed answer record";
			return -EINVAL;
		}
		if (r.klass != KW_DNS_CLASS_IN || !r.clean)
			continue;
		if (!((r.type == KW_DNS_A && r.rdlen == 4 &&
		       (q->qtype == KW_DNS_A || q->qtype == KW_DNS_ANY)) ||
		      (r.type == KW_DNS_AAAA && r.rdlen == 16 &&
		       (q->qtype == KW_DNS_AAAA || q->qtype == KW_DNS_ANY))))
			continue;
		at = chain_index(q, a, r.owner);
		if (at == (size_t)-1)
			continue;
		if (a->n_addrs == KW_DNS_MAX_ADDRS) {
			a->dropped_addrs++;
			continue;
		}
		d = &a->addrs[a->n_addrs++];
		memset(d, 0, sizeof(*d));
		d->family = r.type == KW_DNS_A ? 4 : 6;
		memcpy(d->addr, msg + r.rdata, r.rdlen);
		d->ttl = r.ttl < chain_ttl[at] ? r.ttl : chain_ttl[at];
	}
	return 0;
}

size_t kw_dns_reply_rcode(const uint8_t *query, const struct kw_dns_question *q, uint8_t rcode,
			  uint8_t *out, size_t cap)
{
	uint16_t flags;

	if (q->end < KW_DNS_HDR_LEN || cap < q->end)
		return 0;
	memcpy(out, query, q->end);
	flags = (uint16_t)(KW_DNS_F_QR | (q->flags & (0xf << 11)) | (q->flags & KW_DNS_F_RD) |
			   KW_DNS_F_RA | (rcode & 0xf));
	put16(out + 2, flags);
	put16(out + 4, 1);
	put16(out + 6, 0);
	put16(out + 8, 0);
	put16(out + 10, 0);
	return q->end;
}

const char *kw_dns_type_name(uint16_t type)
{
	switch (type) {
	case KW_DNS_A: return "A";
	case 2: return "NS";
	case KW_DNS_CNAME: return "CNAME";
	case 6: return "SOA";
	case 12: return "PTR";
	case 15: return "MX";
	case 16: return "TXT";
	case KW_DNS_AAAA: return "AAAA";
	case 33: return "SRV";
	case 64: return "SVCB";
	case 65: return "HTTPS";
	case KW_DNS_ANY: return "ANY";
	}
	return NULL;
}

const char *kw_dns_rcode_name(uint8_t rcode)
{
	switch (rcode) {
	case KW_DNS_NOERROR: return "NOERROR";
	case KW_DNS_FORMERR: return "FORMERR";
	case KW_DNS_SERVFAIL: return "SERVFAIL";
	case KW_DNS_NXDOMAIN: return "NXDOMAIN";
	case KW_DNS_NOTIMP: return "NOTIMP";
	case KW_DNS_REFUSED: return "REFUSED";
	}
	return NULL;
}
