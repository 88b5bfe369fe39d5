/* SPDX-License-Identifier: Apache-2.0 */
/* The embedded engine: SQLite through libsqlite3, see db.h. The file is
 * made with mode 0600 in WAL mode; every statement of a query is prepared
 * from the shared SQL with $N read as ?N. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "estate/db.h"

/* Statements kept prepared, by their text: an ingest runs the same few
 * per record (lookups, the record's row), and preparing one costs more
 * than running it. */
#define STMT_CACHE 16
struct cached_stmt {
	char *sql;
	sqlite3_stmt *st;
	bool busy; /* being stepped: a query inside its own callback prepares anew */
};

struct sqlite_impl {
	sqlite3 *h;
	sqlite3_stmt *ins;   /* the entries insert, prepared once */
	int64_t record_id;
	struct cached_stmt cache[STMT_CACHE];
	unsigned next_evict;
};

static int fail(struct estate_db *db, const char *what)
{
	struct sqlite_impl *s = db->impl;

	snprintf(db->err, sizeof(db->err), "%s: %s", what, s && s->h ? sqlite3_errmsg(s->h) : "");
	return -1;
}

static int s_exec(struct estate_db *db, const char *sql)
{
	struct sqlite_impl *s = db->impl;
	char *msg = NULL;

	if (sqlite3_exec(s->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(db->err, sizeof(db->err), "%s", msg ? msg : sqlite3_errmsg(s->h));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* $N -> ?N outside quoted text. */
static char *to_sqlite(const char *sql)
{
	char *out = strdup(sql), quote = 0;

	for (char *p = out; p && *p; p++) {
		if (quote) {
			if (*p == quote)
				quote = 0;
		} else if (*p == '\'' || *p == '"') {
			quote = *p;
		} else if (*p == '$' && p[1] >= '0' && p[1] <= '9') {
			*p = '?';
		}
	}
	return out;
}

static int bind_all(sqlite3_stmt *st, const struct estate_val *p, int n)
{
	int rc = SQLITE_OK;

	for (int i = 0; i < n && rc == SQLITE_OK; i++) {
		switch (p[i].type) {
		case EV_NULL: rc = sqlite3_bind_null(st, i + 1); break;
		case EV_INT: rc = sqlite3_bind_int64(st, i + 1, p[i].i); break;
		case EV_TEXT:
			rc = p[i].s ? sqlite3_bind_text(st, i + 1, p[i].s, -1, SQLITE_TRANSIENT)
				    : sqlite3_bind_null(st, i + 1);
			break;
		}
	}
	return rc;
}

/* A prepared statement for text (owned by the cache when *slot is set). */
static sqlite3_stmt *prepare(struct sqlite_impl *s, char *text, struct cached_stmt **slot)
{
	struct cached_stmt *c;
	sqlite3_stmt *st = NULL;

	*slot = NULL;
	for (unsigned i = 0; i < STMT_CACHE; i++) {
		c = &s->cache[i];
		if (c->sql && !c->busy && !strcmp(c->sql, text)) {
			c->busy = true;
			*slot = c;
			free(text);
			return c->st;
		}
	}
	if (sqlite3_prepare_v3(s->h, text, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK ||
	    !st) {
		sqlite3_finalize(st);
		free(text);
		return NULL;
	}
	c = &s->cache[s->next_evict];
	if (c->busy) { /* every slot round the ring in use: not cached */
		free(text);
		return st;
	}
	s->next_evict = (s->next_evict + 1) % STMT_CACHE;
	sqlite3_finalize(c->st);
	free(c->sql);
	*c = (struct cached_stmt){ .sql = text, .st = st, .busy = true };
	*slot = c;
	return st;
}

static void release(struct cached_stmt *slot, sqlite3_stmt *st)
{
	if (!slot) {
		sqlite3_finalize(st);
		return;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	slot->busy = false;
}

static int s_query(struct estate_db *db, const char *sql, const struct estate_val *params,
		   int nparams, estate_row_fn fn, void *ctx)
{
	struct sqlite_impl *s = db->impl;
	char *text = to_sqlite(sql);
	struct cached_stmt *slot = NULL;
	sqlite3_stmt *st = NULL;
	int rc, ret = -1;

	if (!text) {
		snprintf(db->err, sizeof(db->err), "out of memory");
		return -1;
	}
	if (!(st = prepare(s, text, &slot))) {
		fail(db, "prepare");
		return -1;
	}
	if (bind_all(st, params, nparams) != SQLITE_OK) {
		fail(db, "bind");
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int n = sqlite3_column_count(st);
		const char *cols[64], *names[64];

		if (!fn)
			continue;
		if (n > 64)
			n = 64;
		for (int i = 0; i < n; i++) {
			cols[i] = (const char *)sqlite3_column_text(st, i);
			names[i] = sqlite3_column_name(st, i);
		}
		if (fn(ctx, n, cols, names)) {
			ret = 0;
			goto out;
		}
	}
	if (rc != SQLITE_DONE) {
		fail(db, "query");
		goto out;
	}
	ret = 0;
out:
	release(slot, st);
	return ret;
}

static const char insert_entry[] =
	"INSERT INTO entries (record_id, line, seq, ts_us, tool, decision, enforced, object, host,"
	" addr, port, path, rule, pid, uid, comm, entry)"
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)";

static int s_entries_begin(struct estate_db *db, int64_t record_id)
{
	struct sqlite_impl *s = db->impl;

	if (!s->ins && sqlite3_prepare_v2(s->h, insert_entry, -1, &s->ins, NULL) != SQLITE_OK)
		return fail(db, "prepare entries insert");
	s->record_id = record_id;
	return 0;
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

static void bind_int(sqlite3_stmt *st, int i, bool has, int64_t v)
{
	if (has)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static int s_entries_add(struct estate_db *db, const struct estate_entry *e)
{
	struct sqlite_impl *s = db->impl;
	sqlite3_stmt *st = s->ins;
	int rc;

	sqlite3_bind_int64(st, 1, s->record_id);
	sqlite3_bind_int64(st, 2, (int64_t)e->line);
	bind_int(st, 3, e->has_seq, e->seq);
	bind_int(st, 4, e->has_ts, e->ts_us);
	bind_text(st, 5, e->tool);
	bind_text(st, 6, e->decision);
	bind_int(st, 7, e->has_enforced, e->enforced);
	bind_text(st, 8, e->object[0] ? e->object : NULL);
	bind_text(st, 9, e->host);
	bind_text(st, 10, e->addr[0] ? e->addr : NULL);
	bind_int(st, 11, e->has_port, e->port);
	bind_text(st, 12, e->path);
	bind_text(st, 13, e->rule);
	bind_int(st, 14, e->has_pid, e->pid);
	bind_int(st, 15, e->has_uid, e->uid);
	bind_text(st, 16, e->comm);
	sqlite3_bind_text(st, 17, e->text, (int)e->len, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : fail(db, "insert entry");
}

static int s_entries_end(struct estate_db *db, bool keep)
{
	(void)db;
	(void)keep; /* the rows are in the transaction; ROLLBACK drops them */
	return 0;
}

static void s_close(struct estate_db *db)
{
	struct sqlite_impl *s = db->impl;

	if (!s)
		return;
	sqlite3_finalize(s->ins);
	for (unsigned i = 0; i < STMT_CACHE; i++) {
		sqlite3_finalize(s->cache[i].st);
		free(s->cache[i].sql);
	}
	sqlite3_close(s->h);
	free(s);
	db->impl = NULL;
}

static const struct estate_db_ops sqlite_ops = {
	.exec = s_exec,
	.query = s_query,
	.entries_begin = s_entries_begin,
	.entries_add = s_entries_add,
	.entries_end = s_entries_end,
	.close = s_close,
};

int estate_sqlite_open(struct estate_db *db, const char *path)
{
	struct sqlite_impl *s = calloc(1, sizeof(*s));
	int fd;

	if (!s) {
		snprintf(db->err, sizeof(db->err), "out of memory");
		return -1;
	}
	/* Set before SQLite starts (afterwards refused, harmlessly). No
	 * allocation counters: they take a global mutex round every
	 * allocation. (A sub-journal kept in memory up to 4 MiB,
	 * SQLITE_CONFIG_STMTJRNL_SPILL, was tried and removed: an ingest
	 * resumed after a killed load failed with "database or disk is full"
	 * at its first large record, tests/cli/test_estate_bulk.sh.) */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	db->impl = s;
	db->ops = &sqlite_ops;
	db->engine = ESTATE_SQLITE;
	db->id_pk = "INTEGER PRIMARY KEY";
	db->begin_migration = "BEGIN IMMEDIATE";
	db->defer_entries_fk = "";
	/* Writers one at a time, so max(id) + 1 stays the record's. */
	db->begin_record = "BEGIN IMMEDIATE; PRAGMA defer_foreign_keys = ON";
	db->next_record_id = "SELECT coalesce(max(id), 0) + 1 FROM records";
	db->analyze = "PRAGMA analysis_limit=1000; PRAGMA optimize";
	/* Evidence: readable by its owner only, and never through a link. */
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(db->err, sizeof(db->err), "cannot open the database file: %s", strerror(errno));
		return -1;
	}
	close(fd);
	/* NOMUTEX: one connection is used by one thread at a time (the
	 * writer), so its statements need no lock of their own. */
	if (sqlite3_open_v2(path, &s->h,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK)
		return fail(db, "open");
	sqlite3_busy_timeout(s->h, 30000);
	/* A page cache of 32 MiB: the entries indexes take random keys. Pages
	 * of 16 KiB (a new file only: set before WAL): a quarter of the reads
	 * and writes. (Not mapped: mapped pages would count in the ingest's
	 * memory, which stays bounded.) */
	if (s_exec(db, "PRAGMA page_size=16384; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
		       " PRAGMA foreign_keys=ON; PRAGMA cache_size=-32768"))
		return -1;
	return 0;
}
