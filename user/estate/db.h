/* SPDX-License-Identifier: Apache-2.0 */
/* The estate database, one interface over two engines: SQLite (embedded,
 * "sqlite:PATH") and PostgreSQL ("postgresql://..." through libpq). SQL is
 * written once with $1, $2... parameters; the SQLite backend reads them as
 * ?1, ?2. Decision entries go in through a bulk path (a prepared insert on
 * SQLite, COPY on PostgreSQL). Every function returns 0 or -1 with the
 * engine's message in db->err. */
#ifndef KWITNESS_ESTATE_DB_H
#define KWITNESS_ESTATE_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "estate/entry.h"

#define ESTATE_DEFAULT_DB "sqlite:/var/lib/kwitness/estate.sqlite"

enum estate_engine { ESTATE_SQLITE, ESTATE_POSTGRES };

/* A query parameter: text, an integer, or NULL. */
enum estate_val_type { EV_NULL, EV_TEXT, EV_INT };
struct estate_val {
	enum estate_val_type type;
	const char *s;
	int64_t i;
};
#define EV_S(x) ((struct estate_val){ .type = EV_TEXT, .s = (x) })
#define EV_I(x) ((struct estate_val){ .type = EV_INT, .i = (int64_t)(x) })

/* One result row: cols[i] is NULL for SQL NULL. Non-zero stops the query. */
typedef int (*estate_row_fn)(void *ctx, int ncols, const char *const *cols,
			     const char *const *names);

struct estate_db;

struct estate_db_ops {
	/* One or more statements without parameters or results. */
	int (*exec)(struct estate_db *db, const char *sql);
	int (*query)(struct estate_db *db, const char *sql, const struct estate_val *params,
		     int nparams, estate_row_fn fn, void *ctx);
	/* Bulk entry load inside the current transaction. */
	int (*entries_begin)(struct estate_db *db, int64_t record_id);
	int (*entries_add)(struct estate_db *db, const struct estate_entry *e);
	int (*entries_end)(struct estate_db *db, bool keep);
	void (*close)(struct estate_db *db);
};

struct estate_db {
	const struct estate_db_ops *ops;
	enum estate_engine engine;
	/* The engine's words for what the shared SQL leaves open. */
	const char *id_pk;          /* the migration's @ID_PK@ */
	const char *begin_migration; /* a transaction that excludes other migrators */
	const char *analyze;         /* refresh the planner's statistics after an ingest */
	const char *defer_entries_fk; /* the migration's @DEFER_ENTRIES_FK@ */
	/* A record's transaction: its entries go in before its row. */
	const char *begin_record;
	const char *next_record_id;  /* the id the record's row will take */
	/* The run is one transaction (pg_bulk.h): batches do not commit. */
	bool run_tx;
	char err[512];
	void *impl;
};

/* Opens url: "sqlite:PATH", "postgresql://..." or "postgres://...".
 * Returns NULL with a one-line message in err. The database is migrated to
 * the newest schema version (migrate.c). */
struct estate_db *estate_open(const char *url, char *err, size_t errlen);
void estate_close(struct estate_db *db);

int estate_sqlite_open(struct estate_db *db, const char *path);   /* sqlite.c */
int estate_postgres_open(struct estate_db *db, const char *conninfo); /* postgres.c */

/* Applies every migration newer than the database's schema_version.
 * migrate.c. */
int estate_migrate(struct estate_db *db);
/* The newest schema version this build knows. */
int estate_schema_version(void);

static inline int estate_exec(struct estate_db *db, const char *sql)
{
	return db->ops->exec(db, sql);
}

static inline int estate_query(struct estate_db *db, const char *sql,
			       const struct estate_val *params, int nparams, estate_row_fn fn,
			       void *ctx)
{
	return db->ops->query(db, sql, params, nparams, fn, ctx);
}

/* One integer from a query's first row and column; *out untouched when the
 * query returns no row or NULL. */
int estate_query_int(struct estate_db *db, const char *sql, const struct estate_val *params,
		     int nparams, int64_t *out);

#endif
