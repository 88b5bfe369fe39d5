/* SPDX-License-Identifier: Apache-2.0 */
/* TPM appraisal without a TPM: PCR selections, and the committed swtpm vectors
 * (tests/vectors/tpm/PROVENANCE) appraised whole, then broken one member at a
 * time, each failing at its own step; truncated and bit-flipped evidence never
 * passes and never crashes (run under ASan+UBSan). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <openssl/evp.h>

#include "lib/base64.h"
#include "jcs/jcs.h"
#include "trace/key.h"
#include "tpm/tpm.h"
#include "tpm/commit.h"
#include "tpm/tpm_internal.h"

static char dir[4096];
static json_t *evidence, *record;
static struct kw_key *enroll_key, *signer_key;
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
	snprintf(path, sizeof(path), "%s/signer.jwk", dir);
	assert_int_equal(kw_key_load_public(path, &signer_key), 0);
	snprintf(ca_path, sizeof(ca_path), "%s/ek-ca.pem", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	json_decref(evidence);
	json_decref(record);
	kw_key_free(enroll_key);
	kw_key_free(signer_key);
	return 0;
}

static void test_pcr_selection(void **state)
{
	static const char *const bad[] = {
		"sha1:0", "sha256:", "sha256:24", "sha256:3-1", "sha256:0,,1", "sha256:007",
		"sha256:1,", "sha256:-1", "sha256:0-", "SHA256:0", "sha256:0 ", "sha256:a",
	};
	struct kw_pcr_selection s;
	char err[160], out[128];

	(void)state;
	assert_int_equal(kw_pcr_selection_parse("sha256:0-7", &s, err, sizeof(err)), 0);
	assert_int_equal(s.mask, 0xffu);
	kw_pcr_selection_format(&s, out, sizeof(out));
	assert_string_equal(out, KW_TPM_DEFAULT_PCRS);
	assert_int_equal(kw_pcr_selection_parse("sha256:23,0,10-11", &s, err, sizeof(err)), 0);
	assert_int_equal(s.mask, (1u << 23) | 1u | (3u << 10));
	assert_int_equal(kw_pcr_selection_count(&s), 4);
	kw_pcr_selection_format(&s, out, sizeof(out));
	assert_string_equal(out, "sha256:0,10,11,23");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(kw_pcr_selection_parse(bad[i], &s, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "PCR selection"));
	}
}

/* Appraises ev/rec with the vector trust; returns the step reached. */
static enum kw_appraise_step appraise(const json_t *ev, const json_t *rec, const json_t *ref,
				      const struct kw_key *ekey, const char *ca,
				      struct kw_appraise_result *res)
{
	struct kw_appraise_opts o = { .ca_file = ca, .enroll_key = ekey, .pcrs_ref = ref };
	int ret = kw_appraise(ev, rec, &o, res);

	assert_true(ret == 0 || ret == 1);
	assert_int_equal(ret == 0, res->step == KW_APPRAISE_OK);
	return res->step;
}

static void test_vectors_level1(void **state)
{
	struct kw_appraise_result res;
	static const uint8_t zeros[256];
	uint8_t d[32];
	char want[80] = "sha256:";
	unsigned int n;

	(void)state;
	assert_int_equal(appraise(evidence, record, NULL, enroll_key, ca_path, &res), KW_APPRAISE_OK);
	/* Known answer: a fresh swtpm's PCRs 0-7 are zero; SHA-256 of 8 x 32 zero bytes. */
	assert_int_equal(EVP_Digest(zeros, sizeof(zeros), d, &n, EVP_sha256(), NULL), 1);
	for (int i = 0; i < 32; i++)
		snprintf(want + 7 + 2 * i, 3, "%02x", d[i]);
	assert_string_equal(res.measurement, want);
	assert_string_equal(res.pcrs, "sha256:0,1,2,3,4,5,6,7");
	assert_string_equal(kw_appraise_code(res.step), "ok");
}

