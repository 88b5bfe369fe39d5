// SPDX-License-Identifier: Apache-2.0
/* The policy's "net" section (docs/policy.md): CIDR and port rules, names,
 * the resolver, socket types. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bpf.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "policy/net_compile.h"
#include "kwitness/abi/net_match.h"
#include "policy/policy.h"
#include "policy_parse.h"

/* ---- net: "[!]CIDR:PORTS" ---- */

static int parse_ports(const char *s, uint16_t *lo, uint16_t *hi)
{
	const char *dash;
	unsigned long a, b;

	if (!strcmp(s, "*")) {
		*lo = 0;
		*hi = 65535;
		return 0;
	}
	dash = strchr(s, '-');
	if (!dash) {
		if (policy_parse_uint(s, strlen(s), 65535, &a))
			return -1;
		b = a;
	} else if (policy_parse_uint(s, (size_t)(dash - s), 65535, &a) ||
		   policy_parse_uint(dash + 1, strlen(dash + 1), 65535, &b) || a > b) {
		return -1;
	}
	*lo = (uint16_t)a;
	*hi = (uint16_t)b;
	return 0;
}

/* "10.0.0.0/8", "::1/128". Host bits must be zero. IPv4-mapped IPv6
 * prefixes (inside ::ffff:0:0/96) become IPv4 prefixes. */
static int parse_cidr(const char *s, struct kw_net_rule *r, const char **why)
{
	char addr[64];
	const char *slash = strchr(s, '/');
	unsigned long plen;
	size_t n, i;
	int v6;

	*why = NULL;
	if (!slash || (size_t)(slash - s) >= sizeof(addr))
		return -1;
	n = (size_t)(slash - s);
	memcpy(addr, s, n);
	addr[n] = '\0';
	v6 = strchr(addr, ':') != NULL;
	memset(r->addr, 0, sizeof(r->addr));
	if (inet_pton(v6 ? AF_INET6 : AF_INET, addr, r->addr) != 1)
		return -1;
	if (policy_parse_uint(slash + 1, strlen(slash + 1), v6 ? 128 : 32, &plen))
		return -1;
	for (i = 0; i < (v6 ? 16u : 4u); i++) {
		unsigned bits = plen > i * 8 ? (unsigned)(plen - i * 8) : 0;
		uint8_t mask = bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));

		if (r->addr[i] & (uint8_t)~mask) {
			*why = "host bits set";
			return -1;
		}
	}
	r->family = v6 ? 6 : 4;
	r->prefixlen = (uint8_t)plen;
	if (v6 && plen >= 96 && kw_addr_is_v4mapped(r->addr)) {
		/* evaluated as IPv4, like the destinations it matches */
		memmove(r->addr, r->addr + 12, 4);
		memset(r->addr + 4, 0, 12);
		r->family = 4;
		r->prefixlen = (uint8_t)(plen - 96);
	}
	return 0;
}

static int parse_net_rule(struct pctx *c, const char *s, const char *list, size_t idx,
			  uint8_t op, struct kw_net_rule *r)
{
	char cidr[96], q[80];
	const char *colon, *why, *body = s;

	memset(r, 0, sizeof(*r));
	r->op = op;
	r->index = (uint16_t)idx;
	r->allow = 1;
	if (body[0] == '!') {
		r->allow = 0;
		body++;
	}
	colon = strrchr(body, ':');
	if (!colon)
		return policy_fail(c, "%s[%zu]: bad rule \"%s\" (want [!]CIDR:PORTS or NAME:PORTS)", list,
			    idx, policy_quote(s, q));
	if (!memchr(body, '/', (size_t)(colon - body)) && !memchr(body, ':', (size_t)(colon - body)) &&
	    op != KW_NET_BIND)
		return 1; /* a host name: parse_name_rule */
	if ((size_t)(colon - body) >= sizeof(cidr))
		return policy_fail(c, "%s[%zu]: bad CIDR \"%s\"", list, idx, policy_quote(s, q));
	memcpy(cidr, body, (size_t)(colon - body));
	cidr[colon - body] = '\0';
	if (parse_cidr(cidr, r, &why)) {
		if (why)
			return policy_fail(c, "%s[%zu]: bad CIDR \"%s\" (%s)", list, idx, policy_quote(cidr, q),
				    why);
		return policy_fail(c, "%s[%zu]: bad CIDR \"%s\"", list, idx, policy_quote(cidr, q));
	}
	if (parse_ports(colon + 1, &r->port_lo, &r->port_hi))
		return policy_fail(c, "%s[%zu]: bad port \"%s\"", list, idx, policy_quote(colon + 1, q));
	return 0;
}

