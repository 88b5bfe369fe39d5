/* SPDX-License-Identifier: Apache-2.0 */
/* TRACE v0.2 Trust Records: build, schema, sign, verify. The transcript hash
 * they carry comes from collector/transcript.h. */
#ifndef KWITNESS_RECORD_H
#define KWITNESS_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "lib/buf.h"
#include "lib/digest.h"
#include "trace/key.h"
#include "trace/profile_v03.h"

struct kw_log_check;

#define KW_TRACE_PROFILE "tag:agentrust-io.com,2026:trace-v0.2"
#define KW_DEFAULT_VERIFIER "urn:kwitness:collector"
/* How far iat may lie in the future, in seconds: TRACE v0.2 section 3.2.2
 * gives verifiers a default tolerance of 5 minutes. */
#define KW_DEFAULT_SKEW 300

/* --- Build (agentrust sandbox adapter mapping, docs/record.md) --- */
/* runtime under a verified TPM binding (platform "tpm2"); every member set. */
struct kw_record_runtime {
	const char *platform;
	const char *measurement;      /* "sha256:" + hex(pcrDigest) */
	const char *nonce;            /* the signing key's thumbprint */
	const char *firmware_version;
	/* The evidence object (kwitness-tpm2-evidence-v1) the quote is in, or
	 * NULL; carried inline as runtime.evidence under the v0.3 draft. */
	const json_t *evidence;
};
struct kw_record_input {
	const char *sandbox_id;       /* subject: spiffe:// or did: */
	const char *image_digest;     /* sha256:/sha384: */
	const void *bundle;           /* policy bundle bytes, hashed as given */
	size_t bundle_len;
	const char *transcript_hash;  /* from collector/transcript.h */
	uint64_t call_count;
	const char *enforcement_mode; /* required: enforce|advisory|silent|declared */
	const char *model_provider;
	const char *model_id;
	const char *data_class;       /* required by the schema */
	const char *verifier;         /* appraisal.verifier; NULL: KW_DEFAULT_VERIFIER */
	int64_t iat;                  /* seconds */
	/* NULL: software-only, measurement = sha256(image + "\n" + bundle hash) */
	const struct kw_record_runtime *runtime;
	enum kw_record_profile profile; /* 0: TRACE v0.2 */
};
/* Unsigned record, without cnf and signature: kw_record_sign sets cnf.jwk to
 * the signing key. Every other member is checked against the schema here.
 * NULL with err filled on bad input. */
json_t *kw_record_build(const struct kw_record_input *in, char *err, size_t errlen);

/* --- Schema (TRACE v0.2 trace-claim.json, in C; a record whose eat_profile
 * is the v0.3 draft's may also carry runtime.evidence, profile_v03.h) --- */
/* 0 when valid; else -EINVAL with the failing JSON path and rule in why. */
int kw_schema_validate(const json_t *record, char *why, size_t whylen);

/* --- Sign: set cnf.jwk to the key's JWK, sign RFC 8785 bytes of the record
 * without "signature", set "signature", then verify what was signed. --- */
int kw_record_sign(json_t *record, const struct kw_key *key, char *err, size_t errlen);
struct kw_verify_opts;
/* The same, returning the signed record's RFC 8785 bytes in text (reset
 * first; no newline), and checking those bytes once with check, the
 * caller's full verification (the seal: key, transcript, bundle, image), or
 * with kw_record_sign's own check when check is NULL. 0 when signed and
 * checked; KW_SIGN_CHECK_FAILED when check rejected the bytes (err holds the
 * verifier's sentence, "signature" is removed and text is empty); else
 * -errno with err filled. */
#define KW_SIGN_CHECK_FAILED 1
int kw_record_sign_checked(json_t *record, const struct kw_key *key,
			   const struct kw_verify_opts *check, struct kw_buf *text, char *err,
			   size_t errlen);

