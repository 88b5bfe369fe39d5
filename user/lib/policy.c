// SPDX-License-Identifier: Apache-2.0
/* Policy bundles (docs/policy.md): strict JSON -> struct kw_policy. Bundles
 * are hostile input: unknown keys are refused, every list is bounded, and
 * every error names the field it is about. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bpf.h>

#include "kwitness/buf.h"
#include "kwitness/jcs.h"
#include "kwitness/net_compile.h"
#include "kwitness/abi/net_match.h"
#include "kwitness/policy.h"

#define KW_POLICY_MAX_SOCKET_RULES 64

struct pctx {
	struct kw_policy *p;
	char *err;
	size_t errlen;
	size_t cap_net, cap_dev, cap_paths;
};

static int fail(struct pctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct pctx *c, const char *fmt, ...)
{
	va_list ap;

	if (c->err && c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A hostile string made safe to quote in an error: printable ASCII only,
 * at most 64 characters. */
static const char *quote(const char *s, char buf[80])
{
	size_t i, n = 0;

	for (i = 0; s[i] && n < 64; i++)
		buf[n++] = (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"') ? s[i] : '?';
	if (s[i])
		n = (size_t)(stpcpy(buf + n, "...") - buf);
	buf[n] = '\0';
	return buf;
}

/* Refuses members of obj not in allowed (NULL-terminated). */
static int check_keys(struct pctx *c, json_t *obj, const char *where, const char *const *allowed)
{
	const char *key;
	json_t *v;
	char q[80];

	json_object_foreach(obj, key, v) {
		const char *const *a;
		int ok = 0;

		for (a = allowed; *a; a++)
			if (!strcmp(*a, key))
				ok = 1;
		if (!ok) {
			if (where)
				return fail(c, "%s.%s: unknown key", where, quote(key, q));
			return fail(c, "%s: unknown key", quote(key, q));
		}
	}
	return 0;
}

/* The string value of a list item, refusing embedded NULs. */
static const char *item_string(struct pctx *c, json_t *v, const char *list, size_t i, int *ret)
{
	const char *s;

	*ret = 0;
	if (!json_is_string(v)) {
		*ret = fail(c, "%s[%zu]: must be a string", list, i);
		return NULL;
	}
	s = json_string_value(v);
	if (strlen(s) != json_string_length(v)) {
		*ret = fail(c, "%s[%zu]: contains a NUL character", list, i);
		return NULL;
	}
	return s;
}

static json_t *get_array(struct pctx *c, json_t *obj, const char *key, const char *name,
			 size_t max, int *ret)
{
	json_t *a = json_object_get(obj, key);

	*ret = 0;
	if (!a)
		return NULL;
	if (!json_is_array(a)) {
		*ret = fail(c, "%s: must be an array", name);
		return NULL;
	}
	if (json_array_size(a) > max) {
		*ret = fail(c, "%s: more than %zu rules", name, max);
		return NULL;
	}
	return a;
}

static int get_bool(struct pctx *c, json_t *obj, const char *key, const char *name, bool *out)
{
	json_t *v = json_object_get(obj, key);

	*out = false;
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return fail(c, "%s: must be true or false", name);
	*out = json_is_true(v);
	return 0;
}

/* A section of the bundle: absent (*out NULL), or an object of the allowed
 * keys; being there makes the sessions govern class (0: its rules say). */
static int get_section(struct pctx *c, json_t *root, const char *key, uint32_t class,
		       const char *const *allowed, json_t **out)
{
	json_t *v = json_object_get(root, key);

	*out = v;
	if (!v)
		return 0;
	if (!json_is_object(v))
		return fail(c, "%s: must be an object", key);
	c->p->classes |= class;
	return check_keys(c, v, key, allowed);
}

/* A section that is one switch, such as "mount": { "allow": true }. */
static int get_switch_section(struct pctx *c, json_t *root, const char *section,
			      const char *key, uint32_t class, bool *out)
{
	const char *const allowed[] = { key, NULL };
	char name[64];
	json_t *s;
	int ret = get_section(c, root, section, class, allowed, &s);

	if (ret || !s)
		return ret;
	snprintf(name, sizeof(name), "%s.%s", section, key);
	return get_bool(c, s, key, name, out);
}

/* ---- net: "[!]CIDR:PORTS" ---- */

/* Decimal without sign or leading zeros (except "0"), at most max. */
static int parse_uint(const char *s, size_t n, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;
	size_t i;

	if (n == 0 || n > 10 || (n > 1 && s[0] == '0'))
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

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
		if (parse_uint(s, strlen(s), 65535, &a))
			return -1;
		b = a;
	} else if (parse_uint(s, (size_t)(dash - s), 65535, &a) ||
		   parse_uint(dash + 1, strlen(dash + 1), 65535, &b) || a > b) {
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
	if (parse_uint(slash + 1, strlen(slash + 1), v6 ? 128 : 32, &plen))
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
		return fail(c, "%s[%zu]: bad rule \"%s\" (want [!]CIDR:PORTS or NAME:PORTS)", list,
			    idx, quote(s, q));
	if (!memchr(body, '/', (size_t)(colon - body)) && !memchr(body, ':', (size_t)(colon - body)) &&
	    op != KW_NET_BIND)
		return 1; /* a host name: parse_name_rule */
	if ((size_t)(colon - body) >= sizeof(cidr))
		return fail(c, "%s[%zu]: bad CIDR \"%s\"", list, idx, quote(s, q));
	memcpy(cidr, body, (size_t)(colon - body));
	cidr[colon - body] = '\0';
	if (parse_cidr(cidr, r, &why)) {
		if (why)
			return fail(c, "%s[%zu]: bad CIDR \"%s\" (%s)", list, idx, quote(cidr, q),
				    why);
		return fail(c, "%s[%zu]: bad CIDR \"%s\"", list, idx, quote(cidr, q));
	}
	if (parse_ports(colon + 1, &r->port_lo, &r->port_hi))
		return fail(c, "%s[%zu]: bad port \"%s\"", list, idx, quote(colon + 1, q));
	return 0;
}

/* "[*.]NAME:PORTS", PORTS a comma-separated list of ports and ranges. */
static int parse_name_rule(struct pctx *c, const char *s, const char *list, size_t idx, uint8_t op)
{
	const char *colon = strrchr(s, ':'), *why;
	struct kw_name_rule *r;
	char q[80];

	if (s[0] == '!')
		return fail(c, "%s[%zu]: a deny rule takes a CIDR, not a name (\"%s\")", list, idx,
			    quote(s, q));
	if (c->p->n_names == KW_POLICY_MAX_NAME_RULES)
		return fail(c, "%s[%zu]: more than %d host name rules", list, idx,
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
		return fail(c, "%s[%zu]: bad host name \"%s\" (%s)", list, idx, quote(host, q),
			    why);
	}
	if (kw_name_ports_parse(colon + 1, r->ports, &r->n_ports))
		return fail(c, "%s[%zu]: bad port \"%s\" (want 443, 80,443, 8000-8100 or *; at most %d)",
			    list, idx, quote(colon + 1, q), KW_NAME_PORT_RANGES);
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
	if (port && (parse_uint(port, strlen(port), 65535, &p) || p == 0))
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
	return fail(c, "net.dns.resolvers[%zu]: bad resolver \"%s\" (want ADDR, ADDR:PORT or [ADDR6]:PORT)",
		    idx, quote(s, q));
}

static int get_ttl(struct pctx *c, json_t *dns, const char *key, uint32_t *out)
{
	json_t *v = json_object_get(dns, key);

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > KW_DNS_TTL_LIMIT)
		return fail(c, "net.dns.%s: must be an integer of seconds, 0 to %d", key,
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
		return fail(c, "net.dns: must be an object");
	c->p->dns_steer = true;
	c->p->classes |= KW_CLASS_NET_DNS;
	ret = check_keys(c, dns, "net.dns", keys);
	if (!ret)
		ret = get_bool(c, dns, "allow_other_names", "net.dns.allow_other_names",
			       &d->allow_other_names);
	if (!ret)
		ret = get_ttl(c, dns, "min_ttl", &d->min_ttl);
	if (!ret)
		ret = get_ttl(c, dns, "max_ttl", &d->max_ttl);
	if (ret)
		return ret;
	if (d->min_ttl > d->max_ttl)
		return fail(c, "net.dns: min_ttl %u is above max_ttl %u", d->min_ttl, d->max_ttl);
	a = get_array(c, dns, "resolvers", "net.dns.resolvers", KW_DNS_MAX_RESOLVERS, &ret);
	if (ret || !a)
		return ret;
	if (json_array_size(a) == 0)
		return fail(c, "net.dns.resolvers: empty (leave it out for the host's resolvers)");
	json_array_foreach(a, i, v) {
		const char *s = item_string(c, v, "net.dns.resolvers", i, &ret);

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
	a = get_array(c, net, key, name, KW_POLICY_MAX_NET_RULES, &ret);
	if (ret || !a)
		return ret;
	c->p->classes |= class_bit;
	json_array_foreach(a, i, v) {
		const char *s = item_string(c, v, name, i, &ret);

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
		return fail(c, "net.socket[%zu]: unknown socket family \"%s\"", idx, quote(s, q));
	if (colon) {
		const char *p = colon + 1;

		types = 0;
		for (;;) {
			const char *bar = strchr(p, '|');
			size_t n = bar ? (size_t)(bar - p) : strlen(p);

			t = socket_type(p, n);
			if (t < 0)
				return fail(c, "net.socket[%zu]: unknown socket type in \"%s\"", idx,
					    quote(s, q));
			types |= 1u << t;
			if (!bar)
				break;
			p = bar + 1;
		}
	}
	if (flen == 6 && !memcmp(s, "packet", 6)) {
		if (colon)
			return fail(c, "net.socket[%zu]: \"packet\" takes no type (it allows every "
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

static int parse_net(struct pctx *c, json_t *root)
{
	static const char *const keys[] = { "connect", "send", "bind", "socket", "unix", "dns",
					    NULL };
	json_t *net, *a, *v;
	size_t i;
	int ret;

	ret = get_section(c, root, "net", 0, keys, &net);
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
	a = get_array(c, net, "socket", "net.socket", KW_POLICY_MAX_SOCKET_RULES, &ret);
	if (ret)
		return ret;
	if (a) {
		c->p->classes |= KW_CLASS_NET_SOCKET;
		json_array_foreach(a, i, v) {
			const char *s = item_string(c, v, "net.socket", i, &ret);

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

/* ---- dev: "c 1:3 rw" ---- */

static int parse_dev_num(const char *s, size_t n, unsigned long max, uint32_t *out)
{
	unsigned long v;

	if (n == 1 && s[0] == '*') {
		*out = KW_DEV_ANY;
		return 0;
	}
	if (parse_uint(s, n, max, &v))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_dev_rule(struct pctx *c, const char *s, size_t idx, struct kw_dev_rule_spec *d)
{
	const char *sp1, *sp2, *colon, *acc;
	char q[80];

	memset(d, 0, sizeof(*d));
	d->index = (uint16_t)idx;
	if ((s[0] != 'c' && s[0] != 'b') || s[1] != ' ')
		return fail(c, "dev.allow[%zu]: bad device rule \"%s\" (want \"c|b MAJOR:MINOR rwm\")",
			    idx, quote(s, q));
	d->type = s[0] == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK;
	sp1 = s + 1;
	sp2 = strchr(sp1 + 1, ' ');
	colon = strchr(sp1 + 1, ':');
	if (!sp2 || !colon || colon > sp2 ||
	    parse_dev_num(sp1 + 1, (size_t)(colon - sp1 - 1), 4095, &d->major) ||
	    parse_dev_num(colon + 1, (size_t)(sp2 - colon - 1), 1048575, &d->minor))
		return fail(c, "dev.allow[%zu]: bad device number in \"%s\"", idx, quote(s, q));
	if (d->major == KW_DEV_ANY && d->minor != KW_DEV_ANY)
		return fail(c, "dev.allow[%zu]: \"%s\": a wildcard major needs a wildcard minor",
			    idx, quote(s, q));
	acc = sp2 + 1;
	if (!*acc)
		return fail(c, "dev.allow[%zu]: no access in \"%s\"", idx, quote(s, q));
	for (; *acc; acc++) {
		uint32_t bit = *acc == 'r' ? BPF_DEVCG_ACC_READ : *acc == 'w' ? BPF_DEVCG_ACC_WRITE :
			       *acc == 'm' ? BPF_DEVCG_ACC_MKNOD : 0;

		if (!bit || (d->access & bit))
			return fail(c, "dev.allow[%zu]: bad access in \"%s\" (want r, w, m once each)",
				    idx, quote(s, q));
		d->access |= bit;
	}
	return 0;
}

static int parse_dev(struct pctx *c, json_t *root)
{
	static const char *const keys[] = { "allow", NULL };
	json_t *dev, *a, *v;
	size_t i, j;
	int ret;

	ret = get_section(c, root, "dev", KW_CLASS_DEV, keys, &dev);
	if (ret || !dev)
		return ret;
	a = get_array(c, dev, "allow", "dev.allow", KW_POLICY_MAX_DEV_RULES, &ret);
	if (ret || !a)
		return ret;
	c->p->dev = calloc(json_array_size(a) ? json_array_size(a) : 1, sizeof(*c->p->dev));
	if (!c->p->dev)
		return -ENOMEM;
	json_array_foreach(a, i, v) {
		struct kw_dev_rule_spec *d = &c->p->dev[i];
		const char *s = item_string(c, v, "dev.allow", i, &ret);

		if (!s)
			return ret;
		ret = parse_dev_rule(c, s, i, d);
		if (ret)
			return ret;
		for (j = 0; j < i; j++)
			if (c->p->dev[j].type == d->type && c->p->dev[j].major == d->major &&
			    c->p->dev[j].minor == d->minor)
				return fail(c, "dev.allow[%zu]: same device as dev.allow[%zu]", i, j);
		c->p->n_dev++;
	}
	return 0;
}

/* ---- paths (fs, exec, net.unix) ---- */

/* Absolute, no "." or ".." components, no empty components (duplicate or
 * trailing slashes) except the root itself. */
static int path_normalised(const char *s)
{
	const char *p = s;

	if (s[0] != '/')
		return 0;
	if (!strcmp(s, "/"))
		return 1;
	while (*p == '/') {
		const char *q = p + 1;
		size_t n;

		while (*q && *q != '/')
			q++;
		n = (size_t)(q - p - 1);
		if (n == 0 || (n == 1 && p[1] == '.') || (n == 2 && p[1] == '.' && p[2] == '.'))
			return 0;
		p = q;
	}
	return *p == '\0';
}

int kw_path_object_name(const char *s)
{
	static const char *const kinds[] = { "memfd:", "pipe:", "socket:", "anon:", NULL };
	size_t i;

	for (i = 0; kinds[i]; i++)
		if (!strncmp(s, kinds[i], strlen(kinds[i])))
			return 1;
	return 0;
}

/* Appends path rule s (item i of list name) after checking it. */
static int add_path_rule(struct pctx *c, const char *s, const char *name, size_t i,
			 uint8_t kind, struct kw_path_rule **out)
{
	struct kw_path_rule *r;
	size_t len = strlen(s);
	char q[80];

	if (len >= KW_PATH_MAX)
		return fail(c, "%s[%zu]: path longer than %d bytes", name, i, KW_PATH_MAX - 1);
	if (kw_path_object_name(s) && kind != KW_PATH_UNIX)
		; /* a file with no path, by kind and name */
	else if (s[0] != '/')
		return fail(c, "%s[%zu]: path \"%s\" is not absolute (nor memfd:, pipe:, "
			    "socket:, anon:)", name, i, quote(s, q));
	else if (!path_normalised(s))
		return fail(c, "%s[%zu]: path \"%s\" is not normalised (no \".\", \"..\", "
			    "duplicate or trailing slashes)", name, i, quote(s, q));
	if (c->p->n_paths == c->cap_paths) {
		struct kw_path_rule *n = kw_array_grow(c->p->paths, &c->cap_paths, sizeof(*n), 16);

		if (!n)
			return -ENOMEM;
		c->p->paths = n;
	}
	r = &c->p->paths[c->p->n_paths++];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->index = (uint16_t)i;
	r->len = (uint16_t)len;
	memcpy(r->path, s, len + 1);
	if (out)
		*out = r;
	return 0;
}

static int parse_path_list(struct pctx *c, json_t *obj, const char *key, const char *name,
			   uint8_t kind)
{
	json_t *a, *v;
	size_t i;
	int ret;

	a = get_array(c, obj, key, name, KW_POLICY_MAX_PATH_RULES, &ret);
	if (ret || !a)
		return ret;
	json_array_foreach(a, i, v) {
		const char *s = item_string(c, v, name, i, &ret);

		if (!s)
			return ret;
		ret = add_path_rule(c, s, name, i, kind, NULL);
		if (ret)
			return ret;
	}
	return 0;
}

int kw_sha256_parse(const char *s, uint8_t out[KW_SHA256_LEN])
{
	size_t i;

	if (strncmp(s, KW_SHA256_PREFIX, strlen(KW_SHA256_PREFIX)))
		return -EINVAL;
	s += strlen(KW_SHA256_PREFIX);
	for (i = 0; i < 2 * KW_SHA256_LEN; i++) {
		char ch = s[i];
		int v;

		if (ch >= '0' && ch <= '9')
			v = ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			v = ch - 'a' + 10;
		else
			return -EINVAL;
		if (i % 2 == 0)
			out[i / 2] = (uint8_t)(v << 4);
		else
			out[i / 2] |= (uint8_t)v;
	}
	return s[i] ? -EINVAL : 0;
}

/* exec.allow: paths as in the other lists, plus "sha256:<hex>" (that build,
 * wherever it is) and {"path": P, "sha256": "sha256:<hex>"} (only that build
 * at P). Any digest makes the policy need exec.digest. */
static int parse_exec_allow(struct pctx *c, json_t *exec)
{
	static const char *const keys[] = { "path", "sha256", NULL };
	const char *name = "exec.allow";
	json_t *a, *v;
	size_t i;
	int ret;
	char q[80], where[48];

	a = get_array(c, exec, "allow", name, KW_POLICY_MAX_PATH_RULES, &ret);
	if (ret || !a)
		return ret;
	c->p->exec_digests = calloc(json_array_size(a) + 1, sizeof(*c->p->exec_digests));
	if (!c->p->exec_digests)
		return -ENOMEM;
	json_array_foreach(a, i, v) {
		struct kw_path_rule *r;
		const char *s, *d;
		json_t *jp, *jd;

		if (json_is_string(v) && !strncmp(json_string_value(v), KW_SHA256_PREFIX,
						   strlen(KW_SHA256_PREFIX))) {
			struct kw_exec_digest *e;

			s = item_string(c, v, name, i, &ret);
			if (!s)
				return ret;
			e = &c->p->exec_digests[c->p->n_exec_digests];
			if (kw_sha256_parse(s, e->sha256))
				return fail(c, "%s[%zu]: \"%s\" is not sha256: and 64 lowercase hex "
					    "digits", name, i, quote(s, q));
			e->index = (uint16_t)i;
			c->p->n_exec_digests++;
			c->p->classes |= KW_CLASS_EXEC_DIGEST;
			continue;
		}
		if (!json_is_object(v)) {
			s = item_string(c, v, name, i, &ret);
			if (!s)
				return ret;
			ret = add_path_rule(c, s, name, i, KW_PATH_EXEC, NULL);
			if (ret)
				return ret;
			continue;
		}
		snprintf(where, sizeof(where), "%s[%zu]", name, i);
		ret = check_keys(c, v, where, keys);
		if (ret)
			return ret;
		jp = json_object_get(v, "path");
		jd = json_object_get(v, "sha256");
		if (!jp || !jd)
			return fail(c, "%s: needs both \"path\" and \"sha256\"", where);
		if (!json_is_string(jp) || !json_is_string(jd) ||
		    strlen(json_string_value(jp)) != json_string_length(jp))
			return fail(c, "%s: \"path\" and \"sha256\" must be strings", where);
		s = json_string_value(jp);
		d = json_string_value(jd);
		ret = add_path_rule(c, s, name, i, KW_PATH_EXEC, &r);
		if (ret)
			return ret;
		if (strlen(d) != json_string_length(jd) || kw_sha256_parse(d, r->sha256))
			return fail(c, "%s.sha256: \"%s\" is not sha256: and 64 lowercase hex digits",
				    where, quote(d, q));
		r->pinned = true;
		c->p->classes |= KW_CLASS_EXEC_DIGEST;
	}
	/* a path pinned to builds cannot also be allowed for any build */
	for (i = 0; i < c->p->n_paths; i++) {
		const struct kw_path_rule *x = &c->p->paths[i];
		size_t j;

		for (j = 0; x->kind == KW_PATH_EXEC && x->pinned && j < c->p->n_paths; j++) {
			const struct kw_path_rule *y = &c->p->paths[j];

			if (y->kind == KW_PATH_EXEC && !y->pinned && !strcmp(x->path, y->path))
				return fail(c, "%s[%u]: \"%s\" is also allowed for any build by "
					    "%s[%u]", name, x->index, quote(x->path, q), name, y->index);
		}
	}
	return 0;
}

static int parse_lsm_sections(struct pctx *c, json_t *root)
{
	static const char *const fs_keys[] = { "read", "write", "deny", NULL };
	static const char *const exec_keys[] = { "allow", NULL };
	json_t *s, *net;
	int ret;

	ret = get_section(c, root, "fs", KW_CLASS_FS, fs_keys, &s);
	if (!ret && s) {
		ret = parse_path_list(c, s, "read", "fs.read", KW_PATH_READ);
		if (!ret)
			ret = parse_path_list(c, s, "write", "fs.write", KW_PATH_WRITE);
		if (!ret)
			ret = parse_path_list(c, s, "deny", "fs.deny", KW_PATH_DENY);
	}
	if (!ret)
		ret = get_section(c, root, "exec", KW_CLASS_EXEC, exec_keys, &s);
	if (!ret && s)
		ret = parse_exec_allow(c, s);
	if (!ret)
		ret = get_switch_section(c, root, "mount", "allow", KW_CLASS_MOUNT,
					 &c->p->mount_allow);
	if (!ret)
		ret = get_switch_section(c, root, "bpf", "allow", KW_CLASS_BPF, &c->p->bpf_allow);
	if (!ret)
		ret = get_switch_section(c, root, "proc", "signal_outside", KW_CLASS_PROC,
					 &c->p->signal_outside);
	net = json_object_get(root, "net");
	if (!ret && net && json_object_get(net, "unix")) {
		c->p->classes |= KW_CLASS_UNIX;
		ret = parse_path_list(c, net, "unix", "net.unix", KW_PATH_UNIX);
	}
	return ret;
}

/* ---- top level ---- */

static int parse_enum(struct pctx *c, json_t *root, const char *key, const char *const *names,
		      int dflt, uint8_t *out)
{
	json_t *v = json_object_get(root, key);
	const char *s;
	char q[80];
	int i;

	if (!v) {
		if (dflt < 0)
			return fail(c, "%s: missing", key);
		*out = (uint8_t)dflt;
		return 0;
	}
	if (!json_is_string(v))
		return fail(c, "%s: must be a string", key);
	s = json_string_value(v);
	for (i = 0; names[i]; i++)
		if (!strcmp(names[i], s) && strlen(s) == json_string_length(v)) {
			*out = (uint8_t)i;
			return 0;
		}
	return fail(c, "%s: unknown value \"%s\"", key, quote(s, q));
}

static int parse_root(struct pctx *c, json_t *root)
{
	static const char *const keys[] = { "kwitness_policy", "mode", "record",
					    "on_record_failure", "net", "dev", "sysctl", "fs",
					    "exec", "mount", "proc", "bpf", NULL };
	/* indices are the enum values */
	static const char *const modes[] = { "enforce", "advisory", "silent", NULL };
	static const char *const records[] = { "all", "deny", NULL };
	static const char *const failures[] = { "deny", "allow", NULL };
	json_t *v;
	int ret;

	if (!json_is_object(root))
		return fail(c, "bundle: must be a JSON object");
	ret = check_keys(c, root, NULL, keys);
	if (ret)
		return ret;
	v = json_object_get(root, "kwitness_policy");
	if (!v)
		return fail(c, "kwitness_policy: missing");
	if (!json_is_integer(v) || json_integer_value(v) != 1)
		return fail(c, "kwitness_policy: must be 1");
	ret = parse_enum(c, root, "mode", modes, -1, &c->p->mode);
	if (!ret)
		ret = parse_enum(c, root, "record", records, KW_RECORD_ALL, &c->p->record);
	if (!ret)
		ret = parse_enum(c, root, "on_record_failure", failures, KW_ONFAIL_DENY,
				 &c->p->on_failure);
	if (!ret)
		ret = parse_net(c, root);
	if (!ret)
		ret = parse_dev(c, root);
	if (!ret)
		ret = get_switch_section(c, root, "sysctl", "write", KW_CLASS_SYSCTL,
					 &c->p->sysctl_write);
	if (!ret)
		ret = parse_lsm_sections(c, root);
	return ret;
}

int kw_policy_parse(const char *bundle, size_t len, struct kw_policy **out, char *err,
		    size_t errlen)
{
	struct pctx c = { .err = err, .errlen = errlen };
	struct jcs_error je;
	struct kw_net_entry *ents;
	size_t n;
	json_t *root;
	int ret;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (len > KW_POLICY_MAX_BYTES)
		return fail(&c, "bundle: larger than %d bytes", KW_POLICY_MAX_BYTES);
	memset(&je, 0, sizeof(je));
	root = jcs_parse(bundle, len, &je);
	if (!root)
		return fail(&c, "bundle: not strict JSON at line %zu column %zu: %s", je.line,
			    je.column, je.message);
	c.p = calloc(1, sizeof(*c.p));
	if (!c.p) {
		json_decref(root);
		return -ENOMEM;
	}
	c.p->dns.min_ttl = KW_DNS_DEFAULT_MIN_TTL;
	c.p->dns.max_ttl = KW_DNS_DEFAULT_MAX_TTL;
	ret = parse_root(&c, root);
	json_decref(root);
	/* every prefix must fit the kernel's per-prefix rule array */
	if (!ret) {
		ret = kw_net_compile(c.p, 0, &ents, &n, err, errlen);
		if (!ret)
			free(ents);
		else if (ret == -E2BIG)
			ret = -EINVAL;
	}
	if (ret == -ENOMEM)
		fail(&c, "out of memory");
	if (ret) {
		kw_policy_free(c.p);
		return ret;
	}
	*out = c.p;
	return 0;
}

void kw_policy_free(struct kw_policy *p)
{
	if (!p)
		return;
	free(p->net);
	free(p->names);
	free(p->dev);
	free(p->paths);
	free(p->exec_digests);
	free(p);
}

const char *kw_mode_name(uint8_t mode)
{
	switch (mode) {
	case KW_MODE_ENFORCE: return "enforce";
	case KW_MODE_ADVISORY: return "advisory";
	case KW_MODE_SILENT: return "silent";
	}
	return "unknown";
}

const char *kw_class_name(uint32_t class_bit)
{
#define NAME_(id, bit, name, kernel, probe) \
	if (class_bit == KW_CLASS_##id)     \
		return name;
	KW_CLASS_TABLE(NAME_)
#undef NAME_
	return "unknown";
}

static const char *path_list_name(unsigned kind)
{
	switch (kind) {
	case KW_PATH_READ: return "fs.read";
	case KW_PATH_WRITE: return "fs.write";
	case KW_PATH_DENY: return "fs.deny";
	case KW_PATH_EXEC: return "exec.allow";
	case KW_PATH_UNIX: return "net.unix";
	}
	return NULL;
}

/* "name[index]" or "name" + suffix into buf, bounded (snprintf is slow on the
 * collector's per-event path). */
static const char *rule_text(char *buf, size_t len, const char *name, int index,
			     const char *suffix)
{
	char tmp[12];
	size_t n = 0, k = 0;
	unsigned v;

	if (!len)
		return buf;
	while (*name && n + 1 < len)
		buf[n++] = *name++;
	if (index >= 0) {
		v = (unsigned)index;
		do {
			tmp[k++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		if (n + k + 3 <= len) {
			buf[n++] = '[';
			while (k)
				buf[n++] = tmp[--k];
			buf[n++] = ']';
		}
	}
	while (suffix && *suffix && n + 1 < len)
		buf[n++] = *suffix++;
	buf[n] = '\0';
	return buf;
}

/* How each event kind's rules are named (KW_EVENT_TABLE's rules, section
 * and single columns). */
struct kw_rule_naming {
	enum kw_event_rules rules; /* 0: no such kind */
	const char *section, *single;
};
#define KW_RULE_NAMING_(id, value, record, format, tool, rules, section, single) \
	[value] = { KW_EVR_##rules, section, single },
static const struct kw_rule_naming kw_rule_namings[KW_EV_LIMIT] = {
	KW_EVENT_TABLE(KW_RULE_NAMING_)
};
#undef KW_RULE_NAMING_

const char *kw_rule_name(uint16_t event_kind, uint16_t rule, char *buf, size_t len)
{
	static const struct kw_rule_naming unknown = { KW_EVR_PATH, "unknown", "" };
	const struct kw_rule_naming *k = event_kind < KW_EV_LIMIT ? &kw_rule_namings[event_kind] :
								    &unknown;
	const char *plist;

	if (!k->rules)
		k = &unknown;
	if (k->rules == KW_EVR_FIXED)
		return rule_text(buf, len, k->section, -1, NULL);
	if (k->rules == KW_EVR_UNTRACKED)
		return rule_text(buf, len, k->section, -1,
				 rule == KW_UNTRACKED_QUOTA ? ".session_quota" :
				 rule == KW_UNTRACKED_MAP_FULL ? ".table_full" : NULL);
	if (rule == KW_RULE_DEFAULT)
		return rule_text(buf, len, k->section, -1, ":default");
	if (rule == KW_RULE_RESOLVER_GUARD && k->rules == KW_EVR_LIST && event_kind != KW_EV_DEV)
		return rule_text(buf, len, "net.dns", -1, ":guard");
	if (k->rules == KW_EVR_LIST)
		return rule_text(buf, len, k->section, rule, NULL);
	if (k->rules == KW_EVR_EXEC && KW_RULE_PATH_KIND(rule) == KW_RULE_KIND_DIGEST_MISMATCH)
		return rule_text(buf, len, "exec.allow", KW_RULE_PATH_INDEX(rule), ":digest_mismatch");
	plist = path_list_name(KW_RULE_PATH_KIND(rule));
	if (plist)
		return rule_text(buf, len, plist, KW_RULE_PATH_INDEX(rule), NULL);
	if (k->single[0])
		return rule_text(buf, len, k->single, -1, NULL);
	return rule_text(buf, len, k->section, rule, NULL);
}
