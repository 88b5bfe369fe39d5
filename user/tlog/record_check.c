/* SPDX-License-Identifier: Apache-2.0 */
/* The offline Level 2 check, see record_check.h. Each step has its own
 * reason code:
 *   2 tlog_leaf_mismatch     the record's anchor-v1 leaf is not the proof's
 *   3 tlog_origin_mismatch   the checkpoint's log is not in the policy, or the
 *                            record's transparency URL names another log or body
 *   4 tlog_checkpoint_signature  the log's signature on the checkpoint fails
 *   5 tlog_witness_quorum    too few policy witnesses cosigned
 *   6 tlog_inclusion_invalid the audit path does not lead to the root
 * and tlog_proof_malformed for a proof that is not one. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "tlog/anchor.h"
#include "tlog/proof.h"
#include "tlog/record_check.h"
#include "tlog/record_url.h"

void tlog_verdict_fail(struct tlog_verdict *v, int step, const char *code, const char *fmt, ...)
{
	va_list ap;

	v->step = step;
	v->code = code;
	va_start(ap, fmt);
	vsnprintf(v->message, sizeof(v->message), fmt, ap);
	va_end(ap);
}

/* The checkpoint's origin is a policy log's name. */
static bool origin_known(const struct tlog_policy *p, const char *origin)
{
	for (size_t i = 0; i < p->nlogs; i++)
		if (!strcmp(p->logs[i].name, origin))
			return true;
	return false;
}

/* Steps 2 to 6 for rec (NULL: not JSON); bind_url: step 3 also holds the
 * record's transparency URL to this log's URL for it. */
static int check_entry(const struct tlog_policy *pol, const char *proof_text, size_t proof_len,
		       const char *proof_name, const json_t *rec, bool bind_url,
		       struct tlog_verdict *v)
{
	struct tlog_proof *proof = calloc(1, sizeof(*proof));
	struct kw_buf entry = { 0 };
	struct tlog_note note;
	struct tlog_checkpoint cp;
	struct tlog_hash leaf;
	char url[TLOG_RECORD_URL_MAX];
	const char *have_url;

	memset(v, 0, sizeof(*v));
	v->code = "ok";
	if (!proof)
		return -ENOMEM;
	if (tlog_proof_parse(proof_text, proof_len, proof) ||
	    tlog_note_parse(proof->checkpoint, proof->checkpoint_len, &note) ||
	    tlog_checkpoint_parse(note.text, note.text_len, &cp)) {
		tlog_verdict_fail(v, 2, "tlog_proof_malformed", "%s is not a C2SP tlog-proof with a checkpoint",
			proof_name);
		goto out;
	}
	snprintf(v->origin, sizeof(v->origin), "%s", cp.origin);
	v->index = proof->index;
	v->size = cp.size;
	v->root = cp.root;
	v->checkpoint = proof->checkpoint;
	v->checkpoint_len = proof->checkpoint_len;
	/* Step 2: the leaf is the record's own anchor-v1 bytes. */
	if (!rec || anchor_claim_bytes(rec, &entry)) {
		tlog_verdict_fail(v, 2, "tlog_leaf_mismatch", "the record has no anchor-v1 form");
		goto out;
	}
	tlog_leaf_hash(entry.data, entry.len, &leaf);
	if (proof->has_extra && (proof->extra_len != TLOG_HASH_LEN ||
				 memcmp(proof->extra, leaf.b, TLOG_HASH_LEN))) {
		tlog_verdict_fail(v, 2, "tlog_leaf_mismatch",
			"the proof is for another entry than this record's anchor-v1 leaf");
		goto out;
	}
	/* Step 3: the log is one the policy trusts, and the one the record names. */
	have_url = json_string_value(json_object_get(rec, "transparency"));
	if (!origin_known(pol, cp.origin)) {
		tlog_verdict_fail(v, 3, "tlog_origin_mismatch", "the checkpoint's log %s is not in the policy",
			cp.origin);
		goto out;
	}
	if (bind_url && (tlog_record_url(cp.origin, rec, url) || !have_url || strcmp(have_url, url))) {
		tlog_verdict_fail(v, 3, "tlog_origin_mismatch",
			"the record's transparency URL is %s%s%s, not this log's URL for it (%s)",
			have_url ? "\"" : "", have_url ? have_url : "missing", have_url ? "\"" : "", url);
		goto out;
	}
	/* Steps 4 and 5: the log's signature, the witnesses' quorum. */
	switch (tlog_policy_check(pol, &note, &cp, &v->cosigned)) {
	case TLOG_POLICY_OK:
		break;
	case TLOG_POLICY_UNKNOWN_LOG:
	case TLOG_POLICY_LOG_SIGNATURE:
		tlog_verdict_fail(v, 4, "tlog_checkpoint_signature",
			"the checkpoint carries no valid signature by the policy's key for %s", cp.origin);
		goto out;
	case TLOG_POLICY_QUORUM:
		tlog_verdict_fail(v, 5, "tlog_witness_quorum",
			"the policy's witness quorum is not met (%zu policy witnesses cosigned)", v->cosigned);
		goto out;
	}
	/* Step 6: the audit path from this leaf at this index to the root. */
	if (!tlog_inclusion_verify(proof->index, cp.size, &leaf, proof->path, proof->count, &cp.root)) {
		tlog_verdict_fail(v, 6, "tlog_inclusion_invalid",
			"the audit path does not lead from the record's leaf at index %" PRIu64
			" to the root of the %" PRIu64 "-entry tree", proof->index, cp.size);
		goto out;
	}
	snprintf(v->message, sizeof(v->message),
		 "entry %" PRIu64 " of %s (checkpoint of %" PRIu64 " entries, %zu witness%s cosigned)",
		 proof->index, cp.origin, cp.size, v->cosigned, v->cosigned == 1 ? "" : "es");
out:
	kw_buf_free(&entry);
	free(proof);
	return 0;
}

int tlog_check_record(const struct tlog_policy *pol, const char *proof_text, size_t proof_len,
		      const char *proof_name, const char *record, size_t record_len,
		      struct tlog_verdict *v)
{
	json_t *rec = jcs_parse(record, record_len, NULL);
	int e = check_entry(pol, proof_text, proof_len, proof_name, rec, true, v);

	json_decref(rec);
	return e;
}

int tlog_check_entry(const struct tlog_policy *pol, const char *proof_text, size_t proof_len,
		     const char *proof_name, const json_t *entry, struct tlog_verdict *v)
{
	return check_entry(pol, proof_text, proof_len, proof_name, entry, false, v);
}
