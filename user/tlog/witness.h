/* SPDX-License-Identifier: Apache-2.0 */
/* A minimal C2SP witness (c2sp.org/tlog-witness): keeps the latest checkpoint
 * it cosigned for each log it trusts, checks consistency proofs from it, and
 * cosigns (c2sp.org/tlog-cosignature). The add-checkpoint request body:
 *
 *   old <size>
 *   <base64 consistency proof hash>...   (at most 63)
 *   <empty line>
 *   <checkpoint: a signed note>
 */
#ifndef KWITNESS_TLOG_WITNESS_H
#define KWITNESS_TLOG_WITNESS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "tlog/note.h"

#define TLOG_WITNESS_LOGS_MAX 64
#define TLOG_WITNESS_REQUEST_MAX (TLOG_NOTE_MAX + 64 * 64)

struct tlog_witness {
	struct tlog_key key; /* the cosigner (private), borrowed */
	const struct tlog_key *logs; /* trusted log keys, borrowed */
	size_t nlogs;
	int statefd; /* the state directory, borrowed */
};

/* Handles one add-checkpoint request. Returns the HTTP status it calls for:
 * 200 with the cosignature line(s) in resp; 400 malformed or old > size;
 * 403 no trusted signature; 404 unknown origin; 409 old size is not the
 * witness's (resp: "<size>\n", Content-Type text/x.tlog.size) or the same
 * size with another root (a fork); 422 the consistency proof fails; 500 the
 * state could not be read or written. `now` is the cosignature's time. */
int tlog_witness_add_checkpoint(const struct tlog_witness *w, const char *req, size_t len,
				uint64_t now, struct kw_buf *resp);

/* Builds an add-checkpoint request body from the old size, its consistency
 * proof and the signed checkpoint. */
int tlog_witness_request(uint64_t old, const struct tlog_hash *proof, size_t count,
			 const char *note, size_t note_len, struct kw_buf *out);

#endif
