/* SPDX-License-Identifier: Apache-2.0 */
/* Transparency, see transparency.h: the proof and policy files read, then
 * judged by tlog_check_record (tlog/record_check.c, where the steps and
 * their reason codes are); and the consistency of two checkpoints, step by
 * step. */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base64.h"
#include "lib/buf.h"
#include "tlog/policy.h"
#include "tlog/record_check.h"
#include "tlog/witness.h"
#include "verify/read.h"
#include "verify/transparency.h"

int verify_transparency(const char *policy_path, const char *proof_path, const char *record,
			size_t record_len, struct tlog_verdict *v, char *err, size_t errlen)
{
	struct tlog_policy *pol = verify_policy_load("transparency policy", policy_path, err, errlen);
	struct kw_buf pb = { 0 };
	int ret = -1;

	memset(v, 0, sizeof(*v));
	v->code = "ok";
	if (!pol || verify_read("proof", proof_path, TLOG_WITNESS_REQUEST_MAX, &pb, err, errlen))
		goto out;
	ret = tlog_check_record(pol, pb.data ? pb.data : "", pb.len, proof_path, record, record_len, v);
	if (ret)
		snprintf(err, errlen, "out of memory");
	/* The verdict must not point into the proof's buffer, freed here. */
	v->checkpoint = NULL;
	v->checkpoint_len = 0;
out:
	kw_buf_free(&pb);
	verify_policy_free(pol);
	return ret ? -1 : 0;
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
		       struct tlog_verdict *v, char *err, size_t errlen)
{
	struct tlog_policy *pol = verify_policy_load("transparency policy", policy_path, err, errlen);
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
	if (!pol || verify_read("old checkpoint", old_path, TLOG_NOTE_MAX, &ob, err, errlen) ||
	    verify_read("new checkpoint", new_path, TLOG_WITNESS_REQUEST_MAX, &nb, err, errlen))
		goto out;
	ret = 0;
	e = signed_cp(pol, ob.data ? ob.data : "", ob.len, &on, &ocp);
	if (e) {
		tlog_verdict_fail(v, 4, e == -EINVAL ? "tlog_proof_malformed" : "tlog_checkpoint_signature",
			"%s is not a checkpoint signed by a log of the policy", old_path);
		goto out;
	}
	/* NEW: "old N\n", proof lines, "\n", checkpoint. */
	nl = nb.len ? memchr(nb.data, '\n', nb.len) : NULL;
	if (!nl || nl - nb.data < 5 || memcmp(nb.data, "old ", 4) ||
	    tlog_parse_u64(nb.data + 4, (size_t)(nl - nb.data) - 4, &old_size)) {
		tlog_verdict_fail(v, 2, "tlog_proof_malformed", "%s does not start with an old size line "
			"(make it with kwitness tlog request --old SIZE)", new_path);
		goto out;
	}
	pos = (size_t)(nl - nb.data) + 1;
	while (pos < nb.len && nb.data[pos] != '\n') {
		nl = memchr(nb.data + pos, '\n', nb.len - pos);
		if (!nl || count == TLOG_PROOF_MAX || nl - (nb.data + pos) != 44 ||
		    kw_b64_decode(KW_B64_STD, nb.data + pos, 44, proof[count].b, TLOG_HASH_LEN, &n)) {
			tlog_verdict_fail(v, 2, "tlog_proof_malformed", "%s: a bad consistency proof line", new_path);
			goto out;
		}
		count++;
		pos = (size_t)(nl - nb.data) + 1;
	}
	pos++;
	e = pos < nb.len ? signed_cp(pol, nb.data + pos, nb.len - pos, &nn, &ncp) : -EINVAL;
	if (e) {
		tlog_verdict_fail(v, 4, e == -EINVAL ? "tlog_proof_malformed" : "tlog_checkpoint_signature",
			"%s holds no checkpoint signed by a log of the policy", new_path);
		goto out;
	}
	snprintf(v->origin, sizeof(v->origin), "%s", ncp.origin);
	v->size = ncp.size;
	if (strcmp(ocp.origin, ncp.origin)) {
		tlog_verdict_fail(v, 3, "tlog_origin_mismatch", "the checkpoints are of two logs (%s, %s)",
			ocp.origin, ncp.origin);
		goto out;
	}
	if (ncp.size < ocp.size) {
		tlog_verdict_fail(v, 6, "tlog_rollback", "the log went back from %" PRIu64 " to %" PRIu64
			" entries", ocp.size, ncp.size);
		goto out;
	}
	if (ncp.size == ocp.size && !tlog_hash_equal(&ncp.root, &ocp.root)) {
		tlog_verdict_fail(v, 6, "tlog_fork", "two checkpoints of %" PRIu64 " entries with different roots",
			ncp.size);
		goto out;
	}
	if (old_size != ocp.size ||
	    !tlog_consistency_verify(ocp.size, ncp.size, &ocp.root, &ncp.root, proof, count)) {
		tlog_verdict_fail(v, 6, "tlog_inconsistent", "the tree of %" PRIu64 " entries is not a prefix of "
			"the tree of %" PRIu64 " (the consistency proof fails)", ocp.size, ncp.size);
		goto out;
	}
	snprintf(v->message, sizeof(v->message), "%s grew append-only from %" PRIu64 " to %" PRIu64
		 " entries", ncp.origin, ocp.size, ncp.size);
out:
	kw_buf_free(&ob);
	kw_buf_free(&nb);
	verify_policy_free(pol);
	return ret;
}
