/* SPDX-License-Identifier: Apache-2.0 */
/* Committed sessions, offline: the event digests, the commitment file, and
 * its check (a TPM-made certification of a kwitness extend index whose
 * value the events replay to, holding the open and close the record names). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <tss2/tss2_mu.h>

#include "commit.h"
#include "tpm_internal.h"

static const char *const codes[] = {
	[KW_COMMIT_OK] = "ok",
	[KW_COMMIT_MISSING] = "tpm_commit_missing",
	[KW_COMMIT_MALFORMED] = "tpm_commit_malformed",
	[KW_COMMIT_AK_MISMATCH] = "tpm_commit_ak_mismatch",
	[KW_COMMIT_CERTIFY_INVALID] = "tpm_commit_certify_invalid",
	[KW_COMMIT_EVENT_MISMATCH] = "tpm_commit_event_mismatch",
	[KW_COMMIT_REPLAY_MISMATCH] = "tpm_commit_replay_mismatch",
};

const char *kw_commit_code(enum kw_commit_reason r)
{
	return (unsigned)r < sizeof(codes) / sizeof(codes[0]) ? codes[r] : "unknown";
}

static int sha256_parts(const char *const *parts, size_t n, uint8_t out[32])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned int len = 0;
	int ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1;

	for (size_t i = 0; ok && i < n; i++) {
		/* A field with a newline (or none at all) could spell another event. */
		if (!parts[i] || !*parts[i] || strchr(parts[i], '\n'))
			ok = 0;
		ok = ok && EVP_DigestUpdate(md, parts[i], strlen(parts[i])) == 1 &&
		     EVP_DigestUpdate(md, "\n", 1) == 1;
	}
	ok = ok && EVP_DigestFinal_ex(md, out, &len) == 1 && len == 32;
	EVP_MD_CTX_free(md);
	return ok ? 0 : -EINVAL;
}

int kw_commit_open_event(const char *session, const char *counter, const char *bundle_hash,
			 const char *image_digest, uint8_t out[32])
{
	const char *parts[] = { "kwitness.open", session, counter, bundle_hash, image_digest };

	return sha256_parts(parts, 5, out);
}

int kw_commit_close_event(const char *session, const char *transcript_hash, uint8_t out[32])
{
	const char *parts[] = { "kwitness.close", session, transcript_hash };

	return sha256_parts(parts, 3, out);
}

int kw_commit_extend(uint8_t v[32], const uint8_t e[32])
{
	uint8_t in[64];
	unsigned int len = 0;

	memcpy(in, v, 32);
	memcpy(in + 32, e, 32);
	return EVP_Digest(in, sizeof(in), v, &len, EVP_sha256(), NULL) == 1 && len == 32 ? 0 : -EIO;
}

json_t *kw_commit_build(const struct kw_buf *nv_public, const uint8_t start[32],
			const uint8_t (*events)[32], size_t n_events, size_t open_at,
			const struct kw_buf *attest, const struct kw_buf *signature,
			const struct kw_buf *ak_public)
{
	json_t *ev = json_array();
	char hex[65];

	for (size_t i = 0; ev && i < n_events; i++) {
		kw_hex(events[i], 32, hex);
		if (json_array_append_new(ev, json_string(hex))) {
			json_decref(ev);
			return NULL;
		}
	}
	kw_hex(start, 32, hex);
	return json_pack("{s:s, s:o, s:s, s:o, s:I, s:{s:o, s:o}, s:o}", "format",
			 KW_TPM_COMMIT_FORMAT, "nv_public",
			 kw_tpm_b64_json(nv_public->data, nv_public->len), "start", hex, "events", ev,
			 "open_at", (json_int_t)open_at, "certify", "attest",
			 kw_tpm_b64_json(attest->data, attest->len), "signature",
			 kw_tpm_b64_json(signature->data, signature->len), "ak_public",
			 kw_tpm_b64_json(ak_public->data, ak_public->len));
}

