/* SPDX-License-Identifier: Apache-2.0 */
/* The transparency URL of a record, see record_url.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/sha.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "tlog/record_url.h"

int tlog_record_body_hash(const json_t *rec, char out[65])
{
	json_t *body = json_deep_copy(rec);
	struct kw_buf b = { 0 };
	uint8_t h[32];
	int ret;

	if (!body)
		return -ENOMEM;
	/* The record as built: kw_record_sign adds cnf and signature. */
	json_object_del(body, "signature");
	json_object_del(body, "cnf");
	json_object_del(body, "transparency");
	ret = jcs_dump(body, &b);
	if (!ret) {
		SHA256((const uint8_t *)b.data, b.len, h);
		for (int i = 0; i < 32; i++)
			snprintf(out + 2 * i, 3, "%02x", h[i]);
	}
	json_decref(body);
	kw_buf_free(&b);
	return ret;
}

int tlog_record_url(const char *origin, const json_t *rec, char out[TLOG_RECORD_URL_MAX])
{
	char hash[65];
	int ret = tlog_record_body_hash(rec, hash), n;

	if (ret)
		return ret;
	n = snprintf(out, TLOG_RECORD_URL_MAX, "https://%s/" TLOG_PROOF_DIR "/%s" TLOG_PROOF_EXT,
		     origin, hash);
	return n > 0 && n < TLOG_RECORD_URL_MAX ? 0 : -ENAMETOOLONG;
}
