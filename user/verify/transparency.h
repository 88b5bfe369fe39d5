/* SPDX-License-Identifier: Apache-2.0 */
/* Transparency: steps 2 to 6 of the Level 2 check of a record whose
 * signature (step 1) already verified, and the consistency of two
 * checkpoints (kwitness verify --consistency). */
#ifndef KWITNESS_VERIFY_TRANSPARENCY_H
#define KWITNESS_VERIFY_TRANSPARENCY_H

#include <stddef.h>
#include <stdint.h>

#include "tlog/record_check.h"

/* Reads the policy and the proof and judges them (tlog_check_record).
 * Returns 0 (v says logged or why not) or -1 with err saying why the
 * policy or the proof could not be used (unreadable, malformed policy). */
int verify_transparency(const char *policy_path, const char *proof_path, const char *record,
			size_t record_len, struct tlog_verdict *v, char *err, size_t errlen);
/* OLD is a checkpoint, NEW an add-checkpoint body (kwitness tlog request
 * --old SIZE: the old size, the consistency proof and the new checkpoint).
 * Both must be signed by a log of the policy. 0 (v says consistent or why
 * not) or -1 with err saying which file could not be used. */
int verify_consistency(const char *policy_path, const char *old_path, const char *new_path,
		       struct tlog_verdict *v, char *err, size_t errlen);

#endif
