/* SPDX-License-Identifier: Apache-2.0 */
/* Sealing sessions a previous collector never closed. A collector that was
 * killed (or crashed, or lost power) leaves decision logs without a trailer
 * and without a record. At start, every such log is sealed: a torn last line
 * is cut off, a kwitness.close entry says the session was not closed (complete
 * false, and why), and a record is signed over exactly what the log holds —
 * so the gap is in the signed transcript instead of being silent. The open
 * entry carries everything the record needs (subject, image digest, bundle
 * hash, mode, model, data class); the bundle is in policies/. Sessions that
 * a restarted collector resumed (resume.c) are still open and left alone;
 * one that could not be resumed is sealed with the reason. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "lib/digest.h"
#include "jcs/jcs.h"
#include "policy/policy.h"
#include "trace/record.h"
#include "trace/logsegment.h"
#include "collector/seal.h"
#include "collector/transcript.h"
#include "verify/checkpoint.h"
#include "kwd.h"
#include "recover.h"
#include "seal_segments.h"
#include "session.h"
#include "spool.h"
#include "util.h"

#define KWD_SEAL_MAX_LOG (4ull << 30)

static bool is_session_id(const char *s, size_t n)
{
	if (n != 32)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static const char *member(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The last checkpoint signed before the stop that the log on disk still
 * matches (verify/checkpoint.c, under our own key): the seal vouches from
 * there. Nothing when there is none or the chain does not hold. */
static void vouched_from(struct kwd *d, const char *log_path, const char *log, size_t keep,
			 struct verify_ckpt *ck)
{
	if (verify_ckpt_init_beside(ck, d->key, log_path)) {
		verify_ckpt_free(ck);
		return;
	}
	for (const char *p = log; p < log + keep;) {
		const char *end = memchr(p, '\n', (size_t)(log + keep - p));

		verify_ckpt_entry(ck, p, (size_t)(end - p));
		p = end + 1;
	}
	verify_ckpt_end(ck);
	verify_ckpt_free(ck);
	if (verify_ckpt_held(ck) != KW_VERIFY_OK) {
		kwd_log(d, LOG_ERR, "%s: its checkpoints vouch for nothing: %s: %s", log_path,
			kw_verify_reason_code(ck->problem), ck->why);
		ck->vouched_n = 0;
	}
}

/* Appends the trailer of a session that was never closed; with ck, the
 * checkpoint it vouches from and how many lines follow it unsigned. */
static int append_seal(int fd, const char *id, uint64_t decisions, uint64_t denials,
		       const char *reason, const struct verify_ckpt *ck)
{
	struct kw_buf line = { 0 };
	struct jcs_obj o;
	int e;

	e = jcs_obj_begin(&o, &line);
	if (ck->vouched_n) {
		e = e ?: jcs_obj_str(&o, "checkpoint", ck->vouched_hash);
		e = e ?: jcs_obj_int(&o, "checkpoints", (int64_t)ck->vouched_n);
	}
	e = e ?: jcs_obj_bool(&o, "complete", false);
	e = e ?: jcs_obj_int(&o, "decisions", (int64_t)decisions);
	e = e ?: jcs_obj_int(&o, "denials", (int64_t)denials);
	e = e ?: jcs_obj_str(&o, "sealed", reason);
	e = e ?: jcs_obj_str(&o, "session", id);
	e = e ?: jcs_obj_str(&o, "tool", "kwitness.close");
	e = e ?: jcs_obj_int(&o, "ts", kwd_now_us());
	if (ck->vouched_n)
		e = e ?: jcs_obj_int(&o, "unvouched_lines",
				     (int64_t)(ck->log_lines - ck->vouched_lines));
	e = e ?: jcs_obj_end(&o);
	e = e ?: kw_buf_putc(&line, '\n');
	if (!e && write(fd, line.data, line.len) != (ssize_t)line.len)
		e = -EIO;
	if (!e && fsync(fd) < 0)
		e = -errno;
	kw_buf_free(&line);
	return e;
}

