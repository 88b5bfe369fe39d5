/* SPDX-License-Identifier: Apache-2.0 */
/* The log's side of the tlog-witness exchange: send the current checkpoint
 * with a consistency proof from the size the witness holds, learn that size
 * from a 409 and retry, and add the cosignature to the checkpoint. */
#ifndef KWITNESS_TLOG_COSIGN_H
#define KWITNESS_TLOG_COSIGN_H

#include <stddef.h>

#include "lib/buf.h"
#include "tlog/log.h"

/* Sends one add-checkpoint body; returns the HTTP status (or a negative
 * errno when the witness could not be reached) with the body in resp. */
typedef int (*tlog_witness_submit)(void *ctx, const char *req, size_t len, struct kw_buf *resp);

/* 0 when the witness cosigned the log's current checkpoint (its lines are
 * now in DIR/checkpoint); else -errno with why. */
int tlog_log_cosign(struct tlog_log *l, tlog_witness_submit submit, void *ctx, char *why,
		    size_t whylen);

#endif
