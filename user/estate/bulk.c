/* SPDX-License-Identifier: Apache-2.0 */
/* The bulk ingest's index handling, see bulk.h. The index definitions are
 * read from the migrations (one definition of each). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estate/bulk.h"
#include "estate/pg_bulk.h"
#include "estate_migrations.h" /* static const char *const estate_migrations[] */

#define N_MIGRATIONS (sizeof(estate_migrations) / sizeof(estate_migrations[0]))
#define MAX_INDEXES 32
#define INDEX_SQL_MAX 400

struct index_def {
	char name[64];
	char create[INDEX_SQL_MAX]; /* CREATE INDEX IF NOT EXISTS name ON entries (...) */
};

static void forget(struct index_def *d, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++) {
		if (!strcmp(d[i].name, name)) {
			d[i] = d[--*n];
			return;
		}
	}
}

/* The word at p (an SQL name), in out. Returns its end. */
static const char *word(const char *p, char *out, size_t n)
{
	size_t len = 0;

	while (*p == ' ')
		p++;
	while ((p[len] >= 'a' && p[len] <= 'z') || (p[len] >= 'A' && p[len] <= 'Z') ||
	       (p[len] >= '0' && p[len] <= '9') || p[len] == '_')
		len++;
	snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), p);
	return p + len;
}

/* The tables a bulk load fills without their secondary indexes: entries,
 * and records and procs, whose indexes take keys in no order (with them on,
 * each record's savepoint copied about 50 pages it changed into SQLite's
 * sub-journal, 800 MB per million entries; without, about 16). */
static bool bulk_table(const char *t)
{
	return !strcmp(t, "entries") || !strcmp(t, "procs") || !strcmp(t, "records");
}

/* Every plain index on those tables the migrations leave, in order. */
static size_t bulk_indexes(struct index_def *d)
{
	size_t n = 0;

	for (size_t m = 0; m < N_MIGRATIONS; m++) {
		for (const char *p = estate_migrations[m]; (p = strstr(p, "INDEX "));) {
			int create = p >= estate_migrations[m] + 7 && !strncmp(p - 7, "CREATE ", 7);
			int drop = p >= estate_migrations[m] + 5 && !strncmp(p - 5, "DROP ", 5);
			char name[64], on[16], table[64];
			const char *q = word(p + 6, name, sizeof(name)), *end;

			p += 6;
			while (!strcmp(name, "IF") || !strcmp(name, "NOT") || !strcmp(name, "EXISTS"))
				q = word(q, name, sizeof(name)); /* [IF [NOT] EXISTS] name */
			if (drop) {
				forget(d, &n, name);
				continue;
			}
			q = word(word(q, on, sizeof(on)), table, sizeof(table));
			end = strchr(q, ';');
			/* One it cannot hold stays as it is. */
			if (!create || strcmp(on, "ON") || !bulk_table(table) || !end ||
			    end - q >= 300 || n == MAX_INDEXES)
				continue;
			snprintf(d[n].name, sizeof(d[n].name), "%s", name);
			snprintf(d[n].create, sizeof(d[n].create),
				 "CREATE INDEX IF NOT EXISTS %s ON %s%.*s", name, table, (int)(end - q), q);
			n++;
		}
	}
	return n;
}

static int create_all(struct estate_db *db, const struct index_def *d, size_t n)
{
	if (estate_exec(db, "BEGIN"))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (estate_exec(db, d[i].create)) {
			char why[sizeof(db->err)];

			snprintf(why, sizeof(why), "%s", db->err);
			estate_exec(db, "ROLLBACK");
			snprintf(db->err, sizeof(db->err), "%s", why);
			return -1;
		}
	}
	return estate_exec(db, "COMMIT");
}

/* Builds each missing index, in one transaction. SQLite sorts in memory
 * up to its page cache's size before it spills to temporary files: the
 * cache is emptied and halved meanwhile, so the sort and the cache
 * together stay within the ingest's memory bound (the page cache). */
