/* SPDX-License-Identifier: Apache-2.0 */
/* Asking a witness to cosign, see cosign.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tlog/cosign.h"
#include "tlog/note.h"
#include "tlog/tiles.h"
#include "tlog/witness.h"

int tlog_log_cosign(struct tlog_log *l, tlog_witness_submit submit, void *ctx, char *why,
		    size_t whylen)
{
	const struct kw_buf *cpb = tlog_log_checkpoint(l);
	struct kw_buf note = { 0 }, req = { 0 }, resp = { 0 };
	struct tlog_note n;
	struct tlog_checkpoint cp;
	uint64_t old = 0;
	int ret = -EPROTO;

	/* The checkpoint changes when signatures are added: work on a copy. */
	if (kw_buf_append(&note, cpb->data, cpb->len))
		return -ENOMEM;
	if (tlog_note_parse(note.data, note.len, &n) || tlog_checkpoint_parse(n.text, n.text_len, &cp)) {
		snprintf(why, whylen, "the log's checkpoint does not parse");
		kw_buf_free(&note);
		return -EBADMSG;
	}
	/* At most: a first try, and one more with the size a 409 gave. */
	for (int attempt = 0; attempt < 3; attempt++) {
		struct tlog_hash proof[TLOG_PROOF_MAX];
		struct tlog_tiles t;
		size_t count = 0;
		int status;

		tlog_tiles_init(&t, tlog_log_dirfd(l), cp.size);
		kw_buf_reset(&req);
		ret = tlog_consistency_proof(tlog_tiles_read_node, &t, old, cp.size, proof, &count);
		if (!ret)
			ret = tlog_witness_request(old, proof, count, note.data, note.len, &req);
		if (ret) {
			snprintf(why, whylen, "consistency proof from %" PRIu64 ": %s", old, strerror(-ret));
			break;
		}
		kw_buf_reset(&resp);
		status = submit(ctx, req.data, req.len, &resp);
		if (status < 0) {
			snprintf(why, whylen, "the witness cannot be reached: %s", strerror(-status));
			ret = status;
			break;
		}
		if (status == 409 && resp.len > 1 && resp.data[resp.len - 1] == '\n' &&
		    !tlog_parse_u64(resp.data, resp.len - 1, &old) && old <= cp.size) {
			ret = -EAGAIN;
			continue;
		}
		if (status != 200) {
			snprintf(why, whylen, "the witness refused the checkpoint of %" PRIu64
				 " entries: HTTP %d", cp.size, status);
			ret = -EPERM;
			break;
		}
		ret = tlog_log_add_signatures(l, n.text, n.text_len, resp.data ? resp.data : "", resp.len);
		if (ret)
			snprintf(why, whylen, "adding the cosignature: %s",
				 ret == -EINVAL ? "the witness's answer is not signature lines" :
				 strerror(-ret));
		break;
	}
	if (ret == -EAGAIN)
		snprintf(why, whylen, "the witness keeps asking for another old size");
	kw_buf_free(&note);
	kw_buf_free(&req);
	kw_buf_free(&resp);
	return ret;
}
