/* SPDX-License-Identifier: Apache-2.0 */
/* Sealing a session into its signed record, see seal.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/buf.h"
#include "collector/publish.h"
#include "collector/seal.h"

static int fail(enum kw_seal_stage *stage, enum kw_seal_stage what, int e)
{
	*stage = what;
	return e;
}

int kw_seal_record(const struct kw_record_input *in, const struct kw_key *key,
		   const char *record_path, json_t **record, enum kw_seal_stage *stage,
		   char *why, size_t whylen)
{
	return kw_seal_record_logged(in, key, NULL, record_path, record, stage, why, whylen, NULL, 0);
}

/* RECORD.tlog-proof, written before the record so a record with a URI never
 * appears without its proof. */
static int write_proof(const char *record_path, const struct kw_buf *proof, char *why,
		       size_t whylen)
{
	char path[4096];
	int e;

	if (snprintf(path, sizeof(path), "%s.tlog-proof", record_path) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	e = kw_write_file_atomic(path, proof->data, proof->len, 0644);
	if (e)
		snprintf(why, whylen, "%.300s: %s", path, strerror(-e));
	return e;
}

int kw_seal_record_logged(const struct kw_record_input *in, const struct kw_key *key,
			  const struct kw_publish *pub, const char *record_path, json_t **record,
			  enum kw_seal_stage *stage, char *why, size_t whylen, char *log_why,
			  size_t log_whylen)
{
	char msg[512] = "";
	struct kw_buf proof = { 0 };
	struct kw_verify_opts vo = { 0 };
	struct kw_buf text = { 0 };
	json_t *rec;
	int e;

	*stage = KW_SEAL_DONE;
	if (record)
		*record = NULL;
	rec = kw_record_build(in, msg, sizeof(msg));
	if (!rec) {
		snprintf(why, whylen, "build: %s", msg);
		return fail(stage, KW_SEAL_RECORD, -EINVAL);
	}
	if (log_why && log_whylen)
		log_why[0] = '\0';
	/* The one self-check: the bytes written are verified as an auditor
	 * would, against what the record must say. */
	vo.trusted = key;
	vo.now = in->iat;
	vo.max_age = 0;
	vo.skew = KW_DEFAULT_SKEW;
	vo.transcript_hash = in->transcript_hash;
	vo.call_count = (int64_t)in->call_count;
	vo.bundle = in->bundle;
	vo.bundle_len = in->bundle_len;
	vo.image_digest = in->image_digest;
	if (pub) {
		/* Signs once; on a logging failure the record is signed without a URI. */
		e = kw_publish_record_checked(rec, key, pub, &vo, &text, &proof, msg, sizeof(msg));
		if (e < 0 && log_why)
			snprintf(log_why, log_whylen, "%s", msg);
		if (e == -EKEYREJECTED)
			snprintf(msg, sizeof(msg), "the record could not be signed again without transparency");
		else if (e < 0)
			e = 0;
	} else {
		e = kw_record_sign_checked(rec, key, &vo, &text, msg, sizeof(msg));
	}
	if (e == KW_SIGN_CHECK_FAILED) {
		snprintf(why, whylen, "self-check: %s", msg);
		e = fail(stage, KW_SEAL_RECORD, -EINVAL);
		goto out;
	}
	if (e) {
		snprintf(why, whylen, "sign: %s", msg);
		e = fail(stage, KW_SEAL_RECORD, e);
		goto out;
	}
	if (kw_buf_putc(&text, '\n')) {
		snprintf(why, whylen, "out of memory");
		e = fail(stage, KW_SEAL_MEMORY, -ENOMEM);
		goto out;
	}
	if (proof.len) {
		e = write_proof(record_path, &proof, why, whylen);
		if (e) {
			e = fail(stage, KW_SEAL_WRITE, e);
			goto out;
		}
	}
	e = kw_write_file_atomic(record_path, text.data, text.len, 0644);
	if (e) {
		snprintf(why, whylen, "%.300s: %s", record_path, strerror(-e));
		e = fail(stage, KW_SEAL_WRITE, e);
		goto out;
	}
	if (record) {
		*record = rec;
		rec = NULL;
	}
out:
	json_decref(rec);
	kw_buf_free(&text);
	kw_buf_free(&proof);
	return e;
}
