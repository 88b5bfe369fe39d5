/* SPDX-License-Identifier: Apache-2.0 */
/* Addresses opened by DNS answers: what kwitnessd's table adds (ports per
 * rule, renewal, the per-session bound, the per-address bound), expiry, and
 * the kernel's evaluation of an entry (include/kwitness/abi/name_match.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kwitness/abi/name_match.h"
#include "policy/name_table.h"

static struct kw_name_rule rule(uint16_t index, uint8_t op, const char *ports)
{
	struct kw_name_rule r;

	memset(&r, 0, sizeof(r));
	r.index = index;
	r.op = op;
	assert_int_equal(kw_name_ports_parse(ports, r.ports, &r.n_ports), 0);
	return r;
}

static void test_open_and_eval(void **state)
{
	struct kw_name_rule r0 = rule(0, KW_NET_CONNECT, "443"), r3 = rule(3, KW_NET_CONNECT, "80,8000-8100");
	const uint8_t a[16] = { 127, 0, 0, 2 };
	const struct kw_name_entry *e;
	struct kw_name_table t;
	__u64 via = 0;
	uint16_t ri = 0;
	int err;

	(void)state;
	kw_name_table_init(&t, 7, 42, 4);
	e = kw_name_table_open(&t, 4, a, &r0, 1000, 11, &err);
	assert_non_null(e);
	assert_int_equal(e->key.slot, 7);
	assert_int_equal(e->key.op, KW_NET_CONNECT);
	assert_int_equal(e->val.count, 1);
	/* the kernel's view */
	assert_true(kw_name_eval(&e->val, 42, 443, 999, &ri, &via));
	assert_int_equal(ri, 0);
	assert_int_equal(via, 11);
	assert_false(kw_name_eval(&e->val, 42, 443, 1000, &ri, &via)); /* expired */
	assert_false(kw_name_eval(&e->val, 42, 80, 10, &ri, &via));    /* other port */
	assert_false(kw_name_eval(&e->val, 43, 443, 10, &ri, &via));   /* other generation */
	assert_false(kw_name_eval(NULL, 42, 443, 10, &ri, &via));
	/* a second rule on the same address adds its ranges */
	e = kw_name_table_open(&t, 4, a, &r3, 5000, 12, &err);
	assert_int_equal(t.n, 1);
	assert_int_equal(e->val.count, 3);
	assert_true(kw_name_eval(&e->val, 42, 8050, 2000, &ri, &via));
	assert_int_equal(ri, 3);
	assert_int_equal(via, 12);
	assert_false(kw_name_eval(&e->val, 42, 443, 2000, &ri, &via));
	/* renewal: same rule, new expiry and via, no new slot */
	e = kw_name_table_open(&t, 4, a, &r0, 9000, 13, &err);
	assert_int_equal(e->val.count, 3);
	assert_true(kw_name_eval(&e->val, 42, 443, 2000, &ri, &via));
	assert_int_equal(via, 13);
	kw_name_table_free(&t);
}

static int puts_seen, dels_seen;
static void on_put(void *ctx, const struct kw_name_entry *e)
{
	(void)ctx;
	(void)e;
	puts_seen++;
}
static void on_del(void *ctx, const struct kw_name_entry *e)
{
	(void)ctx;
	assert_int_equal(e->val.count, 0);
	dels_seen++;
}

static void test_bounds_and_expiry(void **state)
{
	struct kw_name_rule r0 = rule(0, KW_NET_CONNECT, "443"), rs = rule(1, KW_NET_SEND, "53");
	struct kw_name_rule wide = rule(2, KW_NET_CONNECT, "1,2,3,4,5,6,7,8");
	struct kw_name_table t;
	uint8_t a[16] = { 0 };
	int err;

	(void)state;
	kw_name_table_init(&t, 1, 1, 3);
	for (int i = 0; i < 3; i++) {
		a[3] = (uint8_t)i;
		assert_non_null(kw_name_table_open(&t, 4, a, &r0, 100 + (uint64_t)i * 100, 1, &err));
	}
	a[3] = 9;
	assert_null(kw_name_table_open(&t, 4, a, &r0, 100, 1, &err));
	assert_int_equal(err, -ENOSPC);
	/* the same address for another op is another entry: also refused when full */
	a[3] = 0;
	assert_null(kw_name_table_open(&t, 4, a, &rs, 100, 1, &err));
	/* an address with 8 port rules takes no ninth */
	assert_null(kw_name_table_open(&t, 4, a, &wide, 100, 1, &err));
	assert_int_equal(err, -ENOSPC);
	/* expiry: at 250 the first two are gone */
	puts_seen = dels_seen = 0;
	assert_int_equal(kw_name_table_expire(&t, 250, on_put, on_del, NULL), 2);
	assert_int_equal(dels_seen, 2);
	assert_int_equal(puts_seen, 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.e[0].key.addr[3], 2);
	/* room again */
	a[3] = 9;
	assert_non_null(kw_name_table_open(&t, 4, a, &r0, 1000, 1, &err));
	/* an entry keeping one of two rules is rewritten, not deleted */
	assert_non_null(kw_name_table_open(&t, 4, a, &(struct kw_name_rule){ .index = 5,
		.op = KW_NET_CONNECT, .n_ports = 1, .ports = { { 80, 80 } } }, 2000, 1, &err));
	puts_seen = dels_seen = 0;
	assert_int_equal(kw_name_table_expire(&t, 1500, on_put, on_del, NULL), 2);
	assert_int_equal(puts_seen, 1);
	assert_int_equal(dels_seen, 1);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.e[0].val.count, 1);
	assert_int_equal(t.e[0].val.p[0].rule, 5);
	kw_name_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_and_eval),
		cmocka_unit_test(test_bounds_and_expiry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
