/* SPDX-License-Identifier: Apache-2.0 */
/* The TRACE v0.3 draft profile: records built with the TPM evidence inline
 * (runtime.evidence, tpm2-quote, binds cnf-key), the draft's runtime.evidence
 * rules in the schema check, and the inline evidence appraised by the one
 * appraisal: the committed swtpm vectors (tests/vectors/tpm) reach Level 1
 * inline exactly as from their evidence file, and a flipped byte fails at
 * its step. v0.2 records are unchanged. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/base64.h"
#include "jcs/jcs.h"
#include "trace/profile_v03.h"
#include "trace/record.h"
#include "tpm/tpm.h"
#include "verify/verdict.h"

static char dir[4096];
static json_t *evidence, *record;
static struct kw_key *enroll_key;
static char ca_path[4200];

static json_t *load_json(const char *name)
{
	char path[4200];
	struct kw_buf b = { 0 };
	json_t *v;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (kw_read_file(path, 1 << 20, &b))
		fail_msg("cannot read %s", path);
	v = jcs_parse(b.data, b.len, NULL);
	kw_buf_free(&b);
	if (!v)
		fail_msg("%s is not JSON", path);
	return v;
}

static int setup(void **state)
{
	char path[4200];

	(void)state;
	evidence = load_json("evidence.json");
	record = load_json("record.json");
	snprintf(path, sizeof(path), "%s/enroll.jwk", dir);
	assert_int_equal(kw_key_load_public(path, &enroll_key), 0);
	snprintf(ca_path, sizeof(ca_path), "%s/ek-ca.pem", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	json_decref(evidence);
	json_decref(record);
	kw_key_free(enroll_key);
	return 0;
}

static void test_profile_names(void **state)
{
	enum kw_record_profile p = KW_PROFILE_V02;

	(void)state;
	assert_int_equal(kw_record_profile_parse("trace-v0.3-draft", &p), 0);
	assert_int_equal(p, KW_PROFILE_V03_DRAFT);
	assert_string_equal(kw_record_profile_tag(p), "tag:agentrust-io.com,2026:trace-v0.3");
	assert_int_equal(kw_record_profile_parse("trace-v0.2", &p), 0);
	assert_int_equal(p, KW_PROFILE_V02);
	assert_string_equal(kw_record_profile_tag(p), KW_TRACE_PROFILE);
	assert_int_equal(kw_record_profile_parse("trace-v0.3", &p), -EINVAL);
	assert_int_equal(kw_record_profile_parse(NULL, &p), -EINVAL);
}

/* A record built from the vectors' runtime, in profile p. */
static json_t *build(enum kw_record_profile p)
{
	const json_t *rt = json_object_get(record, "runtime");
	struct kw_record_runtime runtime = {
		.platform = "tpm2",
		.measurement = json_string_value(json_object_get(rt, "measurement")),
		.nonce = json_string_value(json_object_get(rt, "nonce")),
		.firmware_version = json_string_value(json_object_get(rt, "firmware_version")),
		.evidence = evidence,
	};
	struct kw_record_input in = {
		.sandbox_id = "spiffe://vectors.kwitness.local/tpm",
		.image_digest = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		.bundle = "{}", .bundle_len = 2,
		.transcript_hash = "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945",
		.enforcement_mode = "enforce", .model_provider = "t", .model_id = "t",
		.data_class = "internal", .iat = 1796000000, .runtime = &runtime, .profile = p,
	};
	char err[256];
	json_t *rec = kw_record_build(&in, err, sizeof(err));

	if (!rec)
		fail_msg("build: %s", err);
	/* The key the vectors' quote binds. */
	json_object_set(rec, "cnf", json_object_get(record, "cnf"));
	return rec;
}

