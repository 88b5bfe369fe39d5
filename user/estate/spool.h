/* SPDX-License-Identifier: Apache-2.0 */
/* A collector's spool, drained into the estate (`kwitness estate push`).
 * kwitnessd makes an empty file STATE/spool/<session> once a session's
 * record is written (user/kwitnessd/spool.c); the push ingests
 * STATE/records/<session>.json as `kwitness estate ingest` does and removes
 * the spool file only once the database holds the record (stored, already
 * there, or listed in rejected). docs/estate.md, "Push from hosts". */
#ifndef KWITNESS_ESTATE_SPOOL_H
#define KWITNESS_ESTATE_SPOOL_H

#include <stdbool.h>
#include <stdint.h>

#include "estate/ingest.h"
#include "trace/statedir.h" /* KW_STATE_SPOOL */

/* One pass over STATE/spool with ing (its db open, its trust set): each
 * spooled session's record ingested, its spool file removed once the
 * database holds it. Returns 0 when every spooled record was handled, -1
 * when the run cannot go on (ing->err: the database failed, or the spool
 * cannot be read; the caller closes the database and tries again later).
 * *left: spooled records not handled by this pass. */
int estate_spool_drain(struct estate_ingest *ing, const char *state_dir, uint64_t *left);

#endif
