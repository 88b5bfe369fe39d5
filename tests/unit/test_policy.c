/* SPDX-License-Identifier: Apache-2.0 */
/* Policy bundles: good bundles for each section, refusals that name their
 * field, CIDR and port parsing, IPv4-mapped rules, and the compiled network
 * rules evaluated the way the kernel does (LPM lookup + net_match.h). */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <linux/bpf.h>

#include "lib/buf.h"
#include "policy/net_compile.h"
#include "kwitness/abi/net_match.h"
#include "policy/policy.h"

static struct kw_policy *parse_ok(const char *json)
{
	struct kw_policy *p = NULL;
	char err[256] = "";
	int ret = kw_policy_parse(json, strlen(json), &p, err, sizeof(err));

	if (ret)
		print_error("unexpected refusal: %s\n", err);
	assert_int_equal(ret, 0);
	assert_non_null(p);
	return p;
}

/* The bundle must be refused with an error that starts with want. */
static void refused(const char *json, const char *want)
{
	struct kw_policy *p = (void *)1;
	char err[256] = "";
	int ret = kw_policy_parse(json, strlen(json), &p, err, sizeof(err));

	if (ret != -EINVAL || strncmp(err, want, strlen(want)))
		print_error("bundle %s\n  want error starting \"%s\"\n  got %d \"%s\"\n", json, want,
			    ret, err);
	assert_int_equal(ret, -EINVAL);
	assert_null(p);
	assert_memory_equal(err, want, strlen(want));
}

#define HEAD "{\"kwitness_policy\":1,\"mode\":\"enforce\""

static void test_minimal_bundle(void **state)
{
	struct kw_policy *p;

	(void)state;
	p = parse_ok(HEAD "}");
	assert_int_equal(p->mode, KW_MODE_ENFORCE);
	assert_int_equal(p->record, KW_RECORD_ALL);
	assert_int_equal(p->on_failure, KW_ONFAIL_DENY);
	assert_int_equal(p->classes, 0);
	kw_policy_free(p);

	p = parse_ok("{\"kwitness_policy\":1,\"mode\":\"advisory\",\"record\":\"deny\","
		     "\"on_record_failure\":\"allow\"}");
	assert_int_equal(p->mode, KW_MODE_ADVISORY);
	assert_int_equal(p->record, KW_RECORD_DENY);
	assert_int_equal(p->on_failure, KW_ONFAIL_ALLOW);
	kw_policy_free(p);
	p = parse_ok("{\"kwitness_policy\":1,\"mode\":\"silent\"}");
	assert_int_equal(p->mode, KW_MODE_SILENT);
	assert_string_equal(kw_mode_name(p->mode), "silent");
	kw_policy_free(p);
}

static void test_design_example(void **state)
{
	/* examples/policies/design-sketch.json */
	static const char bundle[] =
		"{\n"
		"  \"kwitness_policy\": 1,\n"
		"  \"mode\": \"enforce\",\n"
		"  \"record\": \"all\",\n"
		"  \"on_record_failure\": \"deny\",\n"
		"  \"fs\":   { \"read\": [\"/usr\", \"/lib\", \"/etc/ssl\", \"/srv/agent\"], "
		"\"write\": [\"/srv/agent\", \"/tmp\"], \"deny\": [\"/srv/agent/.ssh\"] },\n"
		"  \"exec\": { \"allow\": [\"/usr/bin\", \"/bin\"] },\n"
		"  \"net\":  { \"connect\": [\"127.0.0.1/32:8080\", \"10.0.0.0/8:443\", \"::1/128:*\"],\n"
		"            \"bind\": [\"127.0.0.1/32:1024-65535\"], \"socket\": [\"inet\", \"inet6\", "
		"\"unix\"] },\n"
		"  \"dev\":  { \"allow\": [\"c 1:3 rw\", \"c 1:5 r\", \"c 1:9 r\"] },\n"
		"  \"sysctl\": { \"write\": false }\n"
		"}\n";
	struct kw_policy *p;
	size_t i, reads = 0, writes = 0, denies = 0, execs = 0;

	(void)state;
	p = parse_ok(bundle);
	assert_int_equal(p->classes, KW_CLASS_FS | KW_CLASS_EXEC | KW_CLASS_NET_CONNECT |
				     KW_CLASS_NET_BIND | KW_CLASS_NET_SOCKET | KW_CLASS_DEV |
				     KW_CLASS_SYSCTL);
	assert_int_equal(p->n_net, 4);
	assert_int_equal(p->net[0].op, KW_NET_CONNECT);
	assert_int_equal(p->net[0].family, 4);
	assert_int_equal(p->net[0].prefixlen, 32);
	assert_int_equal(p->net[0].port_lo, 8080);
	assert_int_equal(p->net[0].port_hi, 8080);
	assert_int_equal(p->net[1].index, 1);
	assert_int_equal(p->net[1].addr[0], 10);
	assert_int_equal(p->net[2].family, 6);
	assert_int_equal(p->net[2].prefixlen, 128);
	assert_int_equal(p->net[2].addr[15], 1);
	assert_int_equal(p->net[2].port_lo, 0);
	assert_int_equal(p->net[2].port_hi, 65535);
	assert_int_equal(p->net[3].op, KW_NET_BIND);
	assert_int_equal(p->net[3].index, 0);
	assert_int_equal(p->net[3].port_lo, 1024);
	/* plain inet and inet6: stream (1) and dgram (2) only */
	assert_int_equal(p->socket_allow, 0x0606);
	assert_int_equal(p->socket_rule[1], 0);
	assert_int_equal(p->socket_rule[8 + 2], 1);
	assert_false(p->socket_implicit);
	assert_int_equal(p->n_dev, 3);
	assert_int_equal(p->dev[0].type, BPF_DEVCG_DEV_CHAR);
	assert_int_equal(p->dev[0].major, 1);
	assert_int_equal(p->dev[0].minor, 3);
	assert_int_equal(p->dev[0].access, BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE);
	assert_int_equal(p->dev[2].index, 2);
	assert_false(p->sysctl_write);
	for (i = 0; i < p->n_paths; i++) {
		reads += p->paths[i].kind == KW_PATH_READ;
		writes += p->paths[i].kind == KW_PATH_WRITE;
		denies += p->paths[i].kind == KW_PATH_DENY;
		execs += p->paths[i].kind == KW_PATH_EXEC;
	}
	assert_int_equal(reads, 4);
	assert_int_equal(writes, 2);
	assert_int_equal(denies, 1);
	assert_int_equal(execs, 2);
	for (i = 0; i < p->n_paths; i++)
		if (p->paths[i].kind == KW_PATH_DENY) {
			assert_string_equal(p->paths[i].path, "/srv/agent/.ssh");
			assert_int_equal(p->paths[i].len, 15);
			assert_int_equal(p->paths[i].index, 0);
		}
	kw_policy_free(p);
}