static json_t *with(const json_t *base, const char *obj, const char *key, json_t *val)
{
	json_t *c = json_deep_copy(base);
	json_t *o = obj ? json_object_get(c, obj) : c;

	assert_non_null(o);
	if (val)
		assert_int_equal(json_object_set_new(o, key, val), 0);
	else
		json_object_del(o, key);
	return c;
}

/* b64url member flipped at byte i (bit 0). */
static json_t *b64_flip(const json_t *s, size_t i)
{
	uint8_t buf[4096];
	char out[KW_B64_LEN(4096)];
	size_t n = 0;
	const char *v = json_string_value(s);

	assert_int_equal(kw_b64_decode(KW_B64_URL, v, strlen(v), buf, sizeof(buf), &n), 0);
	assert_true(i < n);
	buf[i] ^= 1;
	kw_b64_encode(KW_B64_URL, buf, n, out);
	return json_string(out);
}

static void expect_step(json_t *ev, json_t *rec, const json_t *ref, const struct kw_key *ekey,
			const char *ca, enum kw_appraise_step want, const char *fragment)
{
	struct kw_appraise_result res;

	assert_int_equal(appraise(ev ? ev : evidence, rec ? rec : record, ref, ekey, ca, &res), want);
	if (fragment && !strstr(res.message, fragment))
		fail_msg("step %s: message \"%s\" lacks \"%s\"", kw_appraise_code(want), res.message,
			 fragment);
	json_decref(ev);
	json_decref(rec);
}

