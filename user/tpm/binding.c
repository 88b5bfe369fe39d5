/* SPDX-License-Identifier: Apache-2.0 */
/* The collector's binding: the record-signing key's thumbprint quoted by the
 * TPM over the selected PCRs, checked, and written out as evidence. A new
 * quote is made when the key or the PCR values differ from the bound ones. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "lib/base64.h"
#include "jcs/jcs.h"
#include "tpm/binding.h"
#include "evidence.h"
#include "tpm_internal.h"

int kw_key_thumbprint_raw(const struct kw_key *key, uint8_t out[32])
{
	char tp[KW_THUMBPRINT_MAX];
	size_t n = 0;
	int ret = kw_key_thumbprint(key, tp);

	if (ret)
		return ret;
	ret = kw_b64_decode(KW_B64_URL, tp, strlen(tp), out, 32, &n);
	return ret ? ret : n == 32 ? 0 : -EINVAL;
}

int kw_binding_init(struct kw_tpm_binding *b, struct kw_tpm *tpm,
		    const struct kw_pcr_selection *sel, const char *evidence_dir,
		    json_t *enrollment, json_t *ak, char *err, size_t errlen)
{
	uint8_t name[34];
	char why[300];
	int ret;

	memset(b, 0, sizeof(*b));
	b->sel = *sel;
	b->enrollment = enrollment;
	b->ak = ak;
	b->evidence_dir = evidence_dir ? strdup(evidence_dir) : NULL;
	if (evidence_dir && !b->evidence_dir)
		return -ENOMEM;
	kw_tpm_use_ak(tpm, ak);
	ret = kw_tpm_ak_name(tpm, name, err, errlen);
	if (ret)
		return ret;
	/* No EK certificate: the evidence says so and appraisal stops at step 1. */
	if (kw_tpm_ek_cert(tpm, &b->ek_cert, why, sizeof(why)))
		b->ek_cert_missing = true;
	if (enrollment) {
		/* The signature is the verifier's to check; that it names this
		 * TPM's EK and AK is checked here so a wrong file fails at start. */
		if (b->ek_cert_missing) {
			snprintf(err, errlen, "an enrollment was given but %s", why);
			return -ENOENT;
		}
		if (kw_enrollment_check_names(enrollment, &b->ek_cert, name, why, sizeof(why))) {
			snprintf(err, errlen, "the enrollment does not fit this TPM: %s", why);
			return -EINVAL;
		}
	}
	return 0;
}

void kw_binding_free(struct kw_tpm_binding *b)
{
	kw_buf_free(&b->ek_cert);
	json_decref(b->enrollment);
	json_decref(b->ak);
	json_decref(b->evidence_object);
	free(b->evidence_dir);
	memset(b, 0, sizeof(*b));
}

static int write_evidence(struct kw_tpm_binding *b, const struct kw_tpm_quote *q, char *err,
			  size_t errlen)
{
	struct kw_buf text = { 0 };
	char path[PATH_MAX];
	json_t *ev;
	int ret;

	ev = kw_evidence_build(q, &b->ek_cert, b->ek_cert_missing ? 0 : 1, b->enrollment);
	if (!ev || jcs_dump(ev, &text) || kw_buf_putc(&text, '\n')) {
		json_decref(ev);
		kw_buf_free(&text);
		snprintf(err, errlen, "cannot build the evidence");
		return -ENOMEM;
	}
	/* Kept for records that carry it inline (TRACE v0.3 draft). */
	json_decref(b->evidence_object);
	b->evidence_object = ev;
	if (!b->evidence_dir) {
		kw_buf_free(&b->last_evidence);
		b->last_evidence = text;
		return 0;
	}
	if (snprintf(path, sizeof(path), "%s/%s.json", b->evidence_dir, strchr(b->evidence, ':') + 1) >=
	    (int)sizeof(path)) {
		kw_buf_free(&text);
		snprintf(err, errlen, "evidence path too long");
		return -ENAMETOOLONG;
	}
	ret = kw_write_file_atomic(path, text.data, text.len, 0644);
	if (ret)
		snprintf(err, errlen, "%.200s: %s", path, strerror(-ret));
	kw_buf_free(&text);
	return ret;
}

int kw_binding_refresh(struct kw_tpm_binding *b, struct kw_tpm *tpm, const struct kw_key *key,
		       bool *changed, char *err, size_t errlen)
{
	struct kw_tpm_quote q = { 0 };
	struct kw_quote_facts f;
	uint8_t nonce[32], now[32];
	int ret, part;

	*changed = false;
	ret = kw_key_thumbprint_raw(key, nonce);
	if (ret) {
		snprintf(err, errlen, "cannot compute the signing key's thumbprint");
		return ret;
	}
	if (b->bound && !memcmp(nonce, b->nonce, 32)) {
		ret = kw_tpm_pcr_digest(tpm, &b->sel, now, err, errlen);
		if (ret)
			return ret;
		if (!memcmp(now, b->pcr_digest, 32))
			return 0;
	}
	b->bound = false;
	kw_tpm_use_ak(tpm, b->ak);
	ret = kw_tpm_quote(tpm, &b->sel, nonce, &q, err, errlen);
	if (ret)
		return ret;
	/* kw_tpm_quote checked it; the facts come from the same check. */
	ret = kw_quote_check(&q, &f, &part, err, errlen);
	ret = ret ?: kw_evidence_digest(&q, b->evidence);
	if (!ret) {
		memcpy(b->nonce, nonce, 32);
		memcpy(b->pcr_digest, f.pcr_digest, 32);
		snprintf(b->measurement, sizeof(b->measurement), "%s", f.measurement);
		snprintf(b->firmware_version, sizeof(b->firmware_version), "%s", f.firmware_version);
		kw_b64_encode(KW_B64_URL, nonce, 32, b->nonce_b64);
		ret = write_evidence(b, &q, err, errlen);
	}
	kw_tpm_quote_free(&q);
	if (ret)
		return ret;
	b->bound = true;
	b->generation++;
	*changed = true;
	return 0;
}
