/* SPDX-License-Identifier: Apache-2.0 */
/* kwitnessd --tpm: committed sessions (commit.h). One extend index serves
 * every session; sessions overlap, so the loop keeps every event extended
 * since the oldest open committed session began (in memory, main thread
 * only) and a commitment file holds the slice from a session's open event
 * to its close event, with the index value before it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <openssl/crypto.h>

#include "jcs/jcs.h"
#include "tpm/commit.h"
#include "attest.h"
#include "commit.h"
#include "kwd.h"
#include "session.h"
#include "util.h"

struct kwd_commit {
	uint8_t auth[32];
	uint8_t value[32];       /* the index value, as the events made it */
	uint8_t (*events)[32];   /* events numbered first.. */
	size_t n, cap;
	uint64_t first;
	unsigned holders;        /* sessions whose events are kept */
	bool broken;             /* an extend failed: the value is unknown */
};

/* The auth value: made once, owner-only; a file others could read or a
 * link is refused (whoever holds it can extend and increment). */
static int read_auth(const char *path, uint8_t auth[32], char *err, size_t errlen)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), e = 0;

	if (fd < 0 && errno == ENOENT) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 || getrandom(auth, 32, 0) != 32 || write(fd, auth, 32) != 32 || fsync(fd))
			e = -EIO;
		if (fd >= 0)
			close(fd);
		if (e)
			snprintf(err, errlen, "TPM commit auth %s cannot be made", path);
		return e;
	}
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || (st.st_mode & 077) ||
	    st.st_uid != geteuid() || st.st_size != 32 || read(fd, auth, 32) != 32)
		e = -EPERM;
	if (fd >= 0)
		close(fd);
	if (e)
		snprintf(err, errlen, "TPM commit auth %s must be a 32-byte file only its owner reads (0600)", path);
	return e;
}

int kwd_commit_start(struct kwd *d, struct kw_tpm *tpm, char *err, size_t errlen)
{
	struct kwd_commit *c = calloc(1, sizeof(*c));
	char path[4096];
	int e;

	if (!c)
		return -ENOMEM;
	if (snprintf(path, sizeof(path), "%s/tpm-commit.auth", d->cfg.state_dir) >= (int)sizeof(path))
		e = -ENAMETOOLONG;
	else
		e = read_auth(path, c->auth, err, errlen);
	e = e ?: kw_tpm_commit_setup(tpm, c->auth, c->value, err, errlen);
	if (e) {
		OPENSSL_cleanse(c, sizeof(*c));
		free(c);
		return e;
	}
	d->commit = c;
	return 0;
}

void kwd_commit_stop(struct kwd *d)
{
	if (!d->commit)
		return;
	free(d->commit->events);
	OPENSSL_cleanse(d->commit, sizeof(*d->commit));
	free(d->commit);
	d->commit = NULL;
}

/* Extends e into the TPM and the kept events. */
static int extend(struct kwd *d, struct kw_tpm *tpm, const uint8_t e[32], char *err, size_t errlen)
{
	struct kwd_commit *c = d->commit;
	int ret;

	if (c->broken) {
		snprintf(err, errlen, "an earlier extend failed; restart kwitnessd to read the index again");
		return -EIO;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		void *p;

		if (cap > (size_t)KW_COMMIT_MAX_EVENTS || !(p = realloc(c->events, cap * 32))) {
			snprintf(err, errlen, "too many events kept for open sessions");
			return -ENOSPC;
		}
		c->events = p;
		c->cap = cap;
	}
	ret = kw_tpm_commit_extend(tpm, c->auth, e, err, errlen);
	if (ret) {
		c->broken = true; /* it may have reached the TPM or not */
		return ret;
	}
	memcpy(c->events[c->n++], e, 32);
	return kw_commit_extend(c->value, e);
}

/* Events before the oldest committed open session's are no one's. */
static void forget_old_events(struct kwd *d)
{
	struct kwd_commit *c = d->commit;
	uint64_t keep = c->first + c->n;

	for (unsigned i = 0; i < KW_MAX_SESSIONS && c->holders; i++) {
		const struct kwd_session *s = d->slots[i];

		if (s && s->commit.committed && s->commit.from < keep)
			keep = s->commit.from;
	}
	if (keep > c->first) {
		memmove(c->events, c->events + (keep - c->first), (c->first + c->n - keep) * 32);
		c->n -= (size_t)(keep - c->first);
		c->first = keep;
	}
}

