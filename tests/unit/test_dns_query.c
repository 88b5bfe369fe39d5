/* SPDX-License-Identifier: Apache-2.0 */
/* The dns.query entry: its exact bytes for a permitted answer with a CNAME
 * and an address a full session could not open, and for a refusal; both
 * are their own RFC 8785 canonical form. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "collector/dns_query.h"
#include "jcs/jcs.h"

static void canonical(const struct kw_buf *b)
{
	struct kw_buf c = { 0 };

	assert_int_equal(jcs_canonicalize(b->data, b->len, &c, NULL), 0);
	assert_int_equal(c.len, b->len);
	assert_memory_equal(c.data, b->data, b->len);
	kw_buf_free(&c);
}

static void test_permit_entry(void **state)
{
	struct kw_dns_question q = { .qtype = 1 };
	struct kw_dns_answer a = { 0 };
	uint32_t ttl[2] = { 60, 30 };
	bool opened[2] = { true, false };
	struct kw_buf b = { 0 };
	struct kw_dns_query_entry e = {
		.seq = 7, .ts_us = 1795952155034441, .q = &q, .permit = true, .rule = "net.connect[1]",
		.rcode = 0, .proto = "udp", .client = "127.0.0.1:40000", .answer = &a,
		.granted_ttl = ttl, .opened = opened,
	};

	(void)state;
	strcpy(q.name, "api.example.org");
	a.n_cnames = 1;
	strcpy(a.cnames[0], "edge.cdn.example.net");
	a.n_addrs = 2;
	a.addrs[0] = (struct kw_dns_addr){ .family = 4, .addr = { 192, 0, 2, 7 }, .ttl = 60 };
	a.addrs[1] = (struct kw_dns_addr){ .family = 6, .addr = { 0x20, 1, 0xd, 0xb8, [15] = 1 },
					   .ttl = 30 };
	assert_int_equal(kw_dns_query_entry(&e, &b), 0);
	assert_string_equal(b.data,
			    "{\"answers\":\"192.0.2.7=60\",\"client\":\"127.0.0.1:40000\","
			    "\"cnames\":\"edge.cdn.example.net\",\"decision\":\"permit\","
			    "\"enforced\":false,\"name\":\"api.example.org\","
			    "\"not_opened\":\"2001:db8::1=30\",\"proto\":\"udp\",\"qtype\":\"A\","
			    "\"rcode\":\"NOERROR\",\"rule\":\"net.connect[1]\",\"seq\":7,"
			    "\"source\":\"collector\",\"tool\":\"dns.query\",\"ts\":1795952155034441}");
	canonical(&b);
	kw_buf_free(&b);
}

static void test_refused_entry(void **state)
{
	struct kw_dns_question q = { .qtype = 99 };
	struct kw_buf b = { 0 };
	struct kw_dns_query_entry e = {
		.seq = 3, .ts_us = 5, .q = &q, .permit = false, .enforced = true,
		.rule = "net.dns:default", .rcode = 5, .proto = "tcp", .client = "[::1]:5",
	};

	(void)state;
	strcpy(q.name, "denied.test");
	assert_int_equal(kw_dns_query_entry(&e, &b), 0);
	assert_string_equal(b.data,
			    "{\"client\":\"[::1]:5\",\"decision\":\"deny\",\"enforced\":true,"
			    "\"name\":\"denied.test\",\"proto\":\"tcp\",\"qtype\":99,"
			    "\"rcode\":\"REFUSED\",\"rule\":\"net.dns:default\",\"seq\":3,"
			    "\"source\":\"collector\",\"tool\":\"dns.query\",\"ts\":5}");
	canonical(&b);
	/* a number beyond 2^53 - 1 is refused, and nothing is left behind */
	e.seq = (uint64_t)1 << 53;
	b.len = 0;
	assert_int_equal(kw_dns_query_entry(&e, &b), -EINVAL);
	assert_int_equal(b.len, 0);
	kw_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_permit_entry),
		cmocka_unit_test(test_refused_entry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
