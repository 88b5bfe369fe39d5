/* SPDX-License-Identifier: Apache-2.0 */
/* Hardware-committed sessions (docs/attestation.md, "Committed sessions"):
 * two NV indexes kwitnessd defines in the owner hierarchy with an auth value
 * only it holds, an extend index (TPM_NT_EXTEND) that every session open and
 * close is extended into, and a monotonic counter (TPM_NT_COUNTER) each open
 * takes the next value of. At close the extend index is certified
 * (TPM2_NV_Certify) by the AK; the commitment file holds the events from the
 * session's open to its close, which a verifier replays.
 * Device side: commit.c (tpm2-tss); checks: commit_check.c (OpenSSL). */
#ifndef KWITNESS_TPM_COMMIT_H
#define KWITNESS_TPM_COMMIT_H

#include <stdint.h>
#include <jansson.h>

#include "tpm/tpm.h"

/* In the TPM-owner range (TPM 2.0 Part 2, 13.4: 0x01000000-0x013FFFFF). */
#define KW_TPM_NV_COMMIT 0x01004b57
#define KW_TPM_NV_COUNTER 0x01004b58
#define KW_TPM_COMMIT_FORMAT "kwitness-tpm2-commit-v1"
/* Events one commitment file may hold: the session's own two and what
 * overlapping sessions extended meanwhile. */
#define KW_COMMIT_MAX_EVENTS 4096

/* The event digests (SHA-256 of a newline-separated text, see
 * docs/attestation.md). Every field must be non-empty and newline-free. */
int kw_commit_open_event(const char *session, const char *counter, const char *bundle_hash,
			 const char *image_digest, uint8_t out[32]);
int kw_commit_close_event(const char *session, const char *transcript_hash, uint8_t out[32]);
/* v = SHA-256(v || e), as TPM2_NV_Extend does for a SHA-256 index. */
int kw_commit_extend(uint8_t v[32], const uint8_t e[32]);

/* --- The device (commit.c) --- */
/* Makes sure both indexes exist with auth (32 bytes); defines a missing one
 * with owner authorisation (empty). Reads the extend index's value into
 * value (zeros while it was never written). 0 or -errno with err. */
int kw_tpm_commit_setup(struct kw_tpm *t, const uint8_t auth[32], uint8_t value[32], char *err,
			size_t errlen);
/* Increments the counter and reads the new value. */
int kw_tpm_counter_next(struct kw_tpm *t, const uint8_t auth[32], uint64_t *value, char *err,
			size_t errlen);
int kw_tpm_commit_extend(struct kw_tpm *t, const uint8_t auth[32], const uint8_t e[32], char *err,
			 size_t errlen);
/* TPM2_NV_Certify of the extend index by the AK with qualifyingData qd;
 * attest, signature: marshalled; nv_public: the index's TPMS_NV_PUBLIC;
 * ak_public: the AK's TPMT_PUBLIC. */
int kw_tpm_commit_certify(struct kw_tpm *t, const uint8_t auth[32], const uint8_t qd[32],
			  struct kw_buf *attest, struct kw_buf *signature, struct kw_buf *nv_public,
			  struct kw_buf *ak_public, char *err, size_t errlen);

/* --- Checking (commit_check.c) --- */
enum kw_commit_reason {
	KW_COMMIT_OK = 0,
	KW_COMMIT_MISSING,           /* no commitment file, or the log names no counter */
	KW_COMMIT_MALFORMED,         /* the file cannot be read */
	KW_COMMIT_AK_MISMATCH,       /* certified by another AK than the appraised evidence's */
	KW_COMMIT_CERTIFY_INVALID,   /* not a TPM-made NV certification of a kwitness extend index */
	KW_COMMIT_EVENT_MISMATCH,    /* the TPM saw another open or close than the record names */
	KW_COMMIT_REPLAY_MISMATCH,   /* the events do not replay to the certified value */
};
/* What the record and its log name: the session id and counter from the
 * open entry, the bundle hash and image digest, the transcript hash. */
struct kw_commit_claim {
	const char *session;
	const char *counter;
	const char *bundle_hash;
	const char *image_digest;
	const char *transcript_hash;
};
struct kw_commit_result {
	enum kw_commit_reason reason;
	char message[320];
	size_t events;  /* extends replayed */
};
/* Checks the commitment file cm against claim, certified by the AK whose
 * marshalled TPMT_PUBLIC is ak_public (from evidence already appraised).
 * Returns 0 (committed), 1 (res says why not), -errno. */
int kw_commit_check(const json_t *cm, const struct kw_commit_claim *claim,
		    const struct kw_buf *ak_public, struct kw_commit_result *res);
const char *kw_commit_code(enum kw_commit_reason r);

/* Builds the commitment file (every binary member base64url, digests hex). */
json_t *kw_commit_build(const struct kw_buf *nv_public, const uint8_t start[32],
			const uint8_t (*events)[32], size_t n_events, size_t open_at,
			const struct kw_buf *attest, const struct kw_buf *signature,
			const struct kw_buf *ak_public);

#endif
