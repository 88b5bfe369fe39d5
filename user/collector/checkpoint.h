/* SPDX-License-Identifier: Apache-2.0 */
/* Interim checkpoints of a decision log (docs/decision-log.md): one signed
 * JSON line each, in a file beside the log (LOG + KW_CHECKPOINT_SUFFIX),
 * chained by the SHA-256 of the previous line. The form is the record's:
 * RFC 8785 canonical JSON, Ed25519 over the canonical bytes without
 * "signature", base64url. This file is the one definition of the line: it
 * writes it (kwitnessd) and reads it back (kwitness verify, recovery). */
#ifndef KWITNESS_COLLECTOR_CHECKPOINT_H
#define KWITNESS_COLLECTOR_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/digest.h"
#include "trace/key.h"

#define KW_CHECKPOINT_SUFFIX ".checkpoints"
#define KW_CHECKPOINT_TYPE "kwitness.checkpoint"
/* The longest checkpoint line read back (they are about 600 bytes). */
#define KW_CHECKPOINT_LINE_MAX 4096

struct kw_checkpoint {
	char session[33];
	uint64_t n;          /* 1, 2, ... in the chain */
	uint64_t lines;      /* log lines covered: the transcript prefix's entries */
	int64_t last_seq;    /* highest sequence number in those lines; -1: none yet */
	uint64_t decisions, denials;
	uint64_t dropped;    /* given up so far: sequence gaps + undecodable events */
	uint64_t gaps;       /* sequence numbers given up so far */
	int64_t ts;          /* microseconds since the epoch */
	char prefix[KW_DIGEST_STR_MAX]; /* transcript hash of the first `lines` lines */
	char prev[KW_DIGEST_STR_MAX];   /* hash of checkpoint n-1's line; "" for n == 1 */
	char kid[KW_THUMBPRINT_MAX];    /* RFC 7638 thumbprint of the signing key */
};

/* Signs c (kid is set from key) and writes its line to out (reset first,
 * no newline) and the line's hash, the next checkpoint's prev, to hash.
 * 0 or -errno. */
int kw_checkpoint_sign(struct kw_checkpoint *c, const struct kw_key *key, struct kw_buf *out,
		       char hash[KW_DIGEST_STR_MAX]);

enum kw_checkpoint_error {
	KW_CHECKPOINT_OK = 0,
	KW_CHECKPOINT_MALFORMED,       /* not a canonical checkpoint line */
	KW_CHECKPOINT_KEY_MISMATCH,    /* kid is not the trusted key's */
	KW_CHECKPOINT_BAD_SIGNATURE,
};
/* Parses and checks one line (no newline) against the trusted key: form,
 * members, kid and signature. On KW_CHECKPOINT_OK, c and hash (the line's
 * SHA-256) are set. Anything else: why says what. -ENOMEM on memory. */
int kw_checkpoint_read(const char *line, size_t len, const struct kw_key *key,
		       struct kw_checkpoint *c, char hash[KW_DIGEST_STR_MAX], char *why,
		       size_t whylen);

#endif
