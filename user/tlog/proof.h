/* SPDX-License-Identifier: Apache-2.0 */
/* C2SP tlog-proof (c2sp.org/tlog-proof): an offline inclusion proof, the
 * entry's index, its audit path and the (cosigned) checkpoint it leads to.
 *
 *   c2sp.org/tlog-proof@v1
 *   [extra <base64>]          kwitness: the leaf hash, a diagnostic only
 *   index <N>
 *   <base64 hash>...          the audit path, leaf to root
 *   <empty line>
 *   <checkpoint: a signed note>
 */
#ifndef KWITNESS_TLOG_PROOF_H
#define KWITNESS_TLOG_PROOF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "tlog/merkle.h"

#define TLOG_PROOF_HEADER "c2sp.org/tlog-proof@v1"
#define TLOG_PROOF_EXTRA_MAX 1024

struct tlog_proof {
	uint64_t index;
	struct tlog_hash path[TLOG_PROOF_MAX];
	size_t count;
	uint8_t extra[TLOG_PROOF_EXTRA_MAX];
	size_t extra_len;
	bool has_extra;
	const char *checkpoint; /* into the parsed buffer: the signed note */
	size_t checkpoint_len;
};

/* 0 or -EINVAL; the checkpoint is not parsed or checked here. */
int tlog_proof_parse(const char *buf, size_t len, struct tlog_proof *out);
int tlog_proof_format(const struct tlog_proof *p, struct kw_buf *out);

/* Makes the proof of entry `index` from a log directory's tiles, against the
 * signed checkpoint `note` of a tree of `size` leaves (whose root `root`
 * the tiles must reproduce: -EBADMSG when not). */
int tlog_prove(int dirfd, uint64_t index, uint64_t size, const struct tlog_hash *root,
	       const char *note, size_t note_len, struct tlog_proof *out);

#endif
