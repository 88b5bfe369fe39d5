/* SPDX-License-Identifier: Apache-2.0 */
/* The transparency log's proofs of a session's checkpoints (kwitnessd's
 * checkpoint_tlog = true): LOG.checkpoints.tlog-proofs, one JSON line per
 * logged checkpoint, {"checkpoint":"sha256:<hash of its line>","n":N,
 * "proof":"<C2SP tlog-proof>"}, in the chain's order (a checkpoint the log
 * did not take has none). Each proof is judged by tlog_check_entry, the
 * record's Level 2 check without the URL binding. docs/transparency.md. */
#ifndef KWITNESS_VERIFY_CHECKPOINT_TLOG_H
#define KWITNESS_VERIFY_CHECKPOINT_TLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tlog/policy.h"
#include "tlog/record_check.h"

#define KW_CKPT_TLOG_PROOFS_SUFFIX ".tlog-proofs"
/* The longest proof line read (a proof with a cosigned checkpoint is a few KB). */
#define KW_CKPT_TLOG_LINE_MAX (64 * 1024)

/* One checkpoint's outcome: present false when no proof names it; else
 * v holds the verdict (v->step 0: valid). */
typedef void (*verify_ckpt_tlog_each)(void *ctx, uint64_t n, bool present,
				      const struct tlog_verdict *v);

/* Walks the checkpoints file and the proofs file (NULL: ckpt_path +
 * suffix; none there: every checkpoint without a proof) together, in
 * constant memory. 0 with *invalid the number of proofs that failed, or
 * -1 with err when a file cannot be read. */
int verify_ckpt_tlog(const struct tlog_policy *pol, const char *ckpt_path, const char *proofs_path,
		     verify_ckpt_tlog_each each, void *ctx, uint64_t *invalid, char *err,
		     size_t errlen);

#endif
