/* SPDX-License-Identifier: Apache-2.0 */
/* kwitnessd --tpm: committed sessions (commit.h). One extend index serves
 * every session; sessions overlap, so the loop keeps every event extended
 * since the oldest open committed session began (main thread only) and a
 * commitment file holds the slice from a session's open event to its close
 * event, with the index value before it. The kept events are also written
 * ahead of each extend to state/tpm-commit.chain, so that a restarted
 * collector can give a resumed session its commitment: the file is trusted
 * only when its events replay to the value the TPM holds. */
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
#include "tpm/tpm_internal.h" /* kw_hex, kw_unhex */
#include "attest.h"
#include "commit.h"
#include "kwd.h"
#include "session.h"
#include "util.h"

struct kwd_commit {
	uint8_t auth[32];
	uint8_t value[32];       /* the index value, as the events made it */
	uint8_t base[32];        /* the index value before events[0] */
	uint8_t (*events)[32];   /* events numbered first.. */
	size_t n, cap;
	uint64_t first;
	unsigned holders;        /* sessions whose events are kept */
	bool broken;             /* an extend failed: the value is unknown */
	int chain_fd;            /* state/tpm-commit.chain, appended to; -1: none */
	char chain_path[4096];
};

#define CHAIN_HEADER "kwitness-tpm2-chain-v1 "
#define CHAIN_MAX (sizeof(CHAIN_HEADER) + 65 * (KW_COMMIT_MAX_EVENTS + 1))

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


/* The kept events written whole (base, then one event a line), then opened
 * for appending. 0 or -errno. */
