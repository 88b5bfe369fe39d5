/* SPDX-License-Identifier: Apache-2.0 */
/* The checkpoint chain against the log, see checkpoint.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "jcs/jcs.h"
#include "trace/logverify.h"
#include "verify/checkpoint.h"

static void fail(struct verify_ckpt *v, enum kw_verify_reason r, const char *why)
{
	if (v->problem != KW_VERIFY_OK)
		return;
	v->problem = r;
	snprintf(v->why, sizeof(v->why), "%s", why);
	v->have_next = false;
}

/* Whether checkpoint n comes later in the file (its "n" member only; the
 * reading position is kept). */
static bool later_has(struct verify_ckpt *v, uint64_t n)
{
	char line[KW_CHECKPOINT_LINE_MAX + 2];
	long at = ftell(v->f);
	bool found = false;

	while (!found && at >= 0 && fgets(line, sizeof(line), v->f)) {
		json_t *o = jcs_parse(line, strcspn(line, "\n"), NULL);
		json_t *j = json_object_get(o, "n");

		found = json_is_integer(j) && (uint64_t)json_integer_value(j) == n;
		json_decref(o);
	}
	if (at >= 0)
		fseek(v->f, at, SEEK_SET);
	return found;
}

/* Reads, checks and links the next checkpoint into v->next; none left (or
 * a torn last line): have_next false. */
static void next_checkpoint(struct verify_ckpt *v)
{
	static const enum kw_verify_reason of[] = {
		[KW_CHECKPOINT_MALFORMED] = KW_VERIFY_CHECKPOINT_MALFORMED,
		[KW_CHECKPOINT_KEY_MISMATCH] = KW_VERIFY_CHECKPOINT_KEY_MISMATCH,
		[KW_CHECKPOINT_BAD_SIGNATURE] = KW_VERIFY_CHECKPOINT_SIGNATURE_INVALID,
	};
	struct kw_checkpoint c;
	char why[256], hash[KW_DIGEST_STR_MAX];
	size_t len;
	int r;

	v->have_next = false;
	if (v->problem != KW_VERIFY_OK || !v->f || !fgets(v->line, sizeof(v->line), v->f))
		return;
	len = strlen(v->line);
	if (!len || v->line[len - 1] != '\n') {
		if (feof(v->f) && len < sizeof(v->line) - 1) {
			v->torn = true; /* written when the power went */
			return;
		}
		/* fgets stops at a newline or a full buffer: a shorter line
		 * without one (not at the end) holds a NUL byte */
		fail(v, KW_VERIFY_CHECKPOINT_MALFORMED, len < sizeof(v->line) - 1 ?
		     "a checkpoint line holds a NUL byte" : "a checkpoint line is too long");
		return;
	}
	r = kw_checkpoint_read(v->line, len - 1, v->key, &c, hash, why, sizeof(why));
	if (r < 0 || r >= (int)(sizeof(of) / sizeof(of[0]))) {
		fail(v, KW_VERIFY_CHECKPOINT_MALFORMED, "cannot read a checkpoint (out of memory)");
		return;
	}
	if (r) {
		fail(v, of[r], why);
		return;
	}
	if (v->session[0] && strcmp(c.session, v->session)) {
		snprintf(why, sizeof(why), "checkpoint %" PRIu64 " belongs to another session", c.n);
		fail(v, KW_VERIFY_CHECKPOINT_CHAIN_BROKEN, why);
		return;
	}
	if (c.n <= v->chain || (v->chain && c.lines <= v->head_lines)) {
		snprintf(why, sizeof(why), "checkpoint %" PRIu64 " (%" PRIu64 " lines) comes after "
			 "checkpoint %" PRIu64 " (%" PRIu64 " lines)", c.n, c.lines, v->chain,
			 v->head_lines);
		fail(v, KW_VERIFY_CHECKPOINT_REORDERED, why);
		return;
	}
	if (c.n != v->chain + 1) {
		/* missing, or further down: a reordered pair */
		if (later_has(v, v->chain + 1)) {
			snprintf(why, sizeof(why), "checkpoint %" PRIu64 " comes before checkpoint %"
				 PRIu64, c.n, v->chain + 1);
			fail(v, KW_VERIFY_CHECKPOINT_REORDERED, why);
			return;
		}
		snprintf(why, sizeof(why), "checkpoint %" PRIu64 " follows checkpoint %" PRIu64
			 ": %" PRIu64 " missing", c.n, v->chain, c.n - v->chain - 1);
		fail(v, KW_VERIFY_CHECKPOINT_CHAIN_GAP, why);
		return;
	}
	if (strcmp(c.prev, v->head)) {
		snprintf(why, sizeof(why), "checkpoint %" PRIu64 " does not name checkpoint %" PRIu64
			 " as its previous", c.n, v->chain);
		fail(v, KW_VERIFY_CHECKPOINT_CHAIN_BROKEN, why);
		return;
	}
	snprintf(v->session, sizeof(v->session), "%s", c.session);
	v->chain = c.n;
	v->head_lines = c.lines;
	snprintf(v->head, sizeof(v->head), "%s", hash);
	v->next = c;
	snprintf(v->next_hash, sizeof(v->next_hash), "%s", hash);
	v->have_next = true;
}

