/* SPDX-License-Identifier: Apache-2.0 */
/* The network rule evaluation the BPF programs run (include/kwitness/abi/net_match.h),
 * on hand-built rule entries: longest prefix decides, ties go to deny, port
 * ranges are inclusive, nothing matching is the default deny. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kwitness/abi/net_match.h"

static void add(struct kw_net_rules *v, uint16_t lo, uint16_t hi, uint8_t plen, uint8_t allow,
		uint16_t rule)
{
	struct kw_net_port_rule *r = &v->r[v->count++];

	r->port_lo = lo;
	r->port_hi = hi;
	r->prefixlen = plen;
	r->allow = allow;
	r->rule = rule;
}

static void test_no_entry_is_default_deny(void **state)
{
	uint16_t rule = 0;

	(void)state;
	assert_int_equal(kw_net_eval(NULL, 80, &rule), 0);
	assert_int_equal(rule, KW_RULE_DEFAULT);
}

static void test_port_outside_every_rule(void **state)
{
	struct kw_net_rules v = { 0 };
	uint16_t rule = 0;

	(void)state;
	add(&v, 443, 443, 8, 1, 0);
	add(&v, 1000, 2000, 32, 1, 1);
	assert_int_equal(kw_net_eval(&v, 80, &rule), 0);
	assert_int_equal(rule, KW_RULE_DEFAULT);
	assert_int_equal(kw_net_eval(&v, 999, &rule), 0);
	assert_int_equal(kw_net_eval(&v, 2001, &rule), 0);
	/* range edges are inclusive */
	assert_int_equal(kw_net_eval(&v, 1000, &rule), 1);
	assert_int_equal(rule, 1);
	assert_int_equal(kw_net_eval(&v, 2000, &rule), 1);
	assert_int_equal(kw_net_eval(&v, 443, &rule), 1);
	assert_int_equal(rule, 0);
}

static void test_longest_prefix_decides(void **state)
{
	struct kw_net_rules v = { 0 };
	uint16_t rule = 0;

	(void)state;
	/* 10.0.0.0/8 allow all ports, 10.1.0.0/16 deny all, 10.1.2.0/24 allow 443 */
	add(&v, 0, 65535, 8, 1, 0);
	add(&v, 0, 65535, 16, 0, 1);
	add(&v, 443, 443, 24, 1, 2);
	assert_int_equal(kw_net_eval(&v, 443, &rule), 1);
	assert_int_equal(rule, 2);
	/* port 80: the /24 rule does not match the port, the /16 deny is next */
	assert_int_equal(kw_net_eval(&v, 80, &rule), 0);
	assert_int_equal(rule, 1);
}

static void test_order_does_not_matter(void **state)
{
	struct kw_net_rules v = { 0 };
	uint16_t rule = 0;

	(void)state;
	add(&v, 443, 443, 24, 1, 2);
	add(&v, 0, 65535, 16, 0, 1);
	add(&v, 0, 65535, 8, 1, 0);
	assert_int_equal(kw_net_eval(&v, 443, &rule), 1);
	assert_int_equal(rule, 2);
	assert_int_equal(kw_net_eval(&v, 22, &rule), 0);
	assert_int_equal(rule, 1);
}

static void test_tie_goes_to_deny(void **state)
{
	struct kw_net_rules v = { 0 };
	uint16_t rule = 0;

	(void)state;
	add(&v, 0, 65535, 32, 1, 0);
	add(&v, 80, 80, 32, 0, 1);
	add(&v, 0, 65535, 32, 1, 2);
	assert_int_equal(kw_net_eval(&v, 80, &rule), 0);
	assert_int_equal(rule, 1);
	/* no deny for the port: the first allow names the rule */
	assert_int_equal(kw_net_eval(&v, 81, &rule), 1);
	assert_int_equal(rule, 0);
	/* deny first, allow later at the same length: still deny */
	memset(&v, 0, sizeof(v));
	add(&v, 80, 80, 32, 0, 5);
	add(&v, 0, 65535, 32, 1, 6);
	assert_int_equal(kw_net_eval(&v, 80, &rule), 0);
	assert_int_equal(rule, 5);
}

static void test_count_is_bounded(void **state)
{
	struct kw_net_rules v = { 0 };
	uint16_t rule = 0;

	(void)state;
	add(&v, 80, 80, 0, 1, 0);
	/* a corrupt count beyond the array is never read past it */
	v.count = 1000;
	assert_int_equal(kw_net_eval(&v, 80, &rule), 1);
	assert_int_equal(rule, 0);
}

static void test_v4mapped(void **state)
{
	uint8_t a[16] = { 0 };

	(void)state;
	a[10] = a[11] = 0xff;
	a[12] = 127;
	a[15] = 1;
	assert_true(kw_addr_is_v4mapped(a));
	a[9] = 1;
	assert_false(kw_addr_is_v4mapped(a));
	memset(a, 0, sizeof(a));
	a[15] = 1; /* ::1 */
	assert_false(kw_addr_is_v4mapped(a));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_entry_is_default_deny),
		cmocka_unit_test(test_port_outside_every_rule),
		cmocka_unit_test(test_longest_prefix_decides),
		cmocka_unit_test(test_order_does_not_matter),
		cmocka_unit_test(test_tie_goes_to_deny),
		cmocka_unit_test(test_count_is_bounded),
		cmocka_unit_test(test_v4mapped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