static void test_each_step(void **state)
{
	const json_t *quote = json_object_get(evidence, "quote");
	json_t *ref;

	(void)state;
	assert_int_equal(kw_appraise_step_number(KW_APPRAISE_EK_UNTRUSTED), 1);
	assert_int_equal(kw_appraise_step_number(KW_APPRAISE_PCRS_MISMATCH), 6);
	/* 0 */
	expect_step(NULL, with(record, "runtime", "platform", json_string("software-only")), NULL,
		    enroll_key, ca_path, KW_APPRAISE_EVIDENCE_MALFORMED, "not \"tpm2\"");
	expect_step(with(evidence, NULL, "format", json_string("v0")), NULL, NULL, enroll_key,
		    ca_path, KW_APPRAISE_EVIDENCE_MALFORMED, NULL);
	/* 1: no certificate; a garbage one; a CA file that is not the issuer */
	expect_step(with(evidence, NULL, "ek_certificates", json_array()), NULL, NULL, enroll_key,
		    ca_path, KW_APPRAISE_EK_UNTRUSTED, "no EK certificate");
	expect_step(with(evidence, NULL, "ek_certificates", json_pack("[s]", "AAAA")), NULL, NULL,
		    enroll_key, ca_path, KW_APPRAISE_EK_UNTRUSTED, "not DER");
	expect_step(NULL, NULL, NULL, enroll_key, "/nonexistent/ca.pem", KW_APPRAISE_EK_UNTRUSTED,
		    "cannot load");
	/* 2: not enrolled; enrollment by an untrusted key; enrollment edited */
	expect_step(with(evidence, "ak_binding", "enrollment", json_null()), NULL, NULL, enroll_key,
		    ca_path, KW_APPRAISE_AK_NOT_ENROLLED, "never enrolled");
	expect_step(NULL, NULL, NULL, signer_key, ca_path, KW_APPRAISE_AK_NOT_ENROLLED,
		    "not signed by the trusted");
	expect_step(NULL, NULL, NULL, NULL, ca_path, KW_APPRAISE_AK_NOT_ENROLLED, "no enrollment key");
	{
		json_t *ev = json_deep_copy(evidence);
		json_t *enr = json_object_get(json_object_get(ev, "ak_binding"), "enrollment");

		json_object_set_new(enr, "ak_name", json_string("000b00"));
		expect_step(ev, NULL, NULL, enroll_key, ca_path, KW_APPRAISE_AK_NOT_ENROLLED,
			    "not signed");
	}
	/* another AK: its name is not the enrolled one */
	expect_step(with(evidence, NULL, "ak_public",
			 b64_flip(json_object_get(evidence, "ak_public"), 40)),
		    NULL, NULL, enroll_key, ca_path, KW_APPRAISE_AK_NOT_ENROLLED, "another AK");
	/* 3: attest or signature changed */
	expect_step(with(evidence, "quote", "attest", b64_flip(json_object_get(quote, "attest"), 50)),
		    NULL, NULL, enroll_key, ca_path, KW_APPRAISE_QUOTE_INVALID, NULL);
	expect_step(with(evidence, "quote", "signature",
			 b64_flip(json_object_get(quote, "signature"), 20)),
		    NULL, NULL, enroll_key, ca_path, KW_APPRAISE_QUOTE_INVALID, "does not verify");
	expect_step(with(evidence, "quote", "pcr_selection", json_string("sha256:0-7,8")), NULL, NULL,
		    enroll_key, ca_path, KW_APPRAISE_EVIDENCE_MALFORMED, "one value per selected PCR");
	/* 4 */
	expect_step(NULL, with(record, "runtime", "nonce", json_string("AAAA")), NULL, enroll_key,
		    ca_path, KW_APPRAISE_NONCE_MISMATCH, "runtime.nonce");
	expect_step(NULL, with(record, "cnf", "jwk", json_pack("{s:s, s:s, s:s}", "crv", "Ed25519",
								"kty", "OKP", "x",
								"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")),
		    NULL, enroll_key, ca_path, KW_APPRAISE_AK_NOT_ENROLLED_FOR_KEY,
		    "other signing keys"); /* step 2 comes first: the AK is enrolled for one key */
	/* 5 */
	expect_step(NULL,
		    with(record, "runtime", "measurement",
			 json_string("sha256:1111111111111111111111111111111111111111111111111111111111111111")),
		    NULL, enroll_key, ca_path, KW_APPRAISE_MEASUREMENT_MISMATCH, "quoted PCR digest");
	expect_step(NULL, with(record, "runtime", "firmware_version", json_string("1.2.3.4")), NULL,
		    enroll_key, ca_path, KW_APPRAISE_MEASUREMENT_MISMATCH, "firmware");
	/* 6: a value changed; a reference that differs; one that matches */
	{
		json_t *ev = json_deep_copy(evidence);

		json_object_set_new(json_object_get(json_object_get(ev, "quote"), "pcr_values"), "5",
				    json_string("00000000000000000000000000000000000000000000000000000000000000aa"));
		expect_step(ev, NULL, NULL, enroll_key, ca_path, KW_APPRAISE_PCRS_MISMATCH,
			    "do not hash to the quoted pcrDigest");
	}
	{
		json_t *ev = json_deep_copy(evidence);
		json_t *vals = json_object_get(json_object_get(ev, "quote"), "pcr_values");

		json_object_set(vals, "07", json_object_get(vals, "7"));
		json_object_del(vals, "7");
		expect_step(ev, NULL, NULL, enroll_key, ca_path, KW_APPRAISE_EVIDENCE_MALFORMED,
			    "not a selected PCR");
	}
	ref = json_deep_copy(json_object_get(quote, "pcr_values"));
	expect_step(NULL, NULL, ref, enroll_key, ca_path, KW_APPRAISE_OK, NULL);
	json_object_set_new(ref, "9", json_string("0000000000000000000000000000000000000000000000000000000000000000"));
	expect_step(NULL, NULL, ref, enroll_key, ca_path, KW_APPRAISE_PCRS_MISMATCH, "not in the quote");
	json_object_del(ref, "9");
	json_object_set_new(ref, "2", json_string("00000000000000000000000000000000000000000000000000000000000000ff"));
	expect_step(NULL, NULL, ref, enroll_key, ca_path, KW_APPRAISE_PCRS_MISMATCH, "PCR 2 differs");
	json_decref(ref);
}