/* "[*.]NAME:PORTS", PORTS a comma-separated list of ports and ranges. */
static int parse_name_rule(struct pctx *c, const char *s, const char *list, size_t idx, uint8_t op)
{
	const char *colon = strrchr(s, ':'), *why;
	struct kw_name_rule *r;
	char q[80];

	if (s[0] == '!')
		return policy_fail(c, "%s[%zu]: a deny rule takes a CIDR, not a name (\"%s\")", list, idx,
			    policy_quote(s, q));
	if (c->p->n_names == KW_POLICY_MAX_NAME_RULES)
		return policy_fail(c, "%s[%zu]: more than %d host name rules", list, idx,
			    KW_POLICY_MAX_NAME_RULES);
	if (!c->p->names) {
		c->p->names = calloc(KW_POLICY_MAX_NAME_RULES, sizeof(*c->p->names));
		if (!c->p->names)
			return -ENOMEM;
	}
	r = &c->p->names[c->p->n_names];
	memset(r, 0, sizeof(*r));
	r->op = op;
	r->index = (uint16_t)idx;
	if (kw_name_normalise(s, (size_t)(colon - s), true, r->name, &r->wildcard, &why)) {
		char host[KW_NAME_MAX + 4];
		size_t n = (size_t)(colon - s) < sizeof(host) - 1 ? (size_t)(colon - s) :
								      sizeof(host) - 1;

		memcpy(host, s, n);
		host[n] = '\0';
		return policy_fail(c, "%s[%zu]: bad host name \"%s\" (%s)", list, idx, policy_quote(host, q),
			    why);
	}
	if (kw_name_ports_parse(colon + 1, r->ports, &r->n_ports))
		return policy_fail(c, "%s[%zu]: bad port \"%s\" (want 443, 80,443, 8000-8100 or *; at most %d)",
			    list, idx, policy_quote(colon + 1, q), KW_NAME_PORT_RANGES);
	c->p->n_names++;
	c->p->dns_steer = true;
	c->p->classes |= KW_CLASS_NET_DNS;
	return 0;
}

/* "ADDR" or "ADDR:PORT", "[V6ADDR]:PORT" */
static int parse_resolver(struct pctx *c, const char *s, size_t idx, struct kw_dns_resolver *r)
{
	char addr[64], q[80];
	const char *port = NULL, *end;
	size_t n;
	unsigned long p = 53;

	memset(r, 0, sizeof(*r));
	if (s[0] == '[') {
		end = strchr(s, ']');
		if (!end || (end[1] && end[1] != ':'))
			goto bad;
		n = (size_t)(end - s - 1);
		if (n >= sizeof(addr))
			goto bad;
		memcpy(addr, s + 1, n);
		addr[n] = '\0';
		if (end[1] == ':')
			port = end + 2;
	} else {
		end = strchr(s, ':');
		if (end && strchr(end + 1, ':'))
			end = NULL; /* a bare IPv6 address */
		n = end ? (size_t)(end - s) : strlen(s);
		if (n >= sizeof(addr))
			goto bad;
		memcpy(addr, s, n);
		addr[n] = '\0';
		if (end)
			port = end + 1;
	}
	if (port && (policy_parse_uint(port, strlen(port), 65535, &p) || p == 0))
		goto bad;
	r->port = (uint16_t)p;
	if (inet_pton(AF_INET, addr, r->addr) == 1)
		r->family = 4;
	else if (inet_pton(AF_INET6, addr, r->addr) == 1)
		r->family = 6;
	else
		goto bad;
	return 0;
bad:
	return policy_fail(c, "net.dns.resolvers[%zu]: bad resolver \"%s\" (want ADDR, ADDR:PORT or [ADDR6]:PORT)",
		    idx, policy_quote(s, q));
}

static int get_ttl(struct pctx *c, json_t *dns, const char *key, uint32_t *out)
{
	json_t *v = json_object_get(dns, key);

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > KW_DNS_TTL_LIMIT)
		return policy_fail(c, "net.dns.%s: must be an integer of seconds, 0 to %d", key,
			    KW_DNS_TTL_LIMIT);
	*out = (uint32_t)json_integer_value(v);
	return 0;
}

