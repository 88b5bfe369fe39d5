/* SPDX-License-Identifier: Apache-2.0 */
/* The checkpoints' transparency proofs, see checkpoint_tlog.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jcs/jcs.h"
#include "lib/digest.h"
#include "collector/checkpoint.h"
#include "verify/checkpoint_tlog.h"

struct proof_line {
	bool have;  /* a line is held */
	bool bad;   /* it does not parse */
	uint64_t n;
	json_t *j;
};

/* The next line of f without its newline into *buf; false at the end. A
 * line longer than max is read whole and reported as len max + 1. */
static bool next_line(FILE *f, char **buf, size_t *cap, size_t max, size_t *len)
{
	ssize_t r = f ? getline(buf, cap, f) : -1;

	if (r <= 0)
		return false;
	if ((*buf)[r - 1] != '\n')
		return false; /* a torn last line (power loss) is not there */
	*len = (size_t)r - 1 > max ? max + 1 : (size_t)r - 1;
	return true;
}

static void read_proof(FILE *f, char **buf, size_t *cap, struct proof_line *p)
{
	size_t len;
	json_int_t n;

	json_decref(p->j);
	*p = (struct proof_line){ 0 };
	if (!next_line(f, buf, cap, KW_CKPT_TLOG_LINE_MAX, &len))
		return;
	p->have = true;
	p->j = len > KW_CKPT_TLOG_LINE_MAX ? NULL : jcs_parse(*buf, len, NULL);
	n = json_integer_value(json_object_get(p->j, "n"));
	if (!json_is_object(p->j) || n < 1 || !json_is_string(json_object_get(p->j, "proof")) ||
	    !json_is_string(json_object_get(p->j, "checkpoint"))) {
		p->bad = true;
		return;
	}
	p->n = (uint64_t)n;
}

/* The verdict of proof line p for the checkpoint line (hash, obj). */
static void judge(const struct tlog_policy *pol, const struct proof_line *p, const char *hash,
		  const json_t *obj, uint64_t n, struct tlog_verdict *v)
{
	const char *named = json_string_value(json_object_get(p->j, "checkpoint"));
	json_t *proof = json_object_get(p->j, "proof");
	char name[64];

	memset(v, 0, sizeof(*v));
	if (strcmp(named, hash)) {
		tlog_verdict_fail(v, 2, "tlog_leaf_mismatch",
				  "the proof line of checkpoint %" PRIu64 " names another checkpoint", n);
		return;
	}
	snprintf(name, sizeof(name), "the proof of checkpoint %" PRIu64, n);
	if (!obj)
		tlog_verdict_fail(v, 2, "tlog_leaf_mismatch", "checkpoint %" PRIu64 " is not JSON", n);
	else if (tlog_check_entry(pol, json_string_value(proof), json_string_length(proof), name, obj,
				  v))
		tlog_verdict_fail(v, 2, "tlog_proof_malformed", "out of memory");
}

int verify_ckpt_tlog(const struct tlog_policy *pol, const char *ckpt_path, const char *proofs_path,
		     verify_ckpt_tlog_each each, void *ctx, uint64_t *invalid, char *err,
		     size_t errlen)
{
	char *pp = NULL, *cbuf = NULL, *pbuf = NULL;
	size_t ccap = 0, pcap = 0, len;
	struct proof_line p = { 0 };
	FILE *cf, *pf = NULL;
	uint64_t n = 0;

	*invalid = 0;
	cf = fopen(ckpt_path, "re");
	if (!cf) {
		snprintf(err, errlen, "%s: %s", ckpt_path, strerror(errno));
		return -1;
	}
	if (!proofs_path && asprintf(&pp, "%s%s", ckpt_path, KW_CKPT_TLOG_PROOFS_SUFFIX) < 0)
		pp = NULL;
	pf = fopen(proofs_path ? proofs_path : pp ? pp : "", "re");
	if (!pf && (errno != ENOENT || proofs_path)) {
		snprintf(err, errlen, "%s: %s", proofs_path ? proofs_path : pp, strerror(errno));
		fclose(cf);
		free(pp);
		return -1;
	}
	read_proof(pf, &pbuf, &pcap, &p);
	while (next_line(cf, &cbuf, &ccap, KW_CHECKPOINT_LINE_MAX, &len)) {
		char hash[KW_DIGEST_STR_MAX] = "";
		struct tlog_verdict v;
		json_t *obj;

		n++;
		/* proofs of checkpoints not in this file (or lines that do
		 * not parse) before this one's are skipped, and count */
		while (p.have && (p.bad || p.n < n)) {
			++*invalid;
			memset(&v, 0, sizeof(v));
			tlog_verdict_fail(&v, 2, "tlog_proof_malformed", "a proof line names no "
					  "checkpoint of this file in order (before checkpoint %" PRIu64 ")", n);
			each(ctx, p.bad ? 0 : p.n, true, &v);
			read_proof(pf, &pbuf, &pcap, &p);
		}
		if (!p.have || p.n != n) {
			each(ctx, n, false, NULL);
			continue;
		}
		obj = len > KW_CHECKPOINT_LINE_MAX ? NULL : jcs_parse(cbuf, len, NULL);
		if (kw_digest_buf(KW_SHA256, cbuf, len, hash))
			hash[0] = '\0';
		judge(pol, &p, hash, obj, n, &v);
		json_decref(obj);
		*invalid += v.step != 0;
		each(ctx, n, true, &v);
		read_proof(pf, &pbuf, &pcap, &p);
	}
	read_proof(NULL, &pbuf, &pcap, &p); /* frees the last one */
	free(cbuf);
	free(pbuf);
	free(pp);
	fclose(cf);
	if (pf)
		fclose(pf);
	return 0;
}
