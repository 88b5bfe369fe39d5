/* SPDX-License-Identifier: Apache-2.0 */
/* Network rules of a parsed policy -> kw_net_rules LPM trie entries. Plain C
 * (no libbpf): the loader writes the entries, the unit tests evaluate them. */
#ifndef KWITNESS_NET_COMPILE_H
#define KWITNESS_NET_COMPILE_H

#include <stddef.h>
#include <stdint.h>

#include "kwitness/abi/event.h"
#include "policy/policy.h"

struct kw_net_entry {
	struct kw_net_key key;
	struct kw_net_rules val;
};

/* One entry per distinct (op, family, prefix) of the policy, holding its own
 * port rules and those of every shorter prefix covering it. Returns 0 with
 * *out (free()) and *n, -E2BIG with err naming the rule when a prefix would
 * need more than KW_NET_PORT_RULES port rules, -ENOMEM. */
int kw_net_compile(const struct kw_policy *pol, uint32_t slot, struct kw_net_entry **out,
		   size_t *n, char *err, size_t errlen);

/* What the kernel's LPM lookup returns for key among entries (longest prefix
 * whose bits match), or NULL. For tests. */
const struct kw_net_rules *kw_net_lookup(const struct kw_net_entry *e, size_t n,
					 const struct kw_net_key *key);

/* "net.connect", "net.send", "net.bind" for enum kw_net_op. */
const char *kw_net_op_name(uint8_t op);

#endif
