/* SPDX-License-Identifier: Apache-2.0 */
/* TRACE v0.2 records: build (known answers), schema (the six examples, records
 * broken on purpose), sign, and verify (the signed boundary vectors, forgeries,
 * every reason code). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "lib/base64.h"
#include "jcs/jcs.h"
#include "trace/key.h"
#include "trace/record.h"

#define BUNDLE "network:\n  egress: deny-all\nfilesystem:\n  write: /work\n"
#define IMAGE "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define KA_BUNDLE "sha256:b7a7d560278f34511e4abcc7a8909a3c07e9ee16143da6693b19cb3222ee0cae"
#define KA_TRANSCRIPT "sha256:ffce23badc0a325b93ac587374132bbaae4f7798a4d57f84cf135a312f4a6aea"
#define KA_MEASUREMENT "sha256:06a9b5018d74ec48f31bcec06e5eade5b12b565a6443caafc5ba8cdda715ac5f"
#define IAT 1785000000

static const char *const examples[] = {
	"amd-sev-snp.json", "intel-tdx.json", "nvidia-h100.json",
	"sandbox-runtime.at-91f7594.json", "sandbox-runtime.json", "tpm2.json",
};
static const char *const boundary[] = {
	"01-non-ascii-values.json", "02-non-bmp-values.json", "03-utf16-key-order.json",
	"04-utf16-key-order-nested.json",
};

static json_t *load_vector(const char *rel)
{
	const char *root = getenv("KW_ROOT") ? getenv("KW_ROOT") : ".";
	char path[1024];
	struct kw_buf b = { 0 };
	struct jcs_error e = { 0 };
	json_t *v;

	snprintf(path, sizeof(path), "%s/tests/vectors/trace-spec/%s", root, rel);
	if (kw_read_file(path, 1 << 20, &b))
		fail_msg("cannot read %s", path);
	v = jcs_parse(b.data, b.len, &e);
	if (!v)
		fail_msg("%s: %s", path, e.message);
	kw_buf_free(&b);
	return v;
}

/* A fixed key: RFC 8032 TEST 2's seed. */
static struct kw_key *test_key(int which)
{
	static const char *const seeds[] = {
		"4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
		"c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
	};
	uint8_t seed[32];
	struct kw_key *key = NULL;

	for (int i = 0; i < 32; i++) {
		unsigned v;

		sscanf(seeds[which] + 2 * i, "%2x", &v);
		seed[i] = (uint8_t)v;
	}
	assert_int_equal(kw_key_from_seed(seed, &key), 0);
	return key;
}

static json_t *build_known(void)
{
	struct kw_record_input in = {
		.sandbox_id = "spiffe://example.org/sandbox/1",
		.image_digest = IMAGE,
		.bundle = BUNDLE,
		.bundle_len = strlen(BUNDLE),
		.transcript_hash = KA_TRANSCRIPT,
		.call_count = 2,
		.enforcement_mode = "enforce",
		.model_provider = "anthropic",
		.model_id = "claude-sonnet-4-6",
		.data_class = "internal",
		.iat = IAT,
	};
	char err[256];
	json_t *rec = kw_record_build(&in, err, sizeof(err));

	if (!rec)
		fail_msg("build: %s", err);
	return rec;
}

static char *dump(const json_t *v)
{
	struct kw_buf b = { 0 };

	assert_int_equal(jcs_dump(v, &b), 0);
	return b.data;
}

static const char *str_at(const json_t *rec, const char *a, const char *b)
{
	const json_t *v = json_object_get(rec, a);

	return json_string_value(b ? json_object_get(v, b) : v);
}

static struct kw_verify_opts default_opts(const struct kw_key *trusted)
{
	struct kw_verify_opts o = { .trusted = trusted, .now = IAT + 5, .max_age = 86400,
				    .skew = 60, .call_count = -1 };

	return o;
}

static enum kw_verify_reason verify_json(const json_t *rec, const struct kw_verify_opts *o,
					 char *msg, size_t msglen)
{
	struct kw_verify_result res;
	char *text = dump(rec);
	int ret = kw_record_verify(text, strlen(text), o, &res);

	free(text);
	assert_true(ret == 0 || ret == 1);
	assert_int_equal(ret == 0, res.reason == KW_VERIFY_OK);
	assert_true(strlen(res.message) > 0);
	if (msg)
		snprintf(msg, msglen, "%s", res.message);
	return res.reason;
}