static void test_each_section_sets_its_class(void **state)
{
	static const struct {
		const char *body;
		uint32_t classes;
	} cases[] = {
		/* any net list governs sockets too (raw, ping: docs/policy.md) */
		{ ",\"net\":{\"connect\":[]}}", KW_CLASS_NET_CONNECT | KW_CLASS_NET_SOCKET },
		{ ",\"net\":{\"send\":[\"0.0.0.0/0:53\"]}}", KW_CLASS_NET_SEND | KW_CLASS_NET_SOCKET },
		{ ",\"net\":{\"bind\":[\"::/0:8000-8999\"]}}", KW_CLASS_NET_BIND | KW_CLASS_NET_SOCKET },
		{ ",\"net\":{\"socket\":[\"inet:stream\"]}}", KW_CLASS_NET_SOCKET },
		{ ",\"net\":{\"unix\":[\"/run/app.sock\"]}}", KW_CLASS_UNIX },
		{ ",\"net\":{}}", 0 },
		{ ",\"dev\":{}}", KW_CLASS_DEV },
		{ ",\"dev\":{\"allow\":[\"b 8:* r\",\"c *:* m\"]}}", KW_CLASS_DEV },
		{ ",\"sysctl\":{\"write\":true}}", KW_CLASS_SYSCTL },
		{ ",\"fs\":{\"read\":[\"/\"]}}", KW_CLASS_FS },
		{ ",\"exec\":{\"allow\":[]}}", KW_CLASS_EXEC },
		{ ",\"mount\":{\"allow\":true}}", KW_CLASS_MOUNT },
		{ ",\"proc\":{\"signal_outside\":false}}", KW_CLASS_PROC },
		{ ",\"bpf\":{\"allow\":false}}", KW_CLASS_BPF },
		{ ",\"bpf\":{}}", KW_CLASS_BPF },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char json[256];
		struct kw_policy *p;

		snprintf(json, sizeof(json), HEAD "%s", cases[i].body);
		p = parse_ok(json);
		assert_int_equal(p->classes, cases[i].classes);
		kw_policy_free(p);
	}
}

