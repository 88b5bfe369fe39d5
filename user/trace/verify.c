/* SPDX-License-Identifier: Apache-2.0 */
/* Offline verification of a TRACE v0.2 Trust Record, in agentrust's
 * verify_record order: profile, signature form, schema, trusted key, cnf
 * thumbprint, freshness, nonce, Ed25519 signature; then the evidence the
 * caller holds (decision log, policy bundle, image digest) must reproduce the
 * hashes the record carries. The first failing step decides the reason. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "lib/base64.h"
#include "jcs/jcs.h"
#include "trace/logverify.h"
#include "trace/record.h"
#include "record_internal.h"

static const struct {
	const char *code;
	const char *sentence;
} reasons[] = {
	[KW_VERIFY_OK] = { "ok", "The record is valid." },
	[KW_VERIFY_PROFILE_MISSING] = { "profile_missing", "The record has no eat_profile, so it is not a TRACE record." },
	[KW_VERIFY_PROFILE_UNSUPPORTED] = { "profile_unsupported", "The record's eat_profile is neither TRACE v0.2 nor the TRACE v0.3 draft." },
	[KW_VERIFY_SIGNATURE_MISSING] = { "signature_missing", "The record carries no signature." },
	[KW_VERIFY_SIGNATURE_MALFORMED] = { "signature_malformed", "The signature is not canonical unpadded base64url of a 64-byte Ed25519 signature." },
	[KW_VERIFY_SCHEMA_INVALID] = { "schema_invalid", "The record does not validate against the TRACE v0.2 schema (or the v0.3 draft's, for a v0.3 record)." },
	[KW_VERIFY_TRUSTED_KEY_MISSING] = { "trusted_key_missing", "No trusted key was given, and the key embedded in the record is not trusted without an explicit request." },
	[KW_VERIFY_CNF_KEY_MISMATCH] = { "cnf_key_mismatch", "The key in the record's cnf.jwk is not the trusted key (RFC 7638 thumbprints differ)." },
	[KW_VERIFY_RECORD_IN_FUTURE] = { "record_in_future", "The record's iat is further in the future than the allowed clock skew." },
	[KW_VERIFY_RECORD_STALE] = { "record_stale", "The record is older than the maximum age allowed." },
	[KW_VERIFY_NONCE_MISMATCH] = { "nonce_mismatch", "The record's runtime.nonce is not the expected nonce." },
	[KW_VERIFY_SIGNATURE_INVALID] = { "signature_invalid", "The Ed25519 signature does not match the record's canonical bytes under the trusted key." },
	[KW_VERIFY_TRANSCRIPT_MISMATCH] = { "transcript_mismatch", "The decision log does not reproduce the record's tool_transcript hash and call count." },
	[KW_VERIFY_BUNDLE_MISMATCH] = { "bundle_mismatch", "The policy bundle does not reproduce the record's policy.bundle_hash." },
	[KW_VERIFY_MEASUREMENT_MISMATCH] = { "measurement_mismatch", "The image digest and policy bundle do not reproduce the record's runtime.measurement." },
	[KW_VERIFY_MALFORMED] = { "record_malformed", "The record is not a JSON object." },
	[KW_VERIFY_LOG_MISSING] = { "log_missing", "The record's decision log was not found." },
	[KW_VERIFY_LOG_UNREADABLE] = { "log_unreadable", "The decision log cannot be read." },
	[KW_VERIFY_LOG_TRUNCATED] = { "log_truncated", "The decision log ends inside a line: it was cut short." },
	[KW_VERIFY_LOG_LINE_TOO_LONG] = { "log_line_too_long", "A decision log line is longer than any the collector writes." },
	[KW_VERIFY_LOG_MALFORMED] = { "log_malformed", "A decision log line is not a JSON object (not JSON, a NUL byte, invalid UTF-8, or an empty line)." },
	[KW_VERIFY_LOG_NOT_CANONICAL] = { "log_not_canonical", "A decision log line is not in RFC 8785 canonical form, so it is not as the collector wrote it." },
	[KW_VERIFY_LOG_SESSION_MISMATCH] = { "log_session_mismatch", "The decision log belongs to another session: its open entry does not match the record." },
	[KW_VERIFY_LOG_INCONSISTENT] = { "log_inconsistent", "The decision log contradicts itself: its sequence numbers, open and close entries or trailer counts disagree." },
	[KW_VERIFY_LOG_INCOMPLETE] = { "log_incomplete", "The decision log does not hold every decision of the session." },
	[KW_VERIFY_RECORD_UNREADABLE] = { "record_unreadable", "The record file cannot be read." },
	[KW_VERIFY_POLICY_MISSING] = { "policy_missing", "The record's policy bundle was not found." },
	[KW_VERIFY_POLICY_UNREADABLE] = { "policy_unreadable", "The policy bundle cannot be read." },
	[KW_VERIFY_HOST_MISMATCH] = { "host_mismatch", "The record names a host its signing key is not trusted to sign for." },
	[KW_VERIFY_SESSION_CONFLICT] = { "session_conflict", "The estate already holds this session id under another signer." },
	[KW_VERIFY_CHECKPOINT_MALFORMED] = { "checkpoint_malformed", "A checkpoint line is not a canonical kwitness.checkpoint." },
	[KW_VERIFY_CHECKPOINT_KEY_MISMATCH] = { "checkpoint_key_mismatch", "A checkpoint names a signing key other than the trusted key." },
	[KW_VERIFY_CHECKPOINT_SIGNATURE_INVALID] = { "checkpoint_signature_invalid", "A checkpoint's Ed25519 signature does not hold under the trusted key." },
	[KW_VERIFY_CHECKPOINT_CHAIN_GAP] = { "checkpoint_chain_gap", "A checkpoint is missing from the chain: a number is skipped, or the last one the close entry names is not there." },
	[KW_VERIFY_CHECKPOINT_REORDERED] = { "checkpoint_reordered", "The checkpoints are out of order: a number or a line count goes back." },
	[KW_VERIFY_CHECKPOINT_CHAIN_BROKEN] = { "checkpoint_chain_broken", "A checkpoint's previous hash, or the close entry's last checkpoint hash, does not match." },
	[KW_VERIFY_CHECKPOINT_PREFIX_MISMATCH] = { "checkpoint_prefix_mismatch", "The log's first lines do not hash to what a signed checkpoint says: a vouched line was changed." },
	[KW_VERIFY_CHECKPOINT_BEYOND_LOG] = { "checkpoint_beyond_log", "A checkpoint covers more lines than the log holds: the log was cut." },
	[KW_VERIFY_CHECKPOINTS_MISSING] = { "checkpoints_missing", "The close entry names checkpoints but the checkpoint file cannot be read." },
	[KW_VERIFY_CHECKPOINT_UNVOUCHED_MISMATCH] = { "checkpoint_unvouched_mismatch", "The seal's count of lines after its last checkpoint does not match the log." },
	[KW_VERIFY_SEGMENT_MANIFEST_MALFORMED] = { "segment_manifest_malformed", "A line of the log's segment manifest is not a canonical kwitness.segment, or its numbers do not run 1, 2, 3." },
	[KW_VERIFY_SEGMENT_MANIFEST_MISSING] = { "segment_manifest_missing", "The log has further segment files but no segment manifest." },
	[KW_VERIFY_SEGMENT_MISSING] = { "segment_missing", "A segment the manifest lists is not there." },
	[KW_VERIFY_SEGMENT_REORDERED] = { "segment_reordered", "A segment file holds another segment of the manifest: segments were renamed or reordered." },
	[KW_VERIFY_SEGMENT_MISMATCH] = { "segment_mismatch", "A segment file's SHA-256 or size is not what the manifest lists, nor any other segment's: it was changed or swapped." },
	[KW_VERIFY_SEGMENT_UNLISTED] = { "segment_unlisted", "A segment file follows one the manifest does not list: a segment in between is gone." },
	[KW_VERIFY_TPM_COMMIT_MISSING] = { "tpm_commit_missing", "The session took a TPM counter value, but it has no TPM commitment file." },
	[KW_VERIFY_TPM_COMMIT_MALFORMED] = { "tpm_commit_malformed", "The session's TPM commitment file cannot be read." },
	[KW_VERIFY_TPM_COMMIT_AK_MISMATCH] = { "tpm_commit_ak_mismatch", "The TPM commitment is certified by another AK than the evidence the log names." },
	[KW_VERIFY_TPM_COMMIT_CERTIFY_INVALID] = { "tpm_commit_certify_invalid", "The TPM commitment is not a TPM-made certification of a kwitness extend index." },
	[KW_VERIFY_TPM_COMMIT_EVENT_MISMATCH] = { "tpm_commit_event_mismatch", "The TPM saw another open or close than the record and log name." },
	[KW_VERIFY_TPM_COMMIT_REPLAY_MISMATCH] = { "tpm_commit_replay_mismatch", "The TPM commitment's events do not replay to the value the TPM certified." },
};
_Static_assert(sizeof(reasons) / sizeof(reasons[0]) == KW_VERIFY_REASON_COUNT,
	       "every reason has a code and a sentence");

const char *kw_verify_reason_code(enum kw_verify_reason r)
{
	if ((size_t)r >= sizeof(reasons) / sizeof(reasons[0]))
		return "unknown";
	return reasons[r].code;
}

int kw_verify_result_set(struct kw_verify_result *res, enum kw_verify_reason r, const char *fmt,
			 ...)
{
	va_list ap;

	res->reason = r;
	va_start(ap, fmt);
	vsnprintf(res->message, sizeof(res->message), fmt, ap);
	va_end(ap);
	return (int)r;
}

/* Sets the reason; detail (may be NULL) follows the reason's sentence. */
static int verdict(struct kw_verify_result *res, enum kw_verify_reason r, const char *fmt, ...)
{
	size_t n;

	res->reason = r;
	n = (size_t)snprintf(res->message, sizeof(res->message), "%s", reasons[r].sentence);
	if (fmt && n + 2 < sizeof(res->message)) {
		va_list ap;

		res->message[n++] = ' ';
		va_start(ap, fmt);
		vsnprintf(res->message + n, sizeof(res->message) - n, fmt, ap);
		va_end(ap);
	}
	return r == KW_VERIFY_OK ? 0 : 1;
}