static int parse_dns(struct pctx *c, json_t *net)
{
	static const char *const keys[] = { "resolvers", "allow_other_names", "min_ttl", "max_ttl",
					    NULL };
	struct kw_dns_conf *d = &c->p->dns;
	json_t *dns, *a, *v;
	size_t i;
	int ret;

	d->min_ttl = KW_DNS_DEFAULT_MIN_TTL;
	d->max_ttl = KW_DNS_DEFAULT_MAX_TTL;
	dns = json_object_get(net, "dns");
	if (!dns)
		return 0;
	if (!json_is_object(dns))
		return policy_fail(c, "net.dns: must be an object");
	c->p->dns_steer = true;
	c->p->classes |= KW_CLASS_NET_DNS;
	ret = policy_check_keys(c, dns, "net.dns", keys);
	if (!ret)
		ret = policy_get_bool(c, dns, "allow_other_names", "net.dns.allow_other_names",
			       &d->allow_other_names);
	if (!ret)
		ret = get_ttl(c, dns, "min_ttl", &d->min_ttl);
	if (!ret)
		ret = get_ttl(c, dns, "max_ttl", &d->max_ttl);
	if (ret)
		return ret;
	if (d->min_ttl > d->max_ttl)
		return policy_fail(c, "net.dns: min_ttl %u is above max_ttl %u", d->min_ttl, d->max_ttl);
	a = policy_get_array(c, dns, "resolvers", "net.dns.resolvers", KW_DNS_MAX_RESOLVERS, &ret);
	if (ret || !a)
		return ret;
	if (json_array_size(a) == 0)
		return policy_fail(c, "net.dns.resolvers: empty (leave it out for the host's resolvers)");
	json_array_foreach(a, i, v) {
		const char *s = policy_item_string(c, v, "net.dns.resolvers", i, &ret);

		if (!s)
			return ret;
		ret = parse_resolver(c, s, i, &d->resolvers[d->n_resolvers]);
		if (ret)
			return ret;
		d->n_resolvers++;
	}
	return 0;
}

static int parse_net_list(struct pctx *c, json_t *net, const char *key, uint8_t op,
			  uint32_t class_bit)
{
	char name[32];
	json_t *a, *v;
	size_t i;
	int ret;

	snprintf(name, sizeof(name), "net.%s", key);
	a = policy_get_array(c, net, key, name, KW_POLICY_MAX_NET_RULES, &ret);
	if (ret || !a)
		return ret;
	c->p->classes |= class_bit;
	json_array_foreach(a, i, v) {
		const char *s = policy_item_string(c, v, name, i, &ret);

		if (!s)
			return ret;
		if (c->p->n_net == c->cap_net) {
			struct kw_net_rule *n = kw_array_grow(c->p->net, &c->cap_net, sizeof(*n), 16);

			if (!n)
				return -ENOMEM;
			c->p->net = n;
		}
		ret = parse_net_rule(c, s, name, i, op, &c->p->net[c->p->n_net]);
		if (ret == 1)
			ret = parse_name_rule(c, s, name, i, op);
		else if (!ret)
			c->p->n_net++;
		if (ret)
			return ret;
	}
	return 0;
}

/* net.socket: "inet", "inet6", "inet:stream|dgram|raw|seqpacket|icmp",
 * "packet" (any packet socket, decided by BPF-LSM where it works), and
 * families no hook sees ("unix", ...), accepted by name. A family without
 * types means stream and datagram only: raw, ping (icmp) and seqpacket
 * sockets must be named. */
static const char *const kw_other_families[] = {
	"unix", "netlink", "packet", "vsock", "alg", "xdp", "can", "bluetooth", "key", NULL,
};

/* Pseudo type for ping sockets (SOCK_DGRAM + IPPROTO_ICMP/ICMPV6). */
#define KW_SOCK_TYPE_ICMP 8

static int socket_type(const char *s, size_t n)
{
	static const struct { const char *name; int type; } types[] = {
		{ "stream", 1 }, { "dgram", 2 }, { "raw", 3 }, { "seqpacket", 5 },
		{ "icmp", KW_SOCK_TYPE_ICMP },
	};
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strlen(types[i].name) == n && !memcmp(types[i].name, s, n))
			return types[i].type;
	return -1;
}