static int chain_rewrite(struct kwd_commit *c)
{
	struct kw_buf text = { 0 };
	char hex[65];
	int e;

	if (c->chain_fd >= 0)
		close(c->chain_fd);
	c->chain_fd = -1;
	kw_hex(c->base, 32, hex);
	e = kw_buf_puts(&text, CHAIN_HEADER) ?: kw_buf_puts(&text, hex) ?: kw_buf_putc(&text, '\n');
	for (size_t i = 0; !e && i < c->n; i++) {
		kw_hex(c->events[i], 32, hex);
		e = kw_buf_puts(&text, hex) ?: kw_buf_putc(&text, '\n');
	}
	e = e ?: kw_write_file_atomic(c->chain_path, text.data, text.len, 0600);
	kw_buf_free(&text);
	if (!e) {
		c->chain_fd = open(c->chain_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
		e = c->chain_fd < 0 ? -errno : 0;
	}
	return e;
}

/* 64 hex digits at p (not terminated) into out. */
static int unhex32(const char *p, uint8_t out[32])
{
	char s[65];

	memcpy(s, p, 64);
	s[64] = '\0';
	return kw_unhex(s, out, 32);
}

/* Parses the chain file into c (base, events); the caller checks it replays. */
static int chain_parse(struct kwd_commit *c, const struct kw_buf *b)
{
	const char *p = b->data, *end = b->data + b->len;
	size_t hl = strlen(CHAIN_HEADER);

	if (b->len < hl + 65 || memcmp(p, CHAIN_HEADER, hl) || p[hl + 64] != '\n' ||
	    unhex32(p + hl, c->base))
		return -EINVAL;
	p += hl + 65;
	if ((size_t)(end - p) % 65)
		return -EINVAL;
	c->n = c->cap = (size_t)(end - p) / 65;
	if (c->n > KW_COMMIT_MAX_EVENTS || (c->n && !(c->events = calloc(c->n, 32))))
		return -ENOMEM;
	for (size_t i = 0; i < c->n; i++, p += 65)
		if (p[64] != '\n' || unhex32(p, c->events[i]))
			return -EINVAL;
	return 0;
}

/* At start: the events the previous collector kept, when they replay to the
 * index value the TPM holds (c->value). Each event is written before it is
 * extended, so the last may never have reached the TPM: it is dropped when
 * the value is the one before it. Anything else (no file, an index someone
 * extended or re-created, an edited file) starts a new chain at the TPM's
 * value: open sessions then close without a commitment. */
static void chain_load(struct kwd *d, struct kwd_commit *c)
{
	struct kw_buf b = { 0 };
	uint8_t v[32], before[32];
	int e = kw_read_regular_file(c->chain_path, CHAIN_MAX, &b);

	e = e ?: chain_parse(c, &b);
	kw_buf_free(&b);
	if (!e) {
		memcpy(v, c->base, 32);
		memcpy(before, v, 32);
		for (size_t i = 0; i < c->n; i++) {
			memcpy(before, v, 32);
			kw_commit_extend(v, c->events[i]);
		}
		if (CRYPTO_memcmp(v, c->value, 32) && c->n && !CRYPTO_memcmp(before, c->value, 32))
			c->n--; /* written, never extended */
		else if (CRYPTO_memcmp(v, c->value, 32))
			e = -ESTALE;
	}
	if (e) {
		if (e != -ENOENT)
			kwd_log(d, LOG_WARNING, "TPM commit chain %s %s: sessions left open close "
				"without a commitment", c->chain_path, e == -ESTALE ?
				"does not replay to the index's value" : "cannot be read");
		free(c->events);
		c->events = NULL;
		c->n = c->cap = 0;
		memcpy(c->base, c->value, 32);
	}
}

int kwd_commit_start(struct kwd *d, struct kw_tpm *tpm, char *err, size_t errlen)
{
	struct kwd_commit *c = calloc(1, sizeof(*c));
	char path[4096];
	int e;

	if (!c)
		return -ENOMEM;
	c->chain_fd = -1;
	if (snprintf(path, sizeof(path), "%s/tpm-commit.auth", d->cfg.state_dir) >= (int)sizeof(path) ||
	    snprintf(c->chain_path, sizeof(c->chain_path), "%s/tpm-commit.chain",
		     d->cfg.state_dir) >= (int)sizeof(c->chain_path))
		e = -ENAMETOOLONG;
	else
		e = read_auth(path, c->auth, err, errlen);
	e = e ?: kw_tpm_commit_setup(tpm, c->auth, c->value, err, errlen);
	if (!e) {
		chain_load(d, c);
		e = chain_rewrite(c);
		if (e)
			snprintf(err, errlen, "TPM commit chain %.200s cannot be written: %s",
				 c->chain_path, strerror(-e));
	}
	if (e) {
		if (c->chain_fd >= 0)
			close(c->chain_fd);
		free(c->events);
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
	if (d->commit->chain_fd >= 0)
		close(d->commit->chain_fd);
	free(d->commit->events);
	OPENSSL_cleanse(d->commit, sizeof(*d->commit));
	free(d->commit);
	d->commit = NULL;
}

/* Extends e into the TPM and the kept events. */
static int extend(struct kwd *d, struct kw_tpm *tpm, const uint8_t e[32], char *err, size_t errlen)
{
	struct kwd_commit *c = d->commit;
	char hex[65];
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
	/* Written down first: a restarted collector must find every event the
	 * TPM may have seen (and drops one it did not). */
	kw_hex(e, 32, hex);
	hex[64] = '\n';
	ret = c->chain_fd < 0 ? -EBADF : kw_write_all(c->chain_fd, hex, 65);
	if (!ret && fdatasync(c->chain_fd))
		ret = -errno;
	if (ret) {
		snprintf(err, errlen, "%.200s cannot be written: %s", c->chain_path, strerror(-ret));
		c->broken = true; /* the file may hold a part of the line */
		return ret;
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
		for (uint64_t i = 0; i < keep - c->first; i++)
			kw_commit_extend(c->base, c->events[i]);
		memmove(c->events, c->events + (keep - c->first), (c->first + c->n - keep) * 32);
		c->n -= (size_t)(keep - c->first);
		c->first = keep;
		if (chain_rewrite(c)) {
			kwd_log(d, LOG_ERR, "TPM commit chain %s cannot be written", c->chain_path);
			c->broken = true; /* its events may not be the kept ones */
		}
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

void kwd_commit_resume(struct kwd *d, struct kwd_session *s, const char *counter)
{
	struct kwd_commit *c = d->commit;
	uint8_t ev[32], v[32];
	size_t i;

	memset(&s->commit, 0, sizeof(s->commit));
	if (!c || !counter)
		return;
	/* The open event rebuilt from the log's open entry: found in the chain
	 * only if the TPM saw this session, counter, bundle hash and image. */
	if (strlen(counter) >= sizeof(s->commit.counter) || !*counter ||
	    strspn(counter, "0123456789") != strlen(counter) ||
	    kw_commit_open_event(s->id, counter, s->bundle_hash, s->image_digest, ev)) {
		kwd_log(d, LOG_ERR, "session %s: its open entry's tpm_counter is not a count: "
			"no TPM commitment at close", s->id);
		return;
	}
	memcpy(v, c->base, 32);
	for (i = 0; i < c->n && CRYPTO_memcmp(c->events[i], ev, 32); i++)
		kw_commit_extend(v, c->events[i]);
	if (i == c->n || c->broken) {
		kwd_log(d, LOG_ERR, "session %s: its open is not in the TPM commit chain %s: "
			"no TPM commitment at close", s->id, c->chain_path);
		return;
	}
	snprintf(s->commit.counter, sizeof(s->commit.counter), "%s", counter);
	s->commit.from = c->first + i;
	memcpy(s->commit.start, v, 32);
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
