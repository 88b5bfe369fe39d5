/* SPDX-License-Identifier: Apache-2.0 */
/* Ed25519 keys through OpenSSL: generate, load (file, environment, JWK, PEM),
 * sign and verify. Private key text is read into fixed buffers that are
 * cleansed before they are released; the EVP_PKEY cleanses its own copy. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "lib/base64.h"
#include "lib/buf.h"
#include "jcs/jcs.h"
#include "trace/key.h"

#define ED25519_KEY_LEN 32
/* A PEM Ed25519 key is ~120 bytes; a JWK or PEM public key file is small too. */
#define KEY_FILE_MAX (64 * 1024)

struct kw_key {
	EVP_PKEY *pkey;
	bool has_private;
	uint8_t pub[ED25519_KEY_LEN];
};

static int key_wrap(EVP_PKEY *pkey, bool has_private, struct kw_key **out)
{
	struct kw_key *key;
	size_t len = ED25519_KEY_LEN;

	if (EVP_PKEY_get_id(pkey) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(pkey);
		return -EINVAL;
	}
	key = calloc(1, sizeof(*key));
	if (!key) {
		EVP_PKEY_free(pkey);
		return -ENOMEM;
	}
	if (EVP_PKEY_get_raw_public_key(pkey, key->pub, &len) != 1 || len != ED25519_KEY_LEN) {
		EVP_PKEY_free(pkey);
		free(key);
		return -EINVAL;
	}
	key->pkey = pkey;
	key->has_private = has_private;
	*out = key;
	return 0;
}

void kw_key_free(struct kw_key *key)
{
	if (!key)
		return;
	EVP_PKEY_free(key->pkey);
	OPENSSL_cleanse(key, sizeof(*key));
	free(key);
}

bool kw_key_has_private(const struct kw_key *key)
{
	return key && key->has_private;
}

void kw_key_public_raw(const struct kw_key *key, uint8_t out[32])
{
	memcpy(out, key->pub, ED25519_KEY_LEN);
}

int kw_key_from_seed(const uint8_t seed[32], struct kw_key **out)
{
	EVP_PKEY *pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);

	if (!pkey)
		return -EINVAL;
	return key_wrap(pkey, true, out);
}

int kw_key_from_raw_public(const uint8_t pub[32], struct kw_key **out)
{
	EVP_PKEY *pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, 32);

	if (!pkey)
		return -EINVAL;
	return key_wrap(pkey, false, out);
}

/* Never prompt for a passphrase: an encrypted key simply fails to load. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

/* PEM text → private key. The text is not modified. */
static int key_from_private_pem(const char *pem, size_t len, struct kw_key **out)
{
	BIO *bio;
	EVP_PKEY *pkey;

	if (len > INT32_MAX)
		return -EINVAL;
	bio = BIO_new_mem_buf(pem, (int)len);
	if (!bio)
		return -ENOMEM;
	pkey = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
	BIO_free(bio);
	if (!pkey) {
		ERR_clear_error();
		return -EINVAL;
	}
	return key_wrap(pkey, true, out);
}