static int sign_and_write(struct kwd *d, json_t *open, const char *bundle, size_t bundle_len,
			  const char *hash, uint64_t count, const char *record_path, char *why,
			  size_t whylen)
{
	struct kw_record_input in = { 0 };
	enum kw_seal_stage stage;
	char log_why[256];
	int e;

	in.sandbox_id = member(open, "sandbox_id");
	in.image_digest = member(open, "image_digest");
	in.bundle = bundle;
	in.bundle_len = bundle_len;
	in.transcript_hash = hash;
	in.call_count = count;
	in.enforcement_mode = member(open, "mode");
	in.model_provider = member(open, "model_provider") ?: d->cfg.model_provider;
	in.model_id = member(open, "model_id") ?: d->cfg.model_id;
	in.data_class = member(open, "data_class") ?: d->cfg.data_class;
	in.verifier = d->cfg.verifier;
	in.profile = d->cfg.record_profile;
	in.iat = kwd_now_us() / 1000000;
	e = kw_seal_record_logged(&in, d->key, d->publish, record_path, NULL, &stage, why, whylen,
				  log_why, sizeof(log_why));
	if (log_why[0])
		kwd_log(d, LOG_WARNING, "record %s not logged (no transparency): %s", record_path,
			log_why);
	return e;
}

/* Opens the log for the seal, cutting a torn last line (keep: bytes of whole
 * lines). Returns the fd or -errno with why. */
static int open_log_for_seal(const char *path, size_t keep, size_t len, char *why,
			     size_t whylen)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), e;
	struct stat st;

	if (fd < 0) {
		e = -errno;
		snprintf(why, whylen, "%.200s: %s", path, strerror(errno));
		return e;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "%.200s: not a regular file", path);
		close(fd);
		return -EINVAL;
	}
	if (keep < len && ftruncate(fd, (off_t)keep) < 0) {
		e = -errno;
		snprintf(why, whylen, "%.200s: cutting a torn last line: %s", path, strerror(errno));
		close(fd);
		return e;
	}
	return fd;
}

#define KWD_SEAL_REASON "the collector stopped before this session was closed: decisions after " \
	"the last entry and the kernel's counters are unknown"

#define KWD_SEAL_REASON_VOUCHED "the collector stopped before this session was closed: the lines " \
	"after its last checkpoint were not signed before the stop, and decisions after the last " \
	"entry and the kernel's counters are unknown"

/* Seals one log. Returns 0, or -errno with why. */
/* The decisions and denials in the whole lines of a log; true when the last
 * of them is the trailer. */
static bool count_whole_lines(const char *data, size_t keep, uint64_t *decisions,
			      uint64_t *denials)
{
	const char *last = NULL;

	for (const char *p = data; p < data + keep;) {
		const char *end = memchr(p, '\n', (size_t)(data + keep - p));

		if (!memmem(p, (size_t)(end - p), "\"tool\":\"kwitness.", 17) &&
		    !memmem(p, (size_t)(end - p), "\"tool\":\"proc\"", 13)) {
			(*decisions)++;
			if (memmem(p, (size_t)(end - p), "\"decision\":\"deny\"", 17))
				(*denials)++;
		}
		last = p;
		p = end + 1;
	}
	return last && memmem(last, (size_t)(data + keep - last), "\"tool\":\"kwitness.close\"", 23);
}