/* Every prefix of the binary members, and every single-bit flip of the
 * attest structure: never Level 1, never a crash. */
static void test_truncations_and_flips(void **state)
{
	static const char *const members[][2] = {
		{ "quote", "attest" }, { "quote", "signature" }, { NULL, "ak_public" },
	};
	struct kw_appraise_result res;
	uint8_t buf[4096];
	char out[KW_B64_LEN(4096)];

	(void)state;
	for (size_t m = 0; m < 3; m++) {
		const json_t *parent = members[m][0] ? json_object_get(evidence, members[m][0]) : evidence;
		const char *v = json_string_value(json_object_get(parent, members[m][1]));
		size_t n = 0;

		assert_int_equal(kw_b64_decode(KW_B64_URL, v, strlen(v), buf, sizeof(buf), &n), 0);
		for (size_t len = 0; len < n; len++) {
			json_t *ev;

			kw_b64_encode(KW_B64_URL, buf, len, out);
			ev = with(evidence, members[m][0], members[m][1], json_string(out));
			assert_int_not_equal(appraise(ev, record, NULL, enroll_key, ca_path, &res),
					     KW_APPRAISE_OK);
			json_decref(ev);
		}
		if (m != 0)
			continue;
		for (size_t bit = 0; bit < n * 8; bit += 3) {
			json_t *ev;

			buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			kw_b64_encode(KW_B64_URL, buf, n, out);
			buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			ev = with(evidence, "quote", "attest", json_string(out));
			assert_int_not_equal(appraise(ev, record, NULL, enroll_key, ca_path, &res),
					     KW_APPRAISE_OK);
			json_decref(ev);
		}
	}
}

/* The log's word: the evidence must hold the quote the close entry names
 * (SHA-256 of TPMS_ATTEST, computed here with OpenSSL), and the enrollment
 * must name the host the open entry names. */
static void test_logged_evidence_and_host(void **state)
{
	struct kw_appraise_opts o = { .ca_file = ca_path, .enroll_key = enroll_key };
	struct kw_appraise_result res;
	const char *a = json_string_value(json_object_get(json_object_get(evidence, "quote"), "attest"));
	uint8_t buf[2048], d[32];
	char digest[80] = "sha256:";
	size_t n = 0;
	unsigned int dn;

	(void)state;
	assert_int_equal(kw_b64_decode(KW_B64_URL, a, strlen(a), buf, sizeof(buf), &n), 0);
	assert_int_equal(EVP_Digest(buf, n, d, &dn, EVP_sha256(), NULL), 1);
	for (int i = 0; i < 32; i++)
		snprintf(digest + 7 + 2 * i, 3, "%02x", d[i]);
	o.logged_evidence = digest;
	o.logged_machine_id = "0123456789abcdef0123456789abcdef";
	assert_int_equal(kw_appraise(evidence, record, &o, &res), 0);

	digest[7] = digest[7] == '0' ? '1' : '0';
	assert_int_equal(kw_appraise(evidence, record, &o, &res), 1);
	assert_int_equal(res.step, KW_APPRAISE_EVIDENCE_NOT_LOGGED);
	assert_string_equal(kw_appraise_code(res.step), "evidence_not_logged");
	assert_int_equal(kw_appraise_step_number(res.step), 0);
	o.logged_evidence = "";
	assert_int_equal(kw_appraise(evidence, record, &o, &res), 1);
	assert_int_equal(res.step, KW_APPRAISE_EVIDENCE_NOT_LOGGED);

	o.logged_evidence = NULL;
	o.logged_machine_id = "fedcba9876543210fedcba9876543210";
	assert_int_equal(kw_appraise(evidence, record, &o, &res), 1);
	assert_int_equal(res.step, KW_APPRAISE_AK_NOT_ENROLLED_FOR_HOST);
	assert_string_equal(kw_appraise_code(res.step), "ak_not_enrolled_for_host");
	assert_int_equal(kw_appraise_step_number(res.step), 2);
}

