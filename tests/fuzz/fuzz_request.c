/* SPDX-License-Identifier: Apache-2.0 */
/* Control-socket request lines, parsed and validated as kwitnessd does before
 * acting on them. An accepted request has every field the collector reads,
 * within its bounds; a refused one has a code and a printable message. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/digest.h"
#include "policy/policy.h"
#include "client/protocol.h"

static void check_field(const char *s, bool required)
{
	size_t n;

	if (!s) {
		if (required)
			abort();
		return;
	}
	n = strlen(s);
	if (n == 0 || n > KW_PROTO_MAX_FIELD)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kw_request_error err;
	struct kw_request req;

	if (kw_request_parse((const char *)data, size, &req, &err)) {
		if (!err.code[0] || !memchr(err.message, 0, sizeof(err.message)))
			abort();
		for (const char *p = err.message; *p; p++)
			if (!isprint((unsigned char)*p))
				abort();
		return 0;
	}
	switch (req.op) {
	case KW_REQ_OPEN:
		check_field(req.cgroup, true);
		check_field(req.sandbox_id, true);
		check_field(req.image_digest, true);
		check_field(req.model_provider, false);
		check_field(req.model_id, false);
		check_field(req.data_class, false);
		if (!kw_digest_valid(req.image_digest) || !req.policy ||
		    req.policy_len > KW_POLICY_MAX_BYTES)
			abort();
		break;
	case KW_REQ_CLOSE:
		check_field(req.session, true);
		break;
	case KW_REQ_WATCH:
		check_field(req.session, false);
		break;
	default:
		break;
	}
	kw_request_free(&req);
	return 0;
}
