/* SPDX-License-Identifier: Apache-2.0 */
/* The offline inclusion check of a signed record against a tlog-proof and a
 * witness policy: steps 2 to 6 of the Level 2 check (step 1, the record's
 * signature, is the caller's). `kwitness verify --transparency` and
 * `kwitness estate ingest --transparency` both judge a proof with it. */
#ifndef KWITNESS_TLOG_RECORD_CHECK_H
#define KWITNESS_TLOG_RECORD_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "tlog/merkle.h"
#include "tlog/note.h"
#include "tlog/policy.h"

struct tlog_verdict {
	int step;         /* the step that failed (2..6), 0 when all held */
	const char *code; /* its reason code, "ok" when all held */
	char message[400];
	/* From the proof, once it parsed (even when a later step failed). */
	char origin[TLOG_NAME_MAX];
	uint64_t index, size;
	struct tlog_hash root;
	const char *checkpoint; /* the cosigned checkpoint note: into the proof text */
	size_t checkpoint_len;
	size_t cosigned;
};

/* Records a failure at step with its reason code and a message (the
 * consistency check of verify --consistency reports through it too). */
void tlog_verdict_fail(struct tlog_verdict *v, int step, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Judges the proof (proof_name names it in messages) for the record's bytes
 * as signed. 0 with the verdict in v, or -ENOMEM. */
int tlog_check_record(const struct tlog_policy *pol, const char *proof, size_t proof_len,
		      const char *proof_name, const char *record, size_t record_len,
		      struct tlog_verdict *v);

/* The same for a signed object that names no transparency URL (a session
 * checkpoint, logged after it was signed): steps 2, 3 (the log is the
 * policy's), 4, 5 and 6; the leaf is the object's anchor-v1 bytes. */
int tlog_check_entry(const struct tlog_policy *pol, const char *proof, size_t proof_len,
		     const char *proof_name, const json_t *entry, struct tlog_verdict *v);

#endif