/* --- Verify, in agentrust verify_record order --- */
enum kw_verify_reason {
	KW_VERIFY_OK = 0,
	KW_VERIFY_PROFILE_MISSING,
	KW_VERIFY_PROFILE_UNSUPPORTED,
	KW_VERIFY_SIGNATURE_MISSING,
	KW_VERIFY_SIGNATURE_MALFORMED,
	KW_VERIFY_SCHEMA_INVALID,
	KW_VERIFY_TRUSTED_KEY_MISSING,
	KW_VERIFY_CNF_KEY_MISMATCH,
	KW_VERIFY_RECORD_IN_FUTURE,
	KW_VERIFY_RECORD_STALE,
	KW_VERIFY_NONCE_MISMATCH,
	KW_VERIFY_SIGNATURE_INVALID,
	KW_VERIFY_TRANSCRIPT_MISMATCH,
	KW_VERIFY_BUNDLE_MISMATCH,
	KW_VERIFY_MEASUREMENT_MISMATCH,
	KW_VERIFY_MALFORMED, /* not JSON / not an object: "record_malformed" */
	/* The decision log (docs/record.md, "Decision log checks"). */
	KW_VERIFY_LOG_MISSING,
	KW_VERIFY_LOG_UNREADABLE,
	KW_VERIFY_LOG_TRUNCATED,
	KW_VERIFY_LOG_LINE_TOO_LONG,
	KW_VERIFY_LOG_MALFORMED,
	KW_VERIFY_LOG_NOT_CANONICAL,
	KW_VERIFY_LOG_SESSION_MISMATCH,
	KW_VERIFY_LOG_INCONSISTENT,
	KW_VERIFY_LOG_INCOMPLETE,
	/* Files a state-folder walk (--dir) could not use. */
	KW_VERIFY_RECORD_UNREADABLE,
	KW_VERIFY_POLICY_MISSING,
	KW_VERIFY_POLICY_UNREADABLE,
	/* What an estate refuses of a record that verifies (docs/estate.md). */
	KW_VERIFY_HOST_MISMATCH,
	KW_VERIFY_SESSION_CONFLICT,
	/* Interim checkpoints (docs/decision-log.md, "Checkpoints"). */
	KW_VERIFY_CHECKPOINT_MALFORMED,
	KW_VERIFY_CHECKPOINT_KEY_MISMATCH,
	KW_VERIFY_CHECKPOINT_SIGNATURE_INVALID,
	KW_VERIFY_CHECKPOINT_CHAIN_GAP,
	KW_VERIFY_CHECKPOINT_REORDERED,
	KW_VERIFY_CHECKPOINT_CHAIN_BROKEN,
	KW_VERIFY_CHECKPOINT_PREFIX_MISMATCH,
	KW_VERIFY_CHECKPOINT_BEYOND_LOG,
	KW_VERIFY_CHECKPOINTS_MISSING,
	KW_VERIFY_CHECKPOINT_UNVOUCHED_MISMATCH,
	/* Log segments (docs/decision-log.md, "Segments"). */
	KW_VERIFY_SEGMENT_MANIFEST_MALFORMED,
	KW_VERIFY_SEGMENT_MANIFEST_MISSING,
	KW_VERIFY_SEGMENT_MISSING,
	KW_VERIFY_SEGMENT_REORDERED,
	KW_VERIFY_SEGMENT_MISMATCH,
	KW_VERIFY_SEGMENT_UNLISTED,
	/* A committed session's TPM commitment (docs/attestation.md, "Committed
	 * sessions"), in the order of enum kw_commit_reason (tpm/commit.h). */
	KW_VERIFY_TPM_COMMIT_MISSING,
	KW_VERIFY_TPM_COMMIT_MALFORMED,
	KW_VERIFY_TPM_COMMIT_AK_MISMATCH,
	KW_VERIFY_TPM_COMMIT_CERTIFY_INVALID,
	KW_VERIFY_TPM_COMMIT_EVENT_MISMATCH,
	KW_VERIFY_TPM_COMMIT_REPLAY_MISMATCH,
	KW_VERIFY_REASON_COUNT
};

struct kw_verify_opts {
	const struct kw_key *trusted; /* NULL: trusted_key_missing unless allow_embedded_key */
	bool allow_embedded_key;
	int64_t now;                  /* seconds */
	int64_t max_age;              /* 0: no staleness check */
	int64_t skew;                 /* allowed future skew, seconds */
	const char *nonce;            /* NULL: not checked; else runtime.nonce must equal */
	const char *transcript_hash;  /* NULL: not checked */
	int64_t call_count;           /* -1: not checked */
	const void *bundle;           /* NULL: not checked */
	size_t bundle_len;
	const char *image_digest;     /* with bundle: runtime.measurement is checked */
	/* A finished streaming check of the decision log (logverify.h), or NULL.
	 * Replaces transcript_hash/call_count and adds the log's own checks. */
	const struct kw_log_check *log;
	bool allow_incomplete;        /* log_incomplete becomes a warning */
};

struct kw_verify_result {
	enum kw_verify_reason reason;
	char message[320]; /* one human sentence */
	/* With opts.log and allow_incomplete: the log is incomplete, the record
	 * still counts as valid, and warning says why (else warning is ""). */
	char warning[320];
};

/* Verifies record text. Returns 0 when valid, 1 when invalid (result says
 * why), -errno on internal error. */
int kw_record_verify(const char *text, size_t len, const struct kw_verify_opts *opts,
		     struct kw_verify_result *res);
/* The same in two halves, so that a long decision log is read only for a
 * record whose signature holds: the record itself (every step up to the
 * signature; the evidence options are ignored) and, on 0, *rec receives the
 * parsed record without "signature" (new reference); then the evidence. */
int kw_record_verify_signed(const char *text, size_t len, const struct kw_verify_opts *opts,
			    struct kw_verify_result *res, json_t **rec);
int kw_record_verify_evidence(const json_t *rec, const struct kw_verify_opts *opts,
			      struct kw_verify_result *res);
/* Stable reason code, e.g. "signature_invalid"; "ok" for KW_VERIFY_OK. */
const char *kw_verify_reason_code(enum kw_verify_reason r);
/* Sets res to reason r with the message fmt says, for the checks around a
 * record (its files found in a state folder); returns (int)r. */
int kw_verify_result_set(struct kw_verify_result *res, enum kw_verify_reason r, const char *fmt,
			 ...) __attribute__((format(printf, 3, 4)));

#endif