static void test_section_values(void **state)
{
	struct kw_policy *p;

	(void)state;
	p = parse_ok(HEAD ",\"sysctl\":{\"write\":true},\"mount\":{\"allow\":true},"
		     "\"proc\":{\"signal_outside\":true},\"bpf\":{\"allow\":true}}");
	assert_true(p->sysctl_write);
	assert_true(p->mount_allow);
	assert_true(p->signal_outside);
	assert_true(p->bpf_allow);
	kw_policy_free(p);
	p = parse_ok(HEAD ",\"bpf\":{}}");
	assert_false(p->bpf_allow);
	kw_policy_free(p);

	/* files with no path, by kind and name */
	p = parse_ok(HEAD ",\"exec\":{\"allow\":[\"/bin\",\"memfd:\",\"memfd:build\"]},"
		     "\"fs\":{\"read\":[\"pipe:\",\"anon:[eventfd]\",\"socket:\"]}}");
	assert_int_equal(p->n_paths, 6);
	assert_string_equal(p->paths[1].path, "anon:[eventfd]"); /* fs first, then exec */
	assert_int_equal(p->paths[1].len, 14);
	assert_string_equal(p->paths[4].path, "memfd:");
	assert_int_equal(p->paths[4].kind, KW_PATH_EXEC);
	kw_policy_free(p);

	p = parse_ok(HEAD ",\"dev\":{\"allow\":[\"b 8:* r\",\"c *:* m\"]}}");
	assert_int_equal(p->dev[0].type, BPF_DEVCG_DEV_BLOCK);
	assert_int_equal(p->dev[0].major, 8);
	assert_int_equal(p->dev[0].minor, KW_DEV_ANY);
	assert_int_equal(p->dev[0].access, BPF_DEVCG_ACC_READ);
	assert_int_equal(p->dev[1].major, KW_DEV_ANY);
	assert_int_equal(p->dev[1].minor, KW_DEV_ANY);
	assert_int_equal(p->dev[1].access, BPF_DEVCG_ACC_MKNOD);
	kw_policy_free(p);

	/* socket types: stream=1 dgram=2 raw=3; rule index of the first match */
	p = parse_ok(HEAD ",\"net\":{\"socket\":[\"unix\",\"inet6:dgram|raw\",\"inet:stream\","
		     "\"inet6\"]}}");
	assert_int_equal(p->socket_allow, (1u << 1) | (1u << 10) | (1u << 11) | (1u << 9));
	assert_int_equal(p->socket_rule[1], 2);
	assert_int_equal(p->socket_rule[8 + 2], 1);
	assert_int_equal(p->socket_rule[8 + 3], 1);
	assert_int_equal(p->socket_rule[8 + 1], 3);
	kw_policy_free(p);

	/* ping sockets have their own bits: dgram does not grant them, icmp does */
	p = parse_ok(HEAD ",\"net\":{\"socket\":[\"inet:dgram\",\"inet6:icmp\",\"inet:icmp|raw\"]}}");
	assert_int_equal(p->socket_allow, (1ull << 2) | (1ull << KW_SOCK_BIT_INET6_ICMP) |
					  (1ull << KW_SOCK_BIT_INET_ICMP) | (1ull << 3));
	assert_int_equal(p->socket_rule[KW_SOCK_BIT_INET6_ICMP], 1);
	assert_int_equal(p->socket_rule[KW_SOCK_BIT_INET_ICMP], 2);
	assert_int_equal(p->socket_rule[3], 2);
	kw_policy_free(p);

	/* packet: one bit for every packet socket, no types */
	p = parse_ok(HEAD ",\"net\":{\"socket\":[\"inet\",\"packet\"]}}");
	assert_int_equal(p->socket_allow, 0x0006 | (1ull << KW_SOCK_BIT_PACKET));
	assert_int_equal(p->socket_rule[KW_SOCK_BIT_PACKET], 1);
	kw_policy_free(p);

	/* no net.socket but another net list: stream and dgram pass undecided,
	 * the rest (raw, ping, seqpacket) is governed and denied */
	p = parse_ok(HEAD ",\"net\":{\"send\":[]}}");
	assert_true(p->socket_implicit);
	assert_int_equal(p->socket_allow, 0x0606);
	kw_policy_free(p);
	p = parse_ok(HEAD ",\"net\":{\"unix\":[\"/run/x.sock\"]}}");
	assert_false(p->socket_implicit);
	assert_int_equal(p->classes & KW_CLASS_NET_SOCKET, 0);
	kw_policy_free(p);

	p = parse_ok(HEAD ",\"net\":{\"unix\":[\"/run/a.sock\",\"/\"]}}");
	assert_int_equal(p->n_paths, 2);
	assert_int_equal(p->paths[0].kind, KW_PATH_UNIX);
	assert_string_equal(p->paths[1].path, "/");
	assert_int_equal(p->paths[1].index, 1);
	kw_policy_free(p);
}

static void test_cidr_and_ports(void **state)
{
	struct kw_policy *p;

	(void)state;
	p = parse_ok(HEAD ",\"net\":{\"connect\":[\"0.0.0.0/0:*\",\"192.168.1.0/24:0\","
		     "\"!10.0.0.0/8:1-65535\",\"2001:db8::/32:443\",\"::/0:80-80\","
		     "\"255.255.255.255/32:65535\"]}}");
	assert_int_equal(p->n_net, 6);
	assert_int_equal(p->net[0].prefixlen, 0);
	assert_int_equal(p->net[0].port_hi, 65535);
	assert_int_equal(p->net[1].port_lo, 0);
	assert_int_equal(p->net[1].port_hi, 0);
	assert_int_equal(p->net[1].addr[2], 1);
	assert_int_equal(p->net[2].allow, 0);
	assert_int_equal(p->net[2].port_lo, 1);
	assert_int_equal(p->net[3].family, 6);
	assert_int_equal(p->net[3].prefixlen, 32);
	assert_int_equal(p->net[3].addr[0], 0x20);
	assert_int_equal(p->net[3].addr[3], 0xb8);
	assert_int_equal(p->net[4].prefixlen, 0);
	assert_int_equal(p->net[5].addr[3], 255);
	assert_int_equal(p->net[5].port_lo, 65535);
	kw_policy_free(p);
}

static void test_v4mapped_rules_become_v4(void **state)
{
	struct kw_policy *p;

	(void)state;
	p = parse_ok(HEAD ",\"net\":{\"connect\":[\"::ffff:10.0.0.0/104:443\","
		     "\"::ffff:127.0.0.1/128:*\",\"::ffff:0.0.0.0/96:22\",\"::/0:80\"]}}");
	assert_int_equal(p->net[0].family, 4);
	assert_int_equal(p->net[0].prefixlen, 8);
	assert_int_equal(p->net[0].addr[0], 10);
	assert_int_equal(p->net[0].addr[12], 0);
	assert_int_equal(p->net[1].family, 4);
	assert_int_equal(p->net[1].prefixlen, 32);
	assert_int_equal(p->net[1].addr[0], 127);
	assert_int_equal(p->net[1].addr[3], 1);
	assert_int_equal(p->net[2].family, 4);
	assert_int_equal(p->net[2].prefixlen, 0);
	/* shorter than /96: stays an IPv6 rule */
	assert_int_equal(p->net[3].family, 6);
	kw_policy_free(p);
}