static void test_build_mapping(void **state)
{
	json_t *rec = build_known();
	char why[256];

	(void)state;
	assert_string_equal(str_at(rec, "eat_profile", NULL), KW_TRACE_PROFILE);
	assert_int_equal(json_integer_value(json_object_get(rec, "iat")), IAT);
	assert_string_equal(str_at(rec, "subject", NULL), "spiffe://example.org/sandbox/1");
	assert_string_equal(str_at(rec, "policy", "bundle_hash"), KA_BUNDLE);
	assert_string_equal(str_at(rec, "policy", "enforcement_mode"), "enforce");
	assert_string_equal(str_at(rec, "tool_transcript", "hash"), KA_TRANSCRIPT);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(rec, "tool_transcript"),
							    "call_count")), 2);
	assert_string_equal(str_at(rec, "runtime", "platform"), "software-only");
	assert_string_equal(str_at(rec, "runtime", "measurement"), KA_MEASUREMENT);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(rec, "build_provenance"),
							    "slsa_level")), 0);
	assert_string_equal(str_at(rec, "build_provenance", "digest"), IMAGE);
	assert_string_equal(str_at(rec, "appraisal", "status"), "none");
	assert_string_equal(str_at(rec, "appraisal", "verifier"), KW_DEFAULT_VERIFIER);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(rec, "appraisal"),
							    "timestamp")), IAT);
	assert_string_equal(str_at(rec, "model", "provider"), "anthropic");
	assert_string_equal(str_at(rec, "model", "model_id"), "claude-sonnet-4-6");
	assert_string_equal(str_at(rec, "data_class", NULL), "internal");
	/* Unsigned: no cnf yet (sign sets it), so the full schema says so. */
	assert_null(json_object_get(rec, "cnf"));
	assert_null(json_object_get(rec, "signature"));
	assert_int_equal(kw_schema_validate(rec, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "cnf"));
	assert_int_equal(json_object_size(rec), 10);
	json_decref(rec);
}

