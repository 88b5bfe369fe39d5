/* SPDX-License-Identifier: Apache-2.0 */
/* A hostile TPM commitment file (state/commit/<session>.json), checked as
 * `kwitness verify --evidence --log` checks it: parsed, its certification
 * unmarshalled and verified, its events replayed. The AK the check compares
 * against is the file's own, so inputs reach the certification and replay. */
#include <stdint.h>
#include <string.h>

#include "jcs/jcs.h"
#include "lib/base64.h"
#include "tpm/commit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct kw_commit_claim claim = {
		.session = "0123456789abcdef0123456789abcdef",
		.counter = "7",
		.bundle_hash = "sha256:0000000000000000000000000000000000000000000000000000000000000000",
		.image_digest = "sha256:1111111111111111111111111111111111111111111111111111111111111111",
		.transcript_hash = "sha256:2222222222222222222222222222222222222222222222222222222222222222",
	};
	struct kw_commit_result res;
	struct kw_buf ak = { 0 };
	json_t *cm = jcs_parse((const char *)data, size, NULL);
	const char *s = json_string_value(json_object_get(cm, "ak_public"));
	size_t len = 0;

	if (s && !kw_buf_reserve(&ak, strlen(s) + 1) &&
	    !kw_b64_decode(KW_B64_URL, s, strlen(s), (uint8_t *)ak.data, ak.cap, &len))
		ak.len = len;
	kw_commit_check(cm, &claim, &ak, &res);
	json_decref(cm);
	kw_buf_free(&ak);
	return 0;
}