static void test_refusals_name_their_field(void **state)
{
	(void)state;
	refused("", "bundle: not strict JSON");
	refused("[1]", "bundle: must be a JSON object");
	refused("{\"kwitness_policy\":1,\"mode\":\"enforce\",\"mode\":\"advisory\"}",
		"bundle: not strict JSON");
	refused("{\"mode\":\"enforce\"}", "kwitness_policy: missing");
	refused("{\"kwitness_policy\":2,\"mode\":\"enforce\"}", "kwitness_policy: must be 1");
	refused("{\"kwitness_policy\":\"1\",\"mode\":\"enforce\"}", "kwitness_policy: must be 1");
	refused("{\"kwitness_policy\":1}", "mode: missing");
	refused("{\"kwitness_policy\":1,\"mode\":\"declared\"}", "mode: unknown value \"declared\"");
	refused("{\"kwitness_policy\":1,\"mode\":1}", "mode: must be a string");
	refused(HEAD ",\"record\":\"some\"}", "record: unknown value");
	refused(HEAD ",\"on_record_failure\":\"ignore\"}", "on_record_failure: unknown value");
	refused(HEAD ",\"extra\":1}", "extra: unknown key");
	refused(HEAD ",\"net\":{\"egress\":[]}}", "net.egress: unknown key");
	refused(HEAD ",\"net\":[]}", "net: must be an object");
	refused(HEAD ",\"net\":{\"connect\":\"10.0.0.0/8:80\"}}", "net.connect: must be an array");
	refused(HEAD ",\"net\":{\"connect\":[1]}}", "net.connect[0]: must be a string");
	refused(HEAD ",\"net\":{\"connect\":[\"127.0.0.1/32:80\",\"1.2.3.4/32:1\","
		"\"10.0.0.0/33:80\"]}}", "net.connect[2]: bad CIDR \"10.0.0.0/33\"");
	refused(HEAD ",\"net\":{\"send\":[\"10.0.0.1/8:80\"]}}",
		"net.send[0]: bad CIDR \"10.0.0.1/8\" (host bits set)");
	refused(HEAD ",\"net\":{\"bind\":[\"10.0.0.0:80\"]}}", "net.bind[0]: bad CIDR \"10.0.0.0\"");
	refused(HEAD ",\"net\":{\"bind\":[\"10.0.0/8:80\"]}}", "net.bind[0]: bad CIDR");
	refused(HEAD ",\"net\":{\"bind\":[\"010.0.0.0/8:80\"]}}", "net.bind[0]: bad CIDR");
	refused(HEAD ",\"net\":{\"bind\":[\"10.0.0.0/08:80\"]}}", "net.bind[0]: bad CIDR");
	refused(HEAD ",\"net\":{\"bind\":[\"::1/129:80\"]}}", "net.bind[0]: bad CIDR \"::1/129\"");
	refused(HEAD ",\"net\":{\"bind\":[\"fe80::1%eth0/128:80\"]}}", "net.bind[0]: bad CIDR");
	refused(HEAD ",\"net\":{\"connect\":[\"10.0.0.0/8\"]}}", "net.connect[0]: bad rule");
	refused(HEAD ",\"net\":{\"connect\":[\"10.0.0.0/8:65536\"]}}",
		"net.connect[0]: bad port \"65536\"");
	refused(HEAD ",\"net\":{\"connect\":[\"10.0.0.0/8:90-80\"]}}",
		"net.connect[0]: bad port \"90-80\"");
	refused(HEAD ",\"net\":{\"connect\":[\"10.0.0.0/8:\"]}}", "net.connect[0]: bad port");
	refused(HEAD ",\"net\":{\"connect\":[\"10.0.0.0/8:-1\"]}}", "net.connect[0]: bad port");
	refused(HEAD ",\"net\":{\"connect\":[\"10.0.0.0/8:+80\"]}}", "net.connect[0]: bad port");
	refused(HEAD ",\"net\":{\"connect\":[\"10.0.0.0/8:8 0\"]}}", "net.connect[0]: bad port");
	refused(HEAD ",\"net\":{\"connect\":[\"!!10.0.0.0/8:80\"]}}", "net.connect[0]: bad CIDR");
	refused(HEAD ",\"net\":{\"connect\":[\"10.0.0.0/8:80\\u0000\"]}}",
		"net.connect[0]: contains a NUL");
	refused(HEAD ",\"net\":{\"socket\":[\"inet\",\"ipx\"]}}",
		"net.socket[1]: unknown socket family \"ipx\"");
	refused(HEAD ",\"net\":{\"socket\":[\"inet:seq\"]}}", "net.socket[0]: unknown socket type");
	refused(HEAD ",\"net\":{\"socket\":[\"packet:dgram\"]}}",
		"net.socket[0]: \"packet\" takes no type");
	refused(HEAD ",\"net\":{\"socket\":[\"inet:stream|\"]}}", "net.socket[0]: unknown socket type");
	refused(HEAD ",\"dev\":{\"deny\":[]}}", "dev.deny: unknown key");
	refused(HEAD ",\"dev\":{\"allow\":[\"x 1:3 r\"]}}", "dev.allow[0]: bad device rule");
	refused(HEAD ",\"dev\":{\"allow\":[\"c 1:3 r\",\"c 1:a r\"]}}",
		"dev.allow[1]: bad device number");
	refused(HEAD ",\"dev\":{\"allow\":[\"c 1:3 rr\"]}}", "dev.allow[0]: bad access");
	refused(HEAD ",\"dev\":{\"allow\":[\"c 1:3 q\"]}}", "dev.allow[0]: bad access");
	refused(HEAD ",\"dev\":{\"allow\":[\"c 1:3 \"]}}", "dev.allow[0]: no access");
	refused(HEAD ",\"dev\":{\"allow\":[\"c *:3 r\"]}}", "dev.allow[0]: \"c *:3 r\": a wildcard");
	refused(HEAD ",\"dev\":{\"allow\":[\"c 1:3 r\",\"c 1:3 w\"]}}",
		"dev.allow[1]: same device as dev.allow[0]");
	refused(HEAD ",\"sysctl\":{\"write\":\"yes\"}}", "sysctl.write: must be true or false");
	refused(HEAD ",\"sysctl\":{\"read\":true}}", "sysctl.read: unknown key");
	refused(HEAD ",\"fs\":{\"read\":[\"usr\"]}}", "fs.read[0]: path \"usr\" is not absolute");
	refused(HEAD ",\"fs\":{\"read\":[\"memfd\"]}}", "fs.read[0]: path \"memfd\" is not absolute");
	refused(HEAD ",\"net\":{\"unix\":[\"memfd:\"]}}", "net.unix[0]: path \"memfd:\" is not absolute");
	refused(HEAD ",\"fs\":{\"write\":[\"/a\",\"/a/../b\"]}}", "fs.write[1]: path \"/a/../b\" is "
		"not normalised");
	refused(HEAD ",\"fs\":{\"deny\":[\"/a/./b\"]}}", "fs.deny[0]: path \"/a/./b\" is not");
	refused(HEAD ",\"fs\":{\"deny\":[\"/a//b\"]}}", "fs.deny[0]: path \"/a//b\" is not");
	refused(HEAD ",\"fs\":{\"deny\":[\"/a/\"]}}", "fs.deny[0]: path \"/a/\" is not");
	refused(HEAD ",\"fs\":{\"deny\":[\"//\"]}}", "fs.deny[0]: path \"//\" is not");
	refused(HEAD ",\"fs\":{\"exec\":[]}}", "fs.exec: unknown key");
	refused(HEAD ",\"exec\":{\"allow\":[\"/bin/..\"]}}", "exec.allow[0]: path");
	refused(HEAD ",\"mount\":{\"allow\":1}}", "mount.allow: must be true or false");
	refused(HEAD ",\"proc\":{\"signal\":true}}", "proc.signal: unknown key");
	refused(HEAD ",\"net\":{\"unix\":[\"@abstract\"]}}", "net.unix[0]: path \"@abstract\" is not "
		"absolute");
}

