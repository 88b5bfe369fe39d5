/* SPDX-License-Identifier: Apache-2.0 */
/* The offline Level 2 check: each step with its own reason code.
 *   2 tlog_leaf_mismatch     the record's anchor-v1 leaf is not the proof's
 *   3 tlog_origin_mismatch   the checkpoint's log is not in the policy, or the
 *                            record's transparency URL names another log or body
 *   4 tlog_checkpoint_signature  the log's signature on the checkpoint fails
 *   5 tlog_witness_quorum    too few policy witnesses cosigned
 *   6 tlog_inclusion_invalid the audit path does not lead to the root
 * and tlog_proof_malformed for a proof file that is not one. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kwitness/buf.h"
#include "kwitness/jcs.h"
#include "cli_record.h"
#include "tlog/anchor.h"
#include "tlog/base64.h"
#include "tlog/policy.h"
#include "tlog/proof.h"
#include "tlog/record_url.h"
#include "tlog/witness.h"
#include "verify_transparency.h"

static int verdict(struct tl_verdict *v, int step, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int verdict(struct tl_verdict *v, int step, const char *code, const char *fmt, ...)
{
	va_list ap;

	v->step = step;
	v->code = code;
	va_start(ap, fmt);
	vsnprintf(v->message, sizeof(v->message), fmt, ap);
	va_end(ap);
	return 0;
}

static struct tlog_policy *load_policy(const char *path)
{
	struct kw_buf b = { 0 };
	struct tlog_policy *p = calloc(1, sizeof(*p));
	char err[300];

	if (!p || cli_read("verify", "transparency policy", path, TLOG_POLICY_FILE_MAX, &b)) {
		free(p);
		kw_buf_free(&b);
		return NULL;
	}
	if (tlog_policy_parse(b.data ? b.data : "", b.len, p, err, sizeof(err))) {
		fprintf(stderr, "kwitness verify: %s: %s\n", path, err);
		free(p);
		p = NULL;
	}
	kw_buf_free(&b);
	return p;
}

/* The checkpoint's origin is a policy log's name. */
static bool origin_known(const struct tlog_policy *p, const char *origin)
{
	for (size_t i = 0; i < p->nlogs; i++)
		if (!strcmp(p->logs[i].name, origin))
			return true;
	return false;
}

