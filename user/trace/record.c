/* SPDX-License-Identifier: Apache-2.0 */
/* Building and signing TRACE v0.2 Trust Records with the agentrust sandbox
 * adapter's mapping (docs/record.md): TRACE v0.2, nothing added. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "lib/base64.h"
#include "jcs/jcs.h"
#include "trace/record.h"
#include "record_internal.h"

static json_t *build_fail(json_t *rec, char *err, size_t errlen, const char *msg)
{
	snprintf(err, errlen, "%s", msg);
	json_decref(rec);
	return NULL;
}

json_t *kw_record_build(const struct kw_record_input *in, char *err, size_t errlen)
{
	char bundle_hash[KW_DIGEST_STR_MAX], measurement[KW_DIGEST_STR_MAX], why[256];
	const char *verifier = in->verifier ? in->verifier : KW_DEFAULT_VERIFIER;
	json_t *rec;

	if (errlen)
		err[0] = '\0';
	if (!in->sandbox_id || !in->image_digest || !in->bundle || !in->transcript_hash ||
	    !in->enforcement_mode || !in->model_provider || !in->model_id || !in->data_class)
		return build_fail(NULL, err, errlen,
				  "missing input: sandbox id, image digest, policy bundle, transcript, enforcement mode, model provider, model id and data class are all required");
	if (!kw_digest_valid(in->image_digest))
		return build_fail(NULL, err, errlen,
				  "image digest must be sha256:<64 lowercase hex> or sha384:<96 lowercase hex>");
	if (!kw_digest_valid(in->transcript_hash))
		return build_fail(NULL, err, errlen, "transcript hash is not a sha256:/sha384: digest");
	if (in->call_count > (uint64_t)JCS_MAX_SAFE_INT)
		return build_fail(NULL, err, errlen, "call count is larger than 2^53-1");
	if (kw_digest_buf(KW_SHA256, in->bundle, in->bundle_len, bundle_hash) ||
	    kw_software_measurement(KW_SHA256, in->image_digest, bundle_hash, measurement))
		return build_fail(NULL, err, errlen, "cannot compute digests");

	rec = json_pack("{s:s, s:I, s:s, s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}, s:s,"
			" s:{s:s, s:I}, s:{s:i, s:s}, s:{s:s, s:s, s:I}}",
			"eat_profile", kw_record_profile_tag(in->profile),
			"iat", (json_int_t)in->iat,
			"subject", in->sandbox_id,
			"model", "provider", in->model_provider, "model_id", in->model_id,
			"runtime", "platform", "software-only", "measurement", measurement,
			"policy", "bundle_hash", bundle_hash, "enforcement_mode", in->enforcement_mode,
			"data_class", in->data_class,
			"tool_transcript", "hash", in->transcript_hash,
			"call_count", (json_int_t)in->call_count,
			"build_provenance", "slsa_level", 0, "digest", in->image_digest,
			"appraisal", "status", "none", "verifier", verifier,
			"timestamp", (json_int_t)in->iat);
	if (rec && in->runtime) {
		const struct kw_record_runtime *r = in->runtime;

		if (!r->platform || !r->measurement || !r->nonce || !r->firmware_version)
			return build_fail(rec, err, errlen, "a bound runtime needs platform, measurement, nonce and firmware version");
		if (json_object_set_new(rec, "runtime",
					json_pack("{s:s, s:s, s:s, s:s}", "platform", r->platform,
						  "measurement", r->measurement, "nonce", r->nonce,
						  "firmware_version", r->firmware_version)))
			return build_fail(rec, err, errlen, "out of memory");
		/* v0.3 draft: the quote travels in the record it binds. */
		if (in->profile == KW_PROFILE_V03_DRAFT && r->evidence &&
		    json_object_set_new(json_object_get(rec, "runtime"), "evidence",
					kw_inline_evidence_encode(r->evidence)))
			return build_fail(rec, err, errlen, "cannot encode the inline evidence");
	}
	if (!rec)
		return build_fail(NULL, err, errlen, "cannot build the record (out of memory or invalid UTF-8)");
	/* Every input is checked by the same rules a verifier applies. */
	if (kw_schema_check(rec, KW_SCHEMA_ALLOW_NO_CNF, why, sizeof(why)))
		return build_fail(rec, err, errlen, why);
	return rec;
}

