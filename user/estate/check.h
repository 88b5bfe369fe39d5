/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness estate verify: a stored session re-derived from what the
 * database holds (its signed record, its entries' canonical text, its
 * policy) and every stored column compared with what that derivation
 * gives: a row changed after ingest (an entry deleted or edited, a count
 * or a level raised) no longer holds and is shown as tampered. */
#ifndef KWITNESS_ESTATE_CHECK_H
#define KWITNESS_ESTATE_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "estate/db.h"
#include "estate/trust.h"

struct estate_check {
	bool ok;
	char why[600];               /* when not ok: the first thing that does not hold */
};

/* Re-derives stored record id under the trust folder's keys. 0 with the
 * result in c, or -1 (a database error, memory) with err. */
int estate_check_record(struct estate_db *db, const struct estate_trust *trust, int64_t id,
			struct estate_check *c, char *err, size_t errlen);

/* Every stored record, each result written to record_checks (administrator
 * credentials) and given to each. -1 with err when the run cannot go on. */
struct estate_verify_run {
	uint64_t checked, tampered;
	void (*each)(void *ctx, int64_t id, const char *session, const struct estate_check *c);
	void *ctx;
};
int estate_verify_all(struct estate_db *db, const struct estate_trust *trust,
		      struct estate_verify_run *run, char *err, size_t errlen);

#endif
