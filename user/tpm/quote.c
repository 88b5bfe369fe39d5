/* SPDX-License-Identifier: Apache-2.0 */
/* TPM2_Quote over a PCR selection with qualifyingData chosen by the caller
 * (the record-signing key's thumbprint), and the PCR values read beside it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <tss2/tss2_mu.h>

#include "device.h"

static void selection_of(const struct kw_pcr_selection *sel, uint32_t mask, TPML_PCR_SELECTION *out)
{
	(void)sel;
	memset(out, 0, sizeof(*out));
	out->count = 1;
	out->pcrSelections[0].hash = TPM2_ALG_SHA256;
	out->pcrSelections[0].sizeofSelect = 3;
	for (int i = 0; i < 3; i++)
		out->pcrSelections[0].pcrSelect[i] = (uint8_t)(mask >> (8 * i));
}

/* PCR_Read returns at most 8 digests per call: ask until all are read. */
static int read_pcrs(struct kw_tpm *t, const struct kw_pcr_selection *sel,
		     uint8_t pcr[KW_TPM_PCR_COUNT][32], char *err, size_t errlen)
{
	uint32_t left = sel->mask;

	for (int round = 0; left && round < KW_TPM_PCR_COUNT; round++) {
		TPML_PCR_SELECTION want, *got = NULL;
		TPML_DIGEST *values = NULL;
		uint32_t counter, mask = 0;
		unsigned k = 0;
		TSS2_RC rc;

		selection_of(sel, left, &want);
		rc = Esys_PCR_Read(t->ctx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &want, &counter,
				   &got, &values);
		if (rc) {
			kw_tpm_rc_error(err, errlen, "PCR_Read", rc);
			return -EIO;
		}
		for (uint32_t b = 0; b < got->count; b++) {
			if (got->pcrSelections[b].hash != TPM2_ALG_SHA256)
				continue;
			for (unsigned i = 0; i < got->pcrSelections[b].sizeofSelect && i < 3; i++)
				mask |= (uint32_t)got->pcrSelections[b].pcrSelect[i] << (8 * i);
		}
		mask &= left;
		for (unsigned i = 0; i < KW_TPM_PCR_COUNT; i++) {
			if (!(mask & (1u << i)))
				continue;
			if (k >= values->count || values->digests[k].size != 32) {
				Esys_Free(got);
				Esys_Free(values);
				snprintf(err, errlen, "PCR_Read returned too few SHA-256 values");
				return -EIO;
			}
			memcpy(pcr[i], values->digests[k++].buffer, 32);
		}
		Esys_Free(got);
		Esys_Free(values);
		if (!mask) {
			snprintf(err, errlen, "the TPM has no SHA-256 PCR bank for the selected PCRs");
			return -ENOENT;
		}
		left &= ~mask;
	}
	return 0;
}

int kw_tpm_pcr_digest(struct kw_tpm *t, const struct kw_pcr_selection *sel, uint8_t out[32],
		      char *err, size_t errlen)
{
	struct kw_tpm_quote q = { .sel = *sel };
	int ret = read_pcrs(t, sel, q.pcr, err, errlen);

	return ret ? ret : kw_tpm_pcr_values_digest(&q, out);
}

static int quote_once(struct kw_tpm *t, const struct kw_pcr_selection *sel,
		      const uint8_t nonce[32], struct kw_tpm_quote *q, char *err, size_t errlen)
{
	TPM2B_DATA qd = { .size = 32 };
	TPMT_SIG_SCHEME scheme = { .scheme = TPM2_ALG_NULL };
	TPML_PCR_SELECTION ps;
	TPM2B_ATTEST *attest = NULL;
	TPMT_SIGNATURE *sig = NULL;
	uint8_t sigbuf[sizeof(TPMT_SIGNATURE)];
	size_t off = 0;
	TSS2_RC rc;
	int ret;

	memcpy(qd.buffer, nonce, 32);
	selection_of(sel, sel->mask, &ps);
	rc = Esys_Quote(t->ctx, t->ak, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &qd, &scheme,
			&ps, &attest, &sig);
	if (rc) {
		kw_tpm_rc_error(err, errlen, "Quote", rc);
		return -EIO;
	}
	ret = Tss2_MU_TPMT_SIGNATURE_Marshal(sig, sigbuf, sizeof(sigbuf), &off) ? -EIO : 0;
	kw_tpm_quote_free(q);
	q->sel = *sel;
	ret = ret ?: kw_buf_append(&q->attest, attest->attestationData, attest->size);
	ret = ret ?: kw_buf_append(&q->signature, sigbuf, off);
	ret = ret ?: kw_buf_append(&q->ak_public, t->ak_public, t->ak_public_len);
	Esys_Free(attest);
	Esys_Free(sig);
	if (ret) {
		snprintf(err, errlen, "cannot keep the quote: %s", strerror(-ret));
		return ret;
	}
	return read_pcrs(t, sel, q->pcr, err, errlen);
}

int kw_tpm_quote(struct kw_tpm *t, const struct kw_pcr_selection *sel, const uint8_t nonce[32],
		 struct kw_tpm_quote *q, char *err, size_t errlen)
{
	struct kw_quote_facts f;
	int ret, part = 0;

	if (!sel->mask) {
		snprintf(err, errlen, "the PCR selection is empty");
		return -EINVAL;
	}
	ret = kw_tpm_load_ak(t, err, errlen);
	if (ret)
		return ret;
	/* A PCR extended between the quote and the read makes the values
	 * disagree with the quote: quote again (a few times at most). */
	for (int attempt = 0; attempt < 4; attempt++) {
		ret = quote_once(t, sel, nonce, q, err, errlen);
		if (ret)
			return ret;
		ret = kw_quote_check(q, &f, &part, err, errlen);
		if (ret != -EBADMSG || part != 6)
			break;
	}
	if (!ret && (f.extra_len != 32 || memcmp(f.extra, nonce, 32))) {
		snprintf(err, errlen, "the TPM quoted other qualifying data than asked");
		ret = -EBADMSG;
	}
	if (ret == -EBADMSG) {
		char why[400];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "the TPM's own quote does not check: %s", why);
	}
	if (ret)
		kw_tpm_quote_free(q);
	return ret;
}
