/* SPDX-License-Identifier: Apache-2.0 */
/* The sign-once order, see publish.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "trace/record.h"
#include "collector/publish.h"
#include "tlog/anchor.h"
#include "tlog/http.h"
#include "tlog/witness.h"
#include "tlog/log.h"
#include "tlog/proof.h"
#include "tlog/record_url.h"

/* DIR/kwitness/<hash>.tlog-proof: where the record's URL points. */
static int publish_proof(int dirfd, const char *url, const struct kw_buf *proof)
{
	const char *name = strrchr(url, '/');
	char path[512], tmp[540];
	int fd, ret;

	if (!name || snprintf(path, sizeof(path), TLOG_PROOF_DIR "%s", name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (mkdirat(dirfd, TLOG_PROOF_DIR, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid());
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	ret = kw_write_all(fd, proof->data, proof->len);
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	close(fd);
	if (!ret && renameat(dirfd, tmp, dirfd, path) < 0)
		ret = -errno;
	if (ret)
		unlinkat(dirfd, tmp, 0);
	return ret;
}

/* Steps 4 to 6 for the signed record; the log stays locked throughout so the
 * checkpoint proven is the one cosigned. */
int kw_publish_logged(const json_t *rec, const struct kw_publish *pub, const char *url,
		      struct kw_buf *proof, char *why, size_t whylen)
{
	struct kw_buf entry = { 0 };
	struct tlog_log *l = NULL;
	struct tlog_note n;
	struct tlog_checkpoint cp;
	struct tlog_proof *p = NULL;
	const struct kw_buf *note;
	const void *e;
	uint64_t index;
	size_t cosigned = 0, len;
	int ret;

	ret = anchor_claim_bytes(rec, &entry);
	if (ret) {
		snprintf(why, whylen, "log: the record has no anchor-v1 form");
		goto out;
	}
	ret = tlog_log_open(pub->log_dir, pub->log_key, &l);
	if (ret) {
		snprintf(why, whylen, "log: open %s: %s", pub->log_dir, strerror(-ret));
		goto out;
	}
	e = entry.data;
	len = entry.len;
	ret = tlog_log_append(l, &e, &len, 1, &index);
	if (ret) {
		snprintf(why, whylen, "log: append: %s", strerror(-ret));
		goto out;
	}
	for (size_t i = 0; i < pub->nwitnesses; i++) {
		char wwhy[256];

		/* A witness that fails is one cosignature fewer; the policy decides. */
		if (tlog_log_cosign(l, pub->witnesses[i].submit, pub->witnesses[i].ctx, wwhy,
				    sizeof(wwhy)))
			snprintf(why, whylen, "witness %zu: %s", i + 1, wwhy);
	}
	note = tlog_log_checkpoint(l);
	if (tlog_note_parse(note->data, note->len, &n) ||
	    tlog_checkpoint_parse(n.text, n.text_len, &cp)) {
		ret = -EBADMSG;
		snprintf(why, whylen, "log: the new checkpoint does not parse");
		goto out;
	}
	if (pub->policy && tlog_policy_check(pub->policy, &n, &cp, &cosigned) != TLOG_POLICY_OK) {
		char prev[256];

		snprintf(prev, sizeof(prev), "%s", why);
		snprintf(why, whylen, "witness policy not met (%zu cosigned)%s%s", cosigned,
			 prev[0] ? "; " : "", prev);
		ret = -EPERM;
		goto out;
	}
	p = calloc(1, sizeof(*p));
	ret = p ? tlog_prove(tlog_log_dirfd(l), index, cp.size, &cp.root, note->data, note->len, p) :
		  -ENOMEM;
	if (!ret)
		ret = tlog_proof_format(p, proof);
	if (!ret)
		ret = publish_proof(tlog_log_dirfd(l), url, proof);
	if (ret)
		snprintf(why, whylen, "proof: %s", strerror(-ret));
out:
	free(p);
	tlog_log_close(l);
	kw_buf_free(&entry);
	return ret;
}

/* A shared writer logs the record and answers with its proof; the proof must
 * hold for this record under the log's key before it is used. */
static int remote_append(const json_t *rec, const struct kw_buf *body, const struct kw_publish *pub,
			 struct kw_buf *proof, char *why, size_t whylen)
{
	struct http_url u;
	struct kw_buf entry = { 0 };
	struct tlog_proof *p = calloc(1, sizeof(*p));
	struct tlog_note n;
	struct tlog_checkpoint cp;
	struct tlog_hash leaf;
	char auth[300];
	int ret = -EPROTO, status;

	if (!p)
		return -ENOMEM;
	if (http_url_parse(pub->remote, &u)) {
		snprintf(why, whylen, "log: %s is not http://HOST:PORT", pub->remote);
		ret = -EINVAL;
		goto out;
	}
	snprintf(auth, sizeof(auth), "Bearer %s", pub->token ? pub->token : "");
	if (anchor_claim_bytes(rec, &entry)) {
		ret = -ENOMEM;
		goto out;
	}
	status = http_post_auth(&u, "/add", auth, body->data, body->len, TLOG_WITNESS_REQUEST_MAX, proof);
	if (status != 200) {
		snprintf(why, whylen, "log: the shared writer %s answered %d%s%.200s", pub->remote, status,
			 proof->len ? ": " : "", proof->len ? proof->data : "");
		ret = status < 0 ? status : -EPERM;
		goto out;
	}
	tlog_leaf_hash(entry.data, entry.len, &leaf);
	if (tlog_proof_parse(proof->data, proof->len, p) ||
	    tlog_note_parse(p->checkpoint, p->checkpoint_len, &n) ||
	    tlog_checkpoint_parse(n.text, n.text_len, &cp) || strcmp(cp.origin, pub->log_key->name) ||
	    tlog_note_verify(&n, pub->log_key, NULL) ||
	    !tlog_inclusion_verify(p->index, cp.size, &leaf, p->path, p->count, &cp.root)) {
		snprintf(why, whylen, "log: the shared writer's proof does not hold for this record");
		ret = -EBADMSG;
		goto out;
	}
	ret = 0;
out:
	if (ret)
		kw_buf_reset(proof);
	free(p);
	kw_buf_free(&entry);
	return ret;
}

int kw_publish_record_checked(json_t *rec, const struct kw_key *key, const struct kw_publish *pub,
			      const struct kw_verify_opts *check, struct kw_buf *text,
			      struct kw_buf *proof, char *why, size_t whylen)
{
	char url[TLOG_RECORD_URL_MAX], msg[256];
	int ret, again;

	why[0] = '\0';
	kw_buf_reset(proof);
	ret = tlog_record_url(pub->log_key->name, rec, url);
	if (ret) {
		snprintf(why, whylen, "transparency URL: %s", strerror(-ret));
	} else if (json_object_set_new(rec, "transparency", json_string(url))) {
		ret = -ENOMEM;
		snprintf(why, whylen, "out of memory");
	} else {
		ret = kw_record_sign_checked(rec, key, check, text, msg, sizeof(msg));
		if (ret)
			snprintf(why, whylen, "sign: %s", msg);
	}
	if (!ret)
		ret = pub->remote ? remote_append(rec, text, pub, proof, why, whylen) :
				    kw_publish_logged(rec, pub, url, proof, why, whylen);
	if (!ret)
		return 0;
	/* Never a URI without a proof: back to an unlogged record. */
	kw_buf_reset(proof);
	json_object_del(rec, "transparency");
	again = kw_record_sign_checked(rec, key, check, text, msg, sizeof(msg));
	if (again == KW_SIGN_CHECK_FAILED) {
		snprintf(why, whylen, "%s", msg);
		return again;
	}
	if (again)
		return -EKEYREJECTED;
	/* A positive ret is the first signing's check: not a logging failure. */
	return ret > 0 ? -EIO : ret;
}

int kw_publish_record(json_t *rec, const struct kw_key *key, const struct kw_publish *pub,
		      struct kw_buf *proof, char *why, size_t whylen)
{
	struct kw_buf text = { 0 };
	int ret = kw_publish_record_checked(rec, key, pub, NULL, &text, proof, why, whylen);

	kw_buf_free(&text);
	return ret;
}
