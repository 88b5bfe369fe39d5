/* SPDX-License-Identifier: Apache-2.0 */
/* The device side of committed sessions: the extend and counter NV indexes,
 * extending, incrementing and certifying (see commit.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>

#include "commit.h"
#include "device.h"

/* Written and read only with the index's own auth value (kwitnessd's); no
 * dictionary-attack lockout, so a wrong guess by another process cannot
 * lock kwitnessd out. */
#define KW_NV_ATTRS (TPMA_NV_AUTHWRITE | TPMA_NV_AUTHREAD | TPMA_NV_NO_DA)

static TPM2B_NV_PUBLIC nv_template(TPM2_HANDLE index, TPM2_NT type, uint16_t size)
{
	TPM2B_NV_PUBLIC p = { 0 };

	p.nvPublic.nvIndex = index;
	p.nvPublic.nameAlg = TPM2_ALG_SHA256;
	p.nvPublic.attributes = KW_NV_ATTRS | ((TPMA_NV)type << TPMA_NV_TPM2_NT_SHIFT);
	p.nvPublic.dataSize = size;
	return p;
}

/* The index as an ESYS object with auth set; defines it when absent. */
static int nv_open(struct kw_tpm *t, TPM2_HANDLE index, TPM2_NT type, uint16_t size,
		   const uint8_t auth[32], bool define, ESYS_TR *nv, char *err, size_t errlen)
{
	TPM2B_AUTH a = { .size = 32 };
	TSS2_RC rc;

	memcpy(a.buffer, auth, 32);
	rc = Esys_TR_FromTPMPublic(t->ctx, index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, nv);
	if (rc && define) {
		TPM2B_NV_PUBLIC pub = nv_template(index, type, size);

		rc = Esys_NV_DefineSpace(t->ctx, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE,
					 ESYS_TR_NONE, &a, &pub, nv);
		if (rc) {
			kw_tpm_rc_error(err, errlen, "NV_DefineSpace (owner authorisation)", rc);
			return -EACCES;
		}
	} else if (rc) {
		snprintf(err, errlen, "the TPM has no NV index 0x%08x: %s", index, Tss2_RC_Decode(rc));
		return -ENOENT;
	}
	if (Esys_TR_SetAuth(t->ctx, *nv, &a)) {
		Esys_TR_Close(t->ctx, nv);
		return -EIO;
	}
	return 0;
}

/* The index must be what kwitnessd defines: an index of another type or
 * with other write rights is someone else's (or a trap). */
static int nv_check(struct kw_tpm *t, ESYS_TR nv, TPM2_HANDLE index, TPM2_NT type, uint16_t size,
		    TPM2B_NV_PUBLIC **out, char *err, size_t errlen)
{
	TPM2B_NV_PUBLIC *pub = NULL, want = nv_template(index, type, size);
	TSS2_RC rc = Esys_NV_ReadPublic(t->ctx, nv, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pub,
					NULL);
	TPMA_NV mask = ~(TPMA_NV)TPMA_NV_WRITTEN;

	if (rc) {
		kw_tpm_rc_error(err, errlen, "NV_ReadPublic", rc);
		return -EIO;
	}
	if (pub->nvPublic.nameAlg != TPM2_ALG_SHA256 || pub->nvPublic.dataSize != size ||
	    (pub->nvPublic.attributes & mask) != want.nvPublic.attributes ||
	    pub->nvPublic.authPolicy.size) {
		snprintf(err, errlen,
			 "NV index 0x%08x exists with other attributes than kwitness defines (0x%08x): "
			 "someone else's index", index, (unsigned)pub->nvPublic.attributes);
		Esys_Free(pub);
		return -EEXIST;
	}
	if (out)
		*out = pub;
	else
		Esys_Free(pub);
	return 0;
}

static int nv_read(struct kw_tpm *t, ESYS_TR nv, uint16_t size, uint8_t *out, char *err,
		   size_t errlen)
{
	TPM2B_MAX_NV_BUFFER *data = NULL;
	TSS2_RC rc = Esys_NV_Read(t->ctx, nv, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, size,
				  0, &data);

	if ((rc & ~TSS2_RC_LAYER_MASK) == TPM2_RC_NV_UNINITIALIZED) {
		memset(out, 0, size); /* never written: an extend starts from zeros */
		return 0;
	}
	if (rc) {
		kw_tpm_rc_error(err, errlen, "NV_Read (the auth value may not be this index's)", rc);
		return -EACCES;
	}
	if (data->size != size) {
		Esys_Free(data);
		snprintf(err, errlen, "NV_Read came back short");
		return -EIO;
	}
	memcpy(out, data->buffer, size);
	Esys_Free(data);
	return 0;
}

