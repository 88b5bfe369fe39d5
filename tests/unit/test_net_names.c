/* SPDX-License-Identifier: Apache-2.0 */
/* Host names in network rules and the net.dns section: the accepted forms,
 * the refusals and their messages, wildcard matching, ports, resolv.conf. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policy/net_names.h"
#include "policy/policy.h"

#define HEAD "{\"kwitness_policy\":1,\"mode\":\"enforce\","

static struct kw_policy *parse_ok(const char *json)
{
	struct kw_policy *p = NULL;
	char err[256] = "";
	int ret = kw_policy_parse(json, strlen(json), &p, err, sizeof(err));

	if (ret)
		print_error("unexpected refusal: %s\n", err);
	assert_int_equal(ret, 0);
	return p;
}

static void refused(const char *json, const char *want)
{
	struct kw_policy *p = NULL;
	char err[256] = "";
	int ret = kw_policy_parse(json, strlen(json), &p, err, sizeof(err));

	if (ret != -EINVAL || strncmp(err, want, strlen(want)))
		print_error("bundle %s\n  want \"%s\"\n  got %d \"%s\"\n", json, want, ret, err);
	assert_int_equal(ret, -EINVAL);
	assert_null(p);
	assert_memory_equal(err, want, strlen(want));
}

static void test_name_rules_parse(void **state)
{
	struct kw_policy *p;

	(void)state;
	p = parse_ok(HEAD "\"net\":{\"connect\":[\"10.0.0.0/8:443\",\"API.Example.ORG.:443\","
			  "\"*.example.org:80,443,8000-8100\",\"xn--bcher-kva.example:*\"],"
			  "\"send\":[\"ntp.example.net:123\"]}}");
	assert_int_equal(p->n_net, 1);
	assert_int_equal(p->n_names, 4);
	assert_true(p->dns_steer);
	assert_string_equal(p->names[0].name, "api.example.org");
	assert_int_equal(p->names[0].index, 1);
	assert_int_equal(p->names[0].op, KW_NET_CONNECT);
	assert_false(p->names[0].wildcard);
	assert_int_equal(p->names[0].n_ports, 1);
	assert_int_equal(p->names[0].ports[0].lo, 443);
	assert_string_equal(p->names[1].name, "example.org");
	assert_true(p->names[1].wildcard);
	assert_int_equal(p->names[1].n_ports, 3);
	assert_int_equal(p->names[1].ports[2].lo, 8000);
	assert_int_equal(p->names[1].ports[2].hi, 8100);
	assert_int_equal(p->names[2].ports[0].hi, 65535);
	assert_int_equal(p->names[3].op, KW_NET_SEND);
	assert_int_equal(p->names[3].index, 0);
	/* defaults of an absent net.dns */
	assert_int_equal(p->dns.n_resolvers, 0);
	assert_false(p->dns.allow_other_names);
	assert_int_equal(p->dns.min_ttl, KW_DNS_DEFAULT_MIN_TTL);
	assert_int_equal(p->dns.max_ttl, KW_DNS_DEFAULT_MAX_TTL);
	kw_policy_free(p);

	/* CIDRs alone: no steering */
	p = parse_ok(HEAD "\"net\":{\"connect\":[\"10.0.0.0/8:443\"]}}");
	assert_false(p->dns_steer);
	assert_int_equal(p->n_names, 0);
	kw_policy_free(p);
}