static int verdict(struct kw_commit_result *res, enum kw_commit_reason r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int verdict(struct kw_commit_result *res, enum kw_commit_reason r, const char *fmt, ...)
{
	va_list ap;

	res->reason = r;
	va_start(ap, fmt);
	vsnprintf(res->message, sizeof(res->message), fmt, ap);
	va_end(ap);
	return r == KW_COMMIT_OK ? 0 : 1;
}

struct commit_file {
	struct kw_buf nv_public, attest, signature, ak_public;
	uint8_t start[32];
	uint8_t (*events)[32];
	size_t n_events, open_at;
};

static void commit_file_free(struct commit_file *f)
{
	kw_buf_free(&f->nv_public);
	kw_buf_free(&f->attest);
	kw_buf_free(&f->signature);
	kw_buf_free(&f->ak_public);
	free(f->events);
}

static int commit_parse(const json_t *cm, struct commit_file *f, char *why, size_t whylen)
{
	const json_t *events = json_object_get(cm, "events"), *cert = json_object_get(cm, "certify");
	const json_t *open_at = json_object_get(cm, "open_at");
	const char *format = json_string_value(json_object_get(cm, "format"));

	if (!format || strcmp(format, KW_TPM_COMMIT_FORMAT)) {
		snprintf(why, whylen, "not a %s object", KW_TPM_COMMIT_FORMAT);
		return -EINVAL;
	}
	if (kw_tpm_unb64(json_object_get(cm, "nv_public"), &f->nv_public) ||
	    kw_tpm_unb64(json_object_get(cert, "attest"), &f->attest) ||
	    kw_tpm_unb64(json_object_get(cert, "signature"), &f->signature) ||
	    kw_tpm_unb64(json_object_get(cm, "ak_public"), &f->ak_public)) {
		snprintf(why, whylen, "nv_public, certify.attest, certify.signature and ak_public must be base64url");
		return -EINVAL;
	}
	if (kw_unhex(json_string_value(json_object_get(cm, "start")), f->start, 32)) {
		snprintf(why, whylen, "start must be 64 hex digits");
		return -EINVAL;
	}
	if (!json_is_array(events) || json_array_size(events) < 2 ||
	    json_array_size(events) > KW_COMMIT_MAX_EVENTS) {
		snprintf(why, whylen, "events must list 2 to %d digests", KW_COMMIT_MAX_EVENTS);
		return -EINVAL;
	}
	f->n_events = json_array_size(events);
	if (!json_is_integer(open_at) || json_integer_value(open_at) < 0 ||
	    (size_t)json_integer_value(open_at) >= f->n_events - 1) {
		snprintf(why, whylen, "open_at must index an event before the last (the close)");
		return -EINVAL;
	}
	f->open_at = (size_t)json_integer_value(open_at);
	f->events = calloc(f->n_events, 32);
	if (!f->events)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_events; i++)
		if (kw_unhex(json_string_value(json_array_get(events, i)), f->events[i], 32)) {
			snprintf(why, whylen, "events[%zu] is not 64 hex digits", i);
			return -EINVAL;
		}
	return 0;
}

/* The certification: made by the TPM (magic, type), signed by the AK, of
 * the whole of a kwitness extend index (name = SHA-256 of nv_public). Fills
 * value with the certified contents and qd with its qualifying data. */
static int certified_value(const struct commit_file *f, uint8_t value[32], uint8_t qd[32],
			   char *why, size_t whylen)
{
	TPMS_NV_PUBLIC nv;
	TPMT_PUBLIC ak;
	TPMS_ATTEST at;
	TPMT_SIGNATURE sig;
	uint8_t name[34];
	size_t off = 0;
	TPMA_NV want = TPMA_NV_AUTHWRITE | TPMA_NV_AUTHREAD | TPMA_NV_NO_DA |
		       ((TPMA_NV)TPM2_NT_EXTEND << TPMA_NV_TPM2_NT_SHIFT) | TPMA_NV_WRITTEN;

#define BAD(...) (snprintf(why, whylen, __VA_ARGS__), 1)
	if (Tss2_MU_TPMS_NV_PUBLIC_Unmarshal((const uint8_t *)f->nv_public.data, f->nv_public.len,
					     &off, &nv) || off != f->nv_public.len)
		return BAD("nv_public does not parse");
	if (nv.nameAlg != TPM2_ALG_SHA256 || nv.dataSize != 32 || nv.attributes != want ||
	    nv.authPolicy.size)
		return BAD("the certified index is not a kwitness extend index (attributes 0x%08x)",
			   (unsigned)nv.attributes);
	name[0] = 0x00;
	name[1] = 0x0b;
	if (EVP_Digest(f->nv_public.data, f->nv_public.len, name + 2, NULL, EVP_sha256(), NULL) != 1)
		return -EIO;
	off = 0;
	if (Tss2_MU_TPMT_PUBLIC_Unmarshal((const uint8_t *)f->ak_public.data, f->ak_public.len, &off,
					  &ak) || off != f->ak_public.len || kw_tpm_ak_check(&ak, why, whylen))
		return BAD("ak_public is not an attestation key");
	off = 0;
	if (Tss2_MU_TPMS_ATTEST_Unmarshal((const uint8_t *)f->attest.data, f->attest.len, &off, &at) ||
	    off != f->attest.len || at.magic != TPM2_GENERATED_VALUE || at.type != TPM2_ST_ATTEST_NV)
		return BAD("certify.attest is not a TPM-generated NV certification");
	off = 0;
	if (Tss2_MU_TPMT_SIGNATURE_Unmarshal((const uint8_t *)f->signature.data, f->signature.len,
					     &off, &sig) || off != f->signature.len ||
	    sig.sigAlg != TPM2_ALG_ECDSA || sig.signature.ecdsa.hash != TPM2_ALG_SHA256 ||
	    sig.signature.ecdsa.signatureR.size > 32 || sig.signature.ecdsa.signatureS.size > 32 ||
	    !kw_tpm_ecdsa_verify(&ak, &sig.signature.ecdsa, f->attest.data, f->attest.len))
		return BAD("the certification's signature does not verify with the AK");
	if (at.attested.nv.indexName.size != sizeof(name) ||
	    memcmp(at.attested.nv.indexName.name, name, sizeof(name)))
		return BAD("the certification names another NV index than nv_public");
	if (at.attested.nv.offset != 0 || at.attested.nv.nvContents.size != 32)
		return BAD("the certification does not cover the index's 32 bytes");
	if (at.extraData.size != 32)
		return BAD("the certification's qualifying data is not a close event");
	memcpy(qd, at.extraData.buffer, 32);
	memcpy(value, at.attested.nv.nvContents.buffer, 32);
	return 0;
#undef BAD
}