static const char *member_str(const json_t *obj, const char *a, const char *b)
{
	const json_t *v = json_object_get(obj, a);

	if (b)
		v = json_object_get(v, b);
	return json_string_value(v);
}

/* Digest strings are public, but compare them without early exit anyway. */
static bool same_str(const char *a, const char *b)
{
	size_t n = strlen(a);

	return n == strlen(b) && CRYPTO_memcmp(a, b, n) == 0;
}

static enum kw_digest_alg alg_of(const char *digest)
{
	return !strncmp(digest, "sha384:", 7) ? KW_SHA384 : KW_SHA256;
}

/* At most max bytes of s (n long), cut at a UTF-8 character boundary. */
static int utf8_prefix(const char *s, size_t n, size_t max)
{
	if (n <= max)
		return (int)n;
	while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
		max--;
	return (int)max;
}

/* The open entry of the log must describe the record's session. */
static int check_log_identity(const json_t *rec, const struct kw_log_check *lc,
			      struct kw_verify_result *res)
{
	static const struct {
		const char *log_key, *rec_a, *rec_b;
		size_t field;
	} pairs[] = {
		{ "sandbox_id", "subject", NULL, offsetof(struct kw_log_check, sandbox_id) },
		{ "bundle_hash", "policy", "bundle_hash", offsetof(struct kw_log_check, bundle_hash) },
		{ "image_digest", "build_provenance", "digest", offsetof(struct kw_log_check, image_digest) },
		{ "mode", "policy", "enforcement_mode", offsetof(struct kw_log_check, mode) },
	};

