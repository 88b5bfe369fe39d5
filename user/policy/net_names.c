// SPDX-License-Identifier: Apache-2.0
/* Host names in network rules and the net.dns section (docs/policy.md). */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "policy/net_names.h"

static int is_ldh(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

int kw_name_normalise(const char *s, size_t n, bool allow_wildcard, char out[KW_NAME_MAX + 1],
		      bool *wildcard, const char **why)
{
	size_t i, o = 0, label = 0;
	bool digits_only = true;

	*why = NULL;
	if (wildcard)
		*wildcard = false;
	if (n >= 2 && s[0] == '*' && s[1] == '.') {
		if (!allow_wildcard) {
			*why = "no wildcard allowed here";
			return -EINVAL;
		}
		if (wildcard)
			*wildcard = true;
		s += 2;
		n -= 2;
	}
	if (n && s[n - 1] == '.')
		n--;
	if (n == 0) {
		*why = "empty name";
		return -EINVAL;
	}
	if (n > KW_NAME_MAX) {
		*why = "longer than 253 characters";
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c - 'A' + 'a');
		if (c == '.') {
			if (label == 0) {
				*why = "empty label";
				return -EINVAL;
			}
			if (out[o - 1] == '-') {
				*why = "a label ends with '-'";
				return -EINVAL;
			}
			label = 0;
			digits_only = true;
			out[o++] = '.';
			continue;
		}
		if (c == '*') {
			*why = "'*' only as the whole first label (\"*.example.org\")";
			return -EINVAL;
		}
		if (c >= 0x80) {
			*why = "not ASCII: write the name in A-label form (xn--...)";
			return -EINVAL;
		}
		if (!is_ldh(c)) {
			*why = "only letters, digits, '-' and '.'";
			return -EINVAL;
		}
		if (label == 0 && c == '-') {
			*why = "a label starts with '-'";
			return -EINVAL;
		}
		if (++label > KW_NAME_LABEL_MAX) {
			*why = "a label longer than 63 characters";
			return -EINVAL;
		}
		if (c < '0' || c > '9')
			digits_only = false;
		out[o++] = (char)c;
	}
	if (out[o - 1] == '-') {
		*why = "a label ends with '-'";
		return -EINVAL;
	}
	if (digits_only) {
		*why = "the last label is a number: write an address as a CIDR";
		return -EINVAL;
	}
	out[o] = '\0';
	return 0;
}

int kw_name_rule_matches(const struct kw_name_rule *r, const char *name)
{
	size_t n = strlen(name), k = strlen(r->name);

	if (!r->wildcard)
		return n == k && !memcmp(name, r->name, n);
	/* at least one label, then '.', then the suffix */
	return n >= k + 2 && name[n - k - 1] == '.' && !memcmp(name + n - k, r->name, k);
}

const struct kw_name_rule *kw_name_rule_find(const struct kw_name_rule *rules, size_t n,
					     const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (kw_name_rule_matches(&rules[i], name))
			return &rules[i];
	return NULL;
}

/* Decimal without sign or leading zeros, at most 65535. */
static int port_num(const char *s, size_t n, uint16_t *out)
{
	unsigned long v = 0;

	if (n == 0 || n > 5 || (n > 1 && s[0] == '0'))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

int kw_name_ports_parse(const char *s, struct kw_port_range *out, uint8_t *n)
{
	const char *p = s;

	*n = 0;
	if (!strcmp(s, "*")) {
		out[0] = (struct kw_port_range){ 0, 65535 };
		*n = 1;
		return 0;
	}
	for (;;) {
		const char *end = strchr(p, ','), *dash;
		size_t len = end ? (size_t)(end - p) : strlen(p);
		struct kw_port_range r;

		if (*n == KW_NAME_PORT_RANGES)
			return -EINVAL;
		dash = memchr(p, '-', len);
		if (!dash) {
			if (port_num(p, len, &r.lo))
				return -EINVAL;
			r.hi = r.lo;
		} else if (port_num(p, (size_t)(dash - p), &r.lo) ||
			   port_num(dash + 1, len - (size_t)(dash - p) - 1, &r.hi) || r.lo > r.hi) {
			return -EINVAL;
		}
		out[(*n)++] = r;
		if (!end)
			return 0;
		p = end + 1;
	}
}

int kw_name_rule_port(const struct kw_name_rule *r, uint16_t port)
{
	for (unsigned i = 0; i < r->n_ports && i < KW_NAME_PORT_RANGES; i++)
		if (port >= r->ports[i].lo && port <= r->ports[i].hi)
			return 1;
	return 0;
}

size_t kw_dns_resolv_conf(const char *text, size_t len, struct kw_dns_resolver *out)
{
	size_t n = 0, i = 0;

	while (i < len && n < KW_DNS_MAX_RESOLVERS) {
		size_t eol = i, k;
		char addr[64];

		while (eol < len && text[eol] != '\n')
			eol++;
		if (eol - i > 11 && !memcmp(text + i, "nameserver", 10) &&
		    (text[i + 10] == ' ' || text[i + 10] == '\t')) {
			size_t a = i + 10;

			while (a < eol && (text[a] == ' ' || text[a] == '\t'))
				a++;
			for (k = 0; a + k < eol && k + 1 < sizeof(addr) && text[a + k] != ' ' &&
				    text[a + k] != '\t' && text[a + k] != '\r' && text[a + k] != '#';
			     k++)
				addr[k] = text[a + k];
			addr[k] = '\0';
			memset(&out[n], 0, sizeof(out[n]));
			out[n].port = 53;
			if (inet_pton(AF_INET, addr, out[n].addr) == 1) {
				out[n].family = 4;
				n++;
			} else if (!strchr(addr, '%') && inet_pton(AF_INET6, addr, out[n].addr) == 1) {
				out[n].family = 6;
				n++;
			}
		}
		i = eol + 1;
	}
	return n;
}
