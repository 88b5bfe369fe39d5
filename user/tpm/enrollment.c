/* SPDX-License-Identifier: Apache-2.0 */
/* Enrollment records: the enroller's signed statement that the AK with this
 * name answered a credential made for the EK in this certificate. Ed25519
 * over the RFC 8785 form of every member but "signature". */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "lib/base64.h"
#include "jcs/jcs.h"
#include "tpm/binding.h"
#include "enrollment.h"
#include "tpm_internal.h"

void kw_hex(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", p[i]);
	out[2 * n] = '\0';
}

int kw_unhex(const char *s, uint8_t *out, size_t n)
{
	if (!s || strlen(s) != 2 * n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned v = 0;

		for (int k = 0; k < 2; k++) {
			char c = s[2 * i + k];

			v <<= 4;
			if (c >= '0' && c <= '9')
				v |= (unsigned)(c - '0');
			else if (c >= 'a' && c <= 'f')
				v |= (unsigned)(c - 'a' + 10);
			else
				return -EINVAL;
		}
		out[i] = (uint8_t)v;
	}
	return 0;
}

/* A machine id as systemd writes it: 32 lowercase hex digits. */
static bool machine_id_valid(const char *m)
{
	return m && strlen(m) == 32 && strspn(m, "0123456789abcdef") == 32;
}

json_t *kw_enrollment_sign(const struct kw_buf *ek_der, const uint8_t ak_name[34],
			   const struct kw_enroll_subject *subj, const struct kw_key *key,
			   char *err, size_t errlen)
{
	char ek_digest[KW_DIGEST_STR_MAX], name_hex[69], tp[KW_THUMBPRINT_MAX];
	char sig_b64[KW_B64_LEN(KW_ED25519_SIG_LEN)];
	uint8_t sig[KW_ED25519_SIG_LEN];
	struct kw_buf canon = { 0 };
	json_t *enr, *keys = json_array();

	if (!machine_id_valid(subj->machine_id) || !subj->n_keys) {
		snprintf(err, errlen, "an enrollment names the host (a machine id: 32 lowercase hex digits) and at least one signing key");
		json_decref(keys);
		return NULL;
	}
	for (size_t i = 0; keys && i < subj->n_keys; i++)
		if (json_array_append_new(keys, json_string(subj->keys[i])))
			json_decref(keys), keys = NULL;
	kw_hex(ak_name, 34, name_hex);
	if (!keys || kw_digest_buf(KW_SHA256, ek_der->data, ek_der->len, ek_digest) ||
	    kw_key_thumbprint(key, tp)) {
		snprintf(err, errlen, "cannot hash the EK certificate or the enrollment key");
		json_decref(keys);
		return NULL;
	}
	enr = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:o}", "kind", KW_TPM_ENROLLMENT_KIND,
			"method", "credential-activation", "ek_certificate", ek_digest, "ak_name",
			name_hex, "enrollment_key", tp, "enrolled_at", (json_int_t)time(NULL),
			"machine_id", subj->machine_id, "signing_keys", keys);
	if (!enr || jcs_dump(enr, &canon) || kw_key_sign(key, canon.data, canon.len, sig) ||
	    (kw_b64_encode(KW_B64_URL, sig, sizeof(sig), sig_b64),
	     json_object_set_new(enr, "signature", json_string(sig_b64)))) {
		snprintf(err, errlen, "cannot sign the enrollment record");
		json_decref(enr);
		enr = NULL;
	}
	kw_buf_free(&canon);
	OPENSSL_cleanse(sig, sizeof(sig));
	return enr;
}

static int no(char *why, size_t whylen, const char *msg)
{
	snprintf(why, whylen, "%s", msg);
	return -EBADMSG;
}