int kw_tpm_commit_setup(struct kw_tpm *t, const uint8_t auth[32], uint8_t value[32], char *err,
			size_t errlen)
{
	uint8_t count[8];
	ESYS_TR nv;
	int e;

	e = nv_open(t, KW_TPM_NV_COUNTER, TPM2_NT_COUNTER, 8, auth, true, &nv, err, errlen);
	if (e)
		return e;
	e = nv_check(t, nv, KW_TPM_NV_COUNTER, TPM2_NT_COUNTER, 8, NULL, err, errlen);
	e = e ?: nv_read(t, nv, 8, count, err, errlen);
	Esys_TR_Close(t->ctx, &nv);
	if (e)
		return e;
	e = nv_open(t, KW_TPM_NV_COMMIT, TPM2_NT_EXTEND, 32, auth, true, &nv, err, errlen);
	if (e)
		return e;
	e = nv_check(t, nv, KW_TPM_NV_COMMIT, TPM2_NT_EXTEND, 32, NULL, err, errlen);
	e = e ?: nv_read(t, nv, 32, value, err, errlen);
	Esys_TR_Close(t->ctx, &nv);
	return e;
}

int kw_tpm_counter_next(struct kw_tpm *t, const uint8_t auth[32], uint64_t *value, char *err,
			size_t errlen)
{
	uint8_t be[8];
	ESYS_TR nv;
	TSS2_RC rc;
	int e = nv_open(t, KW_TPM_NV_COUNTER, TPM2_NT_COUNTER, 8, auth, false, &nv, err, errlen);

	if (e)
		return e;
	rc = Esys_NV_Increment(t->ctx, nv, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE);
	if (rc) {
		kw_tpm_rc_error(err, errlen, "NV_Increment", rc);
		e = -EIO;
	}
	e = e ?: nv_read(t, nv, 8, be, err, errlen);
	Esys_TR_Close(t->ctx, &nv);
	if (e)
		return e;
	*value = 0;
	for (int i = 0; i < 8; i++)
		*value = (*value << 8) | be[i];
	return 0;
}

int kw_tpm_commit_extend(struct kw_tpm *t, const uint8_t auth[32], const uint8_t e32[32],
			 char *err, size_t errlen)
{
	TPM2B_MAX_NV_BUFFER data = { .size = 32 };
	ESYS_TR nv;
	TSS2_RC rc;
	int e = nv_open(t, KW_TPM_NV_COMMIT, TPM2_NT_EXTEND, 32, auth, false, &nv, err, errlen);

	if (e)
		return e;
	memcpy(data.buffer, e32, 32);
	rc = Esys_NV_Extend(t->ctx, nv, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &data);
	Esys_TR_Close(t->ctx, &nv);
	if (rc) {
		kw_tpm_rc_error(err, errlen, "NV_Extend", rc);
		return -EIO;
	}
	return 0;
}

static int marshal_nv_public(const TPMS_NV_PUBLIC *p, struct kw_buf *out)
{
	uint8_t buf[sizeof(TPMS_NV_PUBLIC)];
	size_t off = 0;

	if (Tss2_MU_TPMS_NV_PUBLIC_Marshal(p, buf, sizeof(buf), &off))
		return -EIO;
	kw_buf_reset(out);
	return kw_buf_append(out, buf, off);
}

int kw_tpm_commit_certify(struct kw_tpm *t, const uint8_t auth[32], const uint8_t qd[32],
			  struct kw_buf *attest, struct kw_buf *signature, struct kw_buf *nv_public,
			  struct kw_buf *ak_public, char *err, size_t errlen)
{
	TPM2B_DATA q = { .size = 32 };
	TPMT_SIG_SCHEME scheme = { .scheme = TPM2_ALG_NULL };
	TPM2B_NV_PUBLIC *pub = NULL;
	TPM2B_ATTEST *at = NULL;
	TPMT_SIGNATURE *sig = NULL;
	uint8_t sigbuf[sizeof(TPMT_SIGNATURE)];
	size_t off = 0;
	ESYS_TR nv;
	TSS2_RC rc;
	int e = kw_tpm_load_ak(t, err, errlen);

	e = e ?: nv_open(t, KW_TPM_NV_COMMIT, TPM2_NT_EXTEND, 32, auth, false, &nv, err, errlen);
	if (e)
		return e;
	e = nv_check(t, nv, KW_TPM_NV_COMMIT, TPM2_NT_EXTEND, 32, &pub, err, errlen);
	memcpy(q.buffer, qd, 32);
	if (!e) {
		rc = Esys_NV_Certify(t->ctx, t->ak, nv, nv, ESYS_TR_PASSWORD, ESYS_TR_PASSWORD,
				     ESYS_TR_NONE, &q, &scheme, 32, 0, &at, &sig);
		if (rc) {
			kw_tpm_rc_error(err, errlen, "NV_Certify", rc);
			e = -EIO;
		}
	}
	Esys_TR_Close(t->ctx, &nv);
	if (!e && Tss2_MU_TPMT_SIGNATURE_Marshal(sig, sigbuf, sizeof(sigbuf), &off))
		e = -EIO;
	if (!e) {
		kw_buf_reset(attest);
		kw_buf_reset(signature);
		e = kw_buf_append(attest, at->attestationData, at->size);
		e = e ?: kw_buf_append(signature, sigbuf, off);
		e = e ?: marshal_nv_public(&pub->nvPublic, nv_public);
		kw_buf_reset(ak_public);
		e = e ?: kw_buf_append(ak_public, t->ak_public, t->ak_public_len);
	}
	Esys_Free(pub);
	Esys_Free(at);
	Esys_Free(sig);
	return e;
}