void kwd_commit_open(struct kwd *d, struct kwd_session *s)
{
	struct kwd_commit *c = d->commit;
	struct kw_tpm *tpm = NULL;
	uint8_t start[32], ev[32];
	uint64_t counter;
	char err[512];
	int e;

	memset(&s->commit, 0, sizeof(s->commit));
	if (!c)
		return;
	forget_old_events(d);
	memcpy(start, c->value, 32);
	e = kwd_attest_tpm(d, &tpm, err, sizeof(err));
	e = e ?: kw_tpm_counter_next(tpm, c->auth, &counter, err, sizeof(err));
	if (!e) {
		snprintf(s->commit.counter, sizeof(s->commit.counter), "%llu",
			 (unsigned long long)counter);
		if (kw_commit_open_event(s->id, s->commit.counter, s->bundle_hash, s->image_digest, ev)) {
			snprintf(err, sizeof(err), "the open event cannot be made");
			e = -EINVAL;
		}
	}
	if (!e) {
		s->commit.from = c->first + c->n;
		e = extend(d, tpm, ev, err, sizeof(err));
	}
	kw_tpm_close(tpm);
	if (e) {
		kwd_log(d, LOG_ERR, "session %s: not TPM-committed: %s", s->id, err);
		return;
	}
	memcpy(s->commit.start, start, 32);
	s->commit.committed = true;
	c->holders++;
}

static int write_commitment(struct kwd *d, const char *id, const json_t *cm, char *err, size_t errlen)
{
	struct kw_buf text = { 0 };
	char path[4096];
	int e;

	if (snprintf(path, sizeof(path), "%s/commit/%s.json", d->cfg.state_dir, id) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	e = jcs_dump(cm, &text) ? -ENOMEM : kw_buf_putc(&text, '\n');
	e = e ?: kw_write_file_atomic(path, text.data, text.len, 0644);
	if (e)
		snprintf(err, errlen, "%.200s: %s", path, strerror(-e));
	kw_buf_free(&text);
	return e;
}

void kwd_commit_close(struct kwd *d, struct kwd_session *s, const char *transcript_hash)
{
	struct kwd_commit *c = d->commit;
	struct kw_buf attest = { 0 }, sig = { 0 }, nvpub = { 0 }, ak = { 0 };
	struct kw_tpm *tpm = NULL;
	json_t *cm = NULL;
	uint8_t ev[32];
	char err[512] = "";
	int e;

	if (!c || !s->commit.committed)
		return;
	if (kw_commit_close_event(s->id, transcript_hash, ev)) {
		snprintf(err, sizeof(err), "the close event cannot be made");
		e = -EINVAL;
	} else {
		e = kwd_attest_tpm(d, &tpm, err, sizeof(err));
	}
	e = e ?: extend(d, tpm, ev, err, sizeof(err));
	e = e ?: kw_tpm_commit_certify(tpm, c->auth, ev, &attest, &sig, &nvpub, &ak, err,
				       sizeof(err));
	if (!e) {
		size_t at = (size_t)(s->commit.from - c->first);

		cm = kw_commit_build(&nvpub, s->commit.start, c->events + at, c->n - at, 0, &attest,
				     &sig, &ak);
		e = cm ? write_commitment(d, s->id, cm, err, sizeof(err)) : -ENOMEM;
	}
	kw_tpm_close(tpm);
	json_decref(cm);
	kw_buf_free(&attest);
	kw_buf_free(&sig);
	kw_buf_free(&nvpub);
	kw_buf_free(&ak);
	if (e)
		kwd_log(d, LOG_ERR, "session %s: no TPM commitment: %s", s->id, err);
}

void kwd_commit_release(struct kwd *d, struct kwd_session *s)
{
	if (d && d->commit && s->commit.committed && d->commit->holders) {
		d->commit->holders--;
		s->commit.committed = false;
	}
}