static void test_bounds(void **state)
{
	char *json = malloc(64 * 1024);
	size_t n, i;

	(void)state;
	assert_non_null(json);
	/* a path of KW_PATH_MAX bytes does not fit the kernel's buffer */
	n = (size_t)sprintf(json, HEAD ",\"fs\":{\"read\":[\"");
	for (i = 0; i < KW_PATH_MAX / 2; i++)
		n += (size_t)sprintf(json + n, "/a");
	sprintf(json + n, "\"]}}");
	refused(json, "fs.read[0]: path longer than 255 bytes");

	/* KW_POLICY_MAX_PATH_RULES + 1 paths */
	n = (size_t)sprintf(json, HEAD ",\"exec\":{\"allow\":[");
	for (i = 0; i <= KW_POLICY_MAX_PATH_RULES; i++)
		n += (size_t)sprintf(json + n, "%s\"/p%zu\"", i ? "," : "", i);
	sprintf(json + n, "]}}");
	refused(json, "exec.allow: more than 32 rules");

	n = (size_t)sprintf(json, HEAD ",\"net\":{\"connect\":[");
	for (i = 0; i <= KW_POLICY_MAX_NET_RULES; i++)
		n += (size_t)sprintf(json + n, "%s\"10.0.%zu.%zu/32:80\"", i ? "," : "", i / 256,
				     i % 256);
	sprintf(json + n, "]}}");
	refused(json, "net.connect: more than 256 rules");

	/* more than KW_NET_PORT_RULES port rules reach one prefix */
	n = (size_t)sprintf(json, HEAD ",\"net\":{\"connect\":[");
	for (i = 0; i < KW_NET_PORT_RULES; i++)
		n += (size_t)sprintf(json + n, "\"10.0.0.0/8:%zu\",", 1000 + i);
	sprintf(json + n, "\"10.1.0.0/16:80\"]}}");
	refused(json, "net.connect[16]: more than 16 port rules");
	free(json);

	/* a bundle over KW_POLICY_MAX_BYTES */
	{
		char *big = calloc(1, KW_POLICY_MAX_BYTES + 2);
		struct kw_policy *p;
		char err[128];

		assert_non_null(big);
		memset(big, ' ', KW_POLICY_MAX_BYTES + 1);
		assert_int_equal(kw_policy_parse(big, KW_POLICY_MAX_BYTES + 1, &p, err, sizeof(err)),
				 -EINVAL);
		assert_memory_equal(err, "bundle: larger than", 19);
		free(big);
	}
}

/* Evaluates like the kernel: LPM lookup over the compiled entries, then
 * kw_net_eval. Returns 1 permit, 0 deny, and the deciding rule. */
static int eval(const struct kw_net_entry *e, size_t n, uint8_t op, const char *addr,
		uint16_t port, uint16_t *rule)
{
	struct kw_net_key key = { .op = op, .slot = 7 };
	uint8_t a[16] = { 0 };

	if (inet_pton(AF_INET, addr, a) == 1) {
		key.family = 4;
	} else {
		assert_int_equal(inet_pton(AF_INET6, addr, a), 1);
		key.family = 6;
		if (kw_addr_is_v4mapped(a)) {
			key.family = 4;
			memmove(a, a + 12, 4);
			memset(a + 4, 0, 12);
		}
	}
	memcpy(key.addr, a, 16);
	key.prefixlen = KW_NET_KEY_FIXED_BITS + (key.family == 4 ? 32 : 128);
	return kw_net_eval(kw_net_lookup(e, n, &key), port, rule);
}

