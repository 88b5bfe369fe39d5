/* SPDX-License-Identifier: Apache-2.0 */
/* A record's process entries into the procs table (0005_lineage.sql), for
 * estate query --exe, --digest and --ancestor. The entries stream in with
 * the log (note); their rows are written once the record's own row is
 * (store), in its transaction. estate verify derives them again from the
 * stored entries and compares (check). */
#ifndef KWITNESS_ESTATE_LINEAGE_H
#define KWITNESS_ESTATE_LINEAGE_H

#include <stdint.h>

#include "estate/db.h"
#include "estate/entry.h"

struct estate_lineage;

/* A log line: a "proc" entry is kept (l allocated on the first one), any
 * other line ignored. 0 or -ENOMEM. */
int estate_lineage_note(struct estate_lineage **l, const struct estate_entry *e);
/* The kept rows into procs for record_id. 0, or -1 with db->err. */
int estate_lineage_store(struct estate_db *db, int64_t record_id, const struct estate_lineage *l);
/* estate verify: record_id's stored procs rows against those l derives
 * (l NULL: none). 0 when they are the same row for row; 1 with why naming
 * the first extra, missing or altered row; -1 with db->err. */
int estate_lineage_check(struct estate_db *db, int64_t record_id, const struct estate_lineage *l,
			 char *why, size_t whylen);
void estate_lineage_free(struct estate_lineage *l);

#endif
