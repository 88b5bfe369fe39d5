// SPDX-License-Identifier: Apache-2.0
/* One session's opened addresses (user/policy/name_table.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "policy/name_table.h"

void kw_name_table_init(struct kw_name_table *t, uint32_t slot, uint32_t generation, size_t cap)
{
	memset(t, 0, sizeof(*t));
	t->slot = slot;
	t->generation = generation;
	t->cap = cap < KW_NAME_SESSION_MAX ? cap : KW_NAME_SESSION_MAX;
}

void kw_name_table_free(struct kw_name_table *t)
{
	free(t->e);
	t->e = NULL;
	t->n = 0;
}

static struct kw_name_entry *find(struct kw_name_table *t, const struct kw_name_key *k)
{
	for (size_t i = 0; i < t->n; i++)
		if (!memcmp(&t->e[i].key, k, sizeof(*k)))
			return &t->e[i];
	return NULL;
}

static bool holds(const struct kw_name_port *p, const struct kw_name_rule *r, unsigned i)
{
	return p->rule == r->index && p->port_lo == r->ports[i].lo && p->port_hi == r->ports[i].hi;
}

const struct kw_name_entry *kw_name_table_open(struct kw_name_table *t, uint8_t family,
					       const uint8_t addr[16], const struct kw_name_rule *r,
					       uint64_t expires_ns, uint64_t via, int *err)
{
	struct kw_name_key k;
	struct kw_name_entry *e;
	unsigned need = 0, count;

	memset(&k, 0, sizeof(k));
	k.slot = t->slot;
	k.op = r->op;
	k.family = family;
	memcpy(k.addr, addr, family == 4 ? 4 : 16);
	e = find(t, &k);
	count = e ? e->val.count : 0;
	/* the rule's ranges not yet held */
	for (unsigned i = 0; i < r->n_ports; i++) {
		bool have = false;

		for (unsigned j = 0; e && j < count; j++)
			have |= holds(&e->val.p[j], r, i);
		need += !have;
	}
	if (count + need > KW_NAME_ALLOW_PORTS || (!e && t->n == t->cap)) {
		*err = -ENOSPC;
		return NULL;
	}
	if (!e) {
		if (!t->e) {
			t->e = calloc(t->cap ? t->cap : 1, sizeof(*t->e));
			if (!t->e) {
				*err = -ENOMEM;
				return NULL;
			}
		}
		e = &t->e[t->n++];
		memset(e, 0, sizeof(*e));
		e->key = k;
		e->val.generation = t->generation;
	}
	for (unsigned i = 0; i < r->n_ports; i++) {
		struct kw_name_port *p = NULL;

		for (unsigned j = 0; j < e->val.count; j++)
			if (holds(&e->val.p[j], r, i))
				p = &e->val.p[j];
		if (!p)
			p = &e->val.p[e->val.count++];
		p->port_lo = r->ports[i].lo;
		p->port_hi = r->ports[i].hi;
		p->rule = r->index;
		p->pad = 0;
		/* renewed: the latest answer sets how long it stays open */
		p->expires_ns = expires_ns;
		p->via_seq = via;
	}
	*err = 0;
	return e;
}

size_t kw_name_table_expire(struct kw_name_table *t, uint64_t now, kw_name_table_fn put,
			    kw_name_table_fn del, void *ctx)
{
	size_t changed = 0, i = 0;

	while (i < t->n) {
		struct kw_name_entry *e = &t->e[i];
		unsigned j = 0, kept = 0;

		for (j = 0; j < e->val.count; j++)
			if (e->val.p[j].expires_ns > now)
				e->val.p[kept++] = e->val.p[j];
		if (kept == e->val.count) {
			i++;
			continue;
		}
		memset(&e->val.p[kept], 0, sizeof(e->val.p[0]) * (e->val.count - kept));
		e->val.count = kept;
		changed++;
		if (kept) {
			put(ctx, e);
			i++;
			continue;
		}
		del(ctx, e);
		t->e[i] = t->e[--t->n];
	}
	return changed;
}
