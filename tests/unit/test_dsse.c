/* SPDX-License-Identifier: Apache-2.0 */
/* DSSE (user/attest/dsse.c) against the DSSE project's own test vectors
 * (tests/vectors/dsse/, PROVENANCE there): the PAE bytes of each vector, its
 * verdict with one trusted key, and a signature made here with the vectors'
 * RFC 8032 key A equal to theirs byte for byte (Ed25519 is deterministic). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "attest/dsse.h"
#include "jcs/jcs.h"
#include "lib/buf.h"

static json_t *vectors;

static json_t *load(const char *rel)
{
	const char *root = getenv("KW_ROOT") ? getenv("KW_ROOT") : ".";
	struct kw_buf text = { 0 };
	char path[4096];
	json_t *v;

	snprintf(path, sizeof(path), "%s/tests/vectors/dsse/%s", root, rel);
	assert_int_equal(kw_read_file(path, 1 << 20, &text), 0);
	v = json_loadb(text.data, text.len, 0, NULL);
	kw_buf_free(&text);
	assert_non_null(v);
	return v;
}

static void unhex(const char *h, uint8_t *out, size_t n)
{
	assert_int_equal(strlen(h), 2 * n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(sscanf(h + 2 * i, "%2hhx", &out[i]), 1);
}

static struct kw_key *key_named(const char *name)
{
	const json_t *k = json_object_get(json_object_get(vectors, "keys"), name);
	uint8_t seed[32];
	struct kw_key *key;

	unhex(json_string_value(json_object_get(k, "seed")), seed, 32);
	assert_int_equal(kw_key_from_seed(seed, &key), 0);
	return key;
}

static const json_t *vector(const char *id)
{
	const json_t *v;
	size_t i;

	json_array_foreach(json_object_get(vectors, "vectors"), i, v)
		if (!strcmp(json_string_value(json_object_get(v, "id")), id))
			return v;
	fail_msg("no vector %s", id);
	return NULL;
}

/* PAE of every vector's signed type and decoded payload = its "pae" hex. */
static void test_pae_bytes(void **state)
{
	const json_t *v;
	size_t i, n = 0;

	(void)state;
	json_array_foreach(json_object_get(vectors, "vectors"), i, v) {
		const json_t *env = json_object_get(v, "envelope");
		const char *hex = json_string_value(json_object_get(v, "pae"));
		const char *type = json_string_value(json_object_get(env, "payloadType"));
		const char *pl = json_string_value(json_object_get(env, "payload"));
		struct kw_buf body = { 0 }, pae = { 0 };
		uint8_t *want = malloc(strlen(hex) / 2 + 1);

		/* payload-type-swapped: the signature covers the in-toto type, not
		 * the one the envelope claims; its "pae" is of the signed type. */
		if (!strcmp(json_string_value(json_object_get(v, "id")), "payload-type-swapped"))
			type = DSSE_INTOTO_PAYLOAD_TYPE;
		assert_int_equal(dsse_b64_decode(pl, strlen(pl), &body), 0);
		assert_int_equal(dsse_pae(type, strlen(type), body.data ?: "", body.len, &pae), 0);
		unhex(hex, want, strlen(hex) / 2);
		assert_int_equal(pae.len, strlen(hex) / 2);
		assert_memory_equal(pae.data, want, pae.len);
		n++;
		free(want);
		kw_buf_free(&body);
		kw_buf_free(&pae);
	}
	assert_int_equal(n, 9);
}

/* kwitness's verifier: one trusted key, threshold 1, one supported type. */
static int verdict(const char *id, const char *keyname, const char *want_type)
{
	struct kw_key *key = key_named(keyname);
	struct kw_buf body = { 0 };
	char why[200];
	int r = dsse_verify(json_object_get(vector(id), "envelope"), want_type, key, &body, why,
			    sizeof(why));

	kw_buf_free(&body);
	kw_key_free(key);
	return r;
}