int kw_commit_check(const json_t *cm, const struct kw_commit_claim *claim,
		    const struct kw_buf *ak_public, struct kw_commit_result *res)
{
	struct commit_file f = { 0 };
	uint8_t open_ev[32], close_ev[32], v[32], certified[32], qd[32];
	char why[300];
	int ret;

	memset(res, 0, sizeof(*res));
	kw_tss_quiet();
	if (!cm)
		return verdict(res, KW_COMMIT_MISSING, "no commitment file for this session");
	if (!claim->counter || !*claim->counter)
		return verdict(res, KW_COMMIT_MISSING, "the log's open entry names no TPM counter");
	ret = commit_parse(cm, &f, why, sizeof(why));
	if (ret) {
		ret = ret == -EINVAL ? verdict(res, KW_COMMIT_MALFORMED, "%s", why) : ret;
		goto out;
	}
	if (!ak_public || ak_public->len != f.ak_public.len ||
	    memcmp(ak_public->data, f.ak_public.data, f.ak_public.len)) {
		ret = verdict(res, KW_COMMIT_AK_MISMATCH,
			      "the commitment is certified by another AK than the appraised evidence's");
		goto out;
	}
	if (kw_commit_open_event(claim->session, claim->counter, claim->bundle_hash,
				 claim->image_digest, open_ev) ||
	    kw_commit_close_event(claim->session, claim->transcript_hash, close_ev)) {
		ret = verdict(res, KW_COMMIT_MALFORMED, "the record or log lacks a session, counter, bundle hash, image digest or transcript hash");
		goto out;
	}
	ret = certified_value(&f, certified, qd, why, sizeof(why));
	if (ret) {
		ret = ret == 1 ? verdict(res, KW_COMMIT_CERTIFY_INVALID, "%s", why) : ret;
		goto out;
	}
	if (CRYPTO_memcmp(f.events[f.open_at], open_ev, 32)) {
		ret = verdict(res, KW_COMMIT_EVENT_MISMATCH,
			      "the TPM saw another open (session, counter %s, bundle hash, image digest) than the record and log name",
			      claim->counter);
		goto out;
	}
	/* The certification was asked for at this close, and it is the last event. */
	if (CRYPTO_memcmp(qd, close_ev, 32) || CRYPTO_memcmp(f.events[f.n_events - 1], close_ev, 32)) {
		ret = verdict(res, KW_COMMIT_EVENT_MISMATCH,
			      "the TPM saw another close (transcript hash) than the record names");
		goto out;
	}
	memcpy(v, f.start, 32);
	for (size_t i = 0; i < f.n_events; i++)
		if (kw_commit_extend(v, f.events[i])) {
			ret = -EIO;
			goto out;
		}
	res->events = f.n_events;
	if (CRYPTO_memcmp(v, certified, 32)) {
		ret = verdict(res, KW_COMMIT_REPLAY_MISMATCH,
			      "the %zu events do not replay to the value the TPM certified", f.n_events);
		goto out;
	}
	ret = verdict(res, KW_COMMIT_OK,
		      "the TPM saw this session open (counter %s, bundle hash %.80s) and close (transcript %.80s); %zu extends replay",
		      claim->counter, claim->bundle_hash, claim->transcript_hash, f.n_events);
out:
	commit_file_free(&f);
	return ret;
}