static void test_compiled_evaluation(void **state)
{
	struct kw_policy *p;
	struct kw_net_entry *e;
	char err[128];
	uint16_t rule;
	size_t n;

	(void)state;
	p = parse_ok(HEAD ",\"net\":{\"connect\":["
		     "\"10.0.0.0/8:*\","           /* 0 */
		     "\"!10.1.0.0/16:*\","         /* 1 */
		     "\"10.1.2.0/24:443\","        /* 2 */
		     "\"10.1.2.3/32:22\","         /* 3 */
		     "\"!10.1.2.3/32:22\","        /* 4: tie with 3 -> deny */
		     "\"::1/128:8000-8100\","      /* 5 */
		     "\"2001:db8::/32:*\","        /* 6 */
		     "\"!2001:db8:1::/48:25\""     /* 7 */
		     "],\"send\":[\"0.0.0.0/0:53\"]}}");
	assert_int_equal(kw_net_compile(p, 7, &e, &n, err, sizeof(err)), 0);
	/* distinct prefixes: 5 IPv4 connect ... one per (op, family, prefix) */
	assert_int_equal(n, 8);
	assert_int_equal(e[0].key.slot, 7);

	assert_int_equal(eval(e, n, KW_NET_CONNECT, "10.9.9.9", 80, &rule), 1);
	assert_int_equal(rule, 0);
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "10.1.9.9", 80, &rule), 0);
	assert_int_equal(rule, 1);
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "10.1.2.9", 443, &rule), 1);
	assert_int_equal(rule, 2);
	/* in the /24 but another port: the /16 deny */
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "10.1.2.9", 80, &rule), 0);
	assert_int_equal(rule, 1);
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "10.1.2.3", 22, &rule), 0);
	assert_int_equal(rule, 4);
	/* the /32's entry carries its covering rules: 443 via the /24 */
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "10.1.2.3", 443, &rule), 1);
	assert_int_equal(rule, 2);
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "11.0.0.1", 443, &rule), 0);
	assert_int_equal(rule, KW_RULE_DEFAULT);
	/* IPv4-mapped destinations are evaluated as IPv4 */
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "::ffff:10.9.9.9", 80, &rule), 1);
	assert_int_equal(rule, 0);
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "::ffff:10.1.9.9", 80, &rule), 0);
	assert_int_equal(rule, 1);
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "::1", 8050, &rule), 1);
	assert_int_equal(rule, 5);
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "::1", 8101, &rule), 0);
	assert_int_equal(rule, KW_RULE_DEFAULT);
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "2001:db8:1::5", 25, &rule), 0);
	assert_int_equal(rule, 7);
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "2001:db8:1::5", 587, &rule), 1);
	assert_int_equal(rule, 6);
	/* ops do not mix: send has its own rules */
	assert_int_equal(eval(e, n, KW_NET_SEND, "10.9.9.9", 80, &rule), 0);
	assert_int_equal(rule, KW_RULE_DEFAULT);
	assert_int_equal(eval(e, n, KW_NET_SEND, "10.9.9.9", 53, &rule), 1);
	assert_int_equal(rule, 0);
	assert_int_equal(eval(e, n, KW_NET_SEND, "::1", 53, &rule), 0);
	free(e);
	kw_policy_free(p);
}

/* IPv4 rules never apply to IPv6 destinations, and IPv6 rules never to
 * IPv4 ones: 0.0.0.0/0:443 beside ::1/128:8000 leaves [::1]:443 denied. */
static void test_families_do_not_mix(void **state)
{
	struct kw_policy *p;
	struct kw_net_entry *e;
	char err[128];
	uint16_t rule;
	size_t n;

	(void)state;
	p = parse_ok(HEAD ",\"net\":{\"connect\":[\"0.0.0.0/0:443\",\"::1/128:8000\"]}}");
	assert_int_equal(kw_net_compile(p, 7, &e, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		/* each prefix's entry carries only its own family's rule */
		assert_int_equal(e[i].val.count, 1);
		assert_int_equal(e[i].val.r[0].rule, e[i].key.family == 4 ? 0 : 1);
	}
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "::1", 443, &rule), 0);
	assert_int_equal(rule, KW_RULE_DEFAULT);
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "2001:db8::1", 443, &rule), 0);
	assert_int_equal(rule, KW_RULE_DEFAULT);
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "::1", 8000, &rule), 1);
	assert_int_equal(rule, 1);
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "127.0.0.1", 443, &rule), 1);
	assert_int_equal(rule, 0);
	/* an IPv4-mapped destination is IPv4 (docs/policy.md) */
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "::ffff:127.0.0.1", 443, &rule), 1);
	assert_int_equal(rule, 0);
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "127.0.0.1", 8000, &rule), 0);
	assert_int_equal(rule, KW_RULE_DEFAULT);
	free(e);
	kw_policy_free(p);

	/* The other way: ::/0 does not reach IPv4 (or IPv4-mapped) destinations. */
	p = parse_ok(HEAD ",\"net\":{\"connect\":[\"::/0:*\",\"127.0.0.1/32:8000\"]}}");
	assert_int_equal(kw_net_compile(p, 7, &e, &n, err, sizeof(err)), 0);
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "127.0.0.1", 443, &rule), 0);
	assert_int_equal(rule, KW_RULE_DEFAULT);
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "::ffff:127.0.0.1", 443, &rule), 0);
	assert_int_equal(eval(e, n, KW_NET_CONNECT, "::1", 443, &rule), 1);
	assert_int_equal(rule, 0);
	free(e);
	kw_policy_free(p);
}

