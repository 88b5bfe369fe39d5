/* SPDX-License-Identifier: Apache-2.0 */
/* Suppression-evident history (docs/attestation.md, "Counter gaps"): every
 * TPM-committed session's open entry names the next value of its host's TPM
 * NV counter; a value between two stored sessions of a host that no stored
 * session names is a session that never reached the estate. */
#ifndef KWITNESS_ESTATE_GAPS_H
#define KWITNESS_ESTATE_GAPS_H

#include <stdint.h>

#include "estate/db.h"

/* One stored session's place in its host's counter sequence. */
struct estate_counted {
	char machine_id[64], hostname[128], session[40];
	uint64_t counter;
	int64_t opened_us;
};
/* Counters first..last are missing between before and after. */
struct estate_gap {
	const struct estate_counted *before, *after;
	uint64_t first, last;
};
/* Calls each for every gap, host by host in counter order; *n the number of
 * gaps. 0, or -1 with err (a database error, memory). */
int estate_counter_gaps(struct estate_db *db, void (*each)(void *ctx, const struct estate_gap *g),
			void *ctx, uint64_t *n, char *err, size_t errlen);
/* The gap right before session (none: *missing 0). 0 or -1 with err. */
int estate_gap_before(struct estate_db *db, const char *session, uint64_t *missing,
		      struct estate_counted *before, char *err, size_t errlen);
/* "missing: host H (M): counter N[-L]: K session(s) between A and B (opened T and T)". */
void estate_gap_text(const struct estate_gap *g, char *out, size_t outlen);

#endif