static void ckpt_reset(struct verify_ckpt *v, const struct kw_key *key)
{
	memset(v, 0, sizeof(*v));
	v->key = key;
	v->close_chain = v->close_unvouched = -1;
}

int verify_ckpt_init(struct verify_ckpt *v, const struct kw_key *key, const char *path)
{
	int e;

	ckpt_reset(v, key);
	v->f = fopen(path, "re");
	if (!v->f)
		return -errno; /* v still reads the close entry */
	e = kw_transcript_init(&v->tr);
	if (e) {
		fclose(v->f);
		v->f = NULL;
		return e;
	}
	v->tr_live = true;
	next_checkpoint(v);
	return 0;
}

int verify_ckpt_init_beside(struct verify_ckpt *v, const struct kw_key *key, const char *log_path)
{
	char path[4200];

	if (snprintf(path, sizeof(path), "%s%s", log_path, KW_CHECKPOINT_SUFFIX) >=
	    (int)sizeof(path)) {
		ckpt_reset(v, key);
		return -ENAMETOOLONG;
	}
	return verify_ckpt_init(v, key, path);
}

/* The close entry's checkpoint members. */
static void read_close(struct verify_ckpt *v, const char *line, size_t len)
{
	json_t *o = jcs_parse(line, len, NULL);
	const char *h = json_string_value(json_object_get(o, "checkpoint"));
	json_t *n = json_object_get(o, "checkpoints"), *u = json_object_get(o, "unvouched_lines");

	v->has_close = true;
	v->close_sealed = json_object_get(o, "sealed") != NULL;
	snprintf(v->close_head, sizeof(v->close_head), "%s", h && strlen(h) < KW_DIGEST_STR_MAX ? h : "");
	v->close_chain = json_is_integer(n) ? (int64_t)json_integer_value(n) : -1;
	v->close_unvouched = json_is_integer(u) ? (int64_t)json_integer_value(u) : -1;
	json_decref(o);
}

int verify_ckpt_entry(void *ctx, const char *line, size_t len)
{
	struct verify_ckpt *v = ctx;
	char hash[KW_DIGEST_STR_MAX], why[256];

	v->log_lines++;
	if (memmem(line, len, "\"tool\":\"kwitness.close\"", 23))
		read_close(v, line, len);
	if (!v->have_next || !v->tr_live)
		return 0;
	if (kw_transcript_append(&v->tr, line, len)) {
		fail(v, KW_VERIFY_CHECKPOINT_MALFORMED, "cannot hash the log (out of memory)");
		return 0;
	}
	if (v->tr.count != v->next.lines)
		return 0;
	if (kw_transcript_prefix(&v->tr, hash, NULL)) {
		fail(v, KW_VERIFY_CHECKPOINT_MALFORMED, "cannot hash the log (out of memory)");
		return 0;
	}
	if (strcmp(hash, v->next.prefix)) {
		snprintf(why, sizeof(why), "the log's first %" PRIu64 " lines do not hash to "
			 "checkpoint %" PRIu64 "'s transcript prefix", v->next.lines, v->next.n);
		fail(v, KW_VERIFY_CHECKPOINT_PREFIX_MISMATCH, why);
		return 0;
	}
	v->vouched_n = v->next.n;
	v->vouched_lines = v->next.lines;
	snprintf(v->vouched_hash, sizeof(v->vouched_hash), "%s", v->next_hash);
	next_checkpoint(v);
	return 0;
}

void verify_ckpt_end(struct verify_ckpt *v)
{
	if (v->have_next)
		v->beyond_log = true;
	while (v->have_next)
		next_checkpoint(v);
}

enum kw_verify_reason verify_ckpt_held(struct verify_ckpt *v)
{
	if (v->problem == KW_VERIFY_OK && v->beyond_log) {
		snprintf(v->why, sizeof(v->why), "checkpoint %" PRIu64 " covers %" PRIu64
			 " lines; the log holds %" PRIu64, v->vouched_n + 1,
			 v->head_lines, v->log_lines);
		v->problem = KW_VERIFY_CHECKPOINT_BEYOND_LOG;
	}
	return v->problem;
}

enum kw_verify_reason verify_ckpt_bound(struct verify_ckpt *v)
{
	char why[256];

