/* SPDX-License-Identifier: Apache-2.0 */
/* Enrollment by credential activation: the enroller checks the EK
 * certificate against its CA, makes a credential for the EK's public key and
 * the AK's name (makecred.c, in software), and the TPM must give the secret
 * back with TPM2_ActivateCredential. It can only if it holds that EK and a
 * loaded object with that name, which is how an AK that merely claims to
 * live beside the EK is told apart from one that does. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>

#include "device.h"
#include "enrollment.h"

/* ActivateCredential on the TPM; the EK's policy is PolicySecret(endorsement). */
static int activate(struct kw_tpm *t, const struct kw_buf *id, const struct kw_buf *secret,
		    uint8_t out[64], size_t *outlen, char *err, size_t errlen)
{
	TPMT_SYM_DEF sym = { .algorithm = TPM2_ALG_NULL };
	TPM2B_ID_OBJECT blob = { 0 };
	TPM2B_ENCRYPTED_SECRET enc = { 0 };
	TPM2B_NONCE empty_nonce = { 0 };
	TPM2B_DIGEST empty_digest = { 0 };
	TPM2B_TIMEOUT *timeout = NULL;
	TPMT_TK_AUTH *ticket = NULL;
	TPM2B_DIGEST *cert_info = NULL;
	ESYS_TR session = ESYS_TR_NONE;
	TSS2_RC rc;
	int ret = -EIO;

	if (id->len > sizeof(blob.credential) || secret->len > sizeof(enc.secret))
		return -EINVAL;
	blob.size = (uint16_t)id->len;
	memcpy(blob.credential, id->data, id->len);
	enc.size = (uint16_t)secret->len;
	memcpy(enc.secret, secret->data, secret->len);
	rc = Esys_StartAuthSession(t->ctx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
				   ESYS_TR_NONE, NULL, TPM2_SE_POLICY, &sym, TPM2_ALG_SHA256, &session);
	if (rc) {
		kw_tpm_rc_error(err, errlen, "StartAuthSession", rc);
		return -EIO;
	}
	rc = Esys_PolicySecret(t->ctx, ESYS_TR_RH_ENDORSEMENT, session, ESYS_TR_PASSWORD,
			       ESYS_TR_NONE, ESYS_TR_NONE, &empty_nonce, &empty_digest, &empty_nonce,
			       0, &timeout, &ticket);
	Esys_Free(timeout);
	Esys_Free(ticket);
	if (rc) {
		kw_tpm_rc_error(err, errlen, "PolicySecret(endorsement)", rc);
		goto out;
	}
	rc = Esys_ActivateCredential(t->ctx, t->ak, t->ek, ESYS_TR_PASSWORD, session, ESYS_TR_NONE,
				     &blob, &enc, &cert_info);
	if (rc) {
		snprintf(err, errlen,
			 "the TPM cannot activate a credential made for the EK certificate's key and this AK: %s",
			 Tss2_RC_Decode(rc));
		goto out;
	}
	if (cert_info->size > 64) {
		snprintf(err, errlen, "ActivateCredential returned an oversized secret");
		goto out;
	}
	memcpy(out, cert_info->buffer, cert_info->size);
	*outlen = cert_info->size;
	ret = 0;
out:
	if (cert_info)
		OPENSSL_cleanse(cert_info->buffer, cert_info->size);
	Esys_Free(cert_info);
	if (session != ESYS_TR_NONE)
		Esys_FlushContext(t->ctx, session);
	return ret;
}

json_t *kw_tpm_enroll(struct kw_tpm *t, const char *ca_file, const struct kw_key *enroll_key,
		      const struct kw_enroll_subject *subj, json_t **ak_out, char *err,
		      size_t errlen)
{
	struct kw_buf ek = { 0 }, id = { 0 }, secret = { 0 };
	uint8_t name[34], cred[32], back[64];
	TPM2B_NAME *tpm_name = NULL;
	TPMT_PUBLIC ak;
	size_t off = 0, backlen = 0;
	json_t *enr = NULL;
	char why[300];

	*ak_out = NULL;
	if (kw_tpm_ek_cert(t, &ek, err, errlen))
		goto out;
	if (kw_ek_chain_verify(&ek, 1, ca_file, why, sizeof(why))) {
		snprintf(err, errlen, "%s", why);
		goto out;
	}
	if (!(*ak_out = kw_tpm_ak_create(t, err, errlen)) || kw_tpm_load_ek(t, err, errlen))
		goto out;
	if (Tss2_MU_TPMT_PUBLIC_Unmarshal(t->ak_public, t->ak_public_len, &off, &ak) ||
	    kw_tpm_ak_check(&ak, err, errlen) || kw_tpm_name_of(t->ak_public, t->ak_public_len, name))
		goto out;
	/* The name the TPM computes must be the one the credential is bound to. */
	if (Esys_TR_GetName(t->ctx, t->ak, &tpm_name) || tpm_name->size != sizeof(name) ||
	    memcmp(tpm_name->name, name, sizeof(name))) {
		snprintf(err, errlen, "the TPM names the AK differently from its public area");
		goto out;
	}
	if (RAND_bytes(cred, sizeof(cred)) != 1 ||
	    kw_make_credential((const uint8_t *)ek.data, ek.len, name, sizeof(name), cred,
			       sizeof(cred), &id, &secret, err, errlen))
		goto out;
	if (activate(t, &id, &secret, back, &backlen, err, errlen))
		goto out;
	if (backlen != sizeof(cred) || CRYPTO_memcmp(back, cred, sizeof(cred))) {
		snprintf(err, errlen, "the TPM returned another secret than the credential held");
		goto out;
	}
	enr = kw_enrollment_sign(&ek, name, subj, enroll_key, err, errlen);
out:
	if (!enr) {
		json_decref(*ak_out);
		*ak_out = NULL;
	}
	OPENSSL_cleanse(cred, sizeof(cred));
	OPENSSL_cleanse(back, sizeof(back));
	Esys_Free(tpm_name);
	kw_buf_free(&ek);
	kw_buf_free(&id);
	kw_buf_free(&secret);
	return enr;
}
