/* SPDX-License-Identifier: Apache-2.0 */
/* The TPM itself: opening a TCTI, the EK and its certificate (the
 * attestation key is ak.c's). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#include "device.h"

void kw_tpm_rc_error(char *err, size_t errlen, const char *what, TSS2_RC rc)
{
	snprintf(err, errlen, "TPM %s failed: %s", what, Tss2_RC_Decode(rc));
}

static bool tcti_known(const char *tcti)
{
	static const char *const prefixes[] = { "device:", "swtpm:", "mssim:" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(tcti, prefixes[i], strlen(prefixes[i])) && tcti[strlen(prefixes[i])])
			return true;
	return false;
}

int kw_tpm_open(const char *tcti, struct kw_tpm **out, char *err, size_t errlen)
{
	struct kw_tpm *t;
	TPMS_CAPABILITY_DATA *cap = NULL;
	TPMI_YES_NO more;
	TSS2_RC rc;

	*out = NULL;
	if (!tcti || strlen(tcti) > 256 || !tcti_known(tcti)) {
		snprintf(err, errlen,
			 "TPM '%.64s': expected device:/dev/tpmrm0 or swtpm:host=H,port=P",
			 tcti ? tcti : "");
		return -EINVAL;
	}
	kw_tss_quiet();
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->ak = ESYS_TR_NONE;
	t->ek = ESYS_TR_NONE;
	rc = Tss2_TctiLdr_Initialize(tcti, &t->tcti);
	if (rc) {
		snprintf(err, errlen, "TPM '%.64s' cannot be reached: %s", tcti, Tss2_RC_Decode(rc));
		goto fail;
	}
	rc = Esys_Initialize(&t->ctx, t->tcti, NULL);
	if (rc) {
		kw_tpm_rc_error(err, errlen, "context setup", rc);
		goto fail;
	}
	/* A first command: a TCTI can open without a TPM answering behind it. */
	rc = Esys_GetCapability(t->ctx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
				TPM2_CAP_TPM_PROPERTIES, TPM2_PT_FIRMWARE_VERSION_1, 2, &more, &cap);
	Esys_Free(cap);
	if (rc) {
		snprintf(err, errlen, "TPM '%.64s' does not answer: %s", tcti, Tss2_RC_Decode(rc));
		goto fail;
	}
	*out = t;
	return 0;
fail:
	kw_tpm_close(t);
	return -ENODEV;
}

void kw_tpm_close(struct kw_tpm *t)
{
	if (!t)
		return;
	if (t->ctx) {
		if (t->ak != ESYS_TR_NONE)
			Esys_FlushContext(t->ctx, t->ak);
		if (t->ek != ESYS_TR_NONE && t->ek_transient)
			Esys_FlushContext(t->ctx, t->ek);
		Esys_Finalize(&t->ctx);
	}
	if (t->tcti)
		Tss2_TctiLdr_Finalize(&t->tcti);
	free(t->ak_public);
	json_decref(t->ak_file);
	free(t);
}

/* A primary key from tmpl in the endorsement hierarchy (empty auth, no
 * outside info, no PCRs); *pub is the caller's to Esys_Free (NULL: freed). */
TSS2_RC kw_tpm_create_endorsement_primary(struct kw_tpm *t, const TPM2B_PUBLIC *tmpl,
					   ESYS_TR *handle, TPM2B_PUBLIC **pub)
{
	TPM2B_SENSITIVE_CREATE sens = { 0 };
	TPM2B_DATA outside = { 0 };
	TPML_PCR_SELECTION none = { 0 };
	TPM2B_PUBLIC *out_pub = NULL;
	TPM2B_CREATION_DATA *cdata = NULL;
	TPM2B_DIGEST *chash = NULL;
	TPMT_TK_CREATION *ticket = NULL;
	TSS2_RC rc = Esys_CreatePrimary(t->ctx, ESYS_TR_RH_ENDORSEMENT, ESYS_TR_PASSWORD,
					ESYS_TR_NONE, ESYS_TR_NONE, &sens, tmpl, &outside, &none,
					handle, &out_pub, &cdata, &chash, &ticket);
	Esys_Free(cdata);
	Esys_Free(chash);
	Esys_Free(ticket);
	if (pub)
		*pub = out_pub;
	else
		Esys_Free(out_pub);
	return rc;
}