int verify_transparency(const char *policy_path, const char *proof_path, const char *record,
			size_t record_len, struct tl_verdict *v)
{
	struct tlog_policy *pol = load_policy(policy_path);
	struct kw_buf pb = { 0 }, entry = { 0 };
	struct tlog_proof *proof = calloc(1, sizeof(*proof));
	struct tlog_note note;
	struct tlog_checkpoint cp;
	struct tlog_hash leaf;
	char url[TLOG_RECORD_URL_MAX];
	const char *have_url;
	json_t *rec = NULL;
	int ret = -1;

	memset(v, 0, sizeof(*v));
	v->code = "ok";
	if (!pol || !proof || cli_read("verify", "proof", proof_path, TLOG_WITNESS_REQUEST_MAX, &pb))
		goto out;
	ret = 0;
	if (tlog_proof_parse(pb.data ? pb.data : "", pb.len, proof) ||
	    tlog_note_parse(proof->checkpoint, proof->checkpoint_len, &note) ||
	    tlog_checkpoint_parse(note.text, note.text_len, &cp)) {
		verdict(v, 2, "tlog_proof_malformed", "%s is not a C2SP tlog-proof with a checkpoint",
			proof_path);
		goto out;
	}
	snprintf(v->origin, sizeof(v->origin), "%s", cp.origin);
	v->index = proof->index;
	v->size = cp.size;
	/* Step 2: the leaf is the record's own anchor-v1 bytes. */
	rec = jcs_parse(record, record_len, NULL);
	if (!rec || anchor_claim_bytes(rec, &entry)) {
		verdict(v, 2, "tlog_leaf_mismatch", "the record has no anchor-v1 form");
		goto out;
	}
	tlog_leaf_hash(entry.data, entry.len, &leaf);
	if (proof->has_extra && (proof->extra_len != TLOG_HASH_LEN ||
				 memcmp(proof->extra, leaf.b, TLOG_HASH_LEN))) {
		verdict(v, 2, "tlog_leaf_mismatch",
			"the proof is for another entry than this record's anchor-v1 leaf");
		goto out;
	}
	/* Step 3: the log is one the policy trusts, and the one the record names. */
	have_url = json_string_value(json_object_get(rec, "transparency"));
	if (!origin_known(pol, cp.origin)) {
		verdict(v, 3, "tlog_origin_mismatch", "the checkpoint's log %s is not in the policy",
			cp.origin);
		goto out;
	}
	if (tlog_record_url(cp.origin, rec, url) || !have_url || strcmp(have_url, url)) {
		verdict(v, 3, "tlog_origin_mismatch",
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
		verdict(v, 4, "tlog_checkpoint_signature",
			"the checkpoint carries no valid signature by the policy's key for %s", cp.origin);
		goto out;
	case TLOG_POLICY_QUORUM:
		verdict(v, 5, "tlog_witness_quorum",
			"the policy's witness quorum is not met (%zu policy witnesses cosigned)", v->cosigned);
		goto out;
	}
	/* Step 6: the audit path from this leaf at this index to the root. */
	if (!tlog_inclusion_verify(proof->index, cp.size, &leaf, proof->path, proof->count, &cp.root)) {
		verdict(v, 6, "tlog_inclusion_invalid",
			"the audit path does not lead from the record's leaf at index %" PRIu64
			" to the root of the %" PRIu64 "-entry tree", proof->index, cp.size);
		goto out;
	}
	snprintf(v->message, sizeof(v->message),
		 "entry %" PRIu64 " of %s (checkpoint of %" PRIu64 " entries, %zu witness%s cosigned)",
		 proof->index, cp.origin, cp.size, v->cosigned, v->cosigned == 1 ? "" : "es");
out:
	json_decref(rec);
	kw_buf_free(&pb);
	kw_buf_free(&entry);
	free(proof);
	if (pol)
		tlog_policy_free(pol);
	free(pol);
	return ret;
}

/* A checkpoint note from text; 0 when signed by a policy log. */
static int signed_cp(const struct tlog_policy *pol, const char *text, size_t len,
		     struct tlog_note *n, struct tlog_checkpoint *cp)
{
	size_t cosigned;
	enum tlog_policy_verdict r;

	if (tlog_note_parse(text, len, n) || tlog_checkpoint_parse(n->text, n->text_len, cp))
		return -EINVAL;
	r = tlog_policy_check(pol, n, cp, &cosigned);
	return r == TLOG_POLICY_OK || r == TLOG_POLICY_QUORUM ? 0 : -EKEYREJECTED;
}

int verify_consistency(const char *policy_path, const char *old_path, const char *new_path,
		       struct tl_verdict *v)
{
	struct tlog_policy *pol = load_policy(policy_path);
	struct kw_buf ob = { 0 }, nb = { 0 };
	struct tlog_note on, nn;
	struct tlog_checkpoint ocp, ncp;
	struct tlog_hash proof[TLOG_PROOF_MAX];
	size_t count = 0, pos, n;
	uint64_t old_size;
	const char *nl;
	int ret = -1, e;

	memset(v, 0, sizeof(*v));
	v->code = "ok";
	if (!pol || cli_read("verify", "old checkpoint", old_path, TLOG_NOTE_MAX, &ob) ||
	    cli_read("verify", "new checkpoint", new_path, TLOG_WITNESS_REQUEST_MAX, &nb))
		goto out;
	ret = 0;
	e = signed_cp(pol, ob.data ? ob.data : "", ob.len, &on, &ocp);
	if (e) {
		verdict(v, 4, e == -EINVAL ? "tlog_proof_malformed" : "tlog_checkpoint_signature",
			"%s is not a checkpoint signed by a log of the policy", old_path);
		goto out;
	}
	/* NEW: "old N\n", proof lines, "\n", checkpoint. */
	nl = nb.len ? memchr(nb.data, '\n', nb.len) : NULL;
	if (!nl || nl - nb.data < 5 || memcmp(nb.data, "old ", 4) ||
	    tlog_parse_u64(nb.data + 4, (size_t)(nl - nb.data) - 4, &old_size)) {
		verdict(v, 2, "tlog_proof_malformed", "%s does not start with an old size line "
			"(make it with kwitness log request --old SIZE)", new_path);
		goto out;
	}
	pos = (size_t)(nl - nb.data) + 1;
	while (pos < nb.len && nb.data[pos] != '\n') {
		nl = memchr(nb.data + pos, '\n', nb.len - pos);
		if (!nl || count == TLOG_PROOF_MAX || nl - (nb.data + pos) != 44 ||
		    tlog_b64_decode(nb.data + pos, 44, proof[count].b, TLOG_HASH_LEN, &n)) {
			verdict(v, 2, "tlog_proof_malformed", "%s: a bad consistency proof line", new_path);
			goto out;
		}
		count++;
		pos = (size_t)(nl - nb.data) + 1;
	}
	pos++;
	e = pos < nb.len ? signed_cp(pol, nb.data + pos, nb.len - pos, &nn, &ncp) : -EINVAL;
	if (e) {
		verdict(v, 4, e == -EINVAL ? "tlog_proof_malformed" : "tlog_checkpoint_signature",
			"%s holds no checkpoint signed by a log of the policy", new_path);
		goto out;
	}
	snprintf(v->origin, sizeof(v->origin), "%s", ncp.origin);
	v->size = ncp.size;
	if (strcmp(ocp.origin, ncp.origin)) {
		verdict(v, 3, "tlog_origin_mismatch", "the checkpoints are of two logs (%s, %s)",
			ocp.origin, ncp.origin);
		goto out;
	}
	if (ncp.size < ocp.size) {
		verdict(v, 6, "tlog_rollback", "the log went back from %" PRIu64 " to %" PRIu64
			" entries", ocp.size, ncp.size);
		goto out;
	}
	if (ncp.size == ocp.size && !tlog_hash_equal(&ncp.root, &ocp.root)) {
		verdict(v, 6, "tlog_fork", "two checkpoints of %" PRIu64 " entries with different roots",
			ncp.size);
		goto out;
	}
	if (old_size != ocp.size ||
	    !tlog_consistency_verify(ocp.size, ncp.size, &ocp.root, &ncp.root, proof, count)) {
		verdict(v, 6, "tlog_inconsistent", "the tree of %" PRIu64 " entries is not a prefix of "
			"the tree of %" PRIu64 " (the consistency proof fails)", ocp.size, ncp.size);
		goto out;
	}
	snprintf(v->message, sizeof(v->message), "%s grew append-only from %" PRIu64 " to %" PRIu64
		 " entries", ncp.origin, ocp.size, ncp.size);
out:
	kw_buf_free(&ob);
	kw_buf_free(&nb);
	if (pol)
		tlog_policy_free(pol);
	free(pol);
	return ret;
}
