/* SPDX-License-Identifier: Apache-2.0 */
/* Checks a TPM 2.0 quote without a TPM: the AK public area, the attest
 * structure, the ECDSA signature and the PCR values against pcrDigest. The
 * collector runs this on its own quote before signing anything, and the
 * verifier runs it in appraisal step 3 (and 6 for the values). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <tss2/tss2_mu.h>

#include "tpm/tpm.h"
#include "tpm_internal.h"

static int fail(char *why, size_t whylen, int *part, int p, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int fail(char *why, size_t whylen, int *part, int p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	*part = p;
	return -EBADMSG;
}

void kw_tss_quiet(void)
{
	setenv("TSS2_LOG", "all+NONE", 0);
}

void kw_tpm_firmware_string(uint64_t fw, char out[48])
{
	snprintf(out, 48, "%u.%u.%u.%u", (unsigned)(fw >> 48), (unsigned)((fw >> 32) & 0xffff),
		 (unsigned)((fw >> 16) & 0xffff), (unsigned)(fw & 0xffff));
}

int kw_tpm_name_of(const uint8_t *pub, size_t len, uint8_t name[34])
{
	unsigned int n = 0;

	name[0] = (uint8_t)(TPM2_ALG_SHA256 >> 8);
	name[1] = (uint8_t)(TPM2_ALG_SHA256 & 0xff);
	return EVP_Digest(pub, len, name + 2, &n, EVP_sha256(), NULL) == 1 && n == 32 ? 0 : -EIO;
}

int kw_tpm_ak_check(const TPMT_PUBLIC *p, char *why, size_t whylen)
{
	const TPMA_OBJECT must = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
				 TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_RESTRICTED |
				 TPMA_OBJECT_SIGN_ENCRYPT;

	if (p->type != TPM2_ALG_ECC || p->nameAlg != TPM2_ALG_SHA256 ||
	    p->parameters.eccDetail.curveID != TPM2_ECC_NIST_P256 ||
	    p->parameters.eccDetail.scheme.scheme != TPM2_ALG_ECDSA ||
	    p->parameters.eccDetail.scheme.details.ecdsa.hashAlg != TPM2_ALG_SHA256) {
		snprintf(why, whylen, "the AK is not an ECDSA P-256/SHA-256 key");
		return -EBADMSG;
	}
	/* Restricted: it signs only what the TPM itself generated (attest
	 * structures), so a quote cannot be forged by asking it to sign bytes. */
	if ((p->objectAttributes & must) != must || (p->objectAttributes & TPMA_OBJECT_DECRYPT)) {
		snprintf(why, whylen,
			 "the AK is not a restricted signing key fixed to its TPM (attributes 0x%08x)",
			 (unsigned)p->objectAttributes);
		return -EBADMSG;
	}
	if (p->unique.ecc.x.size > 32 || p->unique.ecc.y.size > 32) {
		snprintf(why, whylen, "the AK's public point is malformed");
		return -EBADMSG;
	}
	return 0;
}

static EVP_PKEY *ak_pkey(const TPMT_PUBLIC *p)
{
	uint8_t point[65] = { 0x04 };
	const TPMS_ECC_POINT *u = &p->unique.ecc;
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	EVP_PKEY *pkey = NULL;

	memcpy(point + 1 + 32 - u->x.size, u->x.buffer, u->x.size);
	memcpy(point + 33 + 32 - u->y.size, u->y.buffer, u->y.size);
	if (!bld ||
	    !OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) ||
	    !OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof(point)))
		goto out;
	params = OSSL_PARAM_BLD_to_param(bld);
	ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	if (!params || !ctx || EVP_PKEY_fromdata_init(ctx) != 1 ||
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1)
		pkey = NULL;
out:
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	return pkey;
}

int kw_tpm_ecdsa_verify(const TPMT_PUBLIC *ak, const TPMS_SIGNATURE_ECC *sig, const void *msg,
			size_t len)
{
	EVP_PKEY *pkey = ak_pkey(ak);
	ECDSA_SIG *es = ECDSA_SIG_new();
	BIGNUM *r = BN_bin2bn(sig->signatureR.buffer, sig->signatureR.size, NULL);
	BIGNUM *s = BN_bin2bn(sig->signatureS.buffer, sig->signatureS.size, NULL);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned char *der = NULL;
	int derlen, ok = 0;

	if (!pkey || !es || !r || !s || !md || !ECDSA_SIG_set0(es, r, s)) {
		BN_free(r);
		BN_free(s);
		goto out;
	}
	derlen = i2d_ECDSA_SIG(es, &der);
	if (derlen <= 0)
		goto out;
	ok = EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, pkey) == 1 &&
	     EVP_DigestVerify(md, der, (size_t)derlen, msg, len) == 1;
out:
	OPENSSL_free(der);
	EVP_MD_CTX_free(md);
	ECDSA_SIG_free(es);
	EVP_PKEY_free(pkey);
	return ok;
}

