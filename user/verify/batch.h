/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness verify --dir / several records: every record with its decision
 * log and policy bundle, found in the state folder layout kwitnessd writes
 * (records/<session>.json, logs/<session>.jsonl, policies/<sha256 hex>), on
 * a bounded number of threads. */
#ifndef KWITNESS_VERIFY_BATCH_H
#define KWITNESS_VERIFY_BATCH_H

#include <stdbool.h>

#include "trace/record.h"

struct verify_batch {
	const char *keypath;         /* NULL with verify.allow_embedded_key */
	struct kw_verify_opts verify; /* now, max_age, skew, nonce, allow_* */
	const char *state_dir;       /* --dir, or NULL */
	char **records;              /* without --dir: record paths */
	int n_records;
	int jobs;
	bool json;
};

/* Prints one line per failure (every record with json) and a summary.
 * Returns the exit status: 0 when every record verified, 1 otherwise, 2
 * when the state folder cannot be opened. */
int verify_batch_run(const struct verify_batch *b);

#endif
