/* SPDX-License-Identifier: Apache-2.0 */
/* Offline appraisal of TPM evidence for a record, one step at a time, each
 * with its own reason code; the first failing step is the answer. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "lib/base64.h"
#include "evidence.h"
#include "tpm_internal.h"

static const struct {
	const char *code;
	int number;
} steps[] = {
	[KW_APPRAISE_OK] = { "ok", 0 },
	[KW_APPRAISE_EVIDENCE_MALFORMED] = { "evidence_malformed", 0 },
	[KW_APPRAISE_EK_UNTRUSTED] = { "ek_untrusted", 1 },
	[KW_APPRAISE_AK_NOT_ENROLLED] = { "ak_not_enrolled", 2 },
	[KW_APPRAISE_QUOTE_INVALID] = { "quote_signature_invalid", 3 },
	[KW_APPRAISE_NONCE_MISMATCH] = { "quote_nonce_mismatch", 4 },
	[KW_APPRAISE_MEASUREMENT_MISMATCH] = { "quote_measurement_mismatch", 5 },
	[KW_APPRAISE_PCRS_MISMATCH] = { "pcr_values_mismatch", 6 },
	[KW_APPRAISE_EVIDENCE_NOT_LOGGED] = { "evidence_not_logged", 0 },
	[KW_APPRAISE_AK_NOT_ENROLLED_FOR_KEY] = { "ak_not_enrolled_for_key", 2 },
	[KW_APPRAISE_AK_NOT_ENROLLED_FOR_HOST] = { "ak_not_enrolled_for_host", 2 },
};

const char *kw_appraise_code(enum kw_appraise_step s)
{
	return (unsigned)s < sizeof(steps) / sizeof(steps[0]) ? steps[s].code : "unknown";
}

int kw_appraise_step_number(enum kw_appraise_step s)
{
	return (unsigned)s < sizeof(steps) / sizeof(steps[0]) ? steps[s].number : -1;
}

int kw_appraise_level(int ret, const struct kw_appraise_result *res, char *why, size_t whylen)
{
	why[0] = '\0';
	if (ret < 0) {
		snprintf(why, whylen, "appraisal failed: %s", strerror(-ret));
		return 0;
	}
	if (ret == 0 && res->step == KW_APPRAISE_OK)
		return 1;
	snprintf(why, whylen, "TPM appraisal failed at step %d: %s: %.300s",
		 kw_appraise_step_number(res->step), kw_appraise_code(res->step), res->message);
	return 0;
}

static int verdict(struct kw_appraise_result *res, enum kw_appraise_step s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int verdict(struct kw_appraise_result *res, enum kw_appraise_step s, const char *fmt, ...)
{
	va_list ap;

	res->step = s;
	va_start(ap, fmt);
	vsnprintf(res->message, sizeof(res->message), fmt, ap);
	va_end(ap);
	return s == KW_APPRAISE_OK ? 0 : 1;
}

static const char *runtime_str(const json_t *rec, const char *key)
{
	return json_string_value(json_object_get(json_object_get(rec, "runtime"), key));
}

/* --pcrs-ref: {"N": "hex", ...}; every listed PCR must be quoted and equal. */
static int check_reference(const struct kw_tpm_quote *q, const json_t *ref,
			   struct kw_appraise_result *res)
{
	const char *key;
	json_t *v;

	if (!json_is_object(ref) || !json_object_size(ref))
		return verdict(res, KW_APPRAISE_PCRS_MISMATCH, "the PCR reference is not a non-empty object");
	json_object_foreach((json_t *)ref, key, v) {
		struct kw_pcr_selection one;
		char sel[16], err[128];
		uint8_t want[32];
		unsigned i;

		snprintf(sel, sizeof(sel), "sha256:%.3s", key);
		if (strlen(key) > 2 || kw_pcr_selection_parse(sel, &one, err, sizeof(err)) ||
		    kw_unhex(json_string_value(v), want, 32))
			return verdict(res, KW_APPRAISE_PCRS_MISMATCH,
				       "the PCR reference entry \"%.8s\" is not an index with 64 hex digits", key);
		i = (unsigned)__builtin_ctz(one.mask);
		if (!(q->sel.mask & one.mask))
			return verdict(res, KW_APPRAISE_PCRS_MISMATCH,
				       "PCR %u is in the reference but not in the quote", i);
		if (memcmp(q->pcr[i], want, 32))
			return verdict(res, KW_APPRAISE_PCRS_MISMATCH,
				       "PCR %u differs from the reference", i);
	}
	return 0;
}

/* Step 2: the enrollment ties the quoting AK to the EK, and names the key
 * that signed the record and the host the log names: an AK speaks only for
 * what its enrollment lists. */
static int enrolled(const struct kw_evidence *ev, const uint8_t name[34], const json_t *record,
		    const struct kw_appraise_opts *o, struct kw_appraise_result *res)
{
	char why[400], tp[KW_THUMBPRINT_MAX];

	if (kw_enrollment_check(ev->enrollment, o->enroll_key, &ev->ek_certs[0], name, why,
				sizeof(why)))
		return verdict(res, KW_APPRAISE_AK_NOT_ENROLLED, "%s", why);
	if (kw_jwk_thumbprint(json_object_get(json_object_get(record, "cnf"), "jwk"), tp))
		tp[0] = '\0';
	if (kw_enrollment_names_key(ev->enrollment, tp, why, sizeof(why)))
		return verdict(res, KW_APPRAISE_AK_NOT_ENROLLED_FOR_KEY, "%s", why);
	if (o->logged_machine_id &&
	    kw_enrollment_names_host(ev->enrollment, o->logged_machine_id, why, sizeof(why)))
		return verdict(res, KW_APPRAISE_AK_NOT_ENROLLED_FOR_HOST, "%s", why);
	return 0;
}