static void test_build(void **state)
{
	json_t *v2 = build(KW_PROFILE_V02), *v3 = build(KW_PROFILE_V03_DRAFT), *back;
	const json_t *ev = json_object_get(json_object_get(v3, "runtime"), "evidence");
	char why[256];
	int present;

	(void)state;
	/* v0.2, the default: nothing of the draft. */
	assert_string_equal(json_string_value(json_object_get(v2, "eat_profile")), KW_TRACE_PROFILE);
	assert_null(json_object_get(json_object_get(v2, "runtime"), "evidence"));
	assert_int_equal(kw_schema_validate(v2, why, sizeof(why)), 0);
	/* v0.3: the draft's profile, the evidence inline, byte for byte. */
	assert_string_equal(json_string_value(json_object_get(v3, "eat_profile")), KW_TRACE_PROFILE_V03);
	assert_string_equal(json_string_value(json_object_get(ev, "format")), "tpm2-quote");
	assert_string_equal(json_string_value(json_object_get(ev, "binds")), "cnf-key");
	assert_int_equal(json_object_size(ev), 3);
	assert_int_equal(kw_schema_validate(v3, why, sizeof(why)), 0);
	back = kw_inline_evidence_decode(v3, &present, why, sizeof(why));
	assert_non_null(back);
	assert_true(json_equal(back, evidence));
	json_decref(back);
	json_decref(v2);
	json_decref(v3);
}

static void expect_schema(json_t *rec, const char *want)
{
	char why[256] = "";
	int ret = kw_schema_validate(rec, why, sizeof(why));

	if (!want) {
		assert_int_equal(ret, 0);
		return;
	}
	assert_int_equal(ret, -EINVAL);
	if (!strstr(why, want))
		fail_msg("schema said \"%s\", expected \"%s\"", why, want);
}

static void test_schema(void **state)
{
	json_t *v3 = build(KW_PROFILE_V03_DRAFT), *rec;
	json_t *ev = json_object_get(json_object_get(v3, "runtime"), "evidence");
	const char *digest = "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945";

	(void)state;
	/* A v0.2 record has no runtime.evidence member. */
	rec = json_deep_copy(v3);
	json_object_set_new(rec, "eat_profile", json_string(KW_TRACE_PROFILE));
	expect_schema(rec, "$.runtime: additionalProperties false (member \"evidence\"");
	json_decref(rec);
	/* The draft's rules: oneOf quote / quote_digest, closed, enums. */
	json_object_set_new(ev, "quote_digest", json_string(digest));
	expect_schema(v3, "$.runtime.evidence: oneOf");
	json_object_del(ev, "quote");
	expect_schema(v3, NULL);
	json_object_del(ev, "quote_digest");
	expect_schema(v3, "$.runtime.evidence: oneOf");
	json_object_set_new(ev, "quote", json_string("AA=="));
	expect_schema(v3, "$.runtime.evidence.quote: pattern");
	json_object_set_new(ev, "quote", json_string("AAAA"));
	json_object_set_new(ev, "binds", json_string("record"));
	expect_schema(v3, "$.runtime.evidence.binds: enum");
	json_object_set_new(ev, "binds", json_string("cnf-key"));
	json_object_set_new(ev, "format", json_string("tpm2"));
	expect_schema(v3, "$.runtime.evidence.format: enum");
	json_object_set_new(ev, "format", json_string("tpm2-quote"));
	json_object_set_new(ev, "extra", json_true());
	expect_schema(v3, "$.runtime.evidence: additionalProperties false");
	json_decref(v3);
}

/* Appraises rec's inline evidence as verify does; returns the step. */
static enum kw_appraise_step appraise_inline(const json_t *rec, struct kw_appraise_result *res)
{
	struct kw_appraise_opts o = { .ca_file = ca_path, .enroll_key = enroll_key };
	struct kw_buf text = { 0 };
	int ret;

	assert_int_equal(jcs_dump(rec, &text), 0);
	ret = verify_appraise_inline(text.data, text.len, &o, res);
	kw_buf_free(&text);
	assert_true(ret == 0 || ret == 1);
	assert_int_equal(ret == 0, res->step == KW_APPRAISE_OK);
	return res->step;
}

/* rec with runtime.evidence.quote replaced by the encoding of ev. */
static void set_inline(json_t *rec, const json_t *ev)
{
	json_object_set_new(json_object_get(rec, "runtime"), "evidence", kw_inline_evidence_encode(ev));
}