int kwd_seal_one(struct kwd *d, const char *id, const char *reason, char *why, size_t whylen)
{
	char log_path[4200], rec_path[4200], pol_path[4200], hash[KW_DIGEST_STR_MAX];
	char got[KW_DIGEST_STR_MAX];
	struct kw_buf log = { 0 }, bundle = { 0 };
	struct jcs_error jerr;
	json_t *open = NULL;
	const char *nl, *bundle_hash;
	uint64_t count = 0, decisions = 0, denials = 0;
	struct kwd_seal_log sl;
	size_t keep;
	bool closed, segmented;
	int fd = -1, e;

	snprintf(log_path, sizeof(log_path), "%s/logs/%s.jsonl", d->cfg.state_dir, id);
	snprintf(rec_path, sizeof(rec_path), "%s/records/%s.json", d->cfg.state_dir, id);
	segmented = kw_log_is_segmented(AT_FDCWD, log_path);
	e = segmented ? kwd_seal_read(log_path, KWD_SEAL_MAX_LOG, &log, &sl) :
			kw_read_regular_file(log_path, KWD_SEAL_MAX_LOG, &log);
	if (e) {
		snprintf(why, whylen, "%.200s: %s", log_path, strerror(-e));
		return e;
	}
	/* Only whole lines are entries: a torn last line is cut off. */
	nl = log.len ? memrchr(log.data, '\n', log.len) : NULL;
	keep = nl ? (size_t)(nl - log.data) + 1 : 0;
	if (!keep) {
		snprintf(why, whylen, "%.200s: no complete open entry", log_path);
		e = -EINVAL;
		goto out;
	}
	nl = memchr(log.data, '\n', keep);
	open = jcs_parse(log.data, (size_t)(nl - log.data), &jerr);
	if (!open || !member(open, "tool") || strcmp(member(open, "tool"), "kwitness.open") ||
	    !member(open, "sandbox_id") || !member(open, "image_digest") || !member(open, "mode")) {
		snprintf(why, whylen, "%.200s: the first line is not a kwitness.open entry", log_path);
		e = -EINVAL;
		goto out;
	}
	bundle_hash = member(open, "bundle_hash");
	if (!bundle_hash || !kw_digest_valid(bundle_hash) || strncmp(bundle_hash, "sha256:", 7)) {
		snprintf(why, whylen, "%.200s: the open entry has no bundle hash", log_path);
		e = -EINVAL;
		goto out;
	}
	snprintf(pol_path, sizeof(pol_path), "%s/policies/%s", d->cfg.state_dir, bundle_hash + 7);
	e = kw_read_regular_file(pol_path, KW_POLICY_MAX_BYTES, &bundle);
	if (!e)
		e = kw_digest_buf(KW_SHA256, bundle.data ? bundle.data : "", bundle.len, got);
	if (e || strcmp(got, bundle_hash)) {
		snprintf(why, whylen, "%.200s: the bundle is missing or does not match", pol_path);
		e = e ? e : -EINVAL;
		goto out;
	}
	/* Count what is there; a trailer means only the record is missing. */
	closed = count_whole_lines(log.data, keep, &decisions, &denials);
	fd = segmented ? kwd_seal_open_last(log_path, &sl, keep, log.len, !closed, why, whylen) :
			 open_log_for_seal(log_path, keep, log.len, why, whylen);
	if (fd < 0) {
		e = fd;
		goto out;
	}
	if (!closed) {
		struct verify_ckpt ck;

		vouched_from(d, log_path, log.data, keep, &ck);
		e = append_seal(fd, id, decisions, denials,
				reason ? reason : ck.vouched_n ? KWD_SEAL_REASON_VOUCHED :
								 KWD_SEAL_REASON, &ck);
		if (e) {
			snprintf(why, whylen, "%.200s: writing the seal: %s", log_path, strerror(-e));
			goto out;
		}
	}
	if (segmented) {
		e = kwd_seal_list_last(log_path, &sl);
		e = e ?: kw_sync_file(sl.seal_path);
		if (e) {
			snprintf(why, whylen, "%.200s: listing its last segment: %s", log_path,
				 strerror(-e));
			goto out;
		}
	}
	kw_buf_free(&log);
	e = segmented ? kwd_seal_read(log_path, KWD_SEAL_MAX_LOG, &log, &sl) :
			kw_read_regular_file(log_path, KWD_SEAL_MAX_LOG, &log);
	if (!e)
		e = kw_transcript_from_text(log.data ? log.data : "", log.len, hash, &count, why,
					    whylen);
	if (e) {
		if (!why[0])
			snprintf(why, whylen, "%.200s: %s", log_path, strerror(-e));
		goto out;
	}
	e = sign_and_write(d, open, bundle.data ? bundle.data : "", bundle.len, hash, count,
			   rec_path, why, whylen);
	if (!e) {
		kwd_log(d, LOG_NOTICE,
			"session %s was not closed by the previous collector: sealed (%llu decisions, "
			"complete false) -> %s", id, (unsigned long long)decisions, rec_path);
		kwd_spool_enqueue(d, id);
	}
out:
	if (fd >= 0)
		close(fd);
	json_decref(open);
	kw_buf_free(&log);
	kw_buf_free(&bundle);
	return e;
}

static bool kwd_seal_adopted(struct kwd *d, const char *id)
{
	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++)
		if (d->slots[i] && !strcmp(d->slots[i]->id, id))
			return true;
	return false;
}

void kwd_seal_unclosed(struct kwd *d)
{
	char dir[4200];
	struct dirent *de;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/logs", d->cfg.state_dir);
	dp = opendir(dir);
	if (!dp)
		return;
	while ((de = readdir(dp))) {
		size_t n = strlen(de->d_name);
		char id[33], rec[4300], why[512] = "";
		struct stat st;

		if (n != 38 || strcmp(de->d_name + 32, ".jsonl") || !is_session_id(de->d_name, 32))
			continue;
		memcpy(id, de->d_name, 32);
		id[32] = '\0';
		snprintf(rec, sizeof(rec), "%s/records/%s.json", d->cfg.state_dir, id);
		if (stat(rec, &st) == 0)
			continue;
		if (kwd_seal_adopted(d, id))
			continue; /* resumed: still open */
		if (kwd_seal_one(d, id, NULL, why, sizeof(why)))
			kwd_log(d, LOG_ERR, "session %s was not closed and cannot be sealed: %s", id,
				why);
	}
	closedir(dp);
}