int kw_tpm_pcr_values_digest(const struct kw_tpm_quote *q, uint8_t out[32])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned int n = 0;
	int ok;

	ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1;
	/* The quote hashes the selected PCRs in ascending index order. */
	for (unsigned i = 0; ok && i < KW_TPM_PCR_COUNT; i++)
		if (q->sel.mask & (1u << i))
			ok = EVP_DigestUpdate(md, q->pcr[i], 32) == 1;
	ok = ok && EVP_DigestFinal_ex(md, out, &n) == 1 && n == 32;
	EVP_MD_CTX_free(md);
	return ok ? 0 : -EIO;
}

int kw_quote_check(const struct kw_tpm_quote *q, struct kw_quote_facts *f, int *part, char *why,
		   size_t whylen)
{
	TPMS_ATTEST at;
	TPMT_SIGNATURE sig;
	TPMT_PUBLIC ak;
	const TPML_PCR_SELECTION *ps;
	uint8_t values_digest[32];
	uint32_t mask = 0;
	size_t off;
	int ret;

	memset(f, 0, sizeof(*f));
	off = 0;
	if (Tss2_MU_TPMT_PUBLIC_Unmarshal((const uint8_t *)q->ak_public.data, q->ak_public.len, &off,
					  &ak) || off != q->ak_public.len)
		return fail(why, whylen, part, 3, "the AK public area does not parse");
	ret = kw_tpm_ak_check(&ak, why, whylen);
	if (ret) {
		*part = 3;
		return ret;
	}
	if (kw_tpm_name_of((const uint8_t *)q->ak_public.data, q->ak_public.len, f->ak_name))
		return -EIO;
	off = 0;
	if (Tss2_MU_TPMS_ATTEST_Unmarshal((const uint8_t *)q->attest.data, q->attest.len, &off, &at) ||
	    off != q->attest.len)
		return fail(why, whylen, part, 3, "the attest structure does not parse");
	if (at.magic != TPM2_GENERATED_VALUE || at.type != TPM2_ST_ATTEST_QUOTE)
		return fail(why, whylen, part, 3, "the attest structure is not a TPM-generated quote");
	off = 0;
	if (Tss2_MU_TPMT_SIGNATURE_Unmarshal((const uint8_t *)q->signature.data, q->signature.len,
					     &off, &sig) || off != q->signature.len)
		return fail(why, whylen, part, 3, "the quote signature does not parse");
	if (sig.sigAlg != TPM2_ALG_ECDSA || sig.signature.ecdsa.hash != TPM2_ALG_SHA256 ||
	    sig.signature.ecdsa.signatureR.size > 32 || sig.signature.ecdsa.signatureS.size > 32)
		return fail(why, whylen, part, 3, "the quote signature is not ECDSA with SHA-256");
	if (!kw_tpm_ecdsa_verify(&ak, &sig.signature.ecdsa, q->attest.data, q->attest.len))
		return fail(why, whylen, part, 3, "the quote signature does not verify with the AK");

	ps = &at.attested.quote.pcrSelect;
	if (ps->count != 1 || ps->pcrSelections[0].hash != TPM2_ALG_SHA256 ||
	    ps->pcrSelections[0].sizeofSelect < 3 || ps->pcrSelections[0].sizeofSelect > 4)
		return fail(why, whylen, part, 3, "the quote does not select one SHA-256 bank");
	for (unsigned i = 0; i < ps->pcrSelections[0].sizeofSelect; i++)
		mask |= (uint32_t)ps->pcrSelections[0].pcrSelect[i] << (8 * i);
	if (mask != q->sel.mask)
		return fail(why, whylen, part, 3, "the quote covers other PCRs than the evidence lists");
	if (at.attested.quote.pcrDigest.size != 32)
		return fail(why, whylen, part, 3, "the quote's pcrDigest is not a SHA-256 digest");
	if (at.extraData.size > sizeof(f->extra))
		return fail(why, whylen, part, 3, "the quote's extraData is too long");
	memcpy(f->extra, at.extraData.buffer, at.extraData.size);
	f->extra_len = at.extraData.size;
	memcpy(f->pcr_digest, at.attested.quote.pcrDigest.buffer, 32);
	f->firmware = at.firmwareVersion;
	kw_tpm_firmware_string(at.firmwareVersion, f->firmware_version);
	snprintf(f->measurement, sizeof(f->measurement), "sha256:");
	for (int i = 0; i < 32; i++)
		snprintf(f->measurement + 7 + 2 * i, 3, "%02x", f->pcr_digest[i]);

	if (kw_tpm_pcr_values_digest(q, values_digest))
		return -EIO;
	if (CRYPTO_memcmp(values_digest, f->pcr_digest, 32))
		return fail(why, whylen, part, 6,
			    "the PCR values in the evidence do not hash to the quoted pcrDigest");
	return 0;
}

void kw_tpm_quote_free(struct kw_tpm_quote *q)
{
	kw_buf_free(&q->attest);
	kw_buf_free(&q->signature);
	kw_buf_free(&q->ak_public);
	memset(q, 0, sizeof(*q));
}
