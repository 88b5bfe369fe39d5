/* SPDX-License-Identifier: Apache-2.0 */
/* TPM2_MakeCredential done in software by the enrolling side, from the EK
 * public key in the EK certificate (TPM 2.0 Part 1, "Credential
 * Protection"): a random seed encrypted to the EK with RSA-OAEP (label
 * "IDENTITY"), a symmetric key and an HMAC key derived from the seed with
 * KDFa, the credential encrypted with AES-128-CFB and bound to the object's
 * name by the HMAC. Only the TPM that holds the EK's private key, and only
 * for a loaded object with that name, can open it (TPM2_ActivateCredential).
 * Doing it here rather than on the TPM being enrolled keeps the secret away
 * from it except in that encrypted form. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include "tpm/tpm.h"

/* KDFa (SP 800-108 counter mode, HMAC-SHA-256): label is NUL-terminated. */
static int kdfa(const uint8_t *key, size_t keylen, const char *label, const uint8_t *u,
		size_t ulen, uint8_t *out, size_t outlen)
{
	uint8_t block[32];
	uint32_t bits = (uint32_t)outlen * 8;

	for (uint32_t i = 1, done = 0; done < outlen; i++) {
		uint8_t msg[256];
		size_t n = 0, ll = strlen(label) + 1;
		unsigned int blen = 0;

		if (4 + ll + ulen + 4 > sizeof(msg))
			return -EINVAL;
		msg[n++] = (uint8_t)(i >> 24);
		msg[n++] = (uint8_t)(i >> 16);
		msg[n++] = (uint8_t)(i >> 8);
		msg[n++] = (uint8_t)i;
		memcpy(msg + n, label, ll);
		n += ll;
		memcpy(msg + n, u, ulen);
		n += ulen;
		msg[n++] = (uint8_t)(bits >> 24);
		msg[n++] = (uint8_t)(bits >> 16);
		msg[n++] = (uint8_t)(bits >> 8);
		msg[n++] = (uint8_t)bits;
		if (!HMAC(EVP_sha256(), key, (int)keylen, msg, n, block, &blen) || blen != 32)
			return -EIO;
		memcpy(out + done, block, outlen - done < 32 ? outlen - done : 32);
		done += outlen - done < 32 ? (uint32_t)(outlen - done) : 32;
	}
	OPENSSL_cleanse(block, sizeof(block));
	return 0;
}

static int oaep_encrypt(EVP_PKEY *ek, const uint8_t *in, size_t inlen, struct kw_buf *out)
{
	static const char label[] = "IDENTITY"; /* with its NUL: 9 bytes */
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(ek, NULL);
	unsigned char *lab = OPENSSL_memdup(label, sizeof(label));
	uint8_t buf[512];
	size_t n = sizeof(buf);
	int ok;

	ok = ctx && lab && EVP_PKEY_encrypt_init(ctx) == 1 &&
	     EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) == 1 &&
	     EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha256()) == 1 &&
	     EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha256()) == 1 &&
	     EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, lab, sizeof(label)) == 1;
	if (ok)
		lab = NULL; /* owned by ctx now */
	ok = ok && EVP_PKEY_encrypt(ctx, buf, &n, in, inlen) == 1;
	ok = ok && !kw_buf_append(out, buf, n);
	OPENSSL_free(lab);
	EVP_PKEY_CTX_free(ctx);
	return ok ? 0 : -EIO;
}

int kw_make_credential(const uint8_t *ek_der, size_t ek_der_len, const uint8_t *name,
		       size_t name_len, const uint8_t *cred, size_t cred_len,
		       struct kw_buf *id_object, struct kw_buf *enc_secret, char *err, size_t errlen)
{
	const unsigned char *p = ek_der;
	X509 *cert = d2i_X509(NULL, &p, (long)ek_der_len);
	EVP_PKEY *ek = cert ? X509_get0_pubkey(cert) : NULL;
	uint8_t seed[32], sym[16], hkey[32], plain[2 + 64], enc[2 + 64], hmac[32];
	EVP_CIPHER_CTX *c = NULL;
	unsigned int hlen = 0;
	int n1 = 0, n2 = 0, ret = -EIO;
	uint8_t *mac_in = NULL;

	if (!ek || EVP_PKEY_get_base_id(ek) != EVP_PKEY_RSA || EVP_PKEY_get_bits(ek) != 2048) {
		snprintf(err, errlen, "the EK certificate does not hold an RSA 2048 key");
		ret = -EINVAL;
		goto out;
	}
	if (cred_len == 0 || cred_len > 64 || name_len != 34) {
		snprintf(err, errlen, "credential or name of the wrong size");
		ret = -EINVAL;
		goto out;
	}
	if (RAND_bytes(seed, sizeof(seed)) != 1 || oaep_encrypt(ek, seed, sizeof(seed), enc_secret) ||
	    kdfa(seed, sizeof(seed), "STORAGE", name, name_len, sym, sizeof(sym)) ||
	    kdfa(seed, sizeof(seed), "INTEGRITY", NULL, 0, hkey, sizeof(hkey))) {
		snprintf(err, errlen, "credential encryption failed");
		goto out;
	}
	/* The credential is encrypted as a TPM2B_DIGEST (size, then bytes). */
	plain[0] = (uint8_t)(cred_len >> 8);
	plain[1] = (uint8_t)cred_len;
	memcpy(plain + 2, cred, cred_len);
	c = EVP_CIPHER_CTX_new();
	{
		static const uint8_t iv[16];

		if (!c || EVP_EncryptInit_ex(c, EVP_aes_128_cfb128(), NULL, sym, iv) != 1 ||
		    EVP_EncryptUpdate(c, enc, &n1, plain, (int)(2 + cred_len)) != 1 ||
		    EVP_EncryptFinal_ex(c, enc + n1, &n2) != 1 || (size_t)(n1 + n2) != 2 + cred_len) {
			snprintf(err, errlen, "credential encryption failed");
			goto out;
		}
	}
	mac_in = OPENSSL_malloc(2 + cred_len + name_len);
	if (!mac_in)
		goto out;
	memcpy(mac_in, enc, 2 + cred_len);
	memcpy(mac_in + 2 + cred_len, name, name_len);
	if (!HMAC(EVP_sha256(), hkey, sizeof(hkey), mac_in, 2 + cred_len + name_len, hmac, &hlen) ||
	    hlen != 32) {
		snprintf(err, errlen, "credential integrity failed");
		goto out;
	}
	/* TPM2B_ID_OBJECT contents: TPM2B_DIGEST integrity, then encIdentity. */
	{
		uint8_t size2[2] = { 0, 32 };

		if (kw_buf_append(id_object, size2, 2) || kw_buf_append(id_object, hmac, 32) ||
		    kw_buf_append(id_object, enc, 2 + cred_len))
			goto out;
	}
	ret = 0;
out:
	OPENSSL_cleanse(seed, sizeof(seed));
	OPENSSL_cleanse(sym, sizeof(sym));
	OPENSSL_cleanse(hkey, sizeof(hkey));
	OPENSSL_cleanse(plain, sizeof(plain));
	OPENSSL_free(mac_in);
	EVP_CIPHER_CTX_free(c);
	X509_free(cert);
	return ret;
}
