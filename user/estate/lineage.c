/* SPDX-License-Identifier: Apache-2.0 */
/* A record's process entries as procs rows, see lineage.h. What a row says
 * of the program a process runs follows the log's order: an exec (or open)
 * entry names it; a fork's child runs its parent's until it execs. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estate/lineage.h"
#include "trace/lineage.h"

struct proc_row {
	int64_t line, seq;
	bool has_seq, inherited;
	char *proc, *tree_parent, *event, *exe, *argv, *digest;
};

struct estate_lineage {
	/* reference -> {"parent", "exe", "argv", "digest"}: the process's first
	 * parent and the program it runs now */
	json_t *procs;
	struct proc_row *rows;
	size_t n, cap;
};

/* A log string as a column, cut at ESTATE_FIELD_MAX bytes (PostgreSQL's
 * text holds no NUL: argv's separators become spaces). */
static char *column(const json_t *v)
{
	return kw_log_text(v, ESTATE_FIELD_MAX);
}

static int set_text(json_t *o, const char *k, const char *v)
{
	return json_object_set_new(o, k, v ? json_string(v) : json_null());
}

static void row_free(struct proc_row *r)
{
	free(r->proc);
	free(r->tree_parent);
	free(r->event);
	free(r->exe);
	free(r->argv);
	free(r->digest);
}

/* The program the row's process runs from this entry on, and its state. */
static int program(struct estate_lineage *l, struct proc_row *r, const json_t *o, json_t *st,
		   bool fresh)
{
	const json_t *from = NULL;

	if (json_is_string(json_object_get(o, "exe"))) {
		from = o;
		r->exe = column(json_object_get(o, "exe"));
		r->argv = column(json_object_get(o, "argv"));
		r->digest = column(json_object_get(o, "digest"));
	} else if (fresh && !strcmp(r->event, "fork") && r->tree_parent) {
		from = json_object_get(l->procs, r->tree_parent);
		r->exe = column(json_object_get(from, "exe"));
		r->argv = column(json_object_get(from, "argv"));
		r->digest = column(json_object_get(from, "digest"));
		r->inherited = r->exe != NULL;
	}
	if (!from || !r->exe)
		return 0;
	return set_text(st, "exe", r->exe) || set_text(st, "argv", r->argv) ||
			       set_text(st, "digest", r->digest) ? -ENOMEM : 0;
}

