/* SPDX-License-Identifier: Apache-2.0 */
/* checkpoint_tlog = true: each signed checkpoint is appended to the
 * transparency log (log = DIR) as its anchor-v1 leaf, cosigned like a
 * record, and its inclusion proof stored beside the checkpoints
 * (LOG.checkpoints + KW_CKPT_TLOG_SUFFIX, one JSON line per proof). The
 * network and the log's lock are taken on a thread of its own, behind a
 * bounded queue: when the log stalls, checkpoints are dropped from it (and
 * counted), never waited for; after a failure, for KWD_CKPT_TLOG_BACKOFF_S. docs/transparency.md, "Checkpoints". */
#ifndef KWITNESSD_CHECKPOINT_TLOG_H
#define KWITNESSD_CHECKPOINT_TLOG_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define KW_CKPT_TLOG_SUFFIX ".tlog-proofs"
/* Checkpoints waiting to be logged: past this they are dropped. */
#define KWD_CKPT_TLOG_QUEUE_MAX 4
/* After a checkpoint failed to be logged, none is for this long. */
#define KWD_CKPT_TLOG_BACKOFF_S 60

struct kwd;

/* With cfg.checkpoint_tlog: the thread (d->publish must be set). 0 or
 * -errno with err. */
int kwd_ckpt_tlog_start(struct kwd *d, char *err, size_t errlen);
/* The checkpoint signing thread, after a checkpoint line is durable: asks
 * for it to be logged; never waits. ckpt_path: the checkpoints file. */
void kwd_ckpt_tlog_submit(struct kwd *d, const char *ckpt_path, uint64_t n, const char *hash,
			  const char *line, size_t len);
/* {queued, queue_max, logged, failed, dropped}; NULL when off. */
json_t *kwd_ckpt_tlog_status(struct kwd *d);
/* Drops what is still queued (said in the log) and ends the thread. */
void kwd_ckpt_tlog_stop(struct kwd *d);

#endif
