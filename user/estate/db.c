/* SPDX-License-Identifier: Apache-2.0 */
/* Which engine a database URL names, see db.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estate/db.h"

struct estate_db *estate_open(const char *url, char *err, size_t errlen)
{
	struct estate_db *db = calloc(1, sizeof(*db));
	int rc;

	if (!db) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (!strncmp(url, "sqlite:", 7) && url[7]) {
		rc = estate_sqlite_open(db, url + 7);
	} else if (!strncmp(url, "postgresql://", 13) || !strncmp(url, "postgres://", 11)) {
		rc = estate_postgres_open(db, url);
	} else {
		snprintf(err, errlen, "unknown database URL (want sqlite:PATH or postgresql://...)");
		free(db);
		return NULL;
	}
	if (rc == 0)
		rc = estate_migrate(db);
	if (rc) {
		snprintf(err, errlen, "%s", db->err);
		estate_close(db);
		return NULL;
	}
	return db;
}

void estate_close(struct estate_db *db)
{
	if (!db)
		return;
	if (db->ops)
		db->ops->close(db);
	free(db);
}