int kw_appraise(const json_t *evidence, const json_t *record, const struct kw_appraise_opts *o,
		struct kw_appraise_result *res)
{
	struct kw_evidence ev;
	struct kw_quote_facts f;
	const char *platform = runtime_str(record, "platform");
	const char *nonce = runtime_str(record, "nonce");
	const char *measurement = runtime_str(record, "measurement");
	const char *fw = runtime_str(record, "firmware_version");
	char why[400], tp[KW_THUMBPRINT_MAX], extra_b64[KW_B64_LEN(64)];
	uint8_t name[34];
	int ret, part = 0;

	memset(res, 0, sizeof(*res));
	kw_tss_quiet();
	if (!platform || strcmp(platform, "tpm2"))
		return verdict(res, KW_APPRAISE_EVIDENCE_MALFORMED,
			       "the record's runtime.platform is \"%.32s\", not \"tpm2\"",
			       platform ? platform : "(missing)");
	if (kw_evidence_parse(evidence, &ev, why, sizeof(why)))
		return verdict(res, KW_APPRAISE_EVIDENCE_MALFORMED, "%s", why);
	/* 0. A file's name proves nothing: its quote must be the one the log's
	 * close entry (under the transcript hash) names. */
	if (o->logged_evidence) {
		char digest[KW_DIGEST_STR_MAX];

		if (kw_evidence_digest(&ev.q, digest)) {
			ret = -EIO;
			goto out;
		}
		if (!*o->logged_evidence || strcmp(digest, o->logged_evidence)) {
			ret = verdict(res, KW_APPRAISE_EVIDENCE_NOT_LOGGED,
				      "the evidence holds quote %s, the log's close entry names %.80s",
				      digest, *o->logged_evidence ? o->logged_evidence : "none");
			goto out;
		}
	}

	/* 1. The EK certificate chains to the CA. */
	ret = kw_ek_chain_verify(ev.ek_certs, ev.n_ek_certs, o->ca_file, why, sizeof(why));
	if (ret == -EBADMSG) {
		ret = verdict(res, KW_APPRAISE_EK_UNTRUSTED, "%s", why);
		goto out;
	}
	if (ret) {
		ret = ret == -EINVAL ? verdict(res, KW_APPRAISE_EK_UNTRUSTED, "%s", why) : ret;
		goto out;
	}
	/* 2. The enrollment ties the quoting AK to that EK. */
	if (kw_tpm_name_of((const uint8_t *)ev.q.ak_public.data, ev.q.ak_public.len, name)) {
		ret = -EIO;
		goto out;
	}
	if ((ret = enrolled(&ev, name, record, o, res)))
		goto out;
	/* 3. The quote is the AK's (part 6, the values, is judged at step 6). */
	ret = kw_quote_check(&ev.q, &f, &part, why, sizeof(why));
	if (ret && (ret != -EBADMSG || part != 6)) {
		ret = ret == -EBADMSG ? verdict(res, KW_APPRAISE_QUOTE_INVALID, "%s", why) : ret;
		goto out;
	}
	snprintf(res->measurement, sizeof(res->measurement), "%s", f.measurement);
	kw_pcr_selection_format(&ev.q.sel, res->pcrs, sizeof(res->pcrs));
	/* 4. extraData is the thumbprint of the key that signed the record, and
	 * the record's nonce says the same. */
	if (kw_jwk_thumbprint(json_object_get(json_object_get(record, "cnf"), "jwk"), tp)) {
		ret = verdict(res, KW_APPRAISE_NONCE_MISMATCH, "the record has no usable cnf.jwk");
		goto out;
	}
	kw_b64_encode(KW_B64_URL, f.extra, f.extra_len, extra_b64);
	if (f.extra_len != 32 || strcmp(extra_b64, tp)) {
		ret = verdict(res, KW_APPRAISE_NONCE_MISMATCH,
			      "the quote was made for key %s, the record is signed by key %s",
			      extra_b64, tp);
		goto out;
	}
	if (!nonce || strcmp(nonce, extra_b64)) {
		ret = verdict(res, KW_APPRAISE_NONCE_MISMATCH,
			      "runtime.nonce %.64s is not the quoted thumbprint %s",
			      nonce ? nonce : "(missing)", extra_b64);
		goto out;
	}
	/* 5. The quoted PCR digest (and firmware) is what the record claims. */
	if (!measurement || strcmp(measurement, f.measurement)) {
		ret = verdict(res, KW_APPRAISE_MEASUREMENT_MISMATCH,
			      "runtime.measurement %.80s is not the quoted PCR digest %s",
			      measurement ? measurement : "(missing)", f.measurement);
		goto out;
	}
	if (!fw || strcmp(fw, f.firmware_version)) {
		ret = verdict(res, KW_APPRAISE_MEASUREMENT_MISMATCH,
			      "runtime.firmware_version %.40s is not the quoted firmware %s",
			      fw ? fw : "(missing)", f.firmware_version);
		goto out;
	}
	/* 6. The PCR values hash to the quoted digest, and match a reference. */
	if (part == 6) {
		ret = verdict(res, KW_APPRAISE_PCRS_MISMATCH, "%s", why);
		goto out;
	}
	if (o->pcrs_ref && (ret = check_reference(&ev.q, o->pcrs_ref, res)))
		goto out;
	ret = verdict(res, KW_APPRAISE_OK, "TPM 2.0 quote by an enrolled AK binds the signing key %s to PCRs %s = %s",
		      tp, res->pcrs, f.measurement);
out:
	kw_evidence_free(&ev);
	return ret;
}
