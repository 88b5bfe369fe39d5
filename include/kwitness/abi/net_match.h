/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Network rule evaluation, plain C so the same code runs in the BPF programs
 * (bpf/net.bpf.h) and in the cmocka tests (tests/unit/test_net_match.c).
 *
 * The compiler (user/policy/net_compile.c) stores, at each prefix of the policy,
 * that prefix's own port rules plus the port rules of every shorter prefix that
 * covers it. The LPM trie lookup returns the entry of the longest prefix that
 * contains the address, so the entry holds every rule that can match; among the
 * rules whose port range contains the port, the longest prefix decides, and at
 * equal prefix length a deny beats an allow. Nothing matches: default deny. */
#ifndef KWITNESS_NET_MATCH_H
#define KWITNESS_NET_MATCH_H

#include "kwitness/abi/event.h"

/* Bits of slot, op, family and pad in front of the address in kw_net_key. */
#define KW_NET_KEY_FIXED_BITS 64

/* 1 when the 16-byte address is an IPv4-mapped IPv6 address (::ffff:a.b.c.d). */
static inline int kw_addr_is_v4mapped(const __u8 a[16])
{
	int i;

	for (i = 0; i < 10; i++)
		if (a[i])
			return 0;
	return a[10] == 0xff && a[11] == 0xff;
}

/* Evaluates the port rules stored at the longest matching prefix. Returns 1
 * permit, 0 deny; *rule is the deciding rule's index, or KW_RULE_DEFAULT. */
static inline int kw_net_eval(const struct kw_net_rules *v, __u16 port, __u16 *rule)
{
	int best_len = -1, allow = 0;
	__u16 best_rule = KW_RULE_DEFAULT;
	__u32 i, n;

	if (!v) {
		*rule = KW_RULE_DEFAULT;
		return 0;
	}
	n = v->count;
	for (i = 0; i < KW_NET_PORT_RULES; i++) {
		const struct kw_net_port_rule *r;

		if (i >= n)
			break;
		r = &v->r[i];
		if (port < r->port_lo || port > r->port_hi)
			continue;
		if ((int)r->prefixlen > best_len) {
			best_len = r->prefixlen;
			allow = r->allow;
			best_rule = r->rule;
		} else if ((int)r->prefixlen == best_len && allow && !r->allow) {
			/* a tie goes to deny */
			allow = 0;
			best_rule = r->rule;
		}
	}
	*rule = best_rule;
	return best_len >= 0 && allow;
}

#endif