int estate_lineage_note(struct estate_lineage **lp, const struct estate_entry *e)
{
	const json_t *o = e->parsed;
	struct estate_lineage *l = *lp;
	struct proc_row *r;
	json_t *st;
	bool fresh;

	/* every line of every log passes here: the tool first */
	if (!o || !e->tool || strcmp(e->tool, "proc") ||
	    !json_is_string(json_object_get(o, "proc")) || !json_is_string(json_object_get(o, "event")))
		return 0;
	if (!l) {
		l = *lp = calloc(1, sizeof(*l));
		if (!l || !(l->procs = json_object()))
			return -ENOMEM;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct proc_row *nr = realloc(l->rows, cap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		l->rows = nr;
		l->cap = cap;
	}
	r = &l->rows[l->n++];
	memset(r, 0, sizeof(*r));
	r->line = (int64_t)e->line;
	r->has_seq = e->has_seq;
	r->seq = e->seq;
	r->proc = column(json_object_get(o, "proc"));
	r->event = column(json_object_get(o, "event"));
	if (!r->proc || !r->event)
		return -ENOMEM;
	st = json_object_get(l->procs, r->proc);
	fresh = !st;
	if (fresh) {
		st = json_object();
		if (!st || json_object_set_new(l->procs, r->proc, st))
			return -ENOMEM;
		if (set_text(st, "parent", json_string_value(json_object_get(o, "parent"))))
			return -ENOMEM;
	}
	/* the tree's edge: the parent of the first entry */
	if (json_is_string(json_object_get(st, "parent")) &&
	    !(r->tree_parent = column(json_object_get(st, "parent"))))
		return -ENOMEM;
	return program(l, r, o, st, fresh);
}

static struct estate_val text_or_null(const char *s)
{
	return s ? EV_S(s) : (struct estate_val){ .type = EV_NULL };
}

/* Rows go in up to STORE_ROWS to a statement (one round trip to a
 * PostgreSQL server each): 32, then 8, then 1 at a time, three statement
 * texts in all (SQLite keeps them prepared). */
#define STORE_ROWS 32
#define PROC_COLS 10

static int store_rows(struct estate_db *db, int64_t record_id, const struct proc_row *rows,
		      size_t n)
{
	struct estate_val v[STORE_ROWS * PROC_COLS];
	char sql[STORE_ROWS * 64 + 120];
	size_t len;

	len = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO procs (record_id, line, seq, proc,"
			       " tree_parent, event, exe, argv, digest, inherited) VALUES ");
	for (size_t i = 0; i < n; i++) {
		const struct proc_row *r = &rows[i];
		struct estate_val *p = &v[i * PROC_COLS];
		int k = (int)(i * PROC_COLS);

		p[0] = EV_I(record_id);
		p[1] = EV_I(r->line);
		p[2] = r->has_seq ? EV_I(r->seq) : (struct estate_val){ .type = EV_NULL };
		p[3] = EV_S(r->proc);
		p[4] = text_or_null(r->tree_parent);
		p[5] = EV_S(r->event);
		p[6] = text_or_null(r->exe);
		p[7] = text_or_null(r->argv);
		p[8] = text_or_null(r->digest);
		p[9] = EV_I(r->inherited);
		len += (size_t)snprintf(sql + len, sizeof(sql) - len,
					"%s($%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d)",
					i ? ", " : "", k + 1, k + 2, k + 3, k + 4, k + 5, k + 6,
					k + 7, k + 8, k + 9, k + 10);
	}
	return estate_query(db, sql, v, (int)(n * PROC_COLS), NULL, NULL);
}

int estate_lineage_store(struct estate_db *db, int64_t record_id, const struct estate_lineage *l)
{
	static const size_t sizes[] = { STORE_ROWS, 8, 1 };
	size_t i = 0;

	for (size_t s = 0; l && s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (size_t k = sizes[s]; l->n - i >= k; i += k)
			if (store_rows(db, record_id, &l->rows[i], k))
				return -1;
	return 0;
}

/* The stored rows, page by page in line order, against the derived ones. */
struct row_check {
	const struct estate_lineage *l;
	size_t next;                 /* the derived row the next stored one should be */
	int64_t last_line;
	uint64_t rows;
	char *why;
	size_t whylen;
};

static bool same_col(const char *stored, const char *derived)
{
	return stored && derived ? !strcmp(stored, derived) : stored == derived;
}

/* The first column of the stored row (line, seq, proc, tree_parent, event,
 * exe, argv, digest, inherited) that is not the derived row's, or NULL. */
static const char *altered(const struct proc_row *r, const char *const *cols)
{
	char seq[24], inherited[4];

	snprintf(seq, sizeof(seq), "%" PRId64, r->seq);
	snprintf(inherited, sizeof(inherited), "%d", r->inherited);
	if (!same_col(cols[1], r->has_seq ? seq : NULL))
		return "seq";
	if (!same_col(cols[2], r->proc))
		return "proc";
	if (!same_col(cols[3], r->tree_parent))
		return "tree_parent";
	if (!same_col(cols[4], r->event))
		return "event";
	if (!same_col(cols[5], r->exe))
		return "exe";
	if (!same_col(cols[6], r->argv))
		return "argv";
	if (!same_col(cols[7], r->digest))
		return "digest";
	return same_col(cols[8], inherited) ? NULL : "inherited";
}

static int check_row(void *ctx, int ncols, const char *const *cols, const char *const *names)
{
	struct row_check *rc = ctx;
	const struct estate_lineage *l = rc->l;
	const struct proc_row *r;
	const char *col;
	int64_t line;

	(void)names;
	if (ncols < 9 || !cols[0])
		return 1;
	line = strtoll(cols[0], NULL, 10);
	rc->rows++;
	rc->last_line = line;
	r = l && rc->next < l->n ? &l->rows[rc->next] : NULL;
	if (r && r->line < line) {
		snprintf(rc->why, rc->whylen, "procs: the row of entry %" PRId64 " is missing "
			 "(its proc entry derives one)", r->line);
		return 1;
	}
	if (!r || r->line > line) {
		snprintf(rc->why, rc->whylen, "procs: an extra row at entry %" PRId64 " (no proc "
			 "entry derives it)", line);
		return 1;
	}
	rc->next++;
	col = altered(r, cols);
	if (col) {
		snprintf(rc->why, rc->whylen, "procs: the row of entry %" PRId64 " is altered (its "
			 "%s is not what its proc entry derives)", line, col);
		return 1;
	}
	return 0;
}

int estate_lineage_check(struct estate_db *db, int64_t record_id, const struct estate_lineage *l,
			 char *why, size_t whylen)
{
	struct row_check rc = { .l = l, .last_line = 0, .why = why, .whylen = whylen };

	why[0] = '\0';
	for (;;) {
		struct estate_val p[2] = { EV_I(record_id), EV_I(rc.last_line) };
		uint64_t before = rc.rows;

		if (estate_query(db, "SELECT line, seq, proc, tree_parent, event, exe, argv, digest,"
				     " inherited FROM procs WHERE record_id = $1 AND line > $2"
				     " ORDER BY line LIMIT 10000",
				 p, 2, check_row, &rc))
			return -1;
		if (why[0])
			return 1;
		if (rc.rows - before < 10000)
			break;
	}
	if (l && rc.next < l->n) {
		snprintf(why, whylen, "procs: the row of entry %" PRId64 " is missing (its proc "
			 "entry derives one)", l->rows[rc.next].line);
		return 1;
	}
	return 0;
}

void estate_lineage_free(struct estate_lineage *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		row_free(&l->rows[i]);
	free(l->rows);
	json_decref(l->procs);
	free(l);
}
