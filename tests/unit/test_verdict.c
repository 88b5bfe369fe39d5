/* SPDX-License-Identifier: Apache-2.0 */
/* The verifier (user/verify/verdict.c): one record and its evidence to one
 * verdict and level. Oracles: the TPM vectors' documented outcomes
 * (tests/vectors/tpm/PROVENANCE and tests/cli/test_tpm_offline.sh: Level 1
 * with the enrollment key, step 2 ak_not_enrolled with another key), records
 * signed here and changed after signing, and the order the verifier promises
 * (the record first: files after it are read only for a record that holds). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "trace/key.h"
#include "trace/record.h"
#include "verify/verdict.h"

#define BUNDLE "{\"kwitness_policy\":1,\"mode\":\"enforce\"}"
#define IMAGE "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define TRANSCRIPT "sha256:ffce23badc0a325b93ac587374132bbaae4f7798a4d57f84cf135a312f4a6aea"
#define IAT 1785000000

struct fixture {
	char dir[64];
	char rec[128], bundle[128], other_bundle[128], tampered[128];
	struct kw_key *key;
	char vec[1024];
};

static void vector(const struct fixture *f, const char *name, char *out, size_t n)
{
	snprintf(out, n, "%s/%s", f->vec, name);
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static struct kw_key *seed_key(void)
{
	static const char hex[] = "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb";
	uint8_t seed[32];
	struct kw_key *key = NULL;

	for (int i = 0; i < 32; i++) {
		unsigned v;

		sscanf(hex + 2 * i, "%2x", &v);
		seed[i] = (uint8_t)v;
	}
	assert_int_equal(kw_key_from_seed(seed, &key), 0);
	return key;
}

/* A software-only record signed with the seed key, and a copy of it whose
 * subject was changed after signing. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct kw_record_input in = {
		.sandbox_id = "spiffe://example.org/sandbox/verdict", .image_digest = IMAGE,
		.bundle = BUNDLE, .bundle_len = strlen(BUNDLE), .transcript_hash = TRANSCRIPT,
		.call_count = 2, .enforcement_mode = "enforce", .model_provider = "anthropic",
		.model_id = "claude-x", .data_class = "internal", .iat = IAT,
	};
	struct kw_buf text = { 0 };
	char err[320];
	json_t *rec;

	assert_non_null(f);
	snprintf(f->vec, sizeof(f->vec), "%s/tests/vectors/tpm",
		 getenv("KW_ROOT") ? getenv("KW_ROOT") : ".");
	snprintf(f->dir, sizeof(f->dir), "/tmp/kw-test-verdict.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->rec, sizeof(f->rec), "%s/rec.json", f->dir);
	snprintf(f->bundle, sizeof(f->bundle), "%s/bundle", f->dir);
	snprintf(f->other_bundle, sizeof(f->other_bundle), "%s/other", f->dir);
	snprintf(f->tampered, sizeof(f->tampered), "%s/tampered.json", f->dir);
	f->key = seed_key();
	rec = kw_record_build(&in, err, sizeof(err));
	assert_non_null(rec);
	assert_int_equal(kw_record_sign(rec, f->key, err, sizeof(err)), 0);
	assert_int_equal(jcs_dump(rec, &text), 0);
	write_file(f->rec, text.data);
	json_object_set_new(rec, "subject", json_string("spiffe://example.org/sandbox/evil"));
	kw_buf_reset(&text);
	assert_int_equal(jcs_dump(rec, &text), 0);
	write_file(f->tampered, text.data);
	write_file(f->bundle, BUNDLE);
	write_file(f->other_bundle, "{\"kwitness_policy\":1,\"mode\":\"advisory\"}");
	json_decref(rec);
	kw_buf_free(&text);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	unlink(f->rec);
	unlink(f->bundle);
	unlink(f->other_bundle);
	unlink(f->tampered);
	rmdir(f->dir);
	kw_key_free(f->key);
	free(f);
	return 0;
}

static struct verify_request request(const struct fixture *f, const char *rec)
{
	return (struct verify_request){
		.opts = { .trusted = f->key, .now = IAT, .skew = KW_DEFAULT_SKEW, .call_count = -1 },
		.record_path = rec,
	};
}

static void test_record_alone_is_level_0(void **state)
{
	struct fixture *f = *state;
	struct verify_request rq = request(f, f->rec);
	struct verify_verdict v;
	char err[600];

	assert_int_equal(verify_record(&rq, &v, err, sizeof(err)), 0);
	assert_true(v.valid);
	assert_int_equal(v.res.reason, KW_VERIFY_OK);
	assert_int_equal(v.level, KW_LEVEL_0);
	assert_false(v.appraised);
	assert_false(v.tlog_checked);
	assert_int_equal(v.completeness, VERIFY_NOT_CHECKED);
	assert_non_null(strstr(v.detail, "subject spiffe://example.org/sandbox/verdict"));
}

static void test_bundle_and_measurement(void **state)
{
	struct fixture *f = *state;
	struct verify_request rq = request(f, f->rec);
	struct verify_verdict v;
	char err[600];

	rq.bundle_path = f->bundle;
	assert_int_equal(verify_record(&rq, &v, err, sizeof(err)), 0);
	assert_true(v.valid);
	/* The image digest defaults to the record's own, so both are checked. */
	assert_non_null(strstr(v.detail, "; policy bundle matches; measurement matches"));
	rq.bundle_path = f->other_bundle;
	assert_int_equal(verify_record(&rq, &v, err, sizeof(err)), 0);
	assert_false(v.valid);
	assert_int_equal(v.res.reason, KW_VERIFY_BUNDLE_MISMATCH);
}

