/* SPDX-License-Identifier: Apache-2.0 */
/* Schema versions. The migrations are the files user/estate/sql/NNNN_*.sql,
 * built into the program in order (estate_migrations.h is generated from
 * them); migration N takes the database from version N-1 to N, in one
 * transaction with its row in schema_version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "estate/db.h"
#include "estate_migrations.h" /* static const char *const estate_migrations[] */

#define N_MIGRATIONS ((int)(sizeof(estate_migrations) / sizeof(estate_migrations[0])))

int estate_schema_version(void)
{
	return N_MIGRATIONS;
}

/* sql with every mark replaced by words; a new string or NULL. */
static char *replace(const char *sql, const char *mark, const char *words)
{
	size_t n = strlen(sql), ml = strlen(mark), extra = strlen(words), count = 0;
	const char *p;
	char *out, *w;

	for (p = sql; (p = strstr(p, mark)); p += ml)
		count++;
	out = malloc(n + count * extra + 1);
	if (!out)
		return NULL;
	for (w = out, p = sql;;) {
		const char *m = strstr(p, mark);

		if (!m) {
			strcpy(w, p);
			break;
		}
		memcpy(w, p, (size_t)(m - p));
		w += m - p;
		memcpy(w, words, extra);
		w += extra;
		p = m + ml;
	}
	return out;
}

/* The migration's text with @ID_PK@ and @DEFER_ENTRIES_FK@ in the engine's
 * words. */
static char *dialect(const struct estate_db *db, const char *sql)
{
	char *a = replace(sql, "@ID_PK@", db->id_pk);
	char *b = a ? replace(a, "@DEFER_ENTRIES_FK@", db->defer_entries_fk) : NULL;

	free(a);
	return b;
}

static int take_int(void *ctx, int ncols, const char *const *cols, const char *const *names)
{
	(void)names;
	if (ncols > 0 && cols[0])
		*(int64_t *)ctx = strtoll(cols[0], NULL, 10);
	return 1; /* the first row is enough */
}

int estate_query_int(struct estate_db *db, const char *sql, const struct estate_val *params,
		     int nparams, int64_t *out)
{
	return estate_query(db, sql, params, nparams, take_int, out);
}

int estate_migrate(struct estate_db *db)
{
	int64_t have = 0;

	/* A pushing host's role may not create tables: a database at the
	 * newest version is left as it is. */
	if (estate_query_int(db, "SELECT max(version) FROM schema_version", NULL, 0, &have) == 0 &&
	    have == N_MIGRATIONS)
		return 0;
	if (estate_exec(db, "CREATE TABLE IF NOT EXISTS schema_version ("
			    "version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)"))
		return -1;
	if (estate_query_int(db, "SELECT max(version) FROM schema_version", NULL, 0, &have))
		return -1;
	if (have > N_MIGRATIONS) {
		snprintf(db->err, sizeof(db->err),
			 "the database has schema version %lld, newer than this kwitness knows (%d)",
			 (long long)have, N_MIGRATIONS);
		return -1;
	}
	if (have == N_MIGRATIONS)
		return 0;
	/* Another ingest may be migrating the same database: take the lock,
	 * then read the version again. */
	if (estate_exec(db, db->begin_migration))
		return -1;
	have = 0;
	if (estate_query_int(db, "SELECT max(version) FROM schema_version", NULL, 0, &have))
		goto fail;
	for (int v = (int)have + 1; v <= N_MIGRATIONS; v++) {
		char *sql = dialect(db, estate_migrations[v - 1]);
		struct estate_val p[2] = { EV_I(v), EV_I(time(NULL)) };
		int rc;

		if (!sql) {
			snprintf(db->err, sizeof(db->err), "out of memory");
			goto fail;
		}
		rc = estate_exec(db, sql);
		free(sql);
		if (rc || estate_query(db, "INSERT INTO schema_version (version, applied_at) VALUES ($1, $2)",
				       p, 2, NULL, NULL)) {
			char why[sizeof(db->err)];

			snprintf(why, sizeof(why), "%s", db->err);
			snprintf(db->err, sizeof(db->err), "migration %d: %.400s", v, why);
			goto fail;
		}
	}
	return estate_exec(db, "COMMIT");
fail: {
	char why[sizeof(db->err)];

	snprintf(why, sizeof(why), "%s", db->err);
	estate_exec(db, "ROLLBACK");
	snprintf(db->err, sizeof(db->err), "%s", why);
	return -1;
}
}
