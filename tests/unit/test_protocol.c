/* SPDX-License-Identifier: Apache-2.0 */
/* Control requests (user/client/protocol.h): what is accepted, with which
 * fields, and the code of each refusal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>

#include "client/protocol.h"

#define DIGEST "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static void refused(const char *line, const char *code)
{
	struct kw_request_error err;
	struct kw_request req;

	assert_int_equal(kw_request_parse(line, strlen(line), &req, &err), -EINVAL);
	if (strcmp(err.code, code))
		fail_msg("%s: want %s, got %s (%s)", line, code, err.code, err.message);
	for (const char *p = err.message; *p; p++)
		assert_true(*p >= 0x20 && *p < 0x7f);
	assert_null(req.doc);
}

static void test_open(void **state)
{
	static const char line[] =
		"{\"op\":\"open\",\"cgroup\":\"/sys/fs/cgroup/x\",\"sandbox_id\":\"did:example:1\","
		"\"image_digest\":\"" DIGEST "\",\"policy\":\"{\\\"kwitness_policy\\\":1}\","
		"\"model_id\":\"m\"}";
	struct kw_request_error err;
	struct kw_request req;

	(void)state;
	assert_int_equal(kw_request_parse(line, strlen(line), &req, &err), 0);
	assert_int_equal(req.op, KW_REQ_OPEN);
	assert_string_equal(req.cgroup, "/sys/fs/cgroup/x");
	assert_string_equal(req.sandbox_id, "did:example:1");
	assert_string_equal(req.image_digest, DIGEST);
	assert_string_equal(req.policy, "{\"kwitness_policy\":1}");
	assert_int_equal(req.policy_len, 21);
	assert_string_equal(req.model_id, "m");
	assert_null(req.model_provider);
	assert_null(req.data_class);
	kw_request_free(&req);
	assert_null(req.doc);
}

static void test_other_ops(void **state)
{
	static const struct { const char *line; enum kw_request_op op; } ok[] = {
		{ "{\"op\":\"status\"}", KW_REQ_STATUS },
		{ "{\"op\":\"list\"}", KW_REQ_LIST },
		{ " {\"op\":\"ping\"} ", KW_REQ_PING },
		{ "{\"op\":\"close\",\"session\":\"abc\"}", KW_REQ_CLOSE },
		{ "{\"op\":\"close\",\"session\":\"abc\",\"kill\":true}", KW_REQ_CLOSE },
		{ "{\"op\":\"close\",\"session\":\"abc\",\"kill\":false}", KW_REQ_CLOSE },
	};
	struct kw_request_error err;
	struct kw_request req;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(kw_request_parse(ok[i].line, strlen(ok[i].line), &req, &err), 0);
		assert_int_equal(req.op, ok[i].op);
		if (req.op == KW_REQ_CLOSE) {
			assert_string_equal(req.session, "abc");
			/* kill only when the line says "kill":true */
			assert_int_equal(req.kill, strstr(ok[i].line, "true") != NULL);
		}
		kw_request_free(&req);
	}
}

static void test_watch(void **state)
{
	static const char all[] = "{\"op\":\"watch\"}";
	static const char one[] = "{\"op\":\"watch\",\"session\":\"abc\",\"denials_only\":true}";
	struct kw_request_error err;
	struct kw_request req;

	(void)state;
	assert_int_equal(kw_request_parse(all, strlen(all), &req, &err), 0);
	assert_int_equal(req.op, KW_REQ_WATCH);
	assert_null(req.session);
	assert_false(req.denials_only);
	kw_request_free(&req);
	assert_int_equal(kw_request_parse(one, strlen(one), &req, &err), 0);
	assert_string_equal(req.session, "abc");
	assert_true(req.denials_only);
	kw_request_free(&req);
	refused("{\"op\":\"watch\",\"denials_only\":\"yes\"}", KW_ERR_INVALID_FIELD);
	refused("{\"op\":\"watch\",\"session\":7}", KW_ERR_INVALID_FIELD);
	refused("{\"op\":\"watch\",\"session\":\"\"}", KW_ERR_INVALID_FIELD);
}

static void test_refusals(void **state)
{
	char big[KW_PROTO_MAX_FIELD + 64];

	(void)state;
	refused("{\"op\":", "malformed_json");
	refused("{\"op\":\"status\",\"op\":\"list\"}", "malformed_json");
	refused("[1,2]", "malformed_request");
	refused("{}", "missing_field");
	refused("{\"op\":7}", "missing_field");
	refused("{\"op\":\"explode\\u0001\"}", "unknown_op");
	refused("{\"op\":\"close\"}", "missing_field");
	refused("{\"op\":\"close\",\"session\":\"\"}", "invalid_field");
	refused("{\"op\":\"close\",\"session\":\"a\\u0000b\"}", "invalid_field");
	refused("{\"op\":\"close\",\"session\":1}", "invalid_field");
	refused("{\"op\":\"close\",\"session\":\"abc\",\"kill\":1}", "invalid_field");
	refused("{\"op\":\"close\",\"session\":\"abc\",\"kill\":\"true\"}", "invalid_field");
	refused("{\"op\":\"open\"}", "missing_field");
	refused("{\"op\":\"open\",\"cgroup\":\"/x\",\"sandbox_id\":\"https://x\",\"image_digest\":\""
		DIGEST "\",\"policy\":\"{}\"}", "invalid_field");
	refused("{\"op\":\"open\",\"cgroup\":\"/x\",\"sandbox_id\":\"did:x\",\"image_digest\":"
		"\"sha256:abc\",\"policy\":\"{}\"}", "invalid_field");
	refused("{\"op\":\"open\",\"cgroup\":\"/x\",\"sandbox_id\":\"did:x\",\"image_digest\":\""
		DIGEST "\"}", "missing_field");
	refused("{\"op\":\"open\",\"cgroup\":\"/x\",\"sandbox_id\":\"did:x\",\"image_digest\":\""
		DIGEST "\",\"policy\":{}}", "invalid_field");
	refused("{\"op\":\"open\",\"cgroup\":\"/x\",\"sandbox_id\":\"did:x\",\"image_digest\":\""
		DIGEST "\",\"policy\":\"{}\",\"extra\":1}", "unknown_field");
	/* a field one byte over its bound */
	snprintf(big, sizeof(big), "{\"op\":\"close\",\"session\":\"%0*d\"}", KW_PROTO_MAX_FIELD + 1, 0);
	refused(big, "invalid_field");
	snprintf(big, sizeof(big), "{\"op\":\"close\",\"session\":\"%0*d\"}", KW_PROTO_MAX_FIELD, 0);
	{
		struct kw_request_error err;
		struct kw_request req;

		assert_int_equal(kw_request_parse(big, strlen(big), &req, &err), 0);
		assert_int_equal(strlen(req.session), KW_PROTO_MAX_FIELD);
		kw_request_free(&req);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open),
		cmocka_unit_test(test_other_ops),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_watch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
