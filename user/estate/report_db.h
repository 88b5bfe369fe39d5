/* SPDX-License-Identifier: Apache-2.0 */
/* The report of a session stored in the estate database (report.h). */
#ifndef KWITNESS_ESTATE_REPORT_DB_H
#define KWITNESS_ESTATE_REPORT_DB_H

#include "estate/db.h"
#include "estate/report.h"
#include "estate/trust.h"

/* The newest stored record of session, verified again from the database
 * under the trust folder's key its cnf.jwk names. NULL with err. */
struct report *estate_report_session(struct estate_db *db, const struct estate_trust *trust,
				     const char *session, char *err, size_t errlen);

#endif
