/* SPDX-License-Identifier: Apache-2.0 */
/* agentrust registry-anchor-v1: a record's canonical claim bytes (the log
 * entry) and the {leaf_index, audit_path} form of an inclusion proof. The
 * bytes are NOT RFC 8785: keys sorted by code point, separators "," and ":",
 * every character outside printable ASCII escaped as \uXXXX (Python's
 * json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=True)). */
#ifndef KWITNESS_TLOG_ANCHOR_H
#define KWITNESS_TLOG_ANCHOR_H

#include <stddef.h>
#include <jansson.h>

#include "lib/buf.h"
#include "tlog/merkle.h"

/* Appends the canonical claim bytes of v. -EDOM for a real number or an
 * integer outside +-(2^53 - 1) (outside the profile), -EINVAL otherwise. */
int anchor_claim_bytes(const json_t *v, struct kw_buf *out);
/* {"audit_path":["sha256:<hex>",...],"leaf_index":N} */
int anchor_proof_json(uint64_t index, const struct tlog_hash *path, size_t count,
		      struct kw_buf *out);
/* "sha256:" + 64 lowercase hex + NUL */
void anchor_hash_str(const struct tlog_hash *h, char out[72]);

#endif
