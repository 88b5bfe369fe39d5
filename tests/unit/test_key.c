/* SPDX-License-Identifier: Apache-2.0 */
/* Ed25519 keys: RFC 8032 signatures byte for byte, Wycheproof verdicts,
 * RFC 7638/8037 thumbprints, key files (mode, overwrite, environment). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "lib/base64.h"
#include "jcs/jcs.h"
#include "trace/key.h"

static char tmpdir[] = "/tmp/kw-test-key-XXXXXX";

/* Conformance vectors are committed under tests/vectors (see its PROVENANCE files). */
static json_t *load_vector(const char *rel)
{
	const char *root = getenv("KW_ROOT") ? getenv("KW_ROOT") : ".";
	char path[1024];
	json_error_t e;
	json_t *v;

	snprintf(path, sizeof(path), "%s/tests/vectors/%s", root, rel);
	v = json_load_file(path, 0, &e);
	if (!v)
		fail_msg("cannot load %s: %s", path, e.text);
	return v;
}

static char *load_text(const char *rel)
{
	const char *root = getenv("KW_ROOT") ? getenv("KW_ROOT") : ".";
	char path[1024];
	struct kw_buf b = { 0 };

	snprintf(path, sizeof(path), "%s/tests/vectors/%s", root, rel);
	if (kw_read_file(path, 1 << 20, &b))
		fail_msg("cannot read %s", path);
	return b.data;
}

static size_t hex_decode(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = strlen(hex) / 2;

	assert_true(n <= cap);
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
	return n;
}

static void tmp_path(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", tmpdir, name);
}

