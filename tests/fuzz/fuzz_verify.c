/* SPDX-License-Identifier: Apache-2.0 */
/* Offline verification, as `kwitness verify --allow-embedded-key --log LOG
 * --policy BUNDLE RECORD` runs it. The input is RECORD, LOG and BUNDLE
 * separated by 0x1e (ASCII record separator); missing parts are not checked.
 * A record that verifies must carry the digest it was checked against. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/digest.h"
#include "jcs/jcs.h"
#include "collector/transcript.h"
#include "trace/record.h"

static const uint8_t *next_part(const uint8_t **p, const uint8_t *end, size_t *len)
{
	const uint8_t *start = *p, *sep;

	if (!start)
		return NULL;
	sep = memchr(start, 0x1e, (size_t)(end - start));
	*len = (size_t)((sep ? sep : end) - start);
	*p = sep ? sep + 1 : NULL;
	return start;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kw_verify_opts o = { .allow_embedded_key = true, .now = 4102444800LL, .skew = 0,
				    .call_count = -1 };
	struct kw_verify_result res;
	const uint8_t *p = data, *end = data + size, *rec, *log, *bundle;
	size_t rec_len = 0, log_len = 0, bundle_len = 0;
	char hash[KW_DIGEST_STR_MAX], image[KW_DIGEST_STR_MAX], err[256];
	uint64_t count;
	char *rtext;
	int rc;

	rec = next_part(&p, end, &rec_len);
	log = next_part(&p, end, &log_len);
	bundle = next_part(&p, end, &bundle_len);
	/* The record as its own allocation, so a read past its end is caught. */
	rtext = malloc(rec_len ? rec_len : 1);
	if (!rtext)
		return 0;
	memcpy(rtext, rec, rec_len);
	if (log) {
		if (kw_transcript_from_text((const char *)log, log_len, hash, &count, err,
					    sizeof(err)) == 0) {
			o.transcript_hash = hash;
			o.call_count = (int64_t)count;
		}
	}
	if (bundle) {
		json_t *r = jcs_parse(rtext, rec_len, NULL);
		const char *d = json_string_value(
			json_object_get(json_object_get(r, "build_provenance"), "digest"));

		o.bundle = bundle;
		o.bundle_len = bundle_len;
		if (d && kw_digest_valid(d)) {
			strcpy(image, d);
			o.image_digest = image;
		}
		json_decref(r);
	}
	rc = kw_record_verify(rtext, rec_len, &o, &res);
	if (rc > 0 && (res.reason == KW_VERIFY_OK || !memchr(res.message, 0, sizeof(res.message))))
		abort();
	if (rc == 0 && res.reason != KW_VERIFY_OK)
		abort();
	free(rtext);
	return 0;
}