/* The enrollment lists the signing keys it vouches for: a record signed by
 * a key it does not list, with a quote for that key, stops at step 2. */
static void test_enrolled_for_key(void **state)
{
	struct kw_appraise_result res;
	json_t *enr = json_object_get(json_object_get(evidence, "ak_binding"), "enrollment");
	json_t *keys = json_object_get(enr, "signing_keys");
	char tp[KW_THUMBPRINT_MAX];

	(void)state;
	assert_int_equal(kw_key_thumbprint(signer_key, tp), 0);
	assert_int_equal(json_array_size(keys), 1);
	assert_string_equal(json_string_value(json_array_get(keys, 0)), tp);
	/* A record whose cnf.jwk is another key: refused for the key, before
	 * the nonce step would say so. */
	{
		json_t *rec = json_deep_copy(record);
		json_t *jwk = json_object_get(json_object_get(rec, "cnf"), "jwk");
		const char *x = json_string_value(json_object_get(jwk, "x"));
		char other[64];

		snprintf(other, sizeof(other), "%s", x);
		other[0] = other[0] == 'A' ? 'B' : 'A';
		json_object_set_new(jwk, "x", json_string(other));
		assert_int_equal(appraise(evidence, rec, NULL, enroll_key, ca_path, &res),
				 KW_APPRAISE_AK_NOT_ENROLLED_FOR_KEY);
		assert_non_null(strstr(res.message, "other signing keys"));
		json_decref(rec);
	}
}

/* What the estate stores for a tpm2 record (kw_appraise_level): the level
 * and why, read from real appraisals of the vectors and from each outcome
 * kw_appraise can give. */
static void test_level_of_appraisal(void **state)
{
	struct kw_appraise_result res;
	char why[512];
	int ret;

	(void)state;
	memset(why, 'x', sizeof(why));
	ret = kw_appraise(evidence, record,
			  &(struct kw_appraise_opts){ .ca_file = ca_path, .enroll_key = enroll_key }, &res);
	assert_int_equal(ret, 0);
	assert_int_equal(kw_appraise_level(ret, &res, why, sizeof(why)), 1);
	assert_string_equal(why, "");

	/* The record's signer is not the enrollment key: step 2. */
	ret = kw_appraise(evidence, record,
			  &(struct kw_appraise_opts){ .ca_file = ca_path, .enroll_key = signer_key }, &res);
	assert_int_equal(ret, 1);
	assert_int_equal(kw_appraise_level(ret, &res, why, sizeof(why)), 0);
	assert_memory_equal(why, "TPM appraisal failed at step 2: ak_not_enrolled: ", 49);
	assert_non_null(strstr(why, res.message));

	/* Each failing step by its number and code, the message bounded. */
	static const struct {
		enum kw_appraise_step step;
		const char *want;
	} steps[] = {
		{ KW_APPRAISE_EVIDENCE_MALFORMED, "TPM appraisal failed at step 0: evidence_malformed: " },
		{ KW_APPRAISE_EK_UNTRUSTED, "TPM appraisal failed at step 1: ek_untrusted: " },
		{ KW_APPRAISE_QUOTE_INVALID, "TPM appraisal failed at step 3: quote_signature_invalid: " },
		{ KW_APPRAISE_NONCE_MISMATCH, "TPM appraisal failed at step 4: quote_nonce_mismatch: " },
		{ KW_APPRAISE_MEASUREMENT_MISMATCH,
		  "TPM appraisal failed at step 5: quote_measurement_mismatch: " },
		{ KW_APPRAISE_PCRS_MISMATCH, "TPM appraisal failed at step 6: pcr_values_mismatch: " },
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		res.step = steps[i].step;
		memset(res.message, 'm', sizeof(res.message) - 1);
		res.message[sizeof(res.message) - 1] = '\0';
		assert_int_equal(kw_appraise_level(1, &res, why, sizeof(why)), 0);
		assert_memory_equal(why, steps[i].want, strlen(steps[i].want));
		assert_int_equal(strlen(why), strlen(steps[i].want) + 300);
	}
	/* No appraisal made: level 0, and why. */
	res.step = KW_APPRAISE_OK;
	assert_int_equal(kw_appraise_level(-ENOMEM, &res, why, sizeof(why)), 0);
	assert_string_equal(why, "appraisal failed: Cannot allocate memory");
	/* A short buffer still gets a terminated sentence. */
	res.step = KW_APPRAISE_EK_UNTRUSTED;
	assert_int_equal(kw_appraise_level(1, &res, why, 10), 0);
	assert_string_equal(why, "TPM appra");
}