static void test_tampered_and_wrong_key(void **state)
{
	struct fixture *f = *state;
	struct verify_request rq = request(f, f->tampered);
	struct verify_verdict v;
	struct kw_key *other = NULL;
	char err[600], path[1100];

	assert_int_equal(verify_record(&rq, &v, err, sizeof(err)), 0);
	assert_false(v.valid);
	assert_int_equal(v.res.reason, KW_VERIFY_SIGNATURE_INVALID);
	vector(f, "signer.jwk", path, sizeof(path));
	assert_int_equal(kw_key_load_public(path, &other), 0);
	rq = request(f, f->rec);
	rq.opts.trusted = other;
	assert_int_equal(verify_record(&rq, &v, err, sizeof(err)), 0);
	assert_false(v.valid);
	assert_int_equal(v.res.reason, KW_VERIFY_CNF_KEY_MISMATCH);
	kw_key_free(other);
}

static void test_unreadable_files(void **state)
{
	struct fixture *f = *state;
	struct verify_request rq = request(f, "/nonexistent/rec.json");
	struct verify_verdict v;
	char err[600];

	assert_int_equal(verify_record(&rq, &v, err, sizeof(err)), -1);
	assert_string_equal(err, "cannot read record /nonexistent/rec.json: No such file or directory");
	rq = request(f, f->rec);
	rq.log_path = "/nonexistent/log.jsonl";
	assert_int_equal(verify_record(&rq, &v, err, sizeof(err)), -1);
	assert_string_equal(err,
			    "cannot read decision log /nonexistent/log.jsonl: No such file or directory");
	/* A transparency policy is read only for a record that verified. */
	rq = request(f, f->rec);
	rq.tlog_policy = "/nonexistent/policy";
	assert_int_equal(verify_record(&rq, &v, err, sizeof(err)), -1);
	assert_string_equal(err, "cannot read transparency policy /nonexistent/policy: "
				 "No such file or directory");
	rq = request(f, f->tampered);
	rq.tlog_policy = "/nonexistent/policy";
	assert_int_equal(verify_record(&rq, &v, err, sizeof(err)), 0);
	assert_int_equal(v.res.reason, KW_VERIFY_SIGNATURE_INVALID);
	assert_false(v.tlog_checked);
}

/* A record given by its bytes (kwitness run's, from the close reply) gets
 * the verdict its file gets. */
