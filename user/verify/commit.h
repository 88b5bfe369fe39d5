/* SPDX-License-Identifier: Apache-2.0 */
/* A committed session's TPM commitment (tpm/commit.h), the one check that
 * `kwitness verify --log`, `verify --dir` and `estate ingest` make: the
 * claim (session and counter from the log's open entry, bundle hash, image
 * digest and transcript hash from the record) against the commitment file,
 * certified by the AK of the session's TPM evidence. */
#ifndef KWITNESS_VERIFY_COMMIT_H
#define KWITNESS_VERIFY_COMMIT_H

#include <jansson.h>

#include "tpm/commit.h"
#include "trace/logverify.h"
#include "trace/record.h"
#include "trace/statedir.h"

/* The commitment file at most (4096 events of 67 bytes, the certification). */
#define VERIFY_COMMIT_MAX (1024 * 1024)

/* rec: the record (signed or not); cm: the commitment (NULL: none);
 * evidence: the TPM evidence whose AK must have certified it (NULL: the
 * record's inline evidence). Returns 0 with res filled, or -errno. */
int verify_commitment(const json_t *rec, const char *session, const char *counter,
		      const json_t *cm, const json_t *evidence, struct kw_commit_result *res);

/* The same for a record found in a state folder, whose log lc read: a
 * record signed under a TPM binding (runtime.platform "tpm2") whose open
 * entry names a tpm_counter must have commit/<session>.json, certified by
 * the AK of the evidence the close entry names (evidence/<hex>.json, else
 * the record's inline evidence). Returns 0 (committed, or nothing to
 * check), 1 with res set to a KW_VERIFY_TPM_COMMIT_* reason, or -errno. */
int verify_state_commitment(const struct kw_state_dir *st, const json_t *rec,
			    const struct kw_log_check *lc, struct kw_verify_result *res);

#endif
