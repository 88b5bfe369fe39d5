/* SPDX-License-Identifier: Apache-2.0 */
/* PostgreSQL's one-transaction first load, see pg_bulk.h. */
#include <stdio.h>
#include <string.h>

#include "estate/pg_bulk.h"

/* Constraints first (a primary key's index goes with it), the reference to
 * records before the keys; then the other indexes. Each row: the DROP and
 * the statement that makes it again, from the catalog. */
static const char defs_sql[] =
	"SELECT format('ALTER TABLE entries DROP CONSTRAINT %I', conname),"
	" format('ALTER TABLE entries ADD CONSTRAINT %I %s', conname, pg_get_constraintdef(oid))"
	" FROM pg_constraint WHERE conrelid = 'entries'::regclass AND contype IN ('p', 'u', 'f')"
	" ORDER BY contype = 'f' DESC, conname";
static const char index_sql[] =
	"SELECT format('DROP INDEX %s', x.indexrelid::regclass), pg_get_indexdef(x.indexrelid)"
	" FROM pg_index x WHERE x.indrelid = 'entries'::regclass"
	" AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid"
	" AND c.conrelid = x.indrelid) ORDER BY x.indexrelid";

struct defs {
	struct kw_buf *drop, *make;
	bool keys_first; /* make: constraints in reverse (keys before the reference) */
	int err;
};

static int collect(void *ctx, int n, const char *const *cols, const char *const *names)
{
	struct defs *d = ctx;

	(void)names;
	if (n < 2 || !cols[0] || !cols[1]) {
		d->err = -1;
		return 1;
	}
	d->err = kw_buf_puts(d->drop, cols[0]) || kw_buf_puts(d->drop, ";\n") ||
		 kw_buf_puts(d->make, cols[1]) || kw_buf_puts(d->make, ";\n");
	return d->err;
}

/* Reverses the statements of b (one a line). */
static int reverse_lines(struct kw_buf *b)
{
	struct kw_buf r = { 0 };
	size_t end = b->len;
	int rc = 0;

	while (end && !rc) {
		size_t start = end - 1;

		while (start && b->data[start - 1] != '\n')
			start--;
		rc = kw_buf_append(&r, b->data + start, end - start);
		end = start;
	}
	if (!rc) {
		kw_buf_reset(b);
		rc = kw_buf_append(b, r.data ? r.data : "", r.len);
	}
	kw_buf_free(&r);
	return rc;
}

static int defs_of(struct estate_db *db, struct kw_buf *drop, struct kw_buf *make)
{
	struct kw_buf idx = { 0 };
	struct defs d = { .drop = drop, .make = make };
	int rc = estate_query(db, defs_sql, NULL, 0, collect, &d) ?: d.err;

	/* Keys are made before the reference that needs them. */
	rc = rc ?: reverse_lines(make);
	if (!rc) {
		d.make = &idx;
		rc = estate_query(db, index_sql, NULL, 0, collect, &d) ?: d.err;
		rc = rc ?: kw_buf_append(make, idx.data ? idx.data : "", idx.len);
	}
	kw_buf_free(&idx);
	return rc ? -1 : 0;
}

/* Whether entries holds a row: asked before the lock too, so that an
 * ingest into a table in use does not wait for the lock to learn it. */
static int table_used(struct estate_db *db, int64_t *any)
{
	return estate_query_int(db, "SELECT count(*) FROM (SELECT 1 FROM entries LIMIT 1) AS x",
				NULL, 0, any);
}

int estate_pg_bulk_begin(struct estate_db *db, struct kw_buf *restore)
{
	struct kw_buf drop = { 0 };
	int64_t any = 1;
	int rc = 0;

	kw_buf_reset(restore);
	if (estate_exec(db, "BEGIN"))
		return -1;
	/* A role that may not (a pushing host's) fails at the first query,
	 * the lock or a drop; an ingest that stored entries meanwhile is
	 * waited for. */
	if (table_used(db, &any) || any ||
	    estate_exec(db, "LOCK TABLE entries IN ACCESS EXCLUSIVE MODE") ||
	    table_used(db, &any) || any || defs_of(db, &drop, restore) ||
	    estate_exec(db, drop.data ? drop.data : "") ||
	    /* A table emptied in this transaction: on a server with
	     * wal_level = minimal its rows skip the WAL (synced at commit). */
	    estate_exec(db, "TRUNCATE entries") ||
	    /* The index builds' sort memory, for this transaction only. */
	    estate_exec(db, "SET LOCAL maintenance_work_mem = '256MB'") ||
	    /* The one commit waits for its WAL flush: what the run reports stays. */
	    estate_exec(db, "SET LOCAL synchronous_commit = on")) {
		kw_buf_reset(restore);
		rc = estate_exec(db, "ROLLBACK");
	} else {
		db->run_tx = true;
		rc = 1;
	}
	kw_buf_free(&drop);
	return rc;
}

int estate_pg_bulk_end(struct estate_db *db, struct kw_buf *restore, bool keep)
{
	int rc = 0;

	if (!db->run_tx)
		return 0;
	db->run_tx = false;
	if (keep && restore->len && estate_exec(db, restore->data))
		rc = -1;
	if (keep && !rc && estate_exec(db, "COMMIT"))
		rc = -1;
	if (!keep || rc) {
		char why[sizeof(db->err)];

		snprintf(why, sizeof(why), "%s", db->err);
		estate_exec(db, "ROLLBACK");
		snprintf(db->err, sizeof(db->err), "%s", why);
	}
	kw_buf_reset(restore);
	return rc;
}