static int build(struct estate_db *db, const struct index_def *d, size_t n)
{
	int64_t cache = 0;
	char sql[80];
	int rc;

	if (db->engine != ESTATE_SQLITE)
		return create_all(db, d, n);
	if (estate_query_int(db, "PRAGMA cache_size", NULL, 0, &cache))
		return -1;
	snprintf(sql, sizeof(sql), "PRAGMA shrink_memory; PRAGMA cache_size=%" PRId64, cache / 2);
	if (estate_exec(db, sql))
		return -1;
	rc = create_all(db, d, n);
	snprintf(sql, sizeof(sql), "PRAGMA cache_size=%" PRId64, cache);
	if (estate_exec(db, sql))
		rc = -1;
	return rc;
}

int estate_bulk_begin(struct estate_db *db, struct estate_bulk *b)
{
	struct index_def d[MAX_INDEXES];
	size_t n = bulk_indexes(d);
	int64_t any = 1;

	b->dropped = false;
	/* The WAL flush of each commit is not waited for (bulk.h). */
	if (db->engine == ESTATE_POSTGRES && estate_exec(db, "SET synchronous_commit = off"))
		return -1;
	/* PostgreSQL: a first load is one transaction, or not at all. */
	if (db->engine == ESTATE_POSTGRES) {
		int one = estate_pg_bulk_begin(db, &b->restore);

		if (one)
			return one < 0 ? -1 : 0;
	}
	/* A role that may not read entries (a pushing host's): no bulk. */
	if (estate_query_int(db, "SELECT count(*) FROM (SELECT 1 FROM entries LIMIT 1) AS x", NULL,
			     0, &any))
		return 0;
	if (any) {
		/* A run that stopped before its end left them missing. Not
		 * allowed to (a pushing host's role): queries are slower. */
		build(db, d, n);
		return 0;
	}
	if (estate_exec(db, "BEGIN"))
		return -1;
	for (size_t i = 0; i < n; i++) {
		char sql[120];

		snprintf(sql, sizeof(sql), "DROP INDEX IF EXISTS %.63s", d[i].name);
		if (estate_exec(db, sql)) {
			estate_exec(db, "ROLLBACK");
			return 0;
		}
	}
	if (estate_exec(db, "COMMIT"))
		return -1;
	b->dropped = true;
	/* SQLite: a rollback journal for the load. Every page the load writes
	 * is new (past the file's end): the journal keeps only the few pages a
	 * commit changes, and each page is written once, not into the WAL and
	 * again into the file by a checkpoint. A commit stays atomic (a killed
	 * run's hot journal is rolled back at the next open, which also sets
	 * WAL again). Refused while another connection has the file open:
	 * the load then stays in WAL mode. synchronous=FULL: the journal is
	 * synced before the file is written, so a power loss cannot leave a
	 * batch half written (a few syncs per batch of 65,536 entries). */
	if (db->engine == ESTATE_SQLITE)
		estate_exec(db, "PRAGMA journal_mode=TRUNCATE; PRAGMA synchronous=FULL");
	return 0;
}

int estate_bulk_end(struct estate_db *db, struct estate_bulk *b)
{
	struct index_def d[MAX_INDEXES];

	if (db->run_tx)
		return estate_pg_bulk_end(db, &b->restore, true);
	if (!b->dropped)
		return 0;
	b->dropped = false;
	if (build(db, d, bulk_indexes(d)))
		return -1;
	/* Whole statistics of the new indexes: SQLite's sampled ones
	 * (analysis_limit) had its planner scan entries for "who did this". */
	if (estate_exec(db, "ANALYZE entries; ANALYZE records"))
		return -1;
	/* Back to WAL (should it fail, the next open sets it). */
	if (db->engine == ESTATE_SQLITE)
		estate_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL");
	return 0;
}

int estate_bulk_stop(struct estate_db *db, struct estate_bulk *b)
{
	int rc = db->run_tx ? estate_pg_bulk_end(db, &b->restore, false) : estate_bulk_end(db, b);

	kw_buf_free(&b->restore);
	return rc;
}