static void test_name_refusals(void **state)
{
	(void)state;
	refused(HEAD "\"net\":{\"connect\":[\"exa mple.org:443\"]}}",
		"net.connect[0]: bad host name \"exa mple.org\" (only letters, digits");
	refused(HEAD "\"net\":{\"connect\":[\"b\xc3\xbc" "cher.example:443\"]}}",
		"net.connect[0]: bad host name");
	refused(HEAD "\"net\":{\"connect\":[\"a.*.example.org:443\"]}}",
		"net.connect[0]: bad host name \"a.*.example.org\" ('*' only as the whole first label");
	refused(HEAD "\"net\":{\"connect\":[\"-a.example.org:443\"]}}",
		"net.connect[0]: bad host name \"-a.example.org\" (a label starts with '-')");
	refused(HEAD "\"net\":{\"connect\":[\"a-.example.org:443\"]}}",
		"net.connect[0]: bad host name \"a-.example.org\" (a label ends with '-')");
	refused(HEAD "\"net\":{\"connect\":[\"a..example.org:443\"]}}",
		"net.connect[0]: bad host name \"a..example.org\" (empty label)");
	refused(HEAD "\"net\":{\"connect\":[\"10.0.0.1:443\"]}}",
		"net.connect[0]: bad host name \"10.0.0.1\" (the last label is a number");
	refused(HEAD "\"net\":{\"connect\":[\"example.org:\"]}}",
		"net.connect[0]: bad port \"\"");
	refused(HEAD "\"net\":{\"connect\":[\"example.org:80,\"]}}",
		"net.connect[0]: bad port \"80,\"");
	refused(HEAD "\"net\":{\"connect\":[\"example.org:1,2,3,4,5,6,7,8,9\"]}}",
		"net.connect[0]: bad port");
	refused(HEAD "\"net\":{\"connect\":[\"example.org:443-80\"]}}", "net.connect[0]: bad port");
	refused(HEAD "\"net\":{\"connect\":[\"!example.org:443\"]}}",
		"net.connect[0]: a deny rule takes a CIDR, not a name");
	refused(HEAD "\"net\":{\"bind\":[\"example.org:443\"]}}", "net.bind[0]: bad CIDR");
	refused(HEAD "\"net\":{\"connect\":[\"*.:443\"]}}", "net.connect[0]: bad host name");
	/* 64-character label */
	refused(HEAD "\"net\":{\"connect\":[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.org:1\"]}}",
		"net.connect[0]: bad host name");
}

static void test_dns_section(void **state)
{
	struct kw_policy *p;
	uint8_t v6[16];

	(void)state;
	p = parse_ok(HEAD "\"net\":{\"connect\":[\"a.example:443\"],\"dns\":{\"resolvers\":"
			  "[\"192.0.2.53\",\"192.0.2.54:5353\",\"2001:db8::53\",\"[2001:db8::54]:5300\"],"
			  "\"allow_other_names\":true,\"min_ttl\":5,\"max_ttl\":600}}}");
	assert_int_equal(p->dns.n_resolvers, 4);
	assert_int_equal(p->dns.resolvers[0].family, 4);
	assert_int_equal(p->dns.resolvers[0].port, 53);
	assert_int_equal(p->dns.resolvers[1].port, 5353);
	assert_int_equal(p->dns.resolvers[2].family, 6);
	inet_pton(AF_INET6, "2001:db8::54", v6);
	assert_memory_equal(p->dns.resolvers[3].addr, v6, 16);
	assert_int_equal(p->dns.resolvers[3].port, 5300);
	assert_true(p->dns.allow_other_names);
	assert_int_equal(p->dns.min_ttl, 5);
	assert_int_equal(p->dns.max_ttl, 600);
	kw_policy_free(p);

	/* a net.dns section alone steers the session's DNS too */
	p = parse_ok(HEAD "\"net\":{\"dns\":{}}}");
	assert_true(p->dns_steer);
	kw_policy_free(p);

	refused(HEAD "\"net\":{\"dns\":{\"resolver\":[]}}}", "net.dns.resolver: unknown key");
	refused(HEAD "\"net\":{\"dns\":{\"resolvers\":[]}}}", "net.dns.resolvers: empty");
	refused(HEAD "\"net\":{\"dns\":{\"resolvers\":[\"dns.example\"]}}}",
		"net.dns.resolvers[0]: bad resolver \"dns.example\"");
	refused(HEAD "\"net\":{\"dns\":{\"resolvers\":[\"192.0.2.1:0\"]}}}",
		"net.dns.resolvers[0]: bad resolver");
	refused(HEAD "\"net\":{\"dns\":{\"resolvers\":[\"1.1.1.1\",\"1.1.1.2\",\"1.1.1.3\",\"1.1.1.4\",\"1.1.1.5\"]}}}",
		"net.dns.resolvers: more than 4");
	refused(HEAD "\"net\":{\"dns\":{\"min_ttl\":-1}}}", "net.dns.min_ttl: must be an integer");
	refused(HEAD "\"net\":{\"dns\":{\"max_ttl\":86401}}}", "net.dns.max_ttl: must be an integer");
	refused(HEAD "\"net\":{\"dns\":{\"min_ttl\":60,\"max_ttl\":30}}}",
		"net.dns: min_ttl 60 is above max_ttl 30");
	refused(HEAD "\"net\":{\"dns\":{\"allow_other_names\":1}}}",
		"net.dns.allow_other_names: must be true or false");
	refused(HEAD "\"net\":{\"dns\":[]}}", "net.dns: must be an object");
}

