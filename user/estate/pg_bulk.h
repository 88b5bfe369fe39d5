/* SPDX-License-Identifier: Apache-2.0 */
/* PostgreSQL's first load (bulk.h): into an empty entries table the whole
 * run is one transaction. It locks entries, drops the table's constraints
 * (primary key, the deferred reference to records) and its indexes, as
 * the catalog defines them; the run's records go in, each in its savepoint
 * as before; then the constraints are added again (the reference checked
 * by one join instead of one lookup per row at each commit) and the
 * indexes built, and it commits. A run that stops or fails before that
 * commit (killed, the server gone, an error) stores nothing: the drops roll
 * back with the rows, and the next ingest starts again from an empty
 * table. Other sessions wait for entries until the commit. */
#ifndef KWITNESS_ESTATE_PG_BULK_H
#define KWITNESS_ESTATE_PG_BULK_H

#include <stdbool.h>

#include "lib/buf.h"
#include "estate/db.h"

/* 1: the run is one transaction now (db->run_tx), restore holds the SQL
 * that puts back what was dropped; 0: not possible (entries not empty, a
 * role that may not drop them): nothing changed; -1 with db->err. */
int estate_pg_bulk_begin(struct estate_db *db, struct kw_buf *restore);
/* keep: puts back the constraints and indexes and commits (0, or -1 with
 * db->err: nothing of the run is stored then); !keep: rolls it all back. */
int estate_pg_bulk_end(struct estate_db *db, struct kw_buf *restore, bool keep);

#endif
