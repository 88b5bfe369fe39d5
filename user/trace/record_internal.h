/* SPDX-License-Identifier: Apache-2.0 */
/* Library-internal helpers shared by record.c, schema.c and verify.c. */
#ifndef KWITNESS_LIB_RECORD_INTERNAL_H
#define KWITNESS_LIB_RECORD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "lib/digest.h"

/* An unsigned record from kw_record_build has no cnf yet. */
#define KW_SCHEMA_ALLOW_NO_CNF 1u

int kw_schema_check(const json_t *record, unsigned flags, char *why, size_t whylen);
/* An integer as JSON Schema sees it: a jansson integer or an integral real. */
bool kw_json_integer(const json_t *v, long long *out);
/* runtime.measurement = alg(image_digest + "\n" + bundle_hash). */
int kw_software_measurement(enum kw_digest_alg alg, const char *image_digest,
			    const char *bundle_hash, char out[KW_DIGEST_STR_MAX]);

#endif
