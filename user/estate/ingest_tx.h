/* SPDX-License-Identifier: Apache-2.0 */
/* Records' transactions grouped: each record is a savepoint inside one
 * transaction that is committed every few hundred records or tens of
 * thousands of entries, and at the end of each estate_ingest_path(), so
 * the commit (PostgreSQL: a WAL flush; SQLite: the WAL frames of every
 * index page touched) is paid per batch, not per record. A record that does
 * not verify is rolled back to its savepoint, as it was rolled back alone
 * before; a crash loses at most the batch, which the next ingest redoes
 * (records already stored are skipped). */
#ifndef KWITNESS_ESTATE_INGEST_TX_H
#define KWITNESS_ESTATE_INGEST_TX_H

#include "estate/ingest.h"

/* Each returns 0, or -1 with the engine's message in ing->db->err. */
int estate_tx_record_begin(struct estate_ingest *ing);
/* The record stays (entries: how many of its lines it added). */
int estate_tx_record_keep(struct estate_ingest *ing, uint64_t entries);
/* Nothing of the record stays. */
int estate_tx_record_drop(struct estate_ingest *ing);
/* Commits the batch. When that fails, what it held is taken off the
 * stored and entries counts. */
int estate_tx_end(struct estate_ingest *ing);

#endif