static void test_vector_verdicts(void **state)
{
	(void)state;
	assert_int_equal(verdict("single-signature", "A", DSSE_INTOTO_PAYLOAD_TYPE), DSSE_OK);
	assert_int_equal(verdict("single-signature", "B", DSSE_INTOTO_PAYLOAD_TYPE),
			 DSSE_SIGNATURE_INVALID);
	assert_int_equal(verdict("url-safe-base64", "A", DSSE_INTOTO_PAYLOAD_TYPE), DSSE_OK);
	assert_int_equal(verdict("payload-type-swapped", "A", "application/vnd.example.other+json"),
			 DSSE_SIGNATURE_INVALID);
	assert_int_equal(verdict("non-ascii-payload-type", "A", "application/vnd.ex\xc3\xa4mple+json"),
			 DSSE_OK);
	assert_int_equal(verdict("empty-payload", "A", DSSE_INTOTO_PAYLOAD_TYPE), DSSE_OK);
	assert_int_equal(verdict("empty-payload-type", "A", DSSE_INTOTO_PAYLOAD_TYPE),
			 DSSE_TYPE_UNSUPPORTED);
	/* Threshold vectors, one key at a time: both keys signed the first,
	 * only A the second (so two unique keys are not met), both the third. */
	assert_int_equal(verdict("threshold-two-distinct-keys", "A", DSSE_INTOTO_PAYLOAD_TYPE), DSSE_OK);
	assert_int_equal(verdict("threshold-two-distinct-keys", "B", DSSE_INTOTO_PAYLOAD_TYPE), DSSE_OK);
	assert_int_equal(verdict("threshold-two-one-key-twice", "B", DSSE_INTOTO_PAYLOAD_TYPE),
			 DSSE_SIGNATURE_INVALID);
	assert_int_equal(verdict("threshold-two-without-keyids", "B", DSSE_INTOTO_PAYLOAD_TYPE), DSSE_OK);
}

/* Signing the single-signature vector's payload with key A gives its
 * envelope exactly (standard base64, padded). */
static void test_sign_known_answer(void **state)
{
	const json_t *want = json_object_get(vector("single-signature"), "envelope");
	const char *body = "{\"_type\":\"https://in-toto.io/Statement/v1\"}";
	struct kw_key *key = key_named("A");
	json_t *env = dsse_sign(DSSE_INTOTO_PAYLOAD_TYPE, body, strlen(body), key);

	(void)state;
	assert_non_null(env);
	assert_string_equal(json_string_value(json_object_get(env, "payload")),
			    json_string_value(json_object_get(want, "payload")));
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(json_object_get(env, "signatures"), 0), "sig")),
		json_string_value(json_object_get(json_array_get(json_object_get(want, "signatures"), 0), "sig")));
	json_decref(env);
	kw_key_free(key);
}

/* Every single-bit change of the signed envelope's payload or signature
 * fails; base64 of either alphabet decodes, mixed or mis-padded does not. */
static void test_flips_and_base64(void **state)
{
	const char *body = "{\"_type\":\"https://in-toto.io/Statement/v1\",\"x\":1}";
	struct kw_key *key = key_named("A");
	json_t *env = dsse_sign(DSSE_INTOTO_PAYLOAD_TYPE, body, strlen(body), key);
	struct kw_buf out = { 0 };
	char why[200];

	(void)state;
	assert_int_equal(dsse_verify(env, DSSE_INTOTO_PAYLOAD_TYPE, key, &out, why, sizeof(why)), 0);
	assert_int_equal(out.len, strlen(body));
	for (int which = 0; which < 2; which++) {
		json_t *holder = which ? json_array_get(json_object_get(env, "signatures"), 0) : env;
		const char *member = which ? "sig" : "payload";
		char *orig = strdup(json_string_value(json_object_get(holder, member)));

		for (size_t i = 0; orig[i]; i++) {
			char *t = strdup(orig);

			t[i] = t[i] == 'A' ? 'B' : 'A';
			json_object_set_new(holder, member, json_string(t));
			assert_int_not_equal(dsse_verify(env, DSSE_INTOTO_PAYLOAD_TYPE, key, &out, why,
							 sizeof(why)), 0);
			free(t);
		}
		json_object_set_new(holder, member, json_string(orig));
		free(orig);
	}
	assert_int_equal(dsse_b64_decode("aGk=", 4, &out), 0);
	assert_int_equal(dsse_b64_decode("aGk", 3, &out), 0);
	assert_int_equal(dsse_b64_decode("-_-_Pj8=", 8, &out), 0);
	assert_int_not_equal(dsse_b64_decode("-_+/Pj8=", 8, &out), 0);
	assert_int_not_equal(dsse_b64_decode("aGk==", 5, &out), 0);
	assert_int_not_equal(dsse_b64_decode("aG=k", 4, &out), 0);
	kw_buf_free(&out);
	json_decref(env);
	kw_key_free(key);
}

static int setup(void **state)
{
	(void)state;
	vectors = load("vectors.json");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	json_decref(vectors);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pae_bytes),
		cmocka_unit_test(test_vector_verdicts),
		cmocka_unit_test(test_sign_known_answer),
		cmocka_unit_test(test_flips_and_base64),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
