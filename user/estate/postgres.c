/* SPDX-License-Identifier: Apache-2.0 */
/* The estate engine: PostgreSQL through libpq, see db.h. Queries go as
 * PQexecParams with text parameters; decision entries go through COPY ...
 * FROM STDIN in text format, sent in blocks. */
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "estate/db.h"

#define COPY_BLOCK ((size_t)256 << 10)
#define MAX_PARAMS 400 /* lineage.c inserts 32 rows of 10 at once */

struct pg_impl {
	PGconn *conn;
	struct kw_buf copy;  /* rows not sent yet */
	int64_t record_id;
	bool copying;
};

static int fail(struct estate_db *db, const char *what, const PGresult *res)
{
	struct pg_impl *p = db->impl;
	const char *msg = res ? PQresultErrorMessage(res) : "";

	if (!msg || !*msg)
		msg = p && p->conn ? PQerrorMessage(p->conn) : "";
	snprintf(db->err, sizeof(db->err), "%s: %.*s", what, (int)strcspn(msg, "\n"), msg);
	return -1;
}

static int pg_exec(struct estate_db *db, const char *sql)
{
	struct pg_impl *p = db->impl;
	PGresult *res = PQexec(p->conn, sql);
	ExecStatusType st = PQresultStatus(res);
	int rc = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? 0 : fail(db, "exec", res);

	PQclear(res);
	return rc;
}

static int pg_query(struct estate_db *db, const char *sql, const struct estate_val *params,
		    int nparams, estate_row_fn fn, void *ctx)
{
	struct pg_impl *p = db->impl;
	char nums[MAX_PARAMS][24];
	const char *vals[MAX_PARAMS];
	PGresult *res;
	ExecStatusType st;
	int rc = 0;

	if (nparams > MAX_PARAMS) {
		snprintf(db->err, sizeof(db->err), "too many parameters");
		return -1;
	}
	for (int i = 0; i < nparams; i++) {
		switch (params[i].type) {
		case EV_NULL: vals[i] = NULL; break;
		case EV_TEXT: vals[i] = params[i].s; break;
		case EV_INT:
			snprintf(nums[i], sizeof(nums[i]), "%" PRId64, params[i].i);
			vals[i] = nums[i];
			break;
		}
	}
	res = PQexecParams(p->conn, sql, nparams, NULL, vals, NULL, NULL, 0);
	st = PQresultStatus(res);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		rc = fail(db, "query", res);
	} else if (st == PGRES_TUPLES_OK && fn) {
		int rows = PQntuples(res), n = PQnfields(res);
		const char *cols[64], *names[64];

		if (n > 64)
			n = 64;
		for (int c = 0; c < n; c++)
			names[c] = PQfname(res, c);
		for (int r = 0; r < rows; r++) {
			for (int c = 0; c < n; c++)
				cols[c] = PQgetisnull(res, r, c) ? NULL : PQgetvalue(res, r, c);
			if (fn(ctx, n, cols, names))
				break;
		}
	}
	PQclear(res);
	return rc;
}

static const char copy_entries[] =
	"COPY entries (record_id, line, seq, ts_us, tool, decision, enforced, object, host, addr,"
	" port, path, rule, pid, uid, comm, entry) FROM STDIN";

static int pg_entries_begin(struct estate_db *db, int64_t record_id)
{
	struct pg_impl *p = db->impl;
	PGresult *res = PQexec(p->conn, copy_entries);
	int rc = PQresultStatus(res) == PGRES_COPY_IN ? 0 : fail(db, "copy", res);

	PQclear(res);
	p->copying = rc == 0;
	p->record_id = record_id;
	kw_buf_reset(&p->copy);
	return rc;
}

/* A COPY text field: backslash, tab, newline and carriage return escaped;
 * NULL as \N. */
static int put_text(struct kw_buf *b, const char *s, size_t n, bool last)
{
	int rc = 0;

	if (!s) {
		rc = kw_buf_append(b, "\\N", 2);
	} else {
		size_t run = 0;

		for (size_t i = 0; i < n && !rc; i++) {
			const char *esc = NULL;

			switch (s[i]) {
			case '\\': esc = "\\\\"; break;
			case '\t': esc = "\\t"; break;
			case '\n': esc = "\\n"; break;
			case '\r': esc = "\\r"; break;
			default: continue;
			}
			rc = kw_buf_append(b, s + run, i - run) ?: kw_buf_append(b, esc, 2);
			run = i + 1;
		}
		rc = rc ?: kw_buf_append(b, s + run, n - run);
	}
	return rc ?: kw_buf_putc(b, last ? '\n' : '\t');
}

