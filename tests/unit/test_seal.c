/* SPDX-License-Identifier: Apache-2.0 */
/* Sealing checks the record it writes once (kw_record_sign_checked): the
 * file's bytes against a known answer made by `kwitness sign` before the
 * seal was reworked, the bytes the check saw are the bytes written, and a
 * check that fails leaves no signature behind. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/buf.h"
#include "lib/digest.h"
#include "jcs/jcs.h"
#include "trace/key.h"
#include "trace/record.h"
#include "collector/seal.h"

#define BUNDLE "network:\n  egress: deny-all\nfilesystem:\n  write: /work\n"
#define IMAGE "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define TRANSCRIPT "sha256:ffce23badc0a325b93ac587374132bbaae4f7798a4d57f84cf135a312f4a6aea"
/* `kwitness record build` with these inputs (--iat 1785000000) then
 * `kwitness sign` with RFC 8032 TEST 2's key, on main at 42699b3: SHA-256 of
 * the 976 bytes it printed (the record and a newline). */
#define KA_SEALED "sha256:5435640a8c7d1a6788ff6d688a834aa364438d97cfc680d43f8009b3af009280"
#define KA_SEALED_LEN 976

static struct kw_key *test_key(void)
{
	static const char seed_hex[] =
		"4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb";
	uint8_t seed[32];
	struct kw_key *key = NULL;

	for (int i = 0; i < 32; i++) {
		unsigned v;

		sscanf(seed_hex + 2 * i, "%2x", &v);
		seed[i] = (uint8_t)v;
	}
	assert_int_equal(kw_key_from_seed(seed, &key), 0);
	return key;
}

static struct kw_record_input input(void)
{
	return (struct kw_record_input){
		.sandbox_id = "spiffe://example.org/sandbox/seal-test",
		.image_digest = IMAGE,
		.bundle = BUNDLE,
		.bundle_len = strlen(BUNDLE),
		.transcript_hash = TRANSCRIPT,
		.call_count = 2,
		.enforcement_mode = "enforce",
		.model_provider = "anthropic",
		.model_id = "claude-x",
		.data_class = "internal",
		.iat = 1785000000,
	};
}

static void test_seal_known_answer(void **state)
{
	struct kw_record_input in = input();
	struct kw_key *key = test_key();
	char dir[] = "/tmp/kw-test-seal.XXXXXX", path[64], why[512], digest[KW_DIGEST_STR_MAX];
	enum kw_seal_stage stage;
	struct kw_buf file = { 0 }, canon = { 0 };
	json_t *rec = NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.json", dir);
	assert_int_equal(kw_seal_record(&in, key, path, &rec, &stage, why, sizeof(why)), 0);
	assert_int_equal(stage, KW_SEAL_DONE);
	assert_int_equal(kw_read_file(path, 1 << 20, &file), 0);
	assert_int_equal(file.len, KA_SEALED_LEN);
	assert_int_equal(kw_digest_buf(KW_SHA256, file.data, file.len, digest), 0);
	assert_string_equal(digest, KA_SEALED);
	/* The record handed back is the one written. */
	assert_int_equal(jcs_dump(rec, &canon), 0);
	assert_int_equal(canon.len + 1, file.len);
	assert_memory_equal(canon.data, file.data, canon.len);
	unlink(path);
	rmdir(dir);
	json_decref(rec);
	kw_buf_free(&file);
	kw_buf_free(&canon);
	kw_key_free(key);
}

static void test_sign_checked_text_is_what_was_checked(void **state)
{
	struct kw_record_input in = input();
	struct kw_key *key = test_key();
	struct kw_verify_opts o = { .trusted = key, .now = in.iat, .call_count = -1 };
	struct kw_verify_result res;
	struct kw_buf text = { 0 }, canon = { 0 };
	char err[320];
	json_t *rec = kw_record_build(&in, err, sizeof(err));

	(void)state;
	assert_non_null(rec);
	o.transcript_hash = TRANSCRIPT;
	o.call_count = 2;
	assert_int_equal(kw_record_sign_checked(rec, key, &o, &text, err, sizeof(err)), 0);
	assert_int_equal(jcs_dump(rec, &canon), 0);
	assert_int_equal(text.len, canon.len);
	assert_memory_equal(text.data, canon.data, text.len);
	assert_int_equal(kw_record_verify(text.data, text.len, &o, &res), 0);
	json_decref(rec);
	kw_buf_free(&text);
	kw_buf_free(&canon);
	kw_key_free(key);
}

static void test_sign_checked_refused(void **state)
{
	struct kw_record_input in = input();
	struct kw_key *key = test_key();
	struct kw_verify_opts o = { .trusted = key, .now = in.iat, .call_count = -1 };
	struct kw_buf text = { 0 };
	char err[320];
	json_t *rec = kw_record_build(&in, err, sizeof(err));

	(void)state;
	assert_non_null(rec);
	/* Another log's hash: the record says TRANSCRIPT, so the check fails. */
	o.transcript_hash = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
	assert_int_equal(kw_record_sign_checked(rec, key, &o, &text, err, sizeof(err)),
			 KW_SIGN_CHECK_FAILED);
	assert_non_null(strstr(err, "does not reproduce the record's tool_transcript hash"));
	assert_null(json_object_get(rec, "signature"));
	assert_int_equal(text.len, 0);
	/* Without a check of its own, kw_record_sign's holds and signs. */
	assert_int_equal(kw_record_sign(rec, key, err, sizeof(err)), 0);
	assert_non_null(json_object_get(rec, "signature"));
	json_decref(rec);
	kw_buf_free(&text);
	kw_key_free(key);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seal_known_answer),
		cmocka_unit_test(test_sign_checked_text_is_what_was_checked),
		cmocka_unit_test(test_sign_checked_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