static void test_name_matching(void **state)
{
	struct kw_name_rule r[2];
	const char *why;
	bool wc;

	(void)state;
	memset(r, 0, sizeof(r));
	assert_int_equal(kw_name_normalise("api.example.org", 15, true, r[0].name, &wc, &why), 0);
	assert_int_equal(kw_name_normalise("*.Example.org", 13, true, r[1].name, &r[1].wildcard,
					   &why), 0);
	assert_true(r[1].wildcard);
	assert_true(kw_name_rule_matches(&r[0], "api.example.org"));
	assert_false(kw_name_rule_matches(&r[0], "xapi.example.org"));
	assert_false(kw_name_rule_matches(&r[0], "a.api.example.org"));
	assert_true(kw_name_rule_matches(&r[1], "a.example.org"));
	assert_true(kw_name_rule_matches(&r[1], "a.b.example.org"));
	assert_false(kw_name_rule_matches(&r[1], "example.org"));
	assert_false(kw_name_rule_matches(&r[1], "aexample.org"));
	assert_false(kw_name_rule_matches(&r[1], ".example.org") && 0);
	assert_ptr_equal(kw_name_rule_find(r, 2, "x.example.org"), &r[1]);
	assert_ptr_equal(kw_name_rule_find(r, 2, "api.example.org"), &r[0]);
	assert_null(kw_name_rule_find(r, 2, "example.com"));
	/* wildcards only where allowed */
	assert_int_equal(kw_name_normalise("*.a.org", 7, false, r[0].name, &wc, &why), -EINVAL);
}

static void test_ports(void **state)
{
	struct kw_name_rule r = { 0 };

	(void)state;
	assert_int_equal(kw_name_ports_parse("80,443", r.ports, &r.n_ports), 0);
	assert_true(kw_name_rule_port(&r, 80));
	assert_true(kw_name_rule_port(&r, 443));
	assert_false(kw_name_rule_port(&r, 81));
	assert_int_equal(kw_name_ports_parse("0", r.ports, &r.n_ports), 0);
	assert_int_equal(kw_name_ports_parse("65536", r.ports, &r.n_ports), -EINVAL);
	assert_int_equal(kw_name_ports_parse("080", r.ports, &r.n_ports), -EINVAL);
	assert_int_equal(kw_name_ports_parse(",80", r.ports, &r.n_ports), -EINVAL);
	assert_int_equal(kw_name_ports_parse("1-", r.ports, &r.n_ports), -EINVAL);
}

static void test_resolv_conf(void **state)
{
	static const char text[] = "# comment\nsearch example\nnameserver 192.0.2.1\n"
				   "nameserver\t2001:db8::1 # trailing\nnameserver fe80::1%eth0\n"
				   "nameserver bogus\nnameserver 192.0.2.2\nnameserver 192.0.2.3\n"
				   "nameserver 192.0.2.4\n";
	struct kw_dns_resolver r[KW_DNS_MAX_RESOLVERS];
	uint8_t a[16] = { 0 };

	(void)state;
	assert_int_equal(kw_dns_resolv_conf(text, sizeof(text) - 1, r), 4);
	inet_pton(AF_INET, "192.0.2.1", a);
	assert_int_equal(r[0].family, 4);
	assert_memory_equal(r[0].addr, a, 4);
	assert_int_equal(r[0].port, 53);
	assert_int_equal(r[1].family, 6);
	inet_pton(AF_INET, "192.0.2.3", a);
	assert_memory_equal(r[3].addr, a, 4);
	assert_int_equal(kw_dns_resolv_conf("nameserver", 10, r), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_rules_parse),
		cmocka_unit_test(test_name_refusals),
		cmocka_unit_test(test_dns_section),
		cmocka_unit_test(test_name_matching),
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_resolv_conf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
