/* SPDX-License-Identifier: Apache-2.0 */
/* kwitnessd's copy of one session's kw_name_allow entries: what DNS answers
 * opened, for how long, and for which rule. It decides what an answer adds
 * (within the session's bound) and what has expired; the caller writes the
 * changed entries to the kernel map. Plain C, for the unit tests. */
#ifndef KWITNESS_NAME_TABLE_H
#define KWITNESS_NAME_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "kwitness/abi/name_match.h"
#include "policy/net_names.h"

struct kw_name_entry {
	struct kw_name_key key;
	struct kw_name_allow val;
};

struct kw_name_table {
	uint32_t slot, generation;
	size_t n, cap;            /* cap: at most KW_NAME_SESSION_MAX */
	struct kw_name_entry *e;  /* n used */
};

void kw_name_table_init(struct kw_name_table *t, uint32_t slot, uint32_t generation, size_t cap);
void kw_name_table_free(struct kw_name_table *t);

/* Opens addr for rule r's ports until expires_ns, opened by the query via.
 * A port range of the same rule already there is renewed (its expiry and
 * via replaced). Returns the entry to write to the map, or NULL with
 * *err -ENOSPC (the session holds cap addresses, or this address holds
 * KW_NAME_ALLOW_PORTS port rules) or -ENOMEM. */
const struct kw_name_entry *kw_name_table_open(struct kw_name_table *t, uint8_t family,
					       const uint8_t addr[16], const struct kw_name_rule *r,
					       uint64_t expires_ns, uint64_t via, int *err);

/* Drops the port rules expired at now. For each entry that changed, calls
 * put (entry still holds rules) or del (entry now empty, then removed from
 * the table); returns how many entries changed. */
typedef void (*kw_name_table_fn)(void *ctx, const struct kw_name_entry *e);
size_t kw_name_table_expire(struct kw_name_table *t, uint64_t now, kw_name_table_fn put,
			    kw_name_table_fn del, void *ctx);

#endif
