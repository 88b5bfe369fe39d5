/* SPDX-License-Identifier: Apache-2.0 */
/* Level 2 for kwitnessd: with `log = DIR` in the configuration every record
 * is signed once with its transparency URL, appended to the tlog-tiles log in
 * DIR, cosigned by the `log_witness` witnesses and checked against
 * `log_policy` (collector/publish.c, run by the worker when it seals). The log
 * must exist (kwitness tlog init); its key is `log_key`. */
#include <errno.h>
#include <syslog.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/key.h"
#include "collector/publish.h"
#include "tlog/log.h"
#include "tlog/witness_client.h"
#include "config.h"
#include "kwd.h"
#include "transparency.h"
#include "util.h"

struct kwd_transparency {
	struct tlog_key key;
	struct tlog_witness_client clients[KWD_LOG_WITNESSES_MAX];
	struct kw_publish_witness witnesses[KWD_LOG_WITNESSES_MAX];
	size_t n;
	struct tlog_policy policy;
	bool has_policy;
	struct kw_publish pub;
};

static int load_policy(const char *path, struct tlog_policy *p, char *err, size_t errlen)
{
	struct kw_buf b = { 0 };
	char why[256];
	int e = kw_read_regular_file(path, TLOG_POLICY_FILE_MAX, &b);

	if (e) {
		snprintf(err, errlen, "log_policy %s: %s", path, strerror(-e));
		return e;
	}
	e = tlog_policy_parse(b.data ? b.data : "", b.len, p, why, sizeof(why));
	if (e)
		snprintf(err, errlen, "log_policy %s: %s", path, why);
	kw_buf_free(&b);
	return e;
}

int kwd_transparency_start(struct kwd *d, char *err, size_t errlen)
{
	struct kwd_transparency *t;
	struct kw_buf cpb = { 0 };
	struct tlog_note n;
	struct tlog_checkpoint cp;
	struct kw_key *k = NULL;
	struct tlog_log *l;
	int fd, e;

	d->publish = NULL;
	if (!d->cfg.log_dir)
		return 0;
	if (!d->cfg.log_key) {
		snprintf(err, errlen, "log_key = PEM is needed with log = DIR");
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	d->tlog = t;
	/* The log's origin (its checkpoint) names its key. */
	fd = open(d->cfg.log_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	e = fd < 0 ? -errno : tlog_read_checkpoint(fd, &cpb, &n, &cp);
	if (fd >= 0)
		close(fd);
	kw_buf_free(&cpb);
	if (e) {
		snprintf(err, errlen, "no log there (create it with kwitness tlog init): %s", strerror(-e));
		goto fail;
	}
	e = kw_key_load_private(d->cfg.log_key, &k);
	if (!e)
		e = tlog_key_from(cp.origin, TLOG_SIG_ED25519, k, &t->key);
	if (e) {
		kw_key_free(k);
		snprintf(err, errlen, "log_key %s: %s", d->cfg.log_key,
			 e == -EPERM ? "group- or world-accessible or owned by another user" : strerror(-e));
		goto fail;
	}
	/* The key must be the log's, and the log whole: open it once now. */
	e = tlog_log_open(d->cfg.log_dir, &t->key, &l);
	if (e) {
		snprintf(err, errlen, "%s", e == -EKEYREJECTED ? "the checkpoint is not signed by log_key" :
			 e == -EBADMSG ? "the tiles do not match the checkpoint" : strerror(-e));
		goto fail;
	}
	tlog_log_close(l);
	for (; t->n < d->cfg.n_log_witness; t->n++) {
		e = tlog_witness_client_open(d->cfg.log_witness[t->n], &t->key, &t->clients[t->n], err,
					     errlen);
		if (e)
			goto fail;
		t->witnesses[t->n] = (struct kw_publish_witness){ tlog_witness_client_submit,
								  &t->clients[t->n] };
	}
	if (d->cfg.log_policy) {
		e = load_policy(d->cfg.log_policy, &t->policy, err, errlen);
		if (e)
			goto fail;
		t->has_policy = true;
	}
	t->pub = (struct kw_publish){ .log_dir = d->cfg.log_dir, .log_key = &t->key,
				      .witnesses = t->witnesses, .nwitnesses = t->n,
				      .policy = t->has_policy ? &t->policy : NULL };
	d->publish = &t->pub;
	kwd_log(d, LOG_NOTICE, "records go to the transparency log %s (%s, %zu witnesses)",
		d->cfg.log_dir, cp.origin, t->n);
	return 0;
fail:
	kwd_transparency_stop(d);
	return e;
}

void kwd_transparency_stop(struct kwd *d)
{
	struct kwd_transparency *t = d->tlog;

	d->publish = NULL;
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		tlog_witness_client_close(&t->clients[i]);
	if (t->has_policy)
		tlog_policy_free(&t->policy);
	tlog_key_clear(&t->key);
	free(t);
	d->tlog = NULL;
}
