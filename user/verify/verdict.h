/* SPDX-License-Identifier: Apache-2.0 */
/* One verifier: a TRACE v0.2 record and the evidence its caller holds (its
 * decision log, policy bundle, image digest, TPM evidence, transparency
 * proof) in; one verdict out: the reason and its sentence, the log's
 * completeness, the TPM appraisal, the transparency check and the level the
 * record reaches. Callers only print, store or render the verdict.
 *
 * The order is agentrust's verify_record, then the evidence: the record
 * first (a long log is read only for a record whose signature holds), then
 * the log, bundle and measurement, then the appraisal, then the proof. */
#ifndef KWITNESS_VERIFY_VERDICT_H
#define KWITNESS_VERIFY_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/level.h"
#include "trace/record.h"
#include "trace/statedir.h"
#include "tpm/tpm.h"
#include "tlog/record_check.h"

/* What one record is checked against. Paths are read by verify_record;
 * NULL means "not given". */
struct verify_request {
	struct kw_verify_opts opts;   /* trusted key, clock, nonce, image digest, allow_* */
	const char *record_path;
	const char *log_path;         /* "-": standard input */
	const char *bundle_path;
	/* TPM evidence to appraise once the record verified, or NULL. */
	const json_t *evidence;
	const struct kw_appraise_opts *appraise;
	/* No evidence given: appraise the record's own runtime.evidence (the
	 * TRACE v0.3 draft's inline evidence) with appraise. */
	bool appraise_inline;
	const char *tlog_policy;      /* check the record's inclusion in a log */
	const char *tlog_proof;       /* NULL: record_path + ".tlog-proof" */
	bool progress;                /* a progress line on a terminal while the log is read */
	/* For callers that hold the bytes or stream the log themselves (estate
	 * ingest and report), used where the path above is NULL: */
	const char *record_text;      /* the record as signed (a tlog_policy then needs tlog_proof) */
	size_t record_len;
	const void *bundle;           /* NULL: no bundle */
	size_t bundle_len;
	/* Reads the whole log into lc (kw_log_check_fd, or _feed then _end);
	 * its negative errno stops the verification. NULL: log_path. */
	int (*read_log)(void *ctx, struct kw_log_check *lc);
	void *read_log_ctx;
	/* Every line the log check passes; the session the open entry names. */
	int (*on_entry)(void *ctx, const char *line, size_t len);
	void *entry_ctx;
	const char *expect_session;
	/* NULL: the verifier's own log check; else the caller's, left for it to
	 * read (its counts, hash, denials) and free (kw_log_check_free). */
	struct kw_log_check *log_check;
	/* The log's checkpoint file; NULL: log_path + ".checkpoints" when there
	 * is one (verify/checkpoint.h). */
	const char *checkpoints_path;
	/* The record's state folder (estate ingest): a committed session's TPM
	 * commitment is checked there (verify/commit.h); NULL: not. */
	const struct kw_state_dir *state;
};

enum verify_completeness {
	VERIFY_NOT_CHECKED,           /* no log read */
	VERIFY_COMPLETENESS_UNKNOWN,  /* the log could not be read to its end */
	VERIFY_COMPLETE,
	VERIFY_INCOMPLETE,
};

struct verify_verdict {
	struct kw_verify_result res;  /* reason, message, warning */
	bool valid;                   /* every check given held: exit status 0 */
	enum kw_level level;
	/* For a valid record: what it says and what was checked, one line. */
	char detail[640];
	/* The decision log, when it was read (completeness != NOT_CHECKED). */
	enum verify_completeness completeness;
	char completeness_text[400];  /* "complete", "INCOMPLETE: why", ... */
	char incomplete_why[256];     /* with VERIFY_INCOMPLETE */
	char transcript_hash[KW_DIGEST_STR_MAX];
	uint64_t log_entries;
	/* The log's checkpoints, when it has any: what they vouch for. */
	bool checkpointed;
	char checkpoints_text[400];
	/* The TPM appraisal, when the record verified and evidence was given. */
	bool appraised;
	struct kw_appraise_result appraisal;
	/* The transparency check, when the record verified and a policy was given. */
	bool tlog_checked;
	bool logged;                  /* every transparency step held */
	struct tlog_verdict tlog;     /* its checkpoint pointer is cleared */
};

/* Steps shared with the callers that find a record's files themselves
 * (verify/batch.c, estate ingest and report). */
/* The image digest a bundle's measurement is checked against when none is
 * given: the record's own build_provenance.digest, which the signature
 * binds, copied into out. out, or NULL when the record has no valid one. */
const char *verify_image_digest(const json_t *rec, char out[KW_DIGEST_STR_MAX]);
/* Appraises TPM evidence for a record that verified, given as signed (text,
 * len: the record's bytes with its signature). kw_appraise's return. */
int verify_appraise(const json_t *evidence, const char *text, size_t len,
		    const struct kw_appraise_opts *ao, struct kw_appraise_result *res);

/* The same for the evidence the record carries inline (verify/inline.c):
 * a record without usable inline evidence fails step 0, evidence_malformed. */
int verify_appraise_inline(const char *text, size_t len, const struct kw_appraise_opts *ao,
			   struct kw_appraise_result *res);

/* Verifies one record. Returns 0 with the verdict in v; or -1 when the
 * verification could not be made (a file given cannot be read, out of
 * memory), with err saying why in one sentence. */
int verify_record(const struct verify_request *rq, struct verify_verdict *v, char *err,
		  size_t errlen);

#endif
