/* SPDX-License-Identifier: Apache-2.0 */
/* The record's software measurement, computed the same way when a record is
 * built (record.c) and when it is checked (verify.c). */
#include <string.h>

#include "lib/digest.h"
#include "record_internal.h"

/* runtime.measurement = sha256(image_digest + "\n" + bundle_hash). */
int kw_software_measurement(enum kw_digest_alg alg, const char *image_digest, const char *bundle_hash,
			    char out[KW_DIGEST_STR_MAX])
{
	struct kw_digest d;
	int ret = kw_digest_init(&d, alg);

	if (ret)
		return ret;
	if ((ret = kw_digest_update(&d, image_digest, strlen(image_digest))) ||
	    (ret = kw_digest_update(&d, "\n", 1)) ||
	    (ret = kw_digest_update(&d, bundle_hash, strlen(bundle_hash)))) {
		kw_digest_free(&d);
		return ret;
	}
	return kw_digest_final(&d, out);
}
