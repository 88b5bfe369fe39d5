/* SPDX-License-Identifier: Apache-2.0 */
/* The sign-once order, see publish.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "trace/record.h"
#include "collector/publish.h"
#include "collector/publish_batch.h"
#include "tlog/anchor.h"
#include "tlog/http.h"
#include "tlog/witness.h"
#include "tlog/log.h"
#include "tlog/proof.h"
#include "tlog/record_url.h"

/* DIR/kwitness/<hash>.tlog-proof: where the record's URL points. */
int kw_publish_proof_file(int dirfd, const char *url, const struct kw_buf *proof, bool sync)
{
	const char *name = strrchr(url, '/');
	char path[512], tmp[540];
	int fd, ret;

	if (!name || snprintf(path, sizeof(path), TLOG_PROOF_DIR "%s", name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (mkdirat(dirfd, TLOG_PROOF_DIR, 0755) < 0 && errno != EEXIST)
		return -errno;
	/* The thread too: a shared writer proves several records at once. */
	snprintf(tmp, sizeof(tmp), "%s.tmp%ld.%lx", path, (long)getpid(), (unsigned long)pthread_self());
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	ret = kw_write_all(fd, proof->data, proof->len);
	if (!ret && sync && fsync(fd) < 0)
		ret = -errno;
	close(fd);
	if (!ret && renameat(dirfd, tmp, dirfd, path) < 0)
		ret = -errno;
	if (ret)
		unlinkat(dirfd, tmp, 0);
	return ret;
}

/* Steps 4 to 6 for the signed record: a batch of one. */
int kw_publish_logged(const json_t *rec, const struct kw_publish *pub, const char *url,
		      struct kw_buf *proof, char *why, size_t whylen)
{
	struct kw_publish_job job = { .rec = rec, .url = url, .proof = proof, .why = why,
				      .whylen = whylen };
	struct kw_publish_job *one = &job;

	kw_publish_logged_many(pub, &one, 1);
	return job.ret;
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