static void test_inline_appraisal(void **state)
{
	json_t *v3 = build(KW_PROFILE_V03_DRAFT), *ev = json_deep_copy(evidence);
	json_t *rt = json_object_get(v3, "runtime");
	struct kw_appraise_result res;
	uint8_t attest[1024];
	char b64[KW_B64_LEN(sizeof(attest))], *q;
	const char *s = json_string_value(json_object_get(json_object_get(ev, "quote"), "attest"));
	size_t n;

	(void)state;
	assert_int_equal(appraise_inline(v3, &res), KW_APPRAISE_OK);
	assert_string_equal(res.measurement, json_string_value(json_object_get(rt, "measurement")));

	/* One byte of TPMS_ATTEST (its last, inside the PCR digest) flipped:
	 * the AK's signature no longer holds (step 3). */
	assert_int_equal(kw_b64_decode(KW_B64_URL, s, strlen(s), attest, sizeof(attest), &n), 0);
	attest[n - 1] ^= 0x01;
	kw_b64_encode(KW_B64_URL, attest, n, b64);
	json_object_set_new(json_object_get(ev, "quote"), "attest", json_string(b64));
	set_inline(v3, ev);
	assert_int_equal(appraise_inline(v3, &res), KW_APPRAISE_QUOTE_INVALID);
	assert_string_equal(kw_appraise_code(res.step), "quote_signature_invalid");

	/* Any character of the quote text changed (every 3rd, for time; that
	 * still meets every offset of a base64 quantum): the evidence no longer
	 * parses, or it fails a step; never Level 1. */
	set_inline(v3, evidence);
	q = strdup(json_string_value(json_object_get(json_object_get(rt, "evidence"), "quote")));
	for (size_t i = 0, len = strlen(q); i < len; i += 3) {
		char was = q[i];

		q[i] = was == 'A' ? 'B' : 'A';
		json_object_set_new(json_object_get(rt, "evidence"), "quote", json_string(q));
		if (appraise_inline(v3, &res) == KW_APPRAISE_OK)
			fail_msg("quote character %zu changed still appraises", i);
		q[i] = was;
	}
	free(q);

	/* The quote_digest form, and no evidence at all: nothing to appraise. */
	json_object_set_new(rt, "evidence",
			    json_pack("{s:s, s:s}", "format", "tpm2-quote", "quote_digest",
				      "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"));
	assert_int_equal(appraise_inline(v3, &res), KW_APPRAISE_EVIDENCE_MALFORMED);
	assert_non_null(strstr(res.message, "by-reference"));
	json_object_del(rt, "evidence");
	assert_int_equal(appraise_inline(v3, &res), KW_APPRAISE_EVIDENCE_MALFORMED);
	assert_non_null(strstr(res.message, "no runtime.evidence"));
	json_decref(ev);
	json_decref(v3);
}

/* Quote bytes that are JSON but not its RFC 8785 form are refused: one
 * spelling of the evidence, as of the record around it. */
static void test_inline_not_canonical(void **state)
{
	json_t *v3 = build(KW_PROFILE_V03_DRAFT), *got;
	const char *text = "{ \"format\": \"kwitness-tpm2-evidence-v1\" }";
	char b64[128], why[256];
	int present;

	(void)state;
	kw_b64_encode(KW_B64_URL, (const uint8_t *)text, strlen(text), b64);
	json_object_set_new(json_object_get(json_object_get(v3, "runtime"), "evidence"), "quote",
			    json_string(b64));
	got = kw_inline_evidence_decode(v3, &present, why, sizeof(why));
	assert_null(got);
	assert_int_equal(present, 1);
	assert_non_null(strstr(why, "RFC 8785"));
	json_decref(v3);
}

int main(void)
{
	const char *root = getenv("KW_ROOT");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_names),
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_schema),
		cmocka_unit_test(test_inline_appraisal),
		cmocka_unit_test(test_inline_not_canonical),
	};

	snprintf(dir, sizeof(dir), "%s/tests/vectors/tpm", root ? root : ".");
	return cmocka_run_group_tests(tests, setup, teardown);
}