/* Sets cnf and signs: the RFC 8785 bytes of the record without "signature". */
static int sign_only(json_t *record, const struct kw_key *key, char *err, size_t errlen)
{
	uint8_t sig[KW_ED25519_SIG_LEN];
	char sig_b64[KW_B64_LEN(KW_ED25519_SIG_LEN)], why[256];
	struct kw_buf canon = { 0 };
	json_t *jwk, *cnf;
	int ret;

	if (errlen)
		err[0] = '\0';
	if (!json_is_object(record) || !key) {
		snprintf(err, errlen, "record must be a JSON object and a key is required");
		return -EINVAL;
	}
	if (!kw_key_has_private(key)) {
		snprintf(err, errlen, "signing needs a private key");
		return -EINVAL;
	}
	jwk = kw_key_public_jwk(key);
	cnf = jwk ? json_pack("{s:o}", "jwk", jwk) : NULL;
	if (!cnf || json_object_set_new(record, "cnf", cnf)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	json_object_del(record, "signature");
	if (kw_schema_validate(record, why, sizeof(why))) {
		snprintf(err, errlen, "record does not validate: %s", why);
		return -EINVAL;
	}
	ret = jcs_dump(record, &canon);
	if (ret) {
		snprintf(err, errlen, "cannot canonicalise the record: %s", strerror(-ret));
		goto out;
	}
	ret = kw_key_sign(key, canon.data, canon.len, sig);
	if (ret) {
		snprintf(err, errlen, "Ed25519 signing failed: %s", strerror(-ret));
		goto out;
	}
	kw_b64_encode(KW_B64_URL, sig, sizeof(sig), sig_b64);
	if (json_object_set_new(record, "signature", json_string(sig_b64))) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
	}
out:
	OPENSSL_cleanse(sig, sizeof(sig));
	kw_buf_free(&canon);
	return ret;
}

int kw_record_sign_checked(json_t *record, const struct kw_key *key,
			   const struct kw_verify_opts *check, struct kw_buf *text, char *err,
			   size_t errlen)
{
	struct kw_verify_opts vo = { 0 };
	struct kw_verify_result res;
	long long iat = 0;
	int ret = sign_only(record, key, err, errlen);

	kw_buf_reset(text);
	if (ret)
		return ret;
	/* Verify what was just signed, through the same path an auditor uses. */
	ret = jcs_dump(record, text);
	if (ret) {
		snprintf(err, errlen, "cannot canonicalise the signed record: %s", strerror(-ret));
		goto undo;
	}
	if (!check) {
		/* now = iat: freshness is the auditor's question, not the signer's. */
		kw_json_integer(json_object_get(record, "iat"), &iat);
		vo.trusted = key;
		vo.now = iat;
		vo.call_count = -1;
		check = &vo;
	}
	ret = kw_record_verify(text->data, text->len, check, &res);
	if (ret && check != &vo) {
		/* The caller's check: its verdict's sentence, or why it could not run. */
		snprintf(err, errlen, "%s", ret > 0 ? res.message : strerror(-ret));
		ret = KW_SIGN_CHECK_FAILED;
	} else if (ret) {
		snprintf(err, errlen, "the signed record does not verify: %s: %s",
			 kw_verify_reason_code(res.reason), res.message);
		ret = ret < 0 ? ret : -EIO;
	}
	if (!ret)
		return 0;
undo:
	kw_buf_reset(text);
	json_object_del(record, "signature");
	return ret;
}

int kw_record_sign(json_t *record, const struct kw_key *key, char *err, size_t errlen)
{
	struct kw_buf text = { 0 };
	int ret = kw_record_sign_checked(record, key, NULL, &text, err, errlen);

	kw_buf_free(&text);
	return ret;
}