int kw_enrollment_check(const json_t *enr, const struct kw_key *key, const struct kw_buf *ek_der,
			const uint8_t ak_name[34], char *why, size_t whylen)
{
	const char *sig_b64 = json_string_value(json_object_get(enr, "signature"));
	uint8_t sig[KW_ED25519_SIG_LEN];
	struct kw_buf canon = { 0 };
	size_t siglen = 0;
	json_t *body;
	int ret;

	if (!json_is_object(enr))
		return no(why, whylen, "the evidence carries no enrollment record (the AK was never enrolled)");
	if (!key)
		return no(why, whylen, "no enrollment key is trusted (--enroll-key)");
	if (!sig_b64 || kw_b64_decode(KW_B64_URL, sig_b64, strlen(sig_b64), sig, sizeof(sig), &siglen) ||
	    siglen != sizeof(sig))
		return no(why, whylen, "the enrollment record has no well-formed signature");
	body = json_deep_copy(enr);
	if (!body)
		return -ENOMEM;
	json_object_del(body, "signature");
	ret = jcs_dump(body, &canon);
	json_decref(body);
	if (ret) {
		kw_buf_free(&canon);
		return no(why, whylen, "the enrollment record cannot be canonicalised");
	}
	ret = kw_key_verify(key, canon.data, canon.len, sig, siglen);
	kw_buf_free(&canon);
	if (ret)
		return no(why, whylen, "the enrollment record is not signed by the trusted enrollment key");
	return kw_enrollment_check_names(enr, ek_der, ak_name, why, whylen);
}

int kw_enrollment_check_names(const json_t *enr, const struct kw_buf *ek_der,
			      const uint8_t ak_name[34], char *why, size_t whylen)
{
	char ek_digest[KW_DIGEST_STR_MAX], name_hex[69];

	if (!json_is_string(json_object_get(enr, "kind")) ||
	    strcmp(json_string_value(json_object_get(enr, "kind")), KW_TPM_ENROLLMENT_KIND) ||
	    !json_is_string(json_object_get(enr, "method")) ||
	    strcmp(json_string_value(json_object_get(enr, "method")), "credential-activation"))
		return no(why, whylen, "the enrollment record is not a credential-activation enrollment");
	if (kw_digest_buf(KW_SHA256, ek_der->data, ek_der->len, ek_digest))
		return -EIO;
	if (!json_is_string(json_object_get(enr, "ek_certificate")) ||
	    strcmp(json_string_value(json_object_get(enr, "ek_certificate")), ek_digest))
		return no(why, whylen, "the enrollment was made for another EK than the evidence's EK certificate");
	kw_hex(ak_name, 34, name_hex);
	if (!json_is_string(json_object_get(enr, "ak_name")) ||
	    strcmp(json_string_value(json_object_get(enr, "ak_name")), name_hex))
		return no(why, whylen, "the enrollment was made for another AK than the one that signed the quote");
	return 0;
}

int kw_enrollment_names_key(const json_t *enr, const char *thumbprint, char *why, size_t whylen)
{
	const json_t *keys = json_object_get(enr, "signing_keys"), *k;
	size_t i;

	if (!json_is_array(keys))
		return no(why, whylen,
			  "the enrollment names no record-signing key (made before enrollments named the host and keys): enroll the AK again with --key");
	json_array_foreach(keys, i, k)
		if (json_is_string(k) && thumbprint && !strcmp(json_string_value(k), thumbprint))
			return 0;
	snprintf(why, whylen, "the AK is enrolled for host %.40s and other signing keys than %.64s",
		 json_is_string(json_object_get(enr, "machine_id"))
			 ? json_string_value(json_object_get(enr, "machine_id")) : "(none)",
		 thumbprint ? thumbprint : "(none)");
	return -EBADMSG;
}

int kw_enrollment_names_host(const json_t *enr, const char *machine_id, char *why, size_t whylen)
{
	const char *m = json_string_value(json_object_get(enr, "machine_id"));

	if (m && machine_id && !strcmp(m, machine_id))
		return 0;
	snprintf(why, whylen, "the AK is enrolled for host %.40s, the log names host %.40s",
		 m ? m : "(none)", machine_id && *machine_id ? machine_id : "(none)");
	return -EBADMSG;
}