/* exec.allow by digest: "sha256:<hex>" and {"path", "sha256"} */
#define D_ABC "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define D_EMPTY "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
static void test_exec_digests(void **state)
{
	static const uint8_t abc0[4] = { 0xba, 0x78, 0x16, 0xbf }, empty31 = 0x55;
	struct kw_policy *p;

	(void)state;
	p = parse_ok(HEAD ",\"exec\":{\"allow\":[\"/bin\",\"" D_ABC "\","
		     "{\"path\":\"/usr/bin/python3\",\"sha256\":\"" D_EMPTY "\"}]}}");
	assert_true(p->classes & KW_CLASS_EXEC);
	assert_true(p->classes & KW_CLASS_EXEC_DIGEST);
	assert_int_equal(p->n_exec_digests, 1);
	assert_int_equal(p->exec_digests[0].index, 1);
	assert_memory_equal(p->exec_digests[0].sha256, abc0, 4);
	assert_int_equal(p->n_paths, 2);
	assert_false(p->paths[0].pinned);
	assert_string_equal(p->paths[1].path, "/usr/bin/python3");
	assert_int_equal(p->paths[1].index, 2);
	assert_true(p->paths[1].pinned);
	assert_int_equal(p->paths[1].sha256[31], empty31);
	kw_policy_free(p);

	/* paths only: no digest class */
	p = parse_ok(HEAD ",\"exec\":{\"allow\":[\"/bin\"]}}");
	assert_false(p->classes & KW_CLASS_EXEC_DIGEST);
	kw_policy_free(p);

	refused(HEAD ",\"exec\":{\"allow\":[\"sha256:ab\"]}}",
		"exec.allow[0]: \"sha256:ab\" is not sha256: and 64 lowercase hex digits");
	refused(HEAD ",\"exec\":{\"allow\":[\"sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB"
		"410FF61F20015AD\"]}}", "exec.allow[0]: \"sha256:BA78");
	refused(HEAD ",\"exec\":{\"allow\":[\"" D_ABC "0\"]}}", "exec.allow[0]: \"sha256:");
	refused(HEAD ",\"exec\":{\"allow\":[{\"path\":\"/bin/sh\"}]}}",
		"exec.allow[0]: needs both \"path\" and \"sha256\"");
	refused(HEAD ",\"exec\":{\"allow\":[{\"sha256\":\"" D_ABC "\"}]}}",
		"exec.allow[0]: needs both");
	refused(HEAD ",\"exec\":{\"allow\":[{\"path\":\"/bin/sh\",\"sha256\":\"" D_ABC "\","
		"\"size\":1}]}}", "exec.allow[0].size: unknown key");
	refused(HEAD ",\"exec\":{\"allow\":[{\"path\":\"/bin/sh\",\"sha256\":\"md5:00\"}]}}",
		"exec.allow[0].sha256: \"md5:00\" is not sha256:");
	refused(HEAD ",\"exec\":{\"allow\":[{\"path\":\"bin/sh\",\"sha256\":\"" D_ABC "\"}]}}",
		"exec.allow[0]: path \"bin/sh\" is not absolute");
	refused(HEAD ",\"exec\":{\"allow\":[{\"path\":7,\"sha256\":\"" D_ABC "\"}]}}",
		"exec.allow[0]: \"path\" and \"sha256\" must be strings");
	refused(HEAD ",\"exec\":{\"allow\":[\"/bin/sh\",{\"path\":\"/bin/sh\",\"sha256\":\""
		D_ABC "\"}]}}", "exec.allow[1]: \"/bin/sh\" is also allowed for any build by exec.allow[0]");
	/* a digest in another list is a path, and not an absolute one */
	refused(HEAD ",\"fs\":{\"read\":[\"" D_ABC "\"]}}", "fs.read[0]: path");
}

