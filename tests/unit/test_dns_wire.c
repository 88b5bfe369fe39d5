/* SPDX-License-Identifier: Apache-2.0 */
/* DNS messages for the per-session resolver: queries accepted and refused,
 * answers with CNAME chains, TTLs along the chain, compression pointers
 * (backwards only, bounded), replies made by the resolver itself. Messages
 * are built byte by byte here, independently of the parser. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policy/dns_wire.h"

struct msg {
	uint8_t b[4096];
	size_t n;
};

static void u16(struct msg *m, uint16_t v)
{
	m->b[m->n++] = (uint8_t)(v >> 8);
	m->b[m->n++] = (uint8_t)v;
}

static void u32(struct msg *m, uint32_t v)
{
	u16(m, (uint16_t)(v >> 16));
	u16(m, (uint16_t)v);
}

static void raw(struct msg *m, const void *p, size_t n)
{
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

/* "a.b.c" as labels; returns its offset */
static size_t name(struct msg *m, const char *s)
{
	size_t at = m->n;

	while (*s) {
		const char *dot = strchr(s, '.');
		size_t l = dot ? (size_t)(dot - s) : strlen(s);

		m->b[m->n++] = (uint8_t)l;
		raw(m, s, l);
		s += l + (dot ? 1 : 0);
	}
	m->b[m->n++] = 0;
	return at;
}

static void ptr(struct msg *m, size_t at)
{
	u16(m, (uint16_t)(0xc000 | at));
}

static void hdr(struct msg *m, uint16_t id, uint16_t flags, uint16_t qd, uint16_t an)
{
	m->n = 0;
	u16(m, id);
	u16(m, flags);
	u16(m, qd);
	u16(m, an);
	u16(m, 0);
	u16(m, 0);
}

static void rr_fixed(struct msg *m, uint16_t type, uint32_t ttl, uint16_t rdlen)
{
	u16(m, type);
	u16(m, 1);
	u32(m, ttl);
	u16(m, rdlen);
}

static void query(struct msg *m, uint16_t id, const char *n, uint16_t type)
{
	hdr(m, id, 0x0100, 1, 0);
	name(m, n);
	u16(m, type);
	u16(m, 1);
}

static void test_query(void **state)
{
	struct kw_dns_question q;
	struct msg m;
	const char *why;

	(void)state;
	query(&m, 0xbeef, "API.Example.org", KW_DNS_A);
	assert_int_equal(kw_dns_parse_query(m.b, m.n, &q, &why), 0);
	assert_int_equal(q.id, 0xbeef);
	assert_string_equal(q.name, "api.example.org");
	assert_true(q.valid_name);
	assert_int_equal(q.qtype, KW_DNS_A);
	assert_int_equal(q.end, m.n);

	/* a name no host can have: parsed, but not a valid name */
	hdr(&m, 1, 0x0100, 1, 0);
	raw(&m, "\x03" "a.b" "\x03" "org\0", 9);
	u16(&m, 1);
	u16(&m, 1);
	assert_int_equal(kw_dns_parse_query(m.b, m.n, &q, &why), 0);
	assert_false(q.valid_name);

	/* refusals */
	query(&m, 1, "a.org", KW_DNS_A);
	assert_int_equal(kw_dns_parse_query(m.b, 11, &q, &why), -EINVAL);
	assert_int_equal(kw_dns_parse_query(m.b, m.n - 1, &q, &why), -EINVAL);
	m.b[2] |= 0x80; /* QR */
	assert_int_equal(kw_dns_parse_query(m.b, m.n, &q, &why), -EINVAL);
	assert_string_equal(why, "a response, not a query");
	query(&m, 1, "a.org", KW_DNS_A);
	m.b[2] |= 0x28; /* opcode 5 (UPDATE) */
	assert_int_equal(kw_dns_parse_query(m.b, m.n, &q, &why), -EINVAL);
	query(&m, 1, "a.org", KW_DNS_A);
	m.b[5] = 2; /* two questions */
	assert_int_equal(kw_dns_parse_query(m.b, m.n, &q, &why), -EINVAL);
	/* a pointer in a query's question */
	hdr(&m, 1, 0x0100, 1, 0);
	ptr(&m, 0);
	u16(&m, 1);
	u16(&m, 1);
	assert_int_equal(kw_dns_parse_query(m.b, m.n, &q, &why), -EINVAL);
	/* a name longer than 255 octets */
	hdr(&m, 1, 0x0100, 1, 0);
	for (int i = 0; i < 5; i++) {
		m.b[m.n++] = 63;
		memset(m.b + m.n, 'a', 63);
		m.n += 63;
	}
	m.b[m.n++] = 0;
	u16(&m, 1);
	u16(&m, 1);
	assert_int_equal(kw_dns_parse_query(m.b, m.n, &q, &why), -EINVAL);
}

/* api.example.org CNAME (ttl 300) edge.cdn.example.net; edge A 192.0.2.7 (60),
 * A 192.0.2.8 (600: capped by nothing but the chain's 300); an unrelated A
 * and an A for the question in another class are ignored. */