static void write_file(const char *path, const char *data, size_t len, mode_t mode)
{
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* Checks one RFC 8032 vector: public key, signature byte for byte, verify. */
static void check_rfc8032(const char *name, const char *seed_hex, const char *pub_hex,
			  const uint8_t *msg, size_t msglen, const char *sig_hex)
{
	uint8_t seed[32], pub[32], want[64], sig[64];
	char x[KW_B64_LEN(32)];
	struct kw_key *key = NULL;
	json_t *jwk;

	assert_int_equal(hex_decode(seed_hex, seed, 32), 32);
	assert_int_equal(hex_decode(pub_hex, pub, 32), 32);
	assert_int_equal(hex_decode(sig_hex, want, 64), 64);
	assert_int_equal(kw_key_from_seed(seed, &key), 0);
	jwk = kw_key_public_jwk(key);
	kw_b64_encode(KW_B64_URL, pub, 32, x);
	assert_string_equal(json_string_value(json_object_get(jwk, "x")), x);
	json_decref(jwk);
	assert_int_equal(kw_key_sign(key, msg, msglen, sig), 0);
	if (memcmp(sig, want, 64))
		fail_msg("%s: signature differs", name);
	assert_int_equal(kw_key_verify(key, msg, msglen, sig, 64), 0);
	sig[10] ^= 1;
	assert_int_equal(kw_key_verify(key, msg, msglen, sig, 64), -EBADMSG);
	assert_int_equal(kw_key_verify(key, msg, msglen, sig, 63), -EBADMSG);
	kw_key_free(key);
}

static void test_rfc8032_json(void **state)
{
	json_t *doc = load_vector("rfc/rfc8032-ed25519.json"), *v;
	size_t i;

	(void)state;
	assert_true(json_array_size(json_object_get(doc, "vectors")) >= 5);
	json_array_foreach(json_object_get(doc, "vectors"), i, v) {
		const char *mhex = json_string_value(json_object_get(v, "message"));
		size_t mlen = strlen(mhex) / 2;
		uint8_t *msg = malloc(mlen + 1);

		assert_int_equal(hex_decode(mhex, msg, mlen + 1), mlen);
		assert_int_equal(mlen, json_integer_value(json_object_get(v, "message_length")));
		check_rfc8032(json_string_value(json_object_get(v, "name")),
			      json_string_value(json_object_get(v, "secret_key")),
			      json_string_value(json_object_get(v, "public_key")), msg, mlen,
			      json_string_value(json_object_get(v, "signature")));
		free(msg);
	}
	json_decref(doc);
}

/* The RFC text itself: "-----TEST n" blocks of labelled hex lines. */
static void test_rfc8032_text(void **state)
{
	char *text = load_text("rfc/rfc8032-section-7.1.txt");
	char field[5][2200] = { { 0 } }; /* secret, public, message, signature */
	int cur = -1, tests = 0;
	char name[64] = "";
	char *save = NULL;

	(void)state;
	for (char *line = strtok_r(text, "\n", &save);; line = strtok_r(NULL, "\n", &save)) {
		char *l = line;
		bool hex = true;

		if (l)
			while (*l == ' ')
				l++;
		if (!l || !strncmp(l, "-----", 5)) {
			if (name[0]) {
				uint8_t msg[1100];
				size_t mlen = hex_decode(field[2], msg, sizeof(msg));

				check_rfc8032(name, field[0], field[1], msg, mlen, field[3]);
				tests++;
			}
			if (!l)
				break;
			snprintf(name, sizeof(name), "%s", l + 5);
			memset(field, 0, sizeof(field));
			cur = -1;
			continue;
		}
		if (!strncmp(l, "SECRET KEY:", 11))
			cur = 0;
		else if (!strncmp(l, "PUBLIC KEY:", 11))
			cur = 1;
		else if (!strncmp(l, "MESSAGE", 7))
			cur = 2;
		else if (!strncmp(l, "SIGNATURE:", 10))
			cur = 3;
		else if (!strncmp(l, "ALGORITHM:", 10))
			cur = 4;
		else {
			for (char *p = l; *p; p++)
				if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
					hex = false;
			if (hex && *l && cur >= 0 && cur < 4 && name[0])
				strncat(field[cur], l, sizeof(field[cur]) - strlen(field[cur]) - 1);
		}
	}
	assert_int_equal(tests, 5);
	free(text);
}

static void test_wycheproof(void **state)
{
	json_t *doc = load_vector("wycheproof/ed25519_test.json"), *g, *t;
	size_t gi, ti;
	int valid = 0, invalid = 0, cases = 0;

	(void)state;
	json_array_foreach(json_object_get(doc, "testGroups"), gi, g) {
		struct kw_key *key = NULL, *raw = NULL;
		uint8_t pk[32];
		char a[KW_THUMBPRINT_MAX], b[KW_THUMBPRINT_MAX];

		/* The group's JWK and its raw key must be the same key. */
		assert_int_equal(kw_key_from_jwk(json_object_get(g, "publicKeyJwk"), &key), 0);
		assert_int_equal(hex_decode(json_string_value(json_object_get(
						    json_object_get(g, "publicKey"), "pk")), pk, 32), 32);
		assert_int_equal(kw_key_from_raw_public(pk, &raw), 0);
		assert_int_equal(kw_key_thumbprint(key, a), 0);
		assert_int_equal(kw_key_thumbprint(raw, b), 0);
		assert_string_equal(a, b);
		kw_key_free(raw);
		json_array_foreach(json_object_get(g, "tests"), ti, t) {
			const char *mh = json_string_value(json_object_get(t, "msg"));
			const char *sh = json_string_value(json_object_get(t, "sig"));
			const char *result = json_string_value(json_object_get(t, "result"));
			size_t ml = strlen(mh) / 2, sl = strlen(sh) / 2;
			uint8_t *msg = malloc(ml + 1), *sig = malloc(sl + 1);
			int ret;

			hex_decode(mh, msg, ml + 1);
			hex_decode(sh, sig, sl + 1);
			ret = kw_key_verify(key, msg, ml, sig, sl);
			if (!strcmp(result, "valid")) {
				if (ret != 0)
					fail_msg("tcId %lld: valid case rejected (%d)",
						 (long long)json_integer_value(json_object_get(t, "tcId")), ret);
				valid++;
			} else if (!strcmp(result, "invalid")) {
				if (ret != -EBADMSG)
					fail_msg("tcId %lld: invalid case accepted (%d)",
						 (long long)json_integer_value(json_object_get(t, "tcId")), ret);
				invalid++;
			}
			cases++;
			free(msg);
			free(sig);
		}
		kw_key_free(key);
	}
	assert_int_equal(cases, json_integer_value(json_object_get(doc, "numberOfTests")));
	assert_true(valid > 0 && invalid > 0);
	json_decref(doc);
}

static void test_thumbprints(void **state)
{
	json_t *rfc8037 = load_vector("rfc/rfc8037-appendix-a.json");
	json_t *rfc7638 = load_vector("rfc/rfc7638-section-3.1.json");
	json_t *es256 = load_vector("rfc/es256-examples.json");
	char tp[KW_THUMBPRINT_MAX];
	struct kw_key *key = NULL;
	uint8_t seed[32], sig[64];
	char sigb[KW_B64_LEN(64)];
	const char *input;
	json_t *bad;

	(void)state;
	assert_int_equal(kw_jwk_thumbprint(json_object_get(rfc8037, "A.2_public_jwk"), tp), 0);
	assert_string_equal(tp, "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
	/* Only required members count: the private JWK has the same thumbprint. */
	assert_int_equal(kw_jwk_thumbprint(json_object_get(rfc8037, "A.1_private_jwk"), tp), 0);
	assert_string_equal(tp, "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
	/* ... but it is never accepted as a key. */
	assert_int_equal(kw_key_from_jwk(json_object_get(rfc8037, "A.1_private_jwk"), &key), -EPERM);
	assert_int_equal(kw_key_from_jwk(json_object_get(rfc8037, "A.2_public_jwk"), &key), 0);
	assert_int_equal(kw_key_thumbprint(key, tp), 0);
	assert_string_equal(tp, "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
	kw_key_free(key);

	/* A.4: the EdDSA JWS signature, reproduced from the seed. */
	hex_decode(json_string_value(json_object_get(json_object_get(rfc8037, "raw_keys_hex"), "seed_d")),
		   seed, 32);
	assert_int_equal(kw_key_from_seed(seed, &key), 0);
	input = json_string_value(json_object_get(rfc8037, "A.4_signing_input"));
	assert_int_equal(kw_key_sign(key, input, strlen(input), sig), 0);
	kw_b64_encode(KW_B64_URL, sig, 64, sigb);
	assert_string_equal(sigb, json_string_value(json_object_get(rfc8037, "A.4_signature_b64u")));
	kw_key_free(key);

	assert_int_equal(kw_jwk_thumbprint(json_object_get(rfc7638, "jwk"), tp), 0);
	assert_string_equal(tp, "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs");

	assert_int_equal(kw_jwk_thumbprint(json_object_get(json_object_get(es256, "rfc7515_appendix_a3_es256"),
							   "jwk"), tp), 0);
	assert_string_equal(tp, "oKIywvGUpTVTyxMQ3bwIIeQUudfr_CkLMjCE19ECD-U");
	assert_int_equal(kw_jwk_thumbprint(json_object_get(json_object_get(json_object_get(
			es256, "rfc9449_dpop_example"), "protected_header"), "jwk"), tp), 0);
	assert_string_equal(tp, "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I");

	/* Missing or mistyped required members, unknown kty. */
	bad = json_pack("{s:s, s:s}", "kty", "OKP", "crv", "Ed25519");
	assert_int_equal(kw_jwk_thumbprint(bad, tp), -EINVAL);
	json_decref(bad);
	bad = json_pack("{s:s, s:s, s:s}", "kty", "EC", "crv", "P-256", "x", "abc");
	assert_int_equal(kw_jwk_thumbprint(bad, tp), -EINVAL);
	json_decref(bad);
	bad = json_pack("{s:s, s:s, s:i}", "kty", "RSA", "n", "abc", "e", 3);
	assert_int_equal(kw_jwk_thumbprint(bad, tp), -EINVAL);
	json_decref(bad);
	bad = json_pack("{s:s, s:s}", "kty", "oct", "k", "abc");
	assert_int_equal(kw_jwk_thumbprint(bad, tp), -EINVAL);
	json_decref(bad);

	json_decref(rfc8037);
	json_decref(rfc7638);
	json_decref(es256);
}

static void test_jwk_refusals(void **state)
{
	static const char *const bad[] = {
		"{\"kty\":\"OKP\",\"crv\":\"X25519\",\"x\":\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\"}",
		"{\"kty\":\"EC\",\"crv\":\"Ed25519\",\"x\":\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\"}",
		"{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHUR\"}",
		"{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURp\"}",
		"{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo=\"}",
		"{\"kty\":\"OKP\",\"crv\":\"Ed25519\"}",
		"{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":7}",
		"[]",
	};
	struct kw_key *key = NULL;
	json_t *jwk;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		jwk = json_loads(bad[i], 0, NULL);
		assert_non_null(jwk);
		assert_int_equal(kw_key_from_jwk(jwk, &key), -EINVAL);
		assert_null(key);
		json_decref(jwk);
	}
	jwk = json_loads("{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\",\"k\":\"x\"}",
			 0, NULL);
	assert_int_equal(kw_key_from_jwk(jwk, &key), -EPERM);
	json_decref(jwk);
}

static void test_generate_and_load(void **state)
{
	char path[256], tp1[KW_THUMBPRINT_MAX], tp2[KW_THUMBPRINT_MAX];
	struct kw_key *key = NULL, *loaded = NULL;
	struct kw_buf pem = { 0 }, again = { 0 };
	struct stat st;
	uint8_t sig[64];
	json_t *jwk;
	mode_t old;

	(void)state;
	tmp_path(path, sizeof(path), "gen.pem");
	old = umask(0);
	assert_int_equal(kw_key_generate(path, &key), 0);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(kw_read_file(path, 4096, &pem), 0);
	assert_non_null(strstr(pem.data, "-----BEGIN PRIVATE KEY-----"));

	/* Never overwrites: the file keeps its bytes. */
	assert_int_equal(kw_key_generate(path, NULL), -EEXIST);
	assert_int_equal(kw_read_file(path, 4096, &again), 0);
	assert_int_equal(again.len, pem.len);
	assert_memory_equal(again.data, pem.data, pem.len);

	assert_int_equal(kw_key_load_private(path, &loaded), 0);
	assert_true(kw_key_has_private(loaded));
	assert_int_equal(kw_key_thumbprint(key, tp1), 0);
	assert_int_equal(kw_key_thumbprint(loaded, tp2), 0);
	assert_string_equal(tp1, tp2);
	assert_int_equal(strlen(tp1), 43);
	assert_int_equal(kw_key_sign(loaded, "m", 1, sig), 0);
	assert_int_equal(kw_key_verify(key, "m", 1, sig, 64), 0);
	kw_key_free(loaded);

	jwk = kw_key_public_jwk(key);
	assert_int_equal(json_object_size(jwk), 3);
	assert_string_equal(json_string_value(json_object_get(jwk, "kty")), "OKP");
	assert_string_equal(json_string_value(json_object_get(jwk, "crv")), "Ed25519");
	assert_int_equal(json_string_length(json_object_get(jwk, "x")), 43);
	json_decref(jwk);

	/* From the environment: the PEM text itself. */
	assert_int_equal(setenv("TRACE_PRIVATE_KEY_PEM", pem.data, 1), 0);
	assert_int_equal(kw_key_load_private(NULL, &loaded), 0);
	assert_int_equal(kw_key_thumbprint(loaded, tp2), 0);
	assert_string_equal(tp1, tp2);
	kw_key_free(loaded);
	unsetenv("TRACE_PRIVATE_KEY_PEM");
	assert_int_equal(kw_key_load_private(NULL, &loaded), -ENOENT);

	/* Missing directory and missing file. */
	assert_int_equal(kw_key_generate("/nonexistent-kw-dir/k.pem", NULL), -ENOENT);
	tmp_path(path, sizeof(path), "missing.pem");
	assert_int_equal(kw_key_load_private(path, &loaded), -ENOENT);

	kw_key_free(key);
	kw_buf_free(&pem);
	kw_buf_free(&again);
}

static void test_key_file_mode_refused(void **state)
{
	static const mode_t modes[] = { 0640, 0604, 0660, 0644, 0610, 0601, 0620, 0602 };
	char path[256];
	struct kw_key *key = NULL;

	(void)state;
	tmp_path(path, sizeof(path), "mode.pem");
	unlink(path);
	assert_int_equal(kw_key_generate(path, NULL), 0);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		assert_int_equal(chmod(path, modes[i]), 0);
		assert_int_equal(kw_key_load_private(path, &key), -EPERM);
		assert_null(key);
	}
	assert_int_equal(chmod(path, 0400), 0);
	assert_int_equal(kw_key_load_private(path, &key), 0);
	kw_key_free(key);
	key = NULL;
	/* Mode 0600 but owned by another (non-root) user: refused. Only root
	 * can give a file away; elsewhere this part cannot be set up. */
	if (geteuid() == 0) {
		assert_int_equal(chmod(path, 0600), 0);
		assert_int_equal(chown(path, 4242, 4242), 0);
		assert_int_equal(kw_key_load_private(path, &key), -EPERM);
		assert_null(key);
		assert_int_equal(chown(path, 0, 0), 0);
		assert_int_equal(kw_key_load_private(path, &key), 0);
		kw_key_free(key);
	}
}

/* Writes a PKCS#8 PEM of another key type: it must be refused. */
static void write_foreign_key(const char *path, const char *type, const char *arg)
{
	EVP_PKEY *pk = arg ? EVP_PKEY_Q_keygen(NULL, NULL, type, arg) : EVP_PKEY_Q_keygen(NULL, NULL, type);
	BIO *bio = BIO_new(BIO_s_mem());
	char *data;
	long n;

	assert_non_null(pk);
	assert_int_equal(PEM_write_bio_PrivateKey(bio, pk, NULL, NULL, 0, NULL, NULL), 1);
	n = BIO_get_mem_data(bio, &data);
	write_file(path, data, (size_t)n, 0600);
	BIO_free(bio);
	EVP_PKEY_free(pk);
}

static void test_non_ed25519_refused(void **state)
{
	char path[256];
	struct kw_key *key = NULL;

	(void)state;
	tmp_path(path, sizeof(path), "ec.pem");
	write_foreign_key(path, "EC", "P-256");
	assert_int_equal(kw_key_load_private(path, &key), -EINVAL);
	assert_int_equal(kw_key_load_public(path, &key), -EINVAL);
	tmp_path(path, sizeof(path), "x25519.pem");
	write_foreign_key(path, "X25519", NULL);
	assert_int_equal(kw_key_load_private(path, &key), -EINVAL);
	tmp_path(path, sizeof(path), "garbage.pem");
	write_file(path, "not a key\n", 10, 0600);
	assert_int_equal(kw_key_load_private(path, &key), -EINVAL);
	assert_int_equal(kw_key_load_public(path, &key), -EINVAL);
	assert_int_equal(setenv("TRACE_PRIVATE_KEY_PEM", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", 1), 0);
	assert_int_equal(kw_key_load_private(NULL, &key), -EINVAL);
	unsetenv("TRACE_PRIVATE_KEY_PEM");
	assert_null(key);
}

static void test_load_public(void **state)
{
	char priv[256], path[256], tp[KW_THUMBPRINT_MAX], tp2[KW_THUMBPRINT_MAX];
	struct kw_key *key = NULL, *pub = NULL;
	struct kw_buf jwktext = { 0 };
	EVP_PKEY *pk;
	BIO *bio;
	char *data;
	uint8_t sig[64];
	json_t *jwk;
	long n;

	(void)state;
	tmp_path(priv, sizeof(priv), "pub-src.pem");
	unlink(priv);
	assert_int_equal(kw_key_generate(priv, &key), 0);
	assert_int_equal(kw_key_thumbprint(key, tp), 0);

	/* A JWK file (mode does not matter for public keys). */
	jwk = kw_key_public_jwk(key);
	assert_int_equal(jcs_dump(jwk, &jwktext), 0);
	tmp_path(path, sizeof(path), "pub.jwk");
	write_file(path, jwktext.data, jwktext.len, 0644);
	assert_int_equal(kw_key_load_public(path, &pub), 0);
	assert_false(kw_key_has_private(pub));
	assert_int_equal(kw_key_thumbprint(pub, tp2), 0);
	assert_string_equal(tp, tp2);
	assert_int_equal(kw_key_sign(pub, "m", 1, sig), -EINVAL);
	kw_key_free(pub);

	/* A JWK carrying "d" is refused. */
	json_object_set_new(jwk, "d", json_string("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"));
	kw_buf_reset(&jwktext);
	assert_int_equal(jcs_dump(jwk, &jwktext), 0);
	write_file(path, jwktext.data, jwktext.len, 0600);
	assert_int_equal(kw_key_load_public(path, &pub), -EPERM);
	write_file(path, "{\"kty\":", 7, 0600);
	assert_int_equal(kw_key_load_public(path, &pub), -EINVAL);
	json_decref(jwk);

	/* A PEM public key. */
	{
		struct kw_buf pem = { 0 };
		BIO *in;

		assert_int_equal(kw_read_file(priv, 4096, &pem), 0);
		in = BIO_new_mem_buf(pem.data, (int)pem.len);
		pk = PEM_read_bio_PrivateKey(in, NULL, NULL, NULL);
		assert_non_null(pk);
		BIO_free(in);
		kw_buf_free(&pem);
	}
	bio = BIO_new(BIO_s_mem());
	assert_int_equal(PEM_write_bio_PUBKEY(bio, pk), 1);
	n = BIO_get_mem_data(bio, &data);
	tmp_path(path, sizeof(path), "pub.pem");
	write_file(path, data, (size_t)n, 0644);
	BIO_free(bio);
	EVP_PKEY_free(pk);
	assert_int_equal(kw_key_load_public(path, &pub), 0);
	assert_int_equal(kw_key_thumbprint(pub, tp2), 0);
	assert_string_equal(tp, tp2);
	kw_key_free(pub);

	/* A PEM private key is reduced to its public half. */
	assert_int_equal(kw_key_load_public(priv, &pub), 0);
	assert_false(kw_key_has_private(pub));
	assert_int_equal(kw_key_thumbprint(pub, tp2), 0);
	assert_string_equal(tp, tp2);
	kw_key_free(pub);

	kw_key_free(key);
	kw_buf_free(&jwktext);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc8032_json),
		cmocka_unit_test(test_rfc8032_text),
		cmocka_unit_test(test_wycheproof),
		cmocka_unit_test(test_thumbprints),
		cmocka_unit_test(test_jwk_refusals),
		cmocka_unit_test(test_generate_and_load),
		cmocka_unit_test(test_key_file_mode_refused),
		cmocka_unit_test(test_non_ed25519_refused),
		cmocka_unit_test(test_load_public),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
