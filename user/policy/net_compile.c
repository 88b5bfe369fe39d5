// SPDX-License-Identifier: Apache-2.0
/* Compiles CIDR + port rules into LPM trie entries (see net_match.h for why a
 * prefix's entry also carries the rules of the shorter prefixes covering it). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/net_compile.h"
#include "kwitness/abi/net_match.h"

const char *kw_net_op_name(uint8_t op)
{
	switch (op) {
	case KW_NET_CONNECT: return "net.connect";
	case KW_NET_SEND: return "net.send";
	case KW_NET_BIND: return "net.bind";
	}
	return "net.?";
}

/* 1 when the first plen bits of a and b are equal. */
static int prefix_bits_equal(const uint8_t *a, const uint8_t *b, unsigned plen)
{
	unsigned full = plen / 8, rest = plen % 8;

	if (memcmp(a, b, full))
		return 0;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff << (8 - rest));

		if ((a[full] ^ b[full]) & mask)
			return 0;
	}
	return 1;
}

static int same_prefix(const struct kw_net_rule *a, const struct kw_net_rule *b)
{
	return a->op == b->op && a->family == b->family && a->prefixlen == b->prefixlen &&
	       !memcmp(a->addr, b->addr, 16);
}

/* 1 when rule r's prefix contains prefix p (same op and family). */
static int covers(const struct kw_net_rule *r, const struct kw_net_rule *p)
{
	return r->op == p->op && r->family == p->family && r->prefixlen <= p->prefixlen &&
	       prefix_bits_equal(r->addr, p->addr, r->prefixlen);
}

int kw_net_compile(const struct kw_policy *pol, uint32_t slot, struct kw_net_entry **out,
		   size_t *n, char *err, size_t errlen)
{
	struct kw_net_entry *ents;
	size_t i, j, k, count = 0;

	*out = NULL;
	*n = 0;
	if (!pol->n_net)
		return 0;
	ents = calloc(pol->n_net, sizeof(*ents));
	if (!ents)
		return -ENOMEM;

	for (i = 0; i < pol->n_net; i++) {
		const struct kw_net_rule *p = &pol->net[i];
		struct kw_net_entry *e;
		int seen = 0;

		for (j = 0; j < i; j++)
			if (same_prefix(&pol->net[j], p))
				seen = 1;
		if (seen)
			continue;

		e = &ents[count++];
		e->key.prefixlen = KW_NET_KEY_FIXED_BITS + p->prefixlen;
		e->key.slot = slot;
		e->key.op = p->op;
		e->key.family = p->family;
		memcpy(e->key.addr, p->addr, 16);
		for (k = 0; k < pol->n_net; k++) {
			const struct kw_net_rule *r = &pol->net[k];
			struct kw_net_port_rule *pr;

			if (!covers(r, p))
				continue;
			if (e->val.count == KW_NET_PORT_RULES) {
				snprintf(err, errlen,
					 "%s[%u]: more than %d port rules apply to its prefix "
					 "(its own and those of shorter covering prefixes)",
					 kw_net_op_name(p->op), p->index, KW_NET_PORT_RULES);
				free(ents);
				return -E2BIG;
			}
			pr = &e->val.r[e->val.count++];
			pr->port_lo = r->port_lo;
			pr->port_hi = r->port_hi;
			pr->rule = r->index;
			pr->prefixlen = r->prefixlen;
			pr->allow = r->allow;
		}
	}
	*out = ents;
	*n = count;
	return 0;
}

const struct kw_net_rules *kw_net_lookup(const struct kw_net_entry *e, size_t n,
					 const struct kw_net_key *key)
{
	const struct kw_net_entry *best = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned plen = e[i].key.prefixlen - KW_NET_KEY_FIXED_BITS;

		if (e[i].key.slot != key->slot || e[i].key.op != key->op ||
		    e[i].key.family != key->family)
			continue;
		if (!prefix_bits_equal(e[i].key.addr, key->addr, plen))
			continue;
		if (!best || e[i].key.prefixlen > best->key.prefixlen)
			best = &e[i];
	}
	return best ? &best->val : NULL;
}