static void allow_socket_bit(struct kw_policy *p, unsigned bit, size_t idx)
{
	if (p->socket_allow & (1ull << bit))
		return; /* the first entry that allows it is its rule */
	p->socket_allow |= 1ull << bit;
	p->socket_rule[bit] = (uint8_t)idx;
}

static int parse_socket_rule(struct pctx *c, const char *s, size_t idx)
{
	const char *colon = strchr(s, ':');
	size_t flen = colon ? (size_t)(colon - s) : strlen(s);
	unsigned types = (1u << 1) | (1u << 2); /* stream and dgram */
	int fam = -1, other = 0, t;
	char q[80];
	size_t i;

	if (flen == 4 && !memcmp(s, "inet", 4))
		fam = 0;
	else if (flen == 5 && !memcmp(s, "inet6", 5))
		fam = 1;
	for (i = 0; fam < 0 && kw_other_families[i]; i++)
		if (strlen(kw_other_families[i]) == flen && !memcmp(kw_other_families[i], s, flen))
			other = 1;
	if (fam < 0 && !other)
		return policy_fail(c, "net.socket[%zu]: unknown socket family \"%s\"", idx, policy_quote(s, q));
	if (colon) {
		const char *p = colon + 1;

		types = 0;
		for (;;) {
			const char *bar = strchr(p, '|');
			size_t n = bar ? (size_t)(bar - p) : strlen(p);

			t = socket_type(p, n);
			if (t < 0)
				return policy_fail(c, "net.socket[%zu]: unknown socket type in \"%s\"", idx,
					    policy_quote(s, q));
			types |= 1u << t;
			if (!bar)
				break;
			p = bar + 1;
		}
	}
	if (flen == 6 && !memcmp(s, "packet", 6)) {
		if (colon)
			return policy_fail(c, "net.socket[%zu]: \"packet\" takes no type (it allows every "
				    "packet socket)", idx);
		allow_socket_bit(c->p, KW_SOCK_BIT_PACKET, idx);
		return 0;
	}
	if (other)
		return 0; /* outside every hook: nothing to compile */
	for (t = 0; t < 8; t++)
		if (types & (1u << t))
			allow_socket_bit(c->p, KW_SOCK_BIT((unsigned)fam, (unsigned)t), idx);
	if (types & (1u << KW_SOCK_TYPE_ICMP))
		allow_socket_bit(c->p, fam ? KW_SOCK_BIT_INET6_ICMP : KW_SOCK_BIT_INET_ICMP, idx);
	return 0;
}

int policy_parse_net(struct pctx *c, json_t *root)
{
	static const char *const keys[] = { "connect", "send", "bind", "socket", "unix", "dns",
					    NULL };
	json_t *net, *a, *v;
	size_t i;
	int ret;

	ret = policy_get_section(c, root, "net", 0, keys, &net);
	if (ret || !net)
		return ret;
	ret = parse_net_list(c, net, "connect", KW_NET_CONNECT, KW_CLASS_NET_CONNECT);
	if (!ret)
		ret = parse_net_list(c, net, "send", KW_NET_SEND, KW_CLASS_NET_SEND);
	if (!ret)
		ret = parse_net_list(c, net, "bind", KW_NET_BIND, KW_CLASS_NET_BIND);
	if (!ret)
		ret = parse_dns(c, net);
	if (ret)
		return ret;
	a = policy_get_array(c, net, "socket", "net.socket", KW_POLICY_MAX_SOCKET_RULES, &ret);
	if (ret)
		return ret;
	if (a) {
		c->p->classes |= KW_CLASS_NET_SOCKET;
		json_array_foreach(a, i, v) {
			const char *s = policy_item_string(c, v, "net.socket", i, &ret);

			if (!s)
				return ret;
			ret = parse_socket_rule(c, s, i);
			if (ret)
				return ret;
		}
	} else if (c->p->classes & (KW_CLASS_NET_CONNECT | KW_CLASS_NET_SEND | KW_CLASS_NET_BIND)) {
		/* All of the network is governed once any of it is: a raw or
		 * ping socket would go around connect/send/bind. */
		c->p->classes |= KW_CLASS_NET_SOCKET;
		c->p->socket_implicit = true;
		c->p->socket_allow = (1ull << KW_SOCK_BIT(0, 1)) | (1ull << KW_SOCK_BIT(0, 2)) |
				     (1ull << KW_SOCK_BIT(1, 1)) | (1ull << KW_SOCK_BIT(1, 2));
	}
	return 0;
}