static void cname_answer(struct msg *m, struct kw_dns_question *q)
{
	size_t qn, edge;
	const char *why;

	query(m, 9, "api.example.org", KW_DNS_A);
	assert_int_equal(kw_dns_parse_query(m->b, m->n, q, &why), 0);
	hdr(m, 9, 0x8180, 1, 5);
	qn = name(m, "api.example.org");
	u16(m, 1);
	u16(m, 1);
	ptr(m, qn);
	rr_fixed(m, KW_DNS_CNAME, 300, 22);
	edge = name(m, "edge.cdn.example.net");
	ptr(m, edge);
	rr_fixed(m, KW_DNS_A, 60, 4);
	raw(m, "\xc0\x00\x02\x07", 4);
	ptr(m, edge);
	rr_fixed(m, KW_DNS_A, 600, 4);
	raw(m, "\xc0\x00\x02\x08", 4);
	name(m, "other.example");
	rr_fixed(m, KW_DNS_A, 60, 4);
	raw(m, "\xc0\x00\x02\x09", 4);
	ptr(m, qn);
	u16(m, KW_DNS_A);
	u16(m, 3); /* class CH */
	u32(m, 60);
	u16(m, 4);
	raw(m, "\xc0\x00\x02\x0a", 4);
}

static void test_answer_cname_chain(void **state)
{
	struct kw_dns_question q;
	struct kw_dns_answer a;
	struct msg m;
	const char *why;

	(void)state;
	cname_answer(&m, &q);
	assert_int_equal(kw_dns_parse_answer(m.b, m.n, &q, &a, &why), 0);
	assert_int_equal(a.rcode, KW_DNS_NOERROR);
	assert_int_equal(a.n_cnames, 1);
	assert_string_equal(a.cnames[0], "edge.cdn.example.net");
	assert_int_equal(a.n_addrs, 2);
	assert_int_equal(a.addrs[0].family, 4);
	assert_memory_equal(a.addrs[0].addr, "\xc0\x00\x02\x07", 4);
	assert_int_equal(a.addrs[0].ttl, 60);
	assert_memory_equal(a.addrs[1].addr, "\xc0\x00\x02\x08", 4);
	assert_int_equal(a.addrs[1].ttl, 300);

	/* another id, or no QR: not this query's answer */
	m.b[1] ^= 1;
	assert_int_equal(kw_dns_parse_answer(m.b, m.n, &q, &a, &why), -EINVAL);
	m.b[1] ^= 1;
	/* cut inside the last record */
	assert_int_equal(kw_dns_parse_answer(m.b, m.n - 2, &q, &a, &why), -EINVAL);
}

static void test_answer_other_question(void **state)
{
	struct kw_dns_question q;
	struct kw_dns_answer a;
	struct msg m;
	const char *why;

	(void)state;
	query(&m, 5, "a.example", KW_DNS_A);
	assert_int_equal(kw_dns_parse_query(m.b, m.n, &q, &why), 0);
	hdr(&m, 5, 0x8180, 1, 1);
	name(&m, "b.example");
	u16(&m, 1);
	u16(&m, 1);
	ptr(&m, 12);
	rr_fixed(&m, KW_DNS_A, 60, 4);
	raw(&m, "\x7f\x00\x00\x02", 4);
	assert_int_equal(kw_dns_parse_answer(m.b, m.n, &q, &a, &why), -EINVAL);
	assert_string_equal(why, "not the question asked");
}