static int put_str(struct kw_buf *b, const char *s)
{
	return put_text(b, s, s ? strlen(s) : 0, false);
}

static int put_int(struct kw_buf *b, bool has, int64_t v)
{
	char num[24];

	if (!has)
		return put_text(b, NULL, 0, false);
	snprintf(num, sizeof(num), "%" PRId64, v);
	return put_text(b, num, strlen(num), false);
}

static int send_block(struct estate_db *db)
{
	struct pg_impl *p = db->impl;

	if (p->copy.len && PQputCopyData(p->conn, p->copy.data, (int)p->copy.len) != 1)
		return fail(db, "copy data", NULL);
	kw_buf_reset(&p->copy);
	return 0;
}

static int pg_entries_add(struct estate_db *db, const struct estate_entry *e)
{
	struct pg_impl *p = db->impl;
	struct kw_buf *b = &p->copy;
	int rc;

	rc = put_int(b, true, p->record_id);
	rc = rc ?: put_int(b, true, (int64_t)e->line);
	rc = rc ?: put_int(b, e->has_seq, e->seq);
	rc = rc ?: put_int(b, e->has_ts, e->ts_us);
	rc = rc ?: put_str(b, e->tool);
	rc = rc ?: put_str(b, e->decision);
	rc = rc ?: put_int(b, e->has_enforced, e->enforced);
	rc = rc ?: put_str(b, e->object[0] ? e->object : NULL);
	rc = rc ?: put_str(b, e->host);
	rc = rc ?: put_str(b, e->addr[0] ? e->addr : NULL);
	rc = rc ?: put_int(b, e->has_port, e->port);
	rc = rc ?: put_str(b, e->path);
	rc = rc ?: put_str(b, e->rule);
	rc = rc ?: put_int(b, e->has_pid, e->pid);
	rc = rc ?: put_int(b, e->has_uid, e->uid);
	rc = rc ?: put_str(b, e->comm);
	rc = rc ?: put_text(b, e->text, e->len, true);
	if (rc) {
		snprintf(db->err, sizeof(db->err), "out of memory");
		return -1;
	}
	return b->len >= COPY_BLOCK ? send_block(db) : 0;
}

static int pg_entries_end(struct estate_db *db, bool keep)
{
	struct pg_impl *p = db->impl;
	PGresult *res;
	int rc = 0;

	if (!p->copying)
		return 0;
	p->copying = false;
	if (keep)
		rc = send_block(db);
	kw_buf_reset(&p->copy);
	if (PQputCopyEnd(p->conn, keep && !rc ? NULL : "the record did not verify") != 1)
		rc = rc ?: fail(db, "copy end", NULL);
	while ((res = PQgetResult(p->conn))) {
		if (keep && !rc && PQresultStatus(res) != PGRES_COMMAND_OK)
			rc = fail(db, "copy", res);
		PQclear(res);
	}
	return keep ? rc : 0;
}

static void pg_close(struct estate_db *db)
{
	struct pg_impl *p = db->impl;

	if (!p)
		return;
	PQfinish(p->conn);
	kw_buf_free(&p->copy);
	free(p);
	db->impl = NULL;
}

static const struct estate_db_ops pg_ops = {
	.exec = pg_exec,
	.query = pg_query,
	.entries_begin = pg_entries_begin,
	.entries_add = pg_entries_add,
	.entries_end = pg_entries_end,
	.close = pg_close,
};

static void quiet_notice(void *arg, const char *message)
{
	(void)arg;
	(void)message; /* "relation already exists, skipping" and the like */
}

int estate_postgres_open(struct estate_db *db, const char *conninfo)
{
	struct pg_impl *p = calloc(1, sizeof(*p));

	if (!p) {
		snprintf(db->err, sizeof(db->err), "out of memory");
		return -1;
	}
	db->impl = p;
	db->ops = &pg_ops;
	db->engine = ESTATE_POSTGRES;
	db->id_pk = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY";
	db->begin_migration = "BEGIN; LOCK TABLE schema_version IN EXCLUSIVE MODE";
	db->defer_entries_fk = "ALTER TABLE entries ALTER CONSTRAINT entries_record_id_fkey"
			       " DEFERRABLE INITIALLY DEFERRED;";
	db->begin_record = "BEGIN";
	db->next_record_id = "SELECT nextval(pg_get_serial_sequence('records', 'id'))";
	db->analyze = "ANALYZE records; ANALYZE entries";
	p->conn = PQconnectdb(conninfo);
	if (PQstatus(p->conn) != CONNECTION_OK)
		return fail(db, "cannot connect", NULL);
	PQsetNoticeProcessor(p->conn, quiet_notice, NULL);
	return pg_exec(db, "SET client_encoding = 'UTF8'");
}