	if (verify_ckpt_held(v) != KW_VERIFY_OK)
		return v->problem;
	if (!v->has_close || v->close_chain < 0)
		return KW_VERIFY_OK;
	if (!v->f) {
		snprintf(why, sizeof(why), "the close entry names %" PRId64 " checkpoint(s); there is "
			 "no checkpoint file", v->close_chain);
		fail(v, KW_VERIFY_CHECKPOINTS_MISSING, why);
		return v->problem;
	} /* nothing binds the chain: the record's own hash does */
	if ((uint64_t)v->close_chain > v->chain) {
		snprintf(why, sizeof(why), "the close entry names checkpoint %" PRId64
			 "; the file ends at %" PRIu64, v->close_chain, v->chain);
		fail(v, KW_VERIFY_CHECKPOINT_CHAIN_GAP, why);
	} else if ((uint64_t)v->close_chain < v->chain || strcmp(v->close_head, v->head) ||
		   v->vouched_n != v->chain) {
		snprintf(why, sizeof(why), "the close entry's last checkpoint (%" PRId64
			 ") is not the chain's last (%" PRIu64 ")", v->close_chain, v->chain);
		fail(v, KW_VERIFY_CHECKPOINT_CHAIN_BROKEN, why);
	} else if (v->close_unvouched >= 0 &&
		   (uint64_t)v->close_unvouched + v->vouched_lines + 1 != v->log_lines) {
		snprintf(why, sizeof(why), "the seal says %" PRId64 " lines follow checkpoint %" PRIu64
			 "; the log has %" PRIu64, v->close_unvouched, v->vouched_n,
			 v->log_lines - v->vouched_lines - 1);
		fail(v, KW_VERIFY_CHECKPOINT_UNVOUCHED_MISMATCH, why);
	}
	return v->problem;
}

void verify_ckpt_describe(const struct verify_ckpt *v, char *out, size_t outlen)
{
	uint64_t after = v->log_lines - v->vouched_lines;

	if (!v->vouched_n) {
		snprintf(out, outlen, "no checkpoint covers the log (%" PRIu64 " lines)", v->log_lines);
		return;
	}
	if (v->has_close && after)
		after--; /* the close entry: signed by the record, not unvouched */
	snprintf(out, outlen, "lines 1-%" PRIu64 " vouched for by checkpoint %" PRIu64 " of %" PRIu64
		 " (%s); %" PRIu64 " line(s) after it %s", v->vouched_lines, v->vouched_n, v->chain,
		 v->vouched_hash, after,
		 v->close_sealed && v->close_unvouched >= 0 ?
			 "unvouched: on disk, not signed before the collector stopped" :
		 v->has_close ? "signed by the record" : "not vouched for");
}

void verify_ckpt_free(struct verify_ckpt *v)
{
	if (v->f)
		fclose(v->f);
	v->f = NULL;
	if (v->tr_live)
		kw_digest_free(&v->tr.digest);
	v->tr_live = false;
}

/* A decision log on its own (maybe cut at any byte) against its checkpoints. */
int verify_log_checkpoints(const struct kw_key *key, const char *log_path, const char *ckpt_path,
			   struct verify_cut *out, char *err, size_t errlen)
{
	struct kw_log_check lc = { 0 };
	int fd, e;

	memset(out, 0, sizeof(*out));
	fd = open(log_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot read decision log %s: %s", log_path, strerror(errno));
		return -1;
	}
	e = ckpt_path ? verify_ckpt_init(&out->ck, key, ckpt_path) :
			verify_ckpt_init_beside(&out->ck, key, log_path);
	if (e) {
		snprintf(err, errlen, "cannot read checkpoints %s%s: %s", ckpt_path ?: log_path,
			 ckpt_path ? "" : KW_CHECKPOINT_SUFFIX, strerror(-e));
		verify_ckpt_free(&out->ck);
		close(fd);
		return -1;
	}
	lc.on_entry = verify_ckpt_entry;
	lc.entry_ctx = &out->ck;
	lc.seg_dirfd = AT_FDCWD;
	lc.seg_log = log_path;
	e = kw_log_check_init(&lc);
	if (!e)
		e = kw_log_check_fd(&lc, fd);
	close(fd);
	if (e) {
		snprintf(err, errlen, "reading %s: %s", log_path, strerror(-e));
		kw_log_check_free(&lc);
		verify_ckpt_free(&out->ck);
		return -1;
	}
	verify_ckpt_end(&out->ck);
	out->log_problem = lc.problem;
	snprintf(out->log_why, sizeof(out->log_why), "%s", lc.why);
	kw_log_check_free(&lc);
	verify_ckpt_free(&out->ck);
	/* where the verification stops, and whether that is a failure */
	if (out->ck.problem != KW_VERIFY_OK) {
		out->stop = out->ck.problem;
		out->valid = false;
	} else if (lc.problem != KW_VERIFY_OK) {
		out->stop = lc.problem;
		out->valid = lc.problem == KW_VERIFY_LOG_TRUNCATED;
	} else if (out->ck.beyond_log) {
		out->stop = KW_VERIFY_CHECKPOINT_BEYOND_LOG;
		out->valid = true;
	} else {
		out->stop = KW_VERIFY_OK; /* the log's end */
		out->valid = true;
	}
	return 0;
}