static void test_rule_names(void **state)
{
	char b[48];

	(void)state;
	assert_string_equal(kw_rule_name(KW_EV_NET_CONNECT, 2, b, sizeof(b)), "net.connect[2]");
	assert_string_equal(kw_rule_name(KW_EV_NET_CONNECT, KW_RULE_DEFAULT, b, sizeof(b)),
			    "net.connect:default");
	assert_string_equal(kw_rule_name(KW_EV_NET_SEND, 0, b, sizeof(b)), "net.send[0]");
	assert_string_equal(kw_rule_name(KW_EV_NET_BIND, KW_RULE_DEFAULT, b, sizeof(b)),
			    "net.bind:default");
	assert_string_equal(kw_rule_name(KW_EV_NET_SOCKET, 1, b, sizeof(b)), "net.socket[1]");
	assert_string_equal(kw_rule_name(KW_EV_DEV, 4, b, sizeof(b)), "dev.allow[4]");
	assert_string_equal(kw_rule_name(KW_EV_DEV, KW_RULE_DEFAULT, b, sizeof(b)),
			    "dev.allow:default");
	assert_string_equal(kw_rule_name(KW_EV_SYSCTL, 0, b, sizeof(b)), "sysctl.write");
	assert_string_equal(kw_rule_name(KW_EV_FS_OPEN, KW_RULE_PATH(KW_PATH_DENY, 3), b,
					 sizeof(b)), "fs.deny[3]");
	assert_string_equal(kw_rule_name(KW_EV_FS_PATHOP, KW_RULE_PATH(KW_PATH_WRITE, 0), b,
					 sizeof(b)), "fs.write[0]");
	assert_string_equal(kw_rule_name(KW_EV_FS_OPEN, KW_RULE_DEFAULT, b, sizeof(b)),
			    "fs:default");
	assert_string_equal(kw_rule_name(KW_EV_FS_EXEC, KW_RULE_PATH(KW_PATH_EXEC, 1), b,
					 sizeof(b)), "exec.allow[1]");
	assert_string_equal(kw_rule_name(KW_EV_FS_EXEC,
					 KW_RULE_PATH(KW_RULE_KIND_DIGEST_MISMATCH, 4), b, sizeof(b)),
			    "exec.allow[4]:digest_mismatch");
	assert_string_equal(kw_rule_name(KW_EV_NET_UNIX, KW_RULE_PATH(KW_PATH_UNIX, 0), b,
					 sizeof(b)), "net.unix[0]");
	assert_string_equal(kw_rule_name(KW_EV_MOUNT, 0, b, sizeof(b)), "mount.allow");
	assert_string_equal(kw_rule_name(KW_EV_PROC_KILL, KW_RULE_DEFAULT, b, sizeof(b)),
			    "proc:default");
	assert_string_equal(kw_rule_name(KW_EV_NET_CONNECT, 65533, b, sizeof(b)),
			    "net.connect[65533]");
	/* the resolver guard's refusals, whatever the policy */
	assert_string_equal(kw_rule_name(KW_EV_NET_SEND, KW_RULE_RESOLVER_GUARD, b, sizeof(b)),
			    "net.dns:guard");
	assert_string_equal(kw_rule_name(KW_EV_NET_SOCKET, KW_RULE_RESOLVER_GUARD, b, sizeof(b)),
			    "net.dns:guard");
	/* bounded: a short buffer gets a cut, terminated name */
	assert_string_equal(kw_rule_name(KW_EV_NET_CONNECT, 2, b, 5), "net.");
	assert_string_equal(kw_rule_name(KW_EV_NET_CONNECT, 2, b, 14), "net.connect");
	assert_string_equal(kw_rule_name(KW_EV_NET_CONNECT, 2, b, 15), "net.connect[2]");
	assert_string_equal(kw_class_name(KW_CLASS_NET_SOCKET), "net.socket");
	assert_string_equal(kw_class_name(KW_CLASS_UNIX), "net.unix");
}

/* Hostile input: every single-byte change of a full bundle is either a valid
 * bundle or refused with a message; nothing crashes or leaks (ASan). */
static void test_byte_mutations(void **state)
{
	static const char base[] =
		"{\"kwitness_policy\":1,\"mode\":\"enforce\",\"record\":\"deny\","
		"\"net\":{\"connect\":[\"10.0.0.0/8:443\",\"!10.1.0.0/16:1-99\",\"::1/128:*\"],"
		"\"socket\":[\"inet:stream|dgram\",\"unix\"]},\"dev\":{\"allow\":[\"c 1:3 rw\"]},"
		"\"sysctl\":{\"write\":false},\"fs\":{\"read\":[\"/usr\"]}}";
	static const char subst[] = { '\0', '"', ':', '/', '!', '*', '9', 'x', '\\', '\xff', ' ' };
	char buf[sizeof(base)], err[256];
	size_t i, k, ok = 0, refused_n = 0;

	(void)state;
	for (i = 0; i < sizeof(base) - 1; i++) {
		for (k = 0; k < sizeof(subst); k++) {
			struct kw_policy *p = NULL;
			int ret;

			memcpy(buf, base, sizeof(base));
			buf[i] = subst[k];
			err[0] = '\0';
			ret = kw_policy_parse(buf, sizeof(base) - 1, &p, err, sizeof(err));
			if (ret == 0) {
				assert_non_null(p);
				ok++;
			} else {
				assert_int_equal(ret, -EINVAL);
				assert_null(p);
				assert_true(err[0] != '\0');
				refused_n++;
			}
			kw_policy_free(p);
		}
	}
	assert_true(refused_n > ok);
}

/* Every bundle in examples/policies/ parses (the docs point readers there). */
static void test_examples_parse(void **state)
{
	const char *root = getenv("KW_ROOT");
	char dir[1024], path[2048];
	struct dirent *de;
	int n = 0;
	DIR *d;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/examples/policies", root ? root : ".");
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		struct kw_buf b = { 0 };
		size_t len = strlen(de->d_name);

		if (len < 6 || strcmp(de->d_name + len - 5, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		assert_int_equal(kw_read_file(path, KW_POLICY_MAX_BYTES, &b), 0);
		kw_policy_free(parse_ok(b.data));
		kw_buf_free(&b);
		n++;
	}
	closedir(d);
	assert_true(n >= 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimal_bundle),
		cmocka_unit_test(test_design_example),
		cmocka_unit_test(test_each_section_sets_its_class),
		cmocka_unit_test(test_section_values),
		cmocka_unit_test(test_cidr_and_ports),
		cmocka_unit_test(test_v4mapped_rules_become_v4),
		cmocka_unit_test(test_refusals_name_their_field),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_compiled_evaluation),
		cmocka_unit_test(test_families_do_not_mix),
		cmocka_unit_test(test_exec_digests),
		cmocka_unit_test(test_rule_names),
		cmocka_unit_test(test_examples_parse),
		cmocka_unit_test(test_byte_mutations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