	if (lc->session_mismatch)
		return verdict(res, KW_VERIFY_LOG_SESSION_MISMATCH,
			       "(its open entry names session %.*s, expected \"%.64s\")",
			       utf8_prefix(lc->session.text, lc->session.len, 80), lc->session.text,
			       lc->expect_session ? lc->expect_session : "");
	if (!lc->has_open)
		return 0;
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		const struct kw_log_field *f =
			(const struct kw_log_field *)(const void *)((const char *)lc + pairs[i].field);
		const char *want = member_str(rec, pairs[i].rec_a, pairs[i].rec_b);

		if (!kw_log_field_equals(f, want))
			return verdict(res, KW_VERIFY_LOG_SESSION_MISMATCH,
				       "(the log's %s is %.*s, the record's is \"%.*s\")", pairs[i].log_key,
				       f->len ? utf8_prefix(f->text, f->len, 100) : 6, f->len ? f->text : "absent",
				       want ? utf8_prefix(want, strlen(want), 100) : 0, want ? want : "");
	}
	return 0;
}

static int check_evidence(const json_t *rec, const struct kw_verify_opts *o,
			  struct kw_verify_result *res)
{
	char computed[KW_DIGEST_STR_MAX], measurement[KW_DIGEST_STR_MAX];
	const json_t *tt = json_object_get(rec, "tool_transcript");
	const struct kw_log_check *lc = o->log;
	struct kw_verify_opts log_opts;
	int ret;