static void test_build_refuses_bad_input(void **state)
{
	struct kw_record_input good = {
		.sandbox_id = "did:example:123", .image_digest = IMAGE, .bundle = "", .bundle_len = 0,
		.transcript_hash = KA_TRANSCRIPT, .enforcement_mode = "advisory",
		.model_provider = "p", .model_id = "m", .data_class = "public", .iat = IAT,
		.verifier = "https://verifier.example/v1",
	};
	struct kw_record_input in;
	char err[256];
	json_t *rec;

	(void)state;
	rec = kw_record_build(&good, err, sizeof(err));
	assert_non_null(rec);
	json_decref(rec);
#define REFUSE(field, value)                                              \
	do {                                                              \
		in = good;                                                \
		in.field = value;                                         \
		err[0] = '\0';                                            \
		assert_null(kw_record_build(&in, err, sizeof(err)));      \
		assert_true(strlen(err) > 0);                             \
	} while (0)
	REFUSE(sandbox_id, "https://example.org/sandbox");
	REFUSE(sandbox_id, NULL);
	REFUSE(image_digest, "sha256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
	REFUSE(transcript_hash, "sha256:00");
	REFUSE(enforcement_mode, "enforcing");
	REFUSE(enforcement_mode, NULL);
	REFUSE(verifier, "not a uri");
	REFUSE(verifier, "https://exa mple.org/");
	REFUSE(iat, 1699999999);
	REFUSE(model_id, NULL);
	REFUSE(data_class, NULL);
	REFUSE(call_count, (uint64_t)JCS_MAX_SAFE_INT + 1);
	REFUSE(model_provider, "\xff");
#undef REFUSE
}

static void test_sign_and_verify_round_trip(void **state)
{
	struct kw_key *key = test_key(0);
	json_t *rec = build_known(), *jwk;
	struct kw_verify_opts o = default_opts(key);
	char err[256], why[256];

	(void)state;
	/* A stale cnf and signature are replaced. */
	json_object_set_new(rec, "cnf", json_pack("{s:{s:s}}", "jwk", "kty", "RSA"));
	json_object_set_new(rec, "signature", json_string("AAAA"));
	assert_int_equal(kw_record_sign(rec, key, err, sizeof(err)), 0);
	jwk = kw_key_public_jwk(key);
	assert_true(json_equal(jwk, json_object_get(json_object_get(rec, "cnf"), "jwk")));
	json_decref(jwk);
	assert_int_equal(json_string_length(json_object_get(rec, "signature")), 86);
	assert_int_equal(kw_schema_validate(rec, why, sizeof(why)), 0);

	assert_int_equal(verify_json(rec, &o, NULL, 0), KW_VERIFY_OK);
	/* With every piece of evidence. */
	o.transcript_hash = KA_TRANSCRIPT;
	o.call_count = 2;
	o.bundle = BUNDLE;
	o.bundle_len = strlen(BUNDLE);
	o.image_digest = IMAGE;
	assert_int_equal(verify_json(rec, &o, NULL, 0), KW_VERIFY_OK);
	/* Signing twice gives the same bytes (Ed25519 is deterministic). */
	{
		char *a = dump(rec), *b;

		assert_int_equal(kw_record_sign(rec, key, err, sizeof(err)), 0);
		b = dump(rec);
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
	json_decref(rec);
	kw_key_free(key);
}

static void test_sign_refusals(void **state)
{
	struct kw_key *key = test_key(0), *pub = NULL;
	json_t *rec = build_known(), *jwk;
	char err[256];

	(void)state;
	jwk = kw_key_public_jwk(key);
	assert_int_equal(kw_key_from_jwk(jwk, &pub), 0);
	json_decref(jwk);
	assert_int_equal(kw_record_sign(rec, pub, err, sizeof(err)), -EINVAL);
	assert_null(json_object_get(rec, "signature"));
	json_object_set_new(rec, "extra", json_true());
	assert_int_equal(kw_record_sign(rec, key, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "extra"));
	assert_null(json_object_get(rec, "signature"));
	json_decref(rec);
	kw_key_free(pub);
	kw_key_free(key);
}

static void test_examples_validate(void **state)
{
	char path[128], why[256];

	(void)state;
	for (size_t i = 0; i < sizeof(examples) / sizeof(examples[0]); i++) {
		snprintf(path, sizeof(path), "examples/%s", examples[i]);
		json_t *rec = load_vector(path);

		if (kw_schema_validate(rec, why, sizeof(why)))
			fail_msg("%s: %s", examples[i], why);
		json_decref(rec);
	}
}

/* Applies a change to a copy of sandbox-runtime.json; expects the schema to
 * refuse it with a message naming want (a path or rule fragment). */
static void expect_schema(const json_t *base, const char *what, int ok, const char *want,
			  void (*change)(json_t *rec, const char *what))
{
	json_t *rec = json_deep_copy(base);
	char why[256] = "";
	int ret;

	change(rec, what);
	ret = kw_schema_validate(rec, why, sizeof(why));
	if (ok && ret)
		fail_msg("%s: refused: %s", what, why);
	if (!ok && !ret)
		fail_msg("%s: accepted", what);
	if (!ok && want && !strstr(why, want))
		fail_msg("%s: message '%s' lacks '%s'", what, why, want);
	json_decref(rec);
}

/* what = "a.b.c=JSON" (set; "a.b.c" with no '=' deletes). */
static void set_path(json_t *rec, const char *what)
{
	char buf[256], *eq, *dot, *key;
	json_t *obj = rec;

	snprintf(buf, sizeof(buf), "%s", what);
	eq = strchr(buf, '=');
	if (eq)
		*eq++ = '\0';
	key = buf;
	while ((dot = strchr(key, '.'))) {
		*dot = '\0';
		obj = json_object_get(obj, key);
		assert_non_null(obj);
		key = dot + 1;
	}
	if (eq) {
		json_t *v = json_loads(eq, JSON_DECODE_ANY, NULL);

		assert_non_null(v);
		json_object_set_new(obj, key, v);
	} else {
		assert_int_equal(json_object_del(obj, key), 0);
	}
}

static void test_schema_refuses_broken_records(void **state)
{
	static const char *const required[] = {
		"eat_profile", "iat", "subject", "model", "runtime", "policy", "data_class",
		"build_provenance", "appraisal", "cnf", "model.provider", "model.model_id",
		"runtime.platform", "runtime.measurement", "policy.bundle_hash",
		"policy.enforcement_mode", "tool_transcript.hash", "build_provenance.slsa_level",
		"build_provenance.digest", "appraisal.status", "appraisal.verifier", "cnf.jwk",
		"cnf.jwk.kty", "cnf.jwk.x", "cnf.jwk.crv",
	};
	static const char *const closed[] = {
		"", "model.", "runtime.", "policy.", "tool_transcript.", "build_provenance.",
		"appraisal.", "cnf.", "delegation.", "origin.",
	};
	static const struct {
		const char *change;
		const char *want;
	} bad[] = {
		{ "runtime.measurement=\"sha256:3B4C2A1F9E8D7C6B5A4F3E2D1C0B9A8F7E6D5C4B3A2F1E0D9C8B7A6F5E4D3C2B\"", "$.runtime.measurement: pattern" },
		{ "policy.bundle_hash=\"sha256:abc\"", "$.policy.bundle_hash: pattern" },
		{ "build_provenance.digest=\"sha512:00\"", "$.build_provenance.digest: pattern" },
		{ "tool_transcript.hash=\"sha384:c34cd643f50840b454569674325334f7d374466fd351d0a0053638f5011cf9b6\"", "pattern" },
		{ "model.weights_digest=\"md5:00\"", "$.model.weights_digest: pattern" },
		{ "runtime.platform=\"sgx\"", "$.runtime.platform: enum" },
		{ "runtime.platform=\"Software-only\"", "$.runtime.platform: enum" },
		{ "subject=\"https://example.org/agent\"", "$.subject: pattern" },
		{ "subject=\"SPIFFE://example.org/agent\"", "$.subject: pattern" },
		{ "iat=1699999999", "$.iat: minimum" },
		{ "iat=\"1785936000\"", "$.iat: type" },
		{ "iat=1785936000.5", "$.iat: type" },
		{ "eat_profile=\"tag:agentrust-io.com,2026:trace-v0.1\"", "$.eat_profile: const" },
		{ "policy.enforcement_mode=\"enforced\"", "$.policy.enforcement_mode: enum" },
		{ "appraisal.status=\"ok\"", "$.appraisal.status: enum" },
		{ "appraisal.verifier=\"microsoft tpm\"", "$.appraisal.verifier: format uri" },
		{ "appraisal.verifier=\"//no-scheme\"", "format uri" },
		{ "appraisal.verifier=\"1http://x\"", "format uri" },
		{ "appraisal.timestamp=\"now\"", "$.appraisal.timestamp: type" },
		{ "transparency=\"\"", "$.transparency: format uri" },
		{ "runtime.rim_uri=\"https://exa mple\"", "format uri" },
		{ "build_provenance.slsa_level=4", "$.build_provenance.slsa_level: maximum 3" },
		{ "build_provenance.slsa_level=-1", "minimum 0" },
		{ "build_provenance.provenance_depth=\"deep\"", "enum" },
		{ "tool_transcript.call_count=-1", "$.tool_transcript.call_count: minimum 0" },
		{ "tool_transcript.call_count=1.5", "type" },
		{ "data_class=3", "$.data_class: type" },
		{ "model=[]", "$.model: type" },
		{ "delegation={\"parent_record_hash\":\"sha256:c34cd643f50840b454569674325334f7d374466fd351d0a0053638f5011cf9b6\",\"credential_id\":\"\"}", "$.delegation.credential_id: minLength" },
		{ "origin={\"kind\":\"self\",\"producer\":\"\"}", "$.origin.producer: minLength" },
		{ "origin={\"kind\":\"other\",\"producer\":\"x\"}", "$.origin.kind: enum" },
		{ "origin={\"kind\":\"self\",\"producer\":\"x\",\"ingested_at\":5}", "$.origin.ingested_at: minimum" },
		/* the allOf rule: someone else's evidence has no hardware root */
		{ "origin={\"kind\":\"log-import\",\"producer\":\"x\"}", "$.runtime.platform: const software-only" },
		{ "origin={\"kind\":\"third-party-control-plane\",\"producer\":\"x\"}", "software-only" },
		{ "cnf.jwk={\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU\"}", "$.cnf.jwk: required" },
		{ "cnf.jwk.d=\"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A\"", "$.cnf.jwk: private" },
		{ "cnf.jwk.kid=7", "$.cnf.jwk.kid: type" },
		{ "signature=\"abc=\"", "$.signature: pattern" },
		{ "signature=\"\"", "$.signature: pattern" },
		{ "signature=\"a+b\"", "$.signature: pattern" },
	};
	static const char *const good[] = {
		"origin={\"kind\":\"self\",\"producer\":\"x\"}",
		"delegation={\"parent_record_hash\":\"sha256:c34cd643f50840b454569674325334f7d374466fd351d0a0053638f5011cf9b6\",\"credential_id\":\"c\"}",
		"iat=1700000000",
		"build_provenance.slsa_level=3",
		"tool_transcript.call_count=0",
		"cnf.jwk={\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"a\",\"y\":\"b\"}",
		"cnf.jwk={\"kty\":\"RSA\",\"n\":\"a\",\"e\":\"AQAB\"}",
		"cnf.jwk.extra=\"open object\"",
		"signature=\"abc-_\"",
		"appraisal.verifier=\"urn:kwitness:collector\"",
		"subject=\"did:web:example.org\"",
		"appraisal.timestamp=-5",
	};
	json_t *base = load_vector("examples/sandbox-runtime.json");
	char what[512];

	(void)state;
	expect_schema(base, "appraisal.status=\"affirming\"", 1, NULL, set_path);
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		expect_schema(base, required[i], 0, "required", set_path);
	for (size_t i = 0; i < sizeof(closed) / sizeof(closed[0]); i++) {
		json_t *rec = json_deep_copy(base);

		/* delegation and origin first get a valid value, then an extra member. */
		set_path(rec, "delegation={\"parent_record_hash\":\"sha256:c34cd643f50840b454569674325334f7d374466fd351d0a0053638f5011cf9b6\",\"credential_id\":\"c\"}");
		set_path(rec, "origin={\"kind\":\"self\",\"producer\":\"x\"}");
		snprintf(what, sizeof(what), "%sextra_member=1", closed[i]);
		expect_schema(rec, what, 0, "additionalProperties false", set_path);
		json_decref(rec);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_schema(base, bad[i].change, 0, bad[i].want, set_path);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		expect_schema(base, good[i], 1, NULL, set_path);
	/* The origin rule holds with a software-only platform. */
	{
		json_t *rec = json_deep_copy(base);

		set_path(rec, "runtime.platform=\"software-only\"");
		expect_schema(rec, "origin={\"kind\":\"log-import\",\"producer\":\"x\"}", 1, NULL, set_path);
		json_decref(rec);
	}
	/* Not an object at all. */
	{
		json_t *arr = json_array();
		char why[128];

		assert_int_equal(kw_schema_validate(arr, why, sizeof(why)), -EINVAL);
		assert_non_null(strstr(why, "$: type"));
		json_decref(arr);
	}
	json_decref(base);
}

/* Every "format": "uri" member of trace-claim.json is held to the RFC 3986
 * grammar (tests/unit/test_uri.c tests the grammar itself). */
static void test_schema_uri_members(void **state)
{
	static const char *const members[] = {
		"model.aibom_uri", "runtime.rim_uri", "policy.policy_uri",
		"tool_transcript.transcript_uri", "build_provenance.provenance_uri",
		"appraisal.verifier", "appraisal.policy_ref", "transparency",
	};
	static const char *const not_uris[] = {
		"http://ex.com/#a#b", "http://ex.com/?q=[x]", "http://ex.com:8o/",
		"http://[::ffff:01.2.3.4]/", "http://[::1", "http://[fe80::1%25eth0]/", "//no-scheme",
	};
	static const char *const uris[] = {
		"http://[::ffff:1.2.3.4]/", "ldap://[2001:db8::7]/c=GB?objectClass?one",
		"urn:kwitness:collector", "http://[v7.fe80::abcd]:8080/a?b#c", "file:///etc/hosts",
	};
	json_t *base = load_vector("examples/sandbox-runtime.json");
	char what[256], want[64];

	(void)state;
	for (size_t m = 0; m < sizeof(members) / sizeof(members[0]); m++) {
		snprintf(want, sizeof(want), "$.%s: format uri (not an RFC 3986 URI: ", members[m]);
		for (size_t i = 0; i < sizeof(not_uris) / sizeof(not_uris[0]); i++) {
			snprintf(what, sizeof(what), "%s=\"%s\"", members[m], not_uris[i]);
			expect_schema(base, what, 0, want, set_path);
		}
		for (size_t i = 0; i < sizeof(uris) / sizeof(uris[0]); i++) {
			snprintf(what, sizeof(what), "%s=\"%s\"", members[m], uris[i]);
			expect_schema(base, what, 1, NULL, set_path);
		}
	}
	json_decref(base);
}

static struct kw_key *boundary_key(const json_t *vec)
{
	struct kw_key *key = NULL;

	assert_int_equal(kw_key_from_jwk(json_object_get(vec, "trusted_key"), &key), 0);
	return key;
}

static void test_boundary_vectors_verify(void **state)
{
	char path[128], msg[320];

	(void)state;
	for (size_t i = 0; i < sizeof(boundary) / sizeof(boundary[0]); i++) {
		snprintf(path, sizeof(path), "canonicalization-boundary/%s", boundary[i]);
		json_t *vec = load_vector(path);
		struct kw_key *key = boundary_key(vec);
		struct kw_verify_opts o = default_opts(key);
		struct kw_verify_result res;
		char *pretty;

		assert_string_equal(str_at(json_object_get(vec, "expected"), "outcome", NULL), "verified");
		o.now = time(NULL);
		o.max_age = 0;
		if (verify_json(json_object_get(vec, "record"), &o, msg, sizeof(msg)) != KW_VERIFY_OK)
			fail_msg("%s: %s", boundary[i], msg);
		/* Whitespace and member order of the text do not matter. */
		pretty = json_dumps(json_object_get(vec, "record"), JSON_INDENT(3));
		assert_int_equal(kw_record_verify(pretty, strlen(pretty), &o, &res), 0);
		free(pretty);
		/* With freshness on, the old iat is stale. */
		o.max_age = 86400;
		assert_int_equal(verify_json(json_object_get(vec, "record"), &o, NULL, 0), KW_VERIFY_RECORD_STALE);
		kw_key_free(key);
		json_decref(vec);
	}
}

/* Changes one character of s, keeping it the same class (digit, hex letter,
 * letter) so the schema still passes and only the signature can notice. */
static json_t *mutate_string(const json_t *v)
{
	size_t n = json_string_length(v);
	char *s = malloc(n + 2);
	json_t *out;
	size_t i;

	memcpy(s, json_string_value(v), n + 1);
	for (i = n; i-- > 0;) {
		char c = s[i];

		if (c >= '0' && c <= '9') {
			s[i] = c == '9' ? '0' : c + 1;
			break;
		}
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			s[i] = c == 'f' ? 'a' : c == 'z' ? 'g' : c == 'Z' ? 'A' : c + 1;
			break;
		}
	}
	if (i == (size_t)-1) { /* no ASCII letter or digit: append one */
		s[n] = 'x';
		s[n + 1] = '\0';
		n++;
	}
	out = json_stringn(s, n);
	free(s);
	return out;
}

/* Walks every string member value (not the signature); for each, verifies a
 * copy with that one value changed. */
static void flip_walk(json_t *root, json_t *obj, const char *path, const struct kw_verify_opts *o,
		      int *flips)
{
	const char *name;
	json_t *v;

	json_object_foreach(obj, name, v) {
		char sub[256];

		snprintf(sub, sizeof(sub), "%s.%s", path, name);
		if (obj == root && !strcmp(name, "signature"))
			continue;
		if (json_is_object(v)) {
			flip_walk(root, v, sub, o, flips);
		} else if (json_is_string(v) || json_is_integer(v)) {
			json_t *saved = json_incref(v), *changed;
			enum kw_verify_reason want = KW_VERIFY_SIGNATURE_INVALID, got;

			changed = json_is_string(v) ? mutate_string(v)
						    : json_integer(json_integer_value(v) + 1);
			json_object_set_new(obj, name, changed);
			/* Members an earlier step reads fail there, and still fail. */
			/* v0.2 changed into v0.3 is a known profile: the signature
			 * refuses it. */
			if (!strcmp(sub, "$.eat_profile"))
				want = kw_record_profile_of(root) >= 0 ? KW_VERIFY_SIGNATURE_INVALID
								       : KW_VERIFY_PROFILE_UNSUPPORTED;
			else if (!strcmp(sub, "$.runtime.platform") || !strcmp(sub, "$.policy.enforcement_mode") ||
				 !strcmp(sub, "$.appraisal.status") ||
				 (!strcmp(sub, "$.build_provenance.slsa_level") && json_integer_value(saved) >= 3))
				want = KW_VERIFY_SCHEMA_INVALID;
			else if (!strcmp(sub, "$.cnf.jwk.x") || !strcmp(sub, "$.cnf.jwk.crv") ||
				 !strcmp(sub, "$.cnf.jwk.kty"))
				want = KW_VERIFY_CNF_KEY_MISMATCH;
			got = verify_json(root, o, NULL, 0);
			if (got != want)
				fail_msg("%s changed: got %s, want %s", sub, kw_verify_reason_code(got),
					 kw_verify_reason_code(want));
			json_object_set_new(obj, name, saved);
			(*flips)++;
		}
	}
}

static void test_forgeries_fail(void **state)
{
	char path[128];

	(void)state;
	for (size_t i = 0; i < sizeof(boundary) / sizeof(boundary[0]); i++) {
		snprintf(path, sizeof(path), "canonicalization-boundary/%s", boundary[i]);
		json_t *vec = load_vector(path);
		json_t *rec = json_object_get(vec, "record");
		struct kw_key *key = boundary_key(vec), *other = test_key(1);
		struct kw_verify_opts o = default_opts(key);
		int flips = 0;

		o.now = time(NULL);
		o.max_age = 0;
		flip_walk(rec, rec, "$", &o, &flips);
		assert_true(flips >= 15);
		/* Unchanged again: still verifies. */
		assert_int_equal(verify_json(rec, &o, NULL, 0), KW_VERIFY_OK);
		/* Another trusted key. */
		o.trusted = other;
		assert_int_equal(verify_json(rec, &o, NULL, 0), KW_VERIFY_CNF_KEY_MISMATCH);
		/* Another key in cnf, still signed by the first. */
		o.trusted = key;
		{
			json_t *jwk = kw_key_public_jwk(other);

			json_object_set_new(json_object_get(rec, "cnf"), "jwk", jwk);
			assert_int_equal(verify_json(rec, &o, NULL, 0), KW_VERIFY_CNF_KEY_MISMATCH);
			o.trusted = other;
			assert_int_equal(verify_json(rec, &o, NULL, 0), KW_VERIFY_SIGNATURE_INVALID);
		}
		kw_key_free(other);
		kw_key_free(key);
		json_decref(vec);
	}
}

static json_t *signed_known(const struct kw_key *key, const char *nonce)
{
	json_t *rec = build_known();
	char err[256];

	if (nonce)
		json_object_set_new(json_object_get(rec, "runtime"), "nonce", json_string(nonce));
	assert_int_equal(kw_record_sign(rec, key, err, sizeof(err)), 0);
	return rec;
}

static void test_every_reason_code(void **state)
{
	struct kw_key *key = test_key(0), *other = test_key(1);
	json_t *rec = signed_known(key, "bm9uY2U"), *r;
	struct kw_verify_opts o = default_opts(key);
	struct kw_verify_result res;
	bool seen[KW_VERIFY_MALFORMED + 1] = { false };
	char msg[320];
	uint8_t sig[64];
	char sigb[KW_B64_LEN(65)];

	(void)state;
#define EXPECT(record, opts, reason)                                                   \
	do {                                                                           \
		enum kw_verify_reason got_ = verify_json(record, opts, msg, sizeof(msg)); \
		if (got_ != (reason))                                                  \
			fail_msg("line %d: got %s (%s)", __LINE__, kw_verify_reason_code(got_), msg); \
		seen[reason] = true;                                                   \
	} while (0)

	EXPECT(rec, &o, KW_VERIFY_OK);

	/* record_malformed: not JSON, not an object, invalid UTF-8, duplicate keys. */
	{
		static const char *const bad[] = { "not json", "[1,2]", "\"s\"", "", "{\"a\":1,\"a\":1}",
						   "{\"a\":\"\xc3\"}" };

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			assert_int_equal(kw_record_verify(bad[i], strlen(bad[i]), &o, &res), 1);
			assert_int_equal(res.reason, KW_VERIFY_MALFORMED);
			assert_string_equal(kw_verify_reason_code(res.reason), "record_malformed");
		}
		seen[KW_VERIFY_MALFORMED] = true;
	}

	r = json_deep_copy(rec);
	json_object_del(r, "eat_profile");
	EXPECT(r, &o, KW_VERIFY_PROFILE_MISSING);
	set_path(r, "eat_profile=\"tag:agentrust-io.com,2026:trace-v0.1\"");
	EXPECT(r, &o, KW_VERIFY_PROFILE_UNSUPPORTED);
	set_path(r, "eat_profile=7");
	EXPECT(r, &o, KW_VERIFY_PROFILE_UNSUPPORTED);
	json_decref(r);

	r = json_deep_copy(rec);
	json_object_del(r, "signature");
	EXPECT(r, &o, KW_VERIFY_SIGNATURE_MISSING);
	/* signature_malformed: padding, wrong length, non-canonical bits, not a string. */
	set_path(r, "signature=\"AAAA=\"");
	EXPECT(r, &o, KW_VERIFY_SIGNATURE_MALFORMED);
	memset(sig, 7, sizeof(sig));
	kw_b64_encode(KW_B64_URL, sig, 63, sigb);
	json_object_set_new(r, "signature", json_string(sigb));
	EXPECT(r, &o, KW_VERIFY_SIGNATURE_MALFORMED);
	{
		const char *s = str_at(rec, "signature", NULL);
		char nc[90];

		/* 86 characters: the last carries 4 padding bits that must be zero. */
		snprintf(nc, sizeof(nc), "%s", s);
		assert_non_null(strchr("AQgw", s[85]));
		nc[85] = (char)(s[85] + 1);
		json_object_set_new(r, "signature", json_string(nc));
		EXPECT(r, &o, KW_VERIFY_SIGNATURE_MALFORMED);
	}
	set_path(r, "signature=12");
	EXPECT(r, &o, KW_VERIFY_SIGNATURE_MALFORMED);
	json_decref(r);

	r = json_deep_copy(rec);
	set_path(r, "runtime.extra=1");
	EXPECT(r, &o, KW_VERIFY_SCHEMA_INVALID);
	assert_non_null(strstr(msg, "$.runtime"));
	json_decref(r);

	o.trusted = NULL;
	EXPECT(rec, &o, KW_VERIFY_TRUSTED_KEY_MISSING);
	o.allow_embedded_key = true;
	EXPECT(rec, &o, KW_VERIFY_OK);
	r = json_deep_copy(rec);
	set_path(r, "cnf.jwk={\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"a\",\"y\":\"b\"}");
	EXPECT(r, &o, KW_VERIFY_TRUSTED_KEY_MISSING);
	json_decref(r);
	o.allow_embedded_key = false;
	o.trusted = other;
	EXPECT(rec, &o, KW_VERIFY_CNF_KEY_MISMATCH);
	o.trusted = key;

	o.now = IAT - 61;
	EXPECT(rec, &o, KW_VERIFY_RECORD_IN_FUTURE);
	o.now = IAT - 60;
	EXPECT(rec, &o, KW_VERIFY_OK);
	o.now = IAT + 86401;
	EXPECT(rec, &o, KW_VERIFY_RECORD_STALE);
	o.now = IAT + 86400;
	EXPECT(rec, &o, KW_VERIFY_OK);
	o.max_age = 0;
	o.now = IAT + 100 * 86400;
	EXPECT(rec, &o, KW_VERIFY_OK);
	o = default_opts(key);

	o.nonce = "bm9uY2U";
	EXPECT(rec, &o, KW_VERIFY_OK);
	o.nonce = "bm9uY2V";
	EXPECT(rec, &o, KW_VERIFY_NONCE_MISMATCH);
	o.nonce = "bm9uY2";
	EXPECT(rec, &o, KW_VERIFY_NONCE_MISMATCH);
	{
		json_t *plain = signed_known(key, NULL);

		o.nonce = "bm9uY2U";
		EXPECT(plain, &o, KW_VERIFY_NONCE_MISMATCH);
		json_decref(plain);
	}
	o.nonce = NULL;

	r = json_deep_copy(rec);
	set_path(r, "data_class=\"public\"");
	EXPECT(r, &o, KW_VERIFY_SIGNATURE_INVALID);
	json_decref(r);

	o.transcript_hash = KA_TRANSCRIPT;
	o.call_count = 2;
	EXPECT(rec, &o, KW_VERIFY_OK);
	o.call_count = 3;
	EXPECT(rec, &o, KW_VERIFY_TRANSCRIPT_MISMATCH);
	o.call_count = 2;
	o.transcript_hash = KA_MEASUREMENT;
	EXPECT(rec, &o, KW_VERIFY_TRANSCRIPT_MISMATCH);
	o.transcript_hash = NULL;
	o.call_count = -1;

	o.bundle = BUNDLE "# changed\n";
	o.bundle_len = strlen(BUNDLE "# changed\n");
	EXPECT(rec, &o, KW_VERIFY_BUNDLE_MISMATCH);
	o.bundle = BUNDLE;
	o.bundle_len = strlen(BUNDLE);
	EXPECT(rec, &o, KW_VERIFY_OK);
	o.image_digest = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
	EXPECT(rec, &o, KW_VERIFY_MEASUREMENT_MISMATCH);
	o.image_digest = IMAGE;
	EXPECT(rec, &o, KW_VERIFY_OK);
#undef EXPECT

	for (int i = 0; i <= KW_VERIFY_MALFORMED; i++) {
		if (!seen[i])
			fail_msg("reason %s never reached", kw_verify_reason_code(i));
		assert_string_not_equal(kw_verify_reason_code(i), "unknown");
	}
	assert_string_equal(kw_verify_reason_code(KW_VERIFY_OK), "ok");
	assert_string_equal(kw_verify_reason_code(KW_VERIFY_SIGNATURE_INVALID), "signature_invalid");
	json_decref(rec);
	kw_key_free(other);
	kw_key_free(key);
}

/* Every single-byte change of a signed record's text is refused, unless it
 * leaves the canonical bytes unchanged; and nothing crashes (ASan, UBSan). */
static void test_byte_mutations_never_verify(void **state)
{
	static const unsigned char replacements[] = { 0x00, '"', '}', 0xff, 0xc3 };
	struct kw_key *key = test_key(0);
	json_t *rec = signed_known(key, NULL);
	char *text = dump(rec);
	size_t len = strlen(text);
	struct kw_verify_opts o = default_opts(key);
	struct kw_verify_result res;
	int refused = 0;

	(void)state;
	for (size_t i = 0; i < len; i++) {
		for (size_t r = 0; r <= sizeof(replacements); r++) {
			char *m = malloc(len);
			int ret;

			memcpy(m, text, len);
			m[i] = r < sizeof(replacements) ? (char)replacements[r] : (char)(text[i] ^ 1);
			if (m[i] == text[i]) {
				free(m);
				continue;
			}
			ret = kw_record_verify(m, len, &o, &res);
			assert_true(ret == 0 || ret == 1);
			if (ret == 0) {
				struct kw_buf canon = { 0 };

				assert_int_equal(jcs_canonicalize(m, len, &canon, NULL), 0);
				if (canon.len != len || memcmp(canon.data, text, len))
					fail_msg("byte %zu changed to 0x%02x still verifies", i,
						 (unsigned char)m[i]);
				kw_buf_free(&canon);
			} else {
				refused++;
			}
			free(m);
		}
	}
	assert_true(refused > (int)len * 5);
	free(text);
	json_decref(rec);
	kw_key_free(key);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_mapping),
		cmocka_unit_test(test_build_refuses_bad_input),
		cmocka_unit_test(test_sign_and_verify_round_trip),
		cmocka_unit_test(test_sign_refusals),
		cmocka_unit_test(test_examples_validate),
		cmocka_unit_test(test_schema_refuses_broken_records),
		cmocka_unit_test(test_schema_uri_members),
		cmocka_unit_test(test_boundary_vectors_verify),
		cmocka_unit_test(test_forgeries_fail),
		cmocka_unit_test(test_every_reason_code),
		cmocka_unit_test(test_byte_mutations_never_verify),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