/* Committed sessions: the event digests and the extend chain against values
 * computed with Python's hashlib (sha256 of the texts of docs/attestation.md),
 * and the file checks that need no TPM. */
static void test_commit_events(void **state)
{
	uint8_t e[32], c[32], v[32] = { 0 };
	char hex[65];
	struct kw_commit_result res;
	struct kw_commit_claim claim = { "S", "7", "sha256:aa", "sha256:bb", "sha256:tt" };
	json_t *bad;

	(void)state;
	assert_int_equal(kw_commit_open_event("S", "7", "sha256:aa", "sha256:bb", e), 0);
	kw_hex(e, 32, hex);
	assert_string_equal(hex, "83bcc1d4b48dc61e2d7bfb88998a014ba0b8152f802dc0a5b72dc495fd6a5f34");
	assert_int_equal(kw_commit_close_event("S", "sha256:tt", c), 0);
	kw_hex(c, 32, hex);
	assert_string_equal(hex, "0dff94f6cf897098f1d287dcf4d202df219134044d8ad04e106952caac9d8d99");
	assert_int_equal(kw_commit_extend(v, e), 0);
	assert_int_equal(kw_commit_extend(v, c), 0);
	kw_hex(v, 32, hex);
	assert_string_equal(hex, "d65dac1d59127479dee54b2868a6aa095af19c03da56f89da37d5bbb8d2910f6");
	/* A field that could spell another event is refused. */
	assert_int_not_equal(kw_commit_open_event("S\n7", "7", "sha256:aa", "sha256:bb", e), 0);
	assert_int_not_equal(kw_commit_open_event("S", "", "sha256:aa", "sha256:bb", e), 0);
	assert_int_not_equal(kw_commit_close_event("S", NULL, c), 0);

	assert_int_equal(kw_commit_check(NULL, &claim, NULL, &res), 1);
	assert_int_equal(res.reason, KW_COMMIT_MISSING);
	bad = json_pack("{s:s}", "format", KW_TPM_COMMIT_FORMAT);
	assert_int_equal(kw_commit_check(bad, &claim, NULL, &res), 1);
	assert_string_equal(kw_commit_code(res.reason), "tpm_commit_malformed");
	claim.counter = NULL;
	assert_int_equal(kw_commit_check(bad, &claim, NULL, &res), 1);
	assert_int_equal(res.reason, KW_COMMIT_MISSING);
	json_decref(bad);
}

int main(void)
{
	const char *root = getenv("KW_ROOT");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pcr_selection),
		cmocka_unit_test(test_vectors_level1),
		cmocka_unit_test(test_each_step),
		cmocka_unit_test(test_truncations_and_flips),
		cmocka_unit_test(test_logged_evidence_and_host),
		cmocka_unit_test(test_enrolled_for_key),
		cmocka_unit_test(test_level_of_appraisal),
		cmocka_unit_test(test_commit_events),
	};

	snprintf(dir, sizeof(dir), "%s/tests/vectors/tpm", root ? root : ".");
	return cmocka_run_group_tests(tests, setup, teardown);
}
