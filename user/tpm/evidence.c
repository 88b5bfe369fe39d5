/* SPDX-License-Identifier: Apache-2.0 */
/* Evidence files: one JSON object per binding, named by the SHA-256 of the
 * quote's TPMS_ATTEST. Binary members are base64url without padding, PCR
 * values lowercase hex. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "lib/base64.h"
#include "evidence.h"
#include "tpm_internal.h"

json_t *kw_tpm_b64_json(const void *p, size_t n)
{
	char *s = malloc(KW_B64_LEN(n));
	json_t *j;

	if (!s)
		return NULL;
	kw_b64_encode(KW_B64_URL, p, n, s);
	j = json_string(s);
	OPENSSL_cleanse(s, KW_B64_LEN(n)); /* the AK file's auth value passes here */
	free(s);
	return j;
}

json_t *kw_evidence_build(const struct kw_tpm_quote *q, const struct kw_buf *ek_certs,
			  size_t n_ek_certs, const json_t *enrollment)
{
	char sel[128], hex[65], idx[4];
	json_t *values = json_object(), *certs = json_array(), *ev;

	if (!values || !certs)
		goto fail;
	for (unsigned i = 0; i < KW_TPM_PCR_COUNT; i++) {
		if (!(q->sel.mask & (1u << i)))
			continue;
		kw_hex(q->pcr[i], 32, hex);
		snprintf(idx, sizeof(idx), "%u", i);
		if (json_object_set_new(values, idx, json_string(hex)))
			goto fail;
	}
	for (size_t i = 0; i < n_ek_certs; i++)
		if (json_array_append_new(certs, kw_tpm_b64_json(ek_certs[i].data, ek_certs[i].len)))
			goto fail;
	kw_pcr_selection_format(&q->sel, sel, sizeof(sel));
	ev = json_pack("{s:s, s:{s:o, s:o, s:s, s:o}, s:o, s:o, s:{s:s, s:O}}",
		       "format", KW_TPM_EVIDENCE_FORMAT,
		       "quote", "attest", kw_tpm_b64_json(q->attest.data, q->attest.len),
		       "signature", kw_tpm_b64_json(q->signature.data, q->signature.len),
		       "pcr_selection", sel, "pcr_values", values,
		       "ak_public", kw_tpm_b64_json(q->ak_public.data, q->ak_public.len),
		       "ek_certificates", certs,
		       "ak_binding", "method", enrollment ? "credential-activation" : "none",
		       "enrollment", enrollment ? enrollment : json_null());
	return ev;
fail:
	json_decref(values);
	json_decref(certs);
	return NULL;
}

int kw_evidence_digest(const struct kw_tpm_quote *q, char out[KW_DIGEST_STR_MAX])
{
	return kw_digest_buf(KW_SHA256, q->attest.data, q->attest.len, out);
}

int kw_tpm_unb64(const json_t *j, struct kw_buf *out)
{
	const char *s = json_string_value(j);
	size_t n, len;
	int ret;

	if (!s || !*s)
		return -EINVAL;
	n = strlen(s);
	kw_buf_reset(out);
	ret = kw_buf_reserve(out, n);
	if (ret)
		return ret;
	ret = kw_b64_decode(KW_B64_URL, s, n, (uint8_t *)out->data, out->cap, &len);
	if (ret)
		return ret;
	out->len = len;
	return 0;
}

int kw_evidence_parse(const json_t *ev, struct kw_evidence *out, char *why, size_t whylen)
{
	const json_t *quote = json_object_get(ev, "quote"), *values, *certs, *binding, *v;
	const char *key, *method;
	char err[160];
	uint32_t seen = 0;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(ev) || !json_is_string(json_object_get(ev, "format")) ||
	    strcmp(json_string_value(json_object_get(ev, "format")), KW_TPM_EVIDENCE_FORMAT)) {
		snprintf(why, whylen, "not a %s evidence object", KW_TPM_EVIDENCE_FORMAT);
		return -EINVAL;
	}
	if (kw_tpm_unb64(json_object_get(quote, "attest"), &out->q.attest) ||
	    kw_tpm_unb64(json_object_get(quote, "signature"), &out->q.signature) ||
	    kw_tpm_unb64(json_object_get(ev, "ak_public"), &out->q.ak_public)) {
		snprintf(why, whylen, "quote.attest, quote.signature and ak_public must be base64url");
		goto fail;
	}
	if (kw_pcr_selection_parse(json_string_value(json_object_get(quote, "pcr_selection")),
				   &out->q.sel, err, sizeof(err))) {
		snprintf(why, whylen, "quote.pcr_selection: %s", err);
		goto fail;
	}
	values = json_object_get(quote, "pcr_values");
	if (!json_is_object(values) || json_object_size(values) != kw_pcr_selection_count(&out->q.sel)) {
		snprintf(why, whylen, "quote.pcr_values must hold one value per selected PCR");
		goto fail;
	}
	json_object_foreach((json_t *)values, key, v) {
		struct kw_pcr_selection one;
		char sel[16];

		/* One spelling per index ("7", not "07"), each selected PCR once. */
		snprintf(sel, sizeof(sel), "sha256:%.3s", key);
		if (strlen(key) > 2 || (key[0] == '0' && key[1]) ||
		    kw_pcr_selection_parse(sel, &one, err, sizeof(err)) ||
		    !(one.mask & out->q.sel.mask) || (one.mask & seen) ||
		    kw_unhex(json_string_value(v), out->q.pcr[__builtin_ctz(one.mask)], 32)) {
			snprintf(why, whylen, "quote.pcr_values[\"%.8s\"] is not a selected PCR with 64 hex digits", key);
			goto fail;
		}
		seen |= one.mask;
	}
	certs = json_object_get(ev, "ek_certificates");
	if (!json_is_array(certs) || json_array_size(certs) > KW_EVIDENCE_MAX_CERTS) {
		snprintf(why, whylen, "ek_certificates must be an array of at most %d certificates",
			 KW_EVIDENCE_MAX_CERTS);
		goto fail;
	}
	for (size_t i = 0; i < json_array_size(certs); i++) {
		if (kw_tpm_unb64(json_array_get(certs, i), &out->ek_certs[i])) {
			snprintf(why, whylen, "ek_certificates[%zu] is not base64url", i);
			goto fail;
		}
		out->n_ek_certs++;
	}
	binding = json_object_get(ev, "ak_binding");
	/* The method is informational (the enrollment's own, signed, decides),
	 * but only the two values kwitness writes are accepted: no member of
	 * evidence may say what no check backs. */
	method = json_string_value(json_object_get(binding, "method"));
	if (!method || (strcmp(method, "credential-activation") && strcmp(method, "none"))) {
		snprintf(why, whylen, "ak_binding.method must be \"credential-activation\" or \"none\"");
		goto fail;
	}
	out->enrollment = json_object_get(binding, "enrollment");
	if (!json_is_object(out->enrollment))
		out->enrollment = NULL;
	return 0;
fail:
	kw_evidence_free(out);
	return -EINVAL;
}

void kw_evidence_free(struct kw_evidence *e)
{
	kw_tpm_quote_free(&e->q);
	for (size_t i = 0; i < KW_EVIDENCE_MAX_CERTS; i++)
		kw_buf_free(&e->ek_certs[i]);
	e->n_ek_certs = 0;
	e->enrollment = NULL;
}