/* Reads a small file into buf (NUL-terminated). mode_out receives st_mode. */
static int read_key_file(const char *path, char *buf, size_t cap, size_t *len, mode_t *mode_out)
{
	struct stat st;
	size_t got = 0;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		goto out;
	}
	if (mode_out)
		*mode_out = st.st_mode;
	/* Check the mode and owner before reading a byte: a private key that
	 * others can read, or that another user (not root) owns and so can
	 * replace or re-mode, is refused, not used. */
	if (mode_out && ((st.st_mode & (S_IRWXG | S_IRWXO)) ||
			 (st.st_uid != geteuid() && st.st_uid != 0))) {
		ret = -EPERM;
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (got == cap - 1) {
			ret = -EFBIG;
			goto out;
		}
		n = read(fd, buf + got, cap - 1 - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	*len = got;
out:
	close(fd);
	return ret;
}

int kw_key_load_private(const char *path, struct kw_key **out)
{
	char *buf;
	size_t len = 0;
	mode_t mode = 0;
	int ret;

	*out = NULL;
	if (!path) {
		const char *env = getenv("TRACE_PRIVATE_KEY_PEM");

		if (!env || !*env)
			return -ENOENT;
		return key_from_private_pem(env, strlen(env), out);
	}
	/* The locked secure heap when the program set one up (kwitnessd),
	 * else the ordinary heap; cleansed either way. */
	buf = OPENSSL_secure_malloc(KEY_FILE_MAX);
	if (!buf)
		return -ENOMEM;
	ret = read_key_file(path, buf, KEY_FILE_MAX, &len, &mode);
	if (!ret)
		ret = key_from_private_pem(buf, len, out);
	OPENSSL_secure_clear_free(buf, KEY_FILE_MAX);
	return ret;
}

int kw_key_generate(const char *path, struct kw_key **out)
{
	EVP_PKEY *pkey = NULL;
	EVP_PKEY_CTX *ctx;
	struct kw_key *key = NULL;
	BIO *bio = NULL;
	char *pem = NULL;
	long pemlen = 0;
	int fd = -1, ret = 0;

	if (out)
		*out = NULL;
	ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
	if (!ctx)
		return -ENOMEM;
	if (EVP_PKEY_keygen_init(ctx) != 1 || EVP_PKEY_keygen(ctx, &pkey) != 1) {
		EVP_PKEY_CTX_free(ctx);
		return -EIO;
	}
	EVP_PKEY_CTX_free(ctx);

	/* Secure memory BIO: its buffers are cleansed when they grow or are freed. */
	bio = BIO_new(BIO_s_secmem());
	if (!bio) {
		EVP_PKEY_free(pkey);
		return -ENOMEM;
	}
	/* PEM_write_bio_PrivateKey writes PKCS#8 ("BEGIN PRIVATE KEY"). */
	if (PEM_write_bio_PrivateKey(bio, pkey, NULL, NULL, 0, NULL, NULL) != 1) {
		ret = -EIO;
		goto out;
	}
	pemlen = BIO_get_mem_data(bio, &pem);
	if (pemlen <= 0) {
		ret = -EIO;
		goto out;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	/* The umask can only remove bits; make the mode exact anyway. */
	if (fchmod(fd, 0600) < 0)
		ret = -errno;
	if (!ret)
		ret = kw_write_all(fd, pem, (size_t)pemlen);
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	if (ret) {
		close(fd);
		unlink(path);
		goto out;
	}
	if (close(fd) < 0) {
		ret = -errno;
		unlink(path);
		goto out;
	}
	ret = key_wrap(pkey, true, &key);
	pkey = NULL;
	if (ret) {
		unlink(path);
		goto out;
	}
	if (out)
		*out = key;
	else
		kw_key_free(key);
out:
	if (pem && pemlen > 0)
		OPENSSL_cleanse(pem, (size_t)pemlen);
	BIO_free(bio);
	EVP_PKEY_free(pkey);
	return ret;
}

static bool is_private_jwk_member(const char *name)
{
	static const char *const private_members[] = { "d", "p", "q", "dp", "dq", "qi", "k" };

	for (size_t i = 0; i < sizeof(private_members) / sizeof(private_members[0]); i++)
		if (!strcmp(name, private_members[i]))
			return true;
	return false;
}

bool kw_jwk_has_private_member(const json_t *jwk)
{
	const char *name;
	json_t *v;

	json_object_foreach((json_t *)jwk, name, v)
		if (is_private_jwk_member(name))
			return true;
	return false;
}

static bool jwk_str_equals(const json_t *jwk, const char *member, const char *want)
{
	const json_t *v = json_object_get(jwk, member);

	return json_is_string(v) && json_string_length(v) == strlen(want) &&
	       !strcmp(json_string_value(v), want);
}

int kw_key_from_jwk(const json_t *jwk, struct kw_key **out)
{
	uint8_t raw[ED25519_KEY_LEN + 3];
	const json_t *x;
	size_t n = 0;

	*out = NULL;
	if (!json_is_object(jwk))
		return -EINVAL;
	if (kw_jwk_has_private_member(jwk))
		return -EPERM;
	if (!jwk_str_equals(jwk, "kty", "OKP") || !jwk_str_equals(jwk, "crv", "Ed25519"))
		return -EINVAL;
	x = json_object_get(jwk, "x");
	if (!json_is_string(x) ||
	    kw_b64_decode(KW_B64_URL, json_string_value(x), json_string_length(x), raw, sizeof(raw), &n) ||
	    n != ED25519_KEY_LEN)
		return -EINVAL;
	return kw_key_from_raw_public(raw, out);
}

int kw_key_load_public(const char *path, struct kw_key **out)
{
	char *buf;
	size_t len = 0, i = 0;
	int ret;

	*out = NULL;
	buf = malloc(KEY_FILE_MAX);
	if (!buf)
		return -ENOMEM;
	ret = read_key_file(path, buf, KEY_FILE_MAX, &len, NULL);
	if (ret)
		goto out;
	while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r'))
		i++;
	if (i < len && buf[i] == '{') {
		json_t *jwk = jcs_parse(buf, len, NULL);

		ret = jwk ? kw_key_from_jwk(jwk, out) : -EINVAL;
		json_decref(jwk);
	} else {
		BIO *bio = BIO_new_mem_buf(buf, (int)len);
		EVP_PKEY *pkey;

		if (!bio) {
			ret = -ENOMEM;
			goto out;
		}
		pkey = PEM_read_bio_PUBKEY(bio, NULL, no_passphrase, NULL);
		if (pkey) {
			ret = key_wrap(pkey, false, out);
		} else {
			struct kw_key *priv = NULL;

			ERR_clear_error();
			/* A private key file: keep only its public half. */
			ret = key_from_private_pem(buf, len, &priv);
			if (!ret) {
				ret = kw_key_from_raw_public(priv->pub, out);
				kw_key_free(priv);
			}
		}
		BIO_free(bio);
	}
out:
	OPENSSL_cleanse(buf, KEY_FILE_MAX);
	free(buf);
	return ret;
}

json_t *kw_key_public_jwk(const struct kw_key *key)
{
	char x[KW_B64_LEN(ED25519_KEY_LEN)];

	if (!key)
		return NULL;
	kw_b64_encode(KW_B64_URL, key->pub, ED25519_KEY_LEN, x);
	return json_pack("{s:s, s:s, s:s}", "crv", "Ed25519", "kty", "OKP", "x", x);
}

int kw_key_thumbprint(const struct kw_key *key, char out[KW_THUMBPRINT_MAX])
{
	json_t *jwk = kw_key_public_jwk(key);
	int ret;

	if (!jwk)
		return -ENOMEM;
	ret = kw_jwk_thumbprint(jwk, out);
	json_decref(jwk);
	return ret;
}

/* RFC 7638 section 3.2: the required members of each key type. */
static const char *const *jwk_required_members(const char *kty)
{
	static const char *const okp[] = { "crv", "kty", "x", NULL };
	static const char *const ec[] = { "crv", "kty", "x", "y", NULL };
	static const char *const rsa[] = { "e", "kty", "n", NULL };

	if (!strcmp(kty, "OKP"))
		return okp;
	if (!strcmp(kty, "EC"))
		return ec;
	if (!strcmp(kty, "RSA"))
		return rsa;
	return NULL;
}

int kw_jwk_thumbprint(const json_t *jwk, char out[KW_THUMBPRINT_MAX])
{
	const char *const *members;
	const json_t *kty;
	struct kw_buf canon = { 0 };
	unsigned char md[32];
	unsigned int mdlen = 0;
	json_t *reduced;
	int ret = 0;

	if (!json_is_object(jwk))
		return -EINVAL;
	kty = json_object_get(jwk, "kty");
	if (!json_is_string(kty) || !(members = jwk_required_members(json_string_value(kty))))
		return -EINVAL;
	reduced = json_object();
	if (!reduced)
		return -ENOMEM;
	for (size_t i = 0; members[i]; i++) {
		json_t *v = json_object_get(jwk, members[i]);

		if (!json_is_string(v) || json_object_set(reduced, members[i], v)) {
			ret = -EINVAL;
			goto out;
		}
	}
	ret = jcs_dump(reduced, &canon);
	if (ret)
		goto out;
	if (EVP_Digest(canon.data, canon.len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32) {
		ret = -EIO;
		goto out;
	}
	kw_b64_encode(KW_B64_URL, md, sizeof(md), out);
out:
	kw_buf_free(&canon);
	json_decref(reduced);
	return ret;
}

int kw_key_sign(const struct kw_key *key, const void *msg, size_t n,
		uint8_t sig[KW_ED25519_SIG_LEN])
{
	EVP_MD_CTX *ctx;
	size_t siglen = KW_ED25519_SIG_LEN;
	int ret = 0;

	if (!key || !key->has_private)
		return -EINVAL;
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -ENOMEM;
	if (EVP_DigestSignInit(ctx, NULL, NULL, NULL, key->pkey) != 1 ||
	    EVP_DigestSign(ctx, sig, &siglen, msg, n) != 1 || siglen != KW_ED25519_SIG_LEN)
		ret = -EIO;
	EVP_MD_CTX_free(ctx);
	return ret;
}

int kw_key_verify(const struct kw_key *key, const void *msg, size_t n,
		  const uint8_t *sig, size_t siglen)
{
	EVP_MD_CTX *ctx;
	int ret;

	if (!key)
		return -EINVAL;
	if (siglen != KW_ED25519_SIG_LEN)
		return -EBADMSG;
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -ENOMEM;
	if (EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key->pkey) != 1)
		ret = -EIO;
	else
		ret = EVP_DigestVerify(ctx, sig, siglen, msg, n) == 1 ? 0 : -EBADMSG;
	EVP_MD_CTX_free(ctx);
	return ret;
}