int kw_tpm_ak_name(struct kw_tpm *t, uint8_t name[34], char *err, size_t errlen)
{
	int ret = kw_tpm_load_ak(t, err, errlen);

	return ret ? ret : kw_tpm_name_of(t->ak_public, t->ak_public_len, name);
}

int kw_tpm_load_ek(struct kw_tpm *t, char *err, size_t errlen)
{
	/* TCG EK Credential Profile template L-1 (RSA 2048): its authPolicy is
	 * PolicySecret(TPM_RH_ENDORSEMENT). */
	static const uint8_t policy[32] = {
		0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xb3, 0xf8, 0x1a, 0x90, 0xcc,
		0x8d, 0x46, 0xa5, 0xd7, 0x24, 0xfd, 0x52, 0xd7, 0x6e, 0x06, 0x52,
		0x0b, 0x64, 0xf2, 0xa1, 0xda, 0x1b, 0x33, 0x14, 0x69, 0xaa,
	};
	TPM2B_PUBLIC tmpl = { 0 };
	TPMT_PUBLIC *p = &tmpl.publicArea;
	TSS2_RC rc;

	if (t->ek != ESYS_TR_NONE)
		return 0;
	/* Provisioning usually leaves the EK persistent; else make it. */
	if (!Esys_TR_FromTPMPublic(t->ctx, KW_TPM_EK_PERSISTENT, ESYS_TR_NONE, ESYS_TR_NONE,
				   ESYS_TR_NONE, &t->ek))
		return 0;
	t->ek = ESYS_TR_NONE;
	p->type = TPM2_ALG_RSA;
	p->nameAlg = TPM2_ALG_SHA256;
	p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
			      TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_ADMINWITHPOLICY |
			      TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;
	p->authPolicy.size = sizeof(policy);
	memcpy(p->authPolicy.buffer, policy, sizeof(policy));
	p->parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_AES;
	p->parameters.rsaDetail.symmetric.keyBits.aes = 128;
	p->parameters.rsaDetail.symmetric.mode.aes = TPM2_ALG_CFB;
	p->parameters.rsaDetail.scheme.scheme = TPM2_ALG_NULL;
	p->parameters.rsaDetail.keyBits = 2048;
	p->parameters.rsaDetail.exponent = 0;
	p->unique.rsa.size = 256;
	rc = kw_tpm_create_endorsement_primary(t, &tmpl, &t->ek, NULL);
	if (rc) {
		t->ek = ESYS_TR_NONE;
		kw_tpm_rc_error(err, errlen, "EK creation", rc);
		return -EIO;
	}
	t->ek_transient = true;
	return 0;
}

int kw_tpm_ek_cert(struct kw_tpm *t, struct kw_buf *der, char *err, size_t errlen)
{
	TPM2B_NV_PUBLIC *nvpub = NULL;
	ESYS_TR nv = ESYS_TR_NONE;
	TSS2_RC rc;
	uint16_t size, off = 0;
	int ret = -EIO;

	rc = Esys_TR_FromTPMPublic(t->ctx, KW_TPM_NV_EK_CERT_RSA, ESYS_TR_NONE, ESYS_TR_NONE,
				   ESYS_TR_NONE, &nv);
	if (rc) {
		snprintf(err, errlen, "the TPM holds no RSA EK certificate (NV index 0x%08x): %s",
			 KW_TPM_NV_EK_CERT_RSA, Tss2_RC_Decode(rc));
		return -ENOENT;
	}
	rc = Esys_NV_ReadPublic(t->ctx, nv, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nvpub, NULL);
	if (rc) {
		kw_tpm_rc_error(err, errlen, "EK certificate NV_ReadPublic", rc);
		goto out;
	}
	size = nvpub->nvPublic.dataSize;
	kw_buf_reset(der);
	while (off < size) {
		TPM2B_MAX_NV_BUFFER *chunk = NULL;
		uint16_t n = size - off > 512 ? 512 : size - off;

		rc = Esys_NV_Read(t->ctx, nv, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, n, off,
				  &chunk);
		if (rc) {
			kw_tpm_rc_error(err, errlen, "EK certificate NV_Read", rc);
			goto out;
		}
		if (chunk->size != n || kw_buf_append(der, chunk->buffer, n)) {
			Esys_Free(chunk);
			snprintf(err, errlen, "EK certificate read came back short");
			goto out;
		}
		Esys_Free(chunk);
		off += n;
	}
	ret = 0;
out:
	Esys_Free(nvpub);
	Esys_TR_Close(t->ctx, &nv);
	return ret;
}