	res->warning[0] = '\0';
	if (lc) {
		if (lc->problem != KW_VERIFY_OK)
			return verdict(res, lc->problem, "(%s)", lc->why);
		ret = check_log_identity(rec, lc, res);
		if (ret)
			return ret;
		/* The transcript as every other caller passes it. */
		log_opts = *o;
		log_opts.transcript_hash = lc->hash;
		log_opts.call_count = (int64_t)lc->entries;
		o = &log_opts;
	}
	if (o->transcript_hash) {
		const char *hash = member_str(tt, "hash", NULL);
		long long count = -1;

		if (!hash)
			return verdict(res, KW_VERIFY_TRANSCRIPT_MISMATCH,
				       "(the record has no tool_transcript)");
		if (!same_str(hash, o->transcript_hash))
			return verdict(res, KW_VERIFY_TRANSCRIPT_MISMATCH,
				       "(log hashes to %s, record says %s)", o->transcript_hash, hash);
		if (o->call_count >= 0 &&
		    (!kw_json_integer(json_object_get(tt, "call_count"), &count) || count != o->call_count))
			return verdict(res, KW_VERIFY_TRANSCRIPT_MISMATCH,
				       "(log has %" PRId64 " entries, record says %lld)", o->call_count, count);
	}
	if (lc && lc->inconsistent)
		return verdict(res, KW_VERIFY_LOG_INCONSISTENT, "(%s)", lc->inconsistent_why);
	if (o->bundle) {
		const char *bundle_hash = member_str(rec, "policy", "bundle_hash");
		const char *image = o->image_digest;
		const char *m = member_str(rec, "runtime", "measurement");

		ret = kw_digest_buf(alg_of(bundle_hash), o->bundle, o->bundle_len, computed);
		if (ret)
			return ret;
		if (!same_str(computed, bundle_hash))
			return verdict(res, KW_VERIFY_BUNDLE_MISMATCH, "(bundle hashes to %s, record says %s)",
				       computed, bundle_hash);
		/* A software-only record's measurement is image + bundle; a
		 * tpm2 record's is the quoted PCR digest, which only appraisal
		 * of its evidence can check. */
		if (image && same_str(member_str(rec, "runtime", "platform"), "software-only")) {
			ret = kw_software_measurement(alg_of(m), image, computed, measurement);
			if (ret)
				return ret;
			if (!same_str(measurement, m))
				return verdict(res, KW_VERIFY_MEASUREMENT_MISMATCH,
					       "(image %s with this bundle gives %s, record says %s)", image,
					       measurement, m);
		}
	}
	if (lc && !lc->complete) {
		if (!o->allow_incomplete)
			return verdict(res, KW_VERIFY_LOG_INCOMPLETE, "(%s)", lc->incomplete_why);
		snprintf(res->warning, sizeof(res->warning), "%s %s",
			 reasons[KW_VERIFY_LOG_INCOMPLETE].sentence, lc->incomplete_why);
	}
	return verdict(res, KW_VERIFY_OK, NULL);
}

/* The record's age against now, max_age and skew, and its nonce against
 * the one asked for: 0 when they hold, else 1 with the verdict in res. */
static int check_freshness(const json_t *rec, const struct kw_verify_opts *o,
			   struct kw_verify_result *res)
{
	long long iat = 0;

	kw_json_integer(json_object_get(rec, "iat"), &iat);
	if (iat > o->now + o->skew)
		return verdict(res, KW_VERIFY_RECORD_IN_FUTURE, "(iat %lld, now %" PRId64 ", skew %" PRId64 " s)",
			       iat, o->now, o->skew);
	if (o->max_age > 0 && o->now - iat > o->max_age)
		return verdict(res, KW_VERIFY_RECORD_STALE, "(age %lld s, maximum %" PRId64 " s; "
			       "to verify an old record, pass --max-age 0 or a larger --max-age)",
			       (long long)(o->now - iat), o->max_age);
	if (o->nonce) {
		const char *nonce = member_str(rec, "runtime", "nonce");

		if (!nonce || !same_str(nonce, o->nonce))
			return verdict(res, KW_VERIFY_NONCE_MISMATCH, nonce ? NULL : "(the record has none)");
	}
	return 0;
}

int kw_record_verify_signed(const char *text, size_t len, const struct kw_verify_opts *o,
			    struct kw_verify_result *res, json_t **rec_out)
{
	uint8_t sig[KW_ED25519_SIG_LEN + 3];
	char why[256], tp_cnf[KW_THUMBPRINT_MAX], tp_trusted[KW_THUMBPRINT_MAX];
	struct kw_buf canon = { 0 };
	struct kw_key *embedded = NULL;
	const struct kw_key *trusted = o->trusted;
	const json_t *profile, *sigv, *jwk;
	struct jcs_error jerr = { 0 };
	size_t siglen = 0;
	json_t *rec;
	int ret;