static void test_answer_rcode_and_aaaa(void **state)
{
	struct kw_dns_question q;
	struct kw_dns_answer a;
	struct msg m;
	const char *why;

	(void)state;
	query(&m, 5, "a.example", KW_DNS_AAAA);
	assert_int_equal(kw_dns_parse_query(m.b, m.n, &q, &why), 0);
	hdr(&m, 5, 0x8183, 1, 0);
	name(&m, "a.example");
	u16(&m, KW_DNS_AAAA);
	u16(&m, 1);
	assert_int_equal(kw_dns_parse_answer(m.b, m.n, &q, &a, &why), 0);
	assert_int_equal(a.rcode, KW_DNS_NXDOMAIN);
	assert_int_equal(a.n_addrs, 0);

	hdr(&m, 5, 0x8180, 1, 2);
	name(&m, "a.example");
	u16(&m, KW_DNS_AAAA);
	u16(&m, 1);
	ptr(&m, 12);
	rr_fixed(&m, KW_DNS_AAAA, 0x80000001u, 16); /* top bit: zero (RFC 2181) */
	raw(&m, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
	ptr(&m, 12);
	rr_fixed(&m, KW_DNS_A, 60, 4); /* an A in an AAAA answer: ignored */
	raw(&m, "\x7f\0\0\x02", 4);
	assert_int_equal(kw_dns_parse_answer(m.b, m.n, &q, &a, &why), 0);
	assert_int_equal(a.n_addrs, 1);
	assert_int_equal(a.addrs[0].family, 6);
	assert_int_equal(a.addrs[0].ttl, 0);
}

static void test_pointers(void **state)
{
	struct kw_dns_question q;
	struct kw_dns_answer a;
	struct msg m;
	const char *why;
	size_t at;

	(void)state;
	query(&m, 5, "a.example", KW_DNS_A);
	assert_int_equal(kw_dns_parse_query(m.b, m.n, &q, &why), 0);
	/* a forward pointer */
	hdr(&m, 5, 0x8180, 1, 1);
	name(&m, "a.example");
	u16(&m, 1);
	u16(&m, 1);
	ptr(&m, 200);
	rr_fixed(&m, KW_DNS_A, 60, 4);
	raw(&m, "\x7f\0\0\x02", 4);
	assert_int_equal(kw_dns_parse_answer(m.b, m.n, &q, &a, &why), -EINVAL);
	/* a pointer to itself */
	hdr(&m, 5, 0x8180, 1, 1);
	name(&m, "a.example");
	u16(&m, 1);
	u16(&m, 1);
	at = m.n;
	ptr(&m, at);
	rr_fixed(&m, KW_DNS_A, 60, 4);
	raw(&m, "\x7f\0\0\x02", 4);
	assert_int_equal(kw_dns_parse_answer(m.b, m.n, &q, &a, &why), -EINVAL);
	/* a CNAME loop: a -> b -> a, the chain stops, b's address counts */
	hdr(&m, 5, 0x8180, 1, 3);
	name(&m, "a.example");
	u16(&m, 1);
	u16(&m, 1);
	ptr(&m, 12);
	rr_fixed(&m, KW_DNS_CNAME, 60, 11);
	at = name(&m, "b.example");
	ptr(&m, at);
	rr_fixed(&m, KW_DNS_CNAME, 60, 2);
	ptr(&m, 12);
	ptr(&m, at);
	rr_fixed(&m, KW_DNS_A, 60, 4);
	raw(&m, "\x7f\0\0\x05", 4);
	assert_int_equal(kw_dns_parse_answer(m.b, m.n, &q, &a, &why), 0);
	assert_int_equal(a.n_cnames, 1);
	assert_int_equal(a.n_addrs, 1);
}

static void test_reply(void **state)
{
	struct kw_dns_question q, back;
	struct kw_dns_answer a;
	uint8_t out[512];
	struct msg m;
	const char *why;
	size_t n;

	(void)state;
	query(&m, 0x4242, "denied.test", KW_DNS_A);
	assert_int_equal(kw_dns_parse_query(m.b, m.n, &q, &why), 0);
	n = kw_dns_reply_rcode(m.b, &q, KW_DNS_REFUSED, out, sizeof(out));
	assert_int_equal(n, m.n);
	assert_int_equal(out[0], 0x42);
	assert_int_equal(out[2], 0x81); /* QR, RD */
	assert_int_equal(out[3], 0x85); /* RA, REFUSED */
	assert_int_equal(kw_dns_parse_query(out, n, &back, &why), -EINVAL);
	assert_int_equal(kw_dns_parse_answer(out, n, &q, &a, &why), 0);
	assert_int_equal(a.rcode, KW_DNS_REFUSED);
	assert_int_equal(kw_dns_reply_rcode(m.b, &q, KW_DNS_SERVFAIL, out, 5), 0);
	assert_string_equal(kw_dns_rcode_name(KW_DNS_SERVFAIL), "SERVFAIL");
	assert_string_equal(kw_dns_type_name(KW_DNS_AAAA), "AAAA");
	assert_null(kw_dns_type_name(9999));
}

/* Every prefix of a valid answer and every single-byte change: no crash,
 * no read outside (ASan), results within bounds. */
static void test_mutations(void **state)
{
	struct kw_dns_question q;
	struct kw_dns_answer a;
	struct msg m, x;
	const char *why;

	(void)state;
	cname_answer(&m, &q);
	for (size_t n = 0; n <= m.n; n++) {
		uint8_t *copy = malloc(n ? n : 1);

		memcpy(copy, m.b, n);
		if (kw_dns_parse_answer(copy, n, &q, &a, &why) == 0)
			assert_true(a.n_addrs <= KW_DNS_MAX_ADDRS);
		free(copy);
	}
	for (size_t i = 0; i < m.n; i++) {
		for (int v = 0; v < 256; v += 17) {
			x = m;
			x.b[i] = (uint8_t)v;
			if (kw_dns_parse_answer(x.b, x.n, &q, &a, &why) == 0)
				assert_true(a.n_cnames <= KW_DNS_MAX_CNAMES);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query),
		cmocka_unit_test(test_answer_cname_chain),
		cmocka_unit_test(test_answer_other_question),
		cmocka_unit_test(test_answer_rcode_and_aaaa),
		cmocka_unit_test(test_pointers),
		cmocka_unit_test(test_reply),
		cmocka_unit_test(test_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
