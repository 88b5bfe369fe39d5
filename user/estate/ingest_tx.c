/* SPDX-License-Identifier: Apache-2.0 */
/* Grouped record transactions, see ingest_tx.h. */
#include <string.h>

#include "estate/ingest_tx.h"

/* A batch ends at whichever comes first. */
#define TX_RECORDS 256
#define TX_ENTRIES 65536

int estate_tx_record_begin(struct estate_ingest *ing)
{
	struct estate_db *db = ing->db;

	if (!ing->tx.open) {
		if (!db->run_tx && estate_exec(db, db->begin_record))
			return -1;
		memset(&ing->tx, 0, sizeof(ing->tx));
		ing->tx.open = true;
	}
	return estate_exec(db, "SAVEPOINT kw_record");
}

int estate_tx_record_keep(struct estate_ingest *ing, uint64_t entries)
{
	if (estate_exec(ing->db, "RELEASE SAVEPOINT kw_record"))
		return -1;
	ing->tx.records++;
	ing->tx.entries += entries;
	if (ing->tx.records >= TX_RECORDS || ing->tx.entries >= TX_ENTRIES)
		return estate_tx_end(ing);
	return 0;
}

int estate_tx_record_drop(struct estate_ingest *ing)
{
	/* ROLLBACK TO also clears PostgreSQL's aborted state after an error. */
	return estate_exec(ing->db, "ROLLBACK TO SAVEPOINT kw_record; RELEASE SAVEPOINT kw_record");
}

int estate_tx_end(struct estate_ingest *ing)
{
	if (!ing->tx.open)
		return 0;
	ing->tx.open = false;
	if (ing->db->run_tx || estate_exec(ing->db, "COMMIT") == 0)
		return 0;
	/* Nothing of the batch is stored. */
	ing->stored -= ing->tx.records;
	ing->entries -= ing->tx.entries;
	estate_exec(ing->db, "ROLLBACK");
	return -1;
}
