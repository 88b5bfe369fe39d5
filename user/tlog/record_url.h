/* SPDX-License-Identifier: Apache-2.0 */
/* Where a logged record's proof is published: its `transparency` URL,
 * https://<log origin>/kwitness/<sha256 of the unsigned body>.tlog-proof,
 * where the unsigned body is the RFC 8785 form of the record without
 * `signature`, `cnf` and `transparency` (the record as built, before step 2
 * of the sign-once order), so the URL names the record it belongs to. */
#ifndef KWITNESS_TLOG_RECORD_URL_H
#define KWITNESS_TLOG_RECORD_URL_H

#include <stddef.h>
#include <jansson.h>

/* The directory below the log's root where proofs are published. */
#define TLOG_PROOF_DIR "kwitness"
#define TLOG_PROOF_EXT ".tlog-proof"
#define TLOG_RECORD_URL_MAX 400

/* The hex SHA-256 of the unsigned body of rec. 0 or -errno. */
int tlog_record_body_hash(const json_t *rec, char out[65]);
/* The URL for rec in the log named origin. 0, -ENAMETOOLONG or -errno. */
int tlog_record_url(const char *origin, const json_t *rec, char out[TLOG_RECORD_URL_MAX]);

#endif
