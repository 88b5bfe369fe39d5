/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness estate ingest: every record of the state folders (or record
 * files) given is verified before anything of it is stored (the signature
 * under a trusted key, the decision log streamed through the log check, the
 * policy bundle and the measurement; completeness, the TPM appraisal and
 * the transparency log's proof give the record's TRACE level). A record
 * that fails goes into rejected with its reason code. Entries go to the
 * database as the log is read, inside the record's savepoint (ingest_tx.h),
 * which is rolled back when the record does not verify: memory does not grow
 * with the log. The log is verified on a thread of its own ahead of this
 * one, the database's only user (ingest_pipe.h). */
#ifndef KWITNESS_ESTATE_INGEST_H
#define KWITNESS_ESTATE_INGEST_H

#include <stdbool.h>
#include <stdint.h>

#include "trace/record.h"
#include "trace/level.h"
#include "tpm/tpm.h"
#include "estate/db.h"
#include "estate/trust.h"
#include "tlog/policy.h"

struct estate_pipe;

struct estate_ingest {
	/* --- settings --- */
	struct estate_db *db;
	const struct estate_trust *trust;
	int64_t now;                 /* seconds: iat may not lie further ahead than skew */
	int64_t skew;
	/* TPM appraisal of tpm2 records (their evidence is found in the state
	 * folder's evidence/ by the name the log's close entry gives); NULL:
	 * not appraised, every record is Level 0. */
	const struct kw_appraise_opts *tpm;
	/* The witness policy records that carry a `transparency` URL are
	 * checked against, with their C2SP tlog-proof (RECORD.tlog-proof beside
	 * the record file), as `kwitness verify --transparency` checks them;
	 * NULL: not checked, no record is logged. A proof that fails leaves the
	 * record at its level without the log, with the failing step stored. */
	const struct tlog_policy *tlog;
	/* Called after every record and every few thousand entries. */
	void (*progress)(void *ctx, const struct estate_ingest *ing);
	/* Called for every rejected record. */
	void (*rejected_fn)(void *ctx, const char *path, const char *reason, const char *message);
	void *ctx;

	/* --- results --- */
	uint64_t records;            /* record files seen */
	uint64_t stored, already, rejected, incomplete;
	uint64_t by_level[4];         /* stored records per enum kw_level */
	uint64_t entries, log_bytes; /* stored by this run */
	uint64_t by_reason[KW_VERIFY_REASON_COUNT];
	char err[600];               /* why the run stopped (a database error) */
	/* --- the verifying thread's ring (ingest_pipe.h), during a path --- */
	struct estate_pipe *pipe;
	/* --- the batch of records not committed yet (ingest_tx.h) --- */
	struct {
		bool open;
		uint64_t records, entries;
	} tx;
};

/* Ingests a state folder, a folder of state folders (one per host), or a
 * record file in a state folder's records/. Returns 0, or -1 when the run
 * cannot go on (err says why: the database failed, the path cannot be
 * opened). */
int estate_ingest_path(struct estate_ingest *ing, const char *path);

#endif
