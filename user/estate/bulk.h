/* SPDX-License-Identifier: Apache-2.0 */
/* A bulk ingest (`kwitness estate ingest`): into a database whose entries
 * table is empty, the entries table's secondary indexes (every plain
 * CREATE INDEX ... ON entries of the migrations) are dropped before the
 * load and built once after it, by sorting, instead of being updated row by
 * row (five random-key B-trees per decision). Nothing else changes: every
 * record is verified as before, the unique keys stay.
 *
 * Durability: each batch commit is atomic and consistent as before. On
 * PostgreSQL the run's commits do not wait for their WAL flush
 * (synchronous_commit = off): after an OS crash or power loss the last
 * fraction of a second of commits may be missing; the database stays
 * consistent and the next ingest of the same folders stores what is
 * missing (records already stored are skipped). SQLite loads with a
 * rollback journal (every page written once, not into the WAL and again by
 * a checkpoint) and synchronous=FULL: a committed batch survives a power
 * loss, a killed run's unfinished batch is rolled back at the next open;
 * WAL mode comes back after the load (and at every open). A run that stops before its
 * indexes are built leaves the database correct without them (queries are
 * slower); the next ingest builds them first. */
#ifndef KWITNESS_ESTATE_BULK_H
#define KWITNESS_ESTATE_BULK_H

#include <stdbool.h>

#include "lib/buf.h"
#include "estate/db.h"

struct estate_bulk {
	bool dropped; /* the entries indexes are off until estate_bulk_end */
	struct kw_buf restore; /* PostgreSQL: the run is one transaction (pg_bulk.h) */
};

/* Sets the run's session up for a bulk load; drops the entries indexes
 * when the table is empty, or builds any a stopped run left missing. A
 * role that may not (a pushing host's) just loads with the indexes on.
 * Returns 0, or -1 with db->err when the database fails. */
int estate_bulk_begin(struct estate_db *db, struct estate_bulk *b);
/* Builds the indexes dropped (0, or -1 with db->err). */
int estate_bulk_end(struct estate_db *db, struct estate_bulk *b);
/* After a run that failed: as estate_bulk_end, but a run that is one
 * transaction is rolled back (pg_bulk.h). Frees b. */
int estate_bulk_stop(struct estate_db *db, struct estate_bulk *b);

#endif
