/* SPDX-License-Identifier: Apache-2.0 */
/* Gaps in each host's TPM counter sequence (gaps.h), from the stored open
 * entries (line 1 of each session), which estate verify re-derives. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "estate/gaps.h"
#include "estate/query.h"

struct counted_list {
	struct estate_counted *v;
	size_t n, cap;
	int oom;
};

static int take(void *ctx, int ncols, const char *const *cols, const char *const *names)
{
	struct counted_list *l = ctx;
	json_t *open;
	const char *c;
	char *end;
	uint64_t v;

	(void)names;
	if (ncols != 5 || !cols[4])
		return 0;
	open = json_loads(cols[4], JSON_REJECT_DUPLICATES, NULL);
	c = json_string_value(json_object_get(open, "tpm_counter"));
	/* A decimal string without sign or leading zeros (kwitnessd's form). */
	if (!c || !*c || strlen(c) > 20 || (c[0] == '0' && c[1]) || c[strspn(c, "0123456789")]) {
		json_decref(open);
		return 0;
	}
	v = strtoull(c, &end, 10);
	json_decref(open);
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		void *p = realloc(l->v, cap * sizeof(*l->v));

		if (!p) {
			l->oom = 1;
			return 1;
		}
		l->v = p;
		l->cap = cap;
	}
	struct estate_counted *e = &l->v[l->n++];

	memset(e, 0, sizeof(*e));
	snprintf(e->machine_id, sizeof(e->machine_id), "%s", cols[0] ? cols[0] : "");
	snprintf(e->hostname, sizeof(e->hostname), "%s", cols[1] ? cols[1] : "");
	snprintf(e->session, sizeof(e->session), "%s", cols[2] ? cols[2] : "");
	e->opened_us = cols[3] ? strtoll(cols[3], NULL, 10) : 0;
	e->counter = v;
	return 0;
}

static int by_host_counter(const void *a, const void *b)
{
	const struct estate_counted *x = a, *y = b;
	int c = strcmp(x->machine_id, y->machine_id);

	return c ? c : x->counter < y->counter ? -1 : x->counter > y->counter;
}

static int load(struct estate_db *db, const char *machine_id, struct counted_list *l, char *err,
		size_t errlen)
{
	struct estate_val p[1] = { EV_S(machine_id) };
	static const char all[] =
		"SELECT r.machine_id, r.hostname, r.session, r.opened_us, e.entry FROM records r"
		" JOIN entries e ON e.record_id = r.id AND e.line = 1";
	static const char one[] =
		"SELECT r.machine_id, r.hostname, r.session, r.opened_us, e.entry FROM records r"
		" JOIN entries e ON e.record_id = r.id AND e.line = 1 WHERE r.machine_id = $1";

	if (estate_query(db, machine_id ? one : all, p, machine_id ? 1 : 0, take, l) || l->oom) {
		snprintf(err, errlen, "database: %s", l->oom ? "out of memory" : db->err);
		return -1;
	}
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), by_host_counter);
	return 0;
}

int estate_counter_gaps(struct estate_db *db, void (*each)(void *ctx, const struct estate_gap *g),
			void *ctx, uint64_t *n, char *err, size_t errlen)
{
	struct counted_list l = { 0 };

	*n = 0;
	if (load(db, NULL, &l, err, errlen)) {
		free(l.v);
		return -1;
	}
	for (size_t i = 1; i < l.n; i++) {
		const struct estate_counted *a = &l.v[i - 1], *b = &l.v[i];
		struct estate_gap g = { a, b, a->counter + 1, b->counter - 1 };

		if (strcmp(a->machine_id, b->machine_id) || b->counter <= a->counter + 1)
			continue;
		(*n)++;
		if (each)
			each(ctx, &g);
	}
	free(l.v);
	return 0;
}

int estate_gap_before(struct estate_db *db, const char *session, uint64_t *missing,
		      struct estate_counted *before, char *err, size_t errlen)
{
	struct counted_list l = { 0 };
	char machine[64] = "";

	*missing = 0;
	/* The session's host, then that host's sequence. */
	if (load(db, NULL, &l, err, errlen)) {
		free(l.v);
		return -1;
	}
	for (size_t i = 0; i < l.n; i++)
		if (!strcmp(l.v[i].session, session))
			snprintf(machine, sizeof(machine), "%s", l.v[i].machine_id);
	for (size_t i = 1; *machine && i < l.n; i++) {
		const struct estate_counted *a = &l.v[i - 1], *b = &l.v[i];

		if (strcmp(b->session, session) || strcmp(a->machine_id, b->machine_id))
			continue;
		if (b->counter > a->counter + 1) {
			*missing = b->counter - a->counter - 1;
			*before = *a;
		}
	}
	free(l.v);
	return 0;
}

void estate_gap_text(const struct estate_gap *g, char *out, size_t outlen)
{
	char range[48], t0[32], t1[32];
	uint64_t k = g->last - g->first + 1;

	if (g->first == g->last)
		snprintf(range, sizeof(range), "%" PRIu64, g->first);
	else
		snprintf(range, sizeof(range), "%" PRIu64 "-%" PRIu64, g->first, g->last);
	estate_format_time(g->before->opened_us, t0);
	estate_format_time(g->after->opened_us, t1);
	snprintf(out, outlen,
		 "missing: host %s (%s): counter %s: %" PRIu64 " session%s between %s and %s"
		 " (opened %s and %s)",
		 g->before->hostname, g->before->machine_id, range, k, k == 1 ? "" : "s",
		 g->before->session, g->after->session, t0, t1);
}