static void test_record_bytes(void **state)
{
	struct fixture *f = *state;
	struct verify_request rq = request(f, NULL);
	struct verify_verdict v;
	struct kw_buf text = { 0 };
	char err[600];

	assert_int_equal(kw_read_file(f->rec, 1 << 20, &text), 0);
	rq.record_text = text.data;
	rq.record_len = text.len;
	rq.bundle_path = f->bundle;
	assert_int_equal(verify_record(&rq, &v, err, sizeof(err)), 0);
	assert_true(v.valid);
	assert_non_null(strstr(v.detail, "; policy bundle matches; measurement matches"));
	kw_buf_reset(&text);
	assert_int_equal(kw_read_file(f->tampered, 1 << 20, &text), 0);
	rq.record_text = text.data;
	rq.record_len = text.len;
	assert_int_equal(verify_record(&rq, &v, err, sizeof(err)), 0);
	assert_false(v.valid);
	assert_int_equal(v.res.reason, KW_VERIFY_SIGNATURE_INVALID);
	kw_buf_free(&text);
}

/* The TPM vectors: Level 1 with the enrollment key, Level 0 at step 2 with
 * another one, and no appraisal (Level 0) without evidence. */
static void tpm_verdict(const struct fixture *f, const char *enroll, struct verify_verdict *v)
{
	char path[1100], ca[1100];
	struct kw_key *signer = NULL, *ek = NULL;
	struct kw_buf ev_text = { 0 };
	struct kw_appraise_opts ao = { 0 };
	/* The vectors' record is older than IAT's clock: now, with no maximum age. */
	struct verify_request rq = { .opts = { .now = (int64_t)time(NULL), .skew = KW_DEFAULT_SKEW,
					       .call_count = -1 } };
	json_t *ev = NULL;
	char err[600];

	vector(f, "signer.jwk", path, sizeof(path));
	assert_int_equal(kw_key_load_public(path, &signer), 0);
	rq.opts.trusted = signer;
	vector(f, "record.json", path, sizeof(path));
	rq.record_path = path;
	if (enroll) {
		char ekp[1100], evp[1100];

		vector(f, enroll, ekp, sizeof(ekp));
		assert_int_equal(kw_key_load_public(ekp, &ek), 0);
		vector(f, "evidence.json", evp, sizeof(evp));
		assert_int_equal(kw_read_file(evp, 1 << 20, &ev_text), 0);
		ev = jcs_parse(ev_text.data, ev_text.len, NULL);
		assert_non_null(ev);
		vector(f, "ek-ca.pem", ca, sizeof(ca));
		ao.ca_file = ca;
		ao.enroll_key = ek;
		rq.evidence = ev;
		rq.appraise = &ao;
	}
	assert_int_equal(verify_record(&rq, v, err, sizeof(err)), 0);
	json_decref(ev);
	kw_buf_free(&ev_text);
	kw_key_free(ek);
	kw_key_free(signer);
}

static void test_tpm_levels(void **state)
{
	struct fixture *f = *state;
	struct verify_verdict v;

	tpm_verdict(f, "enroll.jwk", &v);
	assert_true(v.valid);
	assert_true(v.appraised);
	assert_int_equal(v.appraisal.step, KW_APPRAISE_OK);
	assert_int_equal(v.level, KW_LEVEL_1);

	tpm_verdict(f, "signer.jwk", &v);
	assert_false(v.valid);
	assert_int_equal(v.res.reason, KW_VERIFY_OK);
	assert_true(v.appraised);
	assert_int_equal(kw_appraise_step_number(v.appraisal.step), 2);
	assert_string_equal(kw_appraise_code(v.appraisal.step), "ak_not_enrolled");
	assert_int_equal(v.level, KW_LEVEL_0);

	tpm_verdict(f, NULL, &v);
	assert_true(v.valid);
	assert_false(v.appraised);
	assert_int_equal(v.level, KW_LEVEL_0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_alone_is_level_0),
		cmocka_unit_test(test_bundle_and_measurement),
		cmocka_unit_test(test_tampered_and_wrong_key),
		cmocka_unit_test(test_unreadable_files),
		cmocka_unit_test(test_record_bytes),
		cmocka_unit_test(test_tpm_levels),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