	res->reason = KW_VERIFY_MALFORMED;
	res->message[0] = '\0';
	res->warning[0] = '\0';
	rec = jcs_parse(text, len, &jerr);
	if (!rec)
		return verdict(res, KW_VERIFY_MALFORMED, "(line %zu column %zu: %s)", jerr.line,
			       jerr.column, jerr.message);
	if (!json_is_object(rec)) {
		ret = verdict(res, KW_VERIFY_MALFORMED, "(it is valid JSON of another type)");
		goto out;
	}

	profile = json_object_get(rec, "eat_profile");
	if (!profile) {
		ret = verdict(res, KW_VERIFY_PROFILE_MISSING, NULL);
		goto out;
	}
	if (kw_record_profile_of(rec) < 0) {
		ret = verdict(res, KW_VERIFY_PROFILE_UNSUPPORTED, NULL);
		goto out;
	}

	sigv = json_object_get(rec, "signature");
	if (!sigv) {
		ret = verdict(res, KW_VERIFY_SIGNATURE_MISSING, NULL);
		goto out;
	}
	if (!json_is_string(sigv) ||
	    kw_b64_decode(KW_B64_URL, json_string_value(sigv), json_string_length(sigv), sig, sizeof(sig), &siglen) ||
	    siglen != KW_ED25519_SIG_LEN) {
		ret = verdict(res, KW_VERIFY_SIGNATURE_MALFORMED, NULL);
		goto out;
	}

	if (kw_schema_validate(rec, why, sizeof(why))) {
		ret = verdict(res, KW_VERIFY_SCHEMA_INVALID, "(%s)", why);
		goto out;
	}

	jwk = json_object_get(json_object_get(rec, "cnf"), "jwk");
	if (!trusted) {
		if (!o->allow_embedded_key) {
			ret = verdict(res, KW_VERIFY_TRUSTED_KEY_MISSING, NULL);
			goto out;
		}
		if (kw_key_from_jwk(jwk, &embedded)) {
			ret = verdict(res, KW_VERIFY_TRUSTED_KEY_MISSING,
				      "(the embedded cnf.jwk is not a usable Ed25519 public key)");
			goto out;
		}
		trusted = embedded;
	}

	ret = kw_key_thumbprint(trusted, tp_trusted);
	if (ret)
		goto out;
	if (kw_jwk_thumbprint(jwk, tp_cnf) ||
	    CRYPTO_memcmp(tp_cnf, tp_trusted, KW_THUMBPRINT_MAX) != 0) {
		ret = verdict(res, KW_VERIFY_CNF_KEY_MISMATCH, "(trusted key %s)", tp_trusted);
		goto out;
	}

	ret = check_freshness(rec, o, res);
	if (ret)
		goto out;

	/* The signed bytes: RFC 8785 form of the record without "signature". */
	json_object_del(rec, "signature");
	ret = jcs_dump(rec, &canon);
	if (ret)
		goto out;
	ret = kw_key_verify(trusted, canon.data, canon.len, sig, siglen);
	if (ret == -EBADMSG) {
		ret = verdict(res, KW_VERIFY_SIGNATURE_INVALID, NULL);
		goto out;
	}
	if (ret)
		goto out;
	ret = verdict(res, KW_VERIFY_OK, NULL);
	if (rec_out) {
		*rec_out = rec;
		rec = NULL;
	}
out:
	if (ret < 0) {
		res->reason = KW_VERIFY_MALFORMED;
		snprintf(res->message, sizeof(res->message), "Verification could not run: %s.",
			 strerror(-ret));
	}
	OPENSSL_cleanse(sig, sizeof(sig));
	kw_key_free(embedded);
	kw_buf_free(&canon);
	json_decref(rec);
	return ret;
}

int kw_record_verify_evidence(const json_t *rec, const struct kw_verify_opts *o,
			      struct kw_verify_result *res)
{
	int ret = check_evidence(rec, o, res);

	if (ret < 0) {
		res->reason = KW_VERIFY_MALFORMED;
		snprintf(res->message, sizeof(res->message), "Verification could not run: %s.",
			 strerror(-ret));
	}
	return ret;
}

int kw_record_verify(const char *text, size_t len, const struct kw_verify_opts *o,
		     struct kw_verify_result *res)
{
	json_t *rec = NULL;
	int ret = kw_record_verify_signed(text, len, o, res, &rec);

	if (ret == 0)
		ret = kw_record_verify_evidence(rec, o, res);
	json_decref(rec);
	return ret;
}
