/* SPDX-License-Identifier: Apache-2.0 */
/* in-toto Statement v1 (in-toto/attestation, spec/v1) holding kwitness's
 * session predicate (docs/attestation.md, "in-toto attestations"): what a
 * closed, verified session enforced, stated about the artifacts it made. */
#ifndef KWITNESS_ATTEST_INTOTO_H
#define KWITNESS_ATTEST_INTOTO_H

#include <stddef.h>
#include <jansson.h>

#include "lib/digest.h"
#include "verify/verdict.h"
#include "summary.h"

#define INTOTO_STATEMENT_TYPE "https://in-toto.io/Statement/v1"
#define KW_PREDICATE_SESSION_V1 "urn:kwitness:predicate:session:v1"
/* Subjects a statement may name (the artifacts and the record). */
#define INTOTO_MAX_SUBJECTS 256

struct intoto_subject {
	const char *name;
	char digest[KW_DIGEST_STR_MAX]; /* "sha256:<hex>" */
};

/* What the predicate says about the record itself. */
struct attest_record {
	const json_t *rec;                  /* the verified record (without signature) */
	const char *name;                   /* its subject name */
	char digest[KW_DIGEST_STR_MAX];     /* SHA-256 of its bytes as signed */
	char signer[64];                    /* RFC 7638 thumbprint of the signing key */
};

/* The kwitness session predicate from a record the verifier accepted (v),
 * the summary of its log and the record's facts. NULL when out of memory. */
json_t *attest_predicate(const struct attest_summary *s, const struct verify_verdict *v,
			 const struct attest_record *r);
/* The statement: subjects (each a name and a sha256 digest), the predicate
 * (stolen). NULL when out of memory or a digest is not sha256. */
json_t *intoto_statement(const struct intoto_subject *subj, size_t n, json_t *predicate);
/* Checks a statement's shape: _type Statement v1, 1..INTOTO_MAX_SUBJECTS
 * subjects each with a name and a sha256 digest of 64 lowercase hex
 * digits, predicateType KW_PREDICATE_SESSION_V1 and a predicate object.
 * 0 or -EBADMSG with why. */
int intoto_check(const json_t *st, char *why, size_t whylen);
/* The subject of st whose sha256 equals digest ("sha256:<hex>"), or NULL. */
const json_t *intoto_subject_with(const json_t *st, const char *digest);

#endif
