/* SPDX-License-Identifier: Apache-2.0 */
/* Resuming a log cut into segments, see resume_segments.h. The manifest is
 * not signed: it is what the previous collector wrote, and a segment that
 * no longer matches it was changed while no collector ran. Such a log is
 * not continued (the session is sealed as found, and verify names the
 * segment), so a resumed record never vouches for it silently. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/digest.h"
#include "trace/logsegment.h"
#include "resume_segments.h"
#include "segwrite.h"

/* The next whole manifest line into s: 1; 0 at the end (a torn last line,
 * cut by a power loss, is no entry: *torn); -1 when it is not a canonical
 * kwitness.segment line. *whole: the bytes of the whole lines read. */
static int next_listed(FILE *f, struct kw_segment *s, bool *torn, off_t *whole)
{
	char line[KW_SEGMENT_LINE_MAX + 2];
	size_t len;

	if (!fgets(line, sizeof(line), f))
		return 0;
	len = strlen(line);
	if (!len || line[len - 1] != '\n') {
		*torn = feof(f) && len <= KW_SEGMENT_LINE_MAX;
		return *torn ? 0 : -1;
	}
	if (kw_segment_read(line, len - 1, s))
		return -1;
	*whole += (off_t)len;
	return 1;
}

/* Streams listed segment want->n through the log's transcript and line_fn
 * and compares it with its manifest line. 0 or -errno with why. */
static int feed_listed(struct kw_logwriter *log, const char *log_path,
		       const struct kw_segment *want, kw_logwriter_line_fn line_fn, void *ctx,
		       char *why, size_t whylen)
{
	char path[4300], got[KW_DIGEST_STR_MAX];
	uint64_t bytes = 0, lines = log->entries;
	const char *what = "";
	struct kw_digest dg;
	struct stat st;
	int fd, e;

	if (kw_segment_name(path, sizeof(path), log_path, want->n))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		e = -errno;
		snprintf(why, whylen, "segment %" PRIu64 " (%.200s): %s%s", want->n, path,
			 strerror(errno), errno == ENOENT ? " (segment_missing)" : "");
		return e;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "segment %" PRIu64 " (%.200s) is not a regular file", want->n,
			 path);
		close(fd);
		return -EINVAL;
	}
	e = kw_digest_init(&dg, KW_SHA256);
	if (e) {
		close(fd);
		return e;
	}
	e = kw_logwriter_resume_part(log, fd, line_fn, ctx, &dg, &bytes, &what);
	close(fd);
	if (e) {
		kw_digest_free(&dg);
		snprintf(why, whylen, "segment %" PRIu64 " (%.200s): %s%s%s (segment_mismatch)",
			 want->n, path, what, what[0] ? ": " : "", strerror(-e));
		return e;
	}
	if (kw_digest_final(&dg, got))
		return -ENOMEM;
	lines = log->entries - lines;
	if (bytes != want->bytes || lines != want->lines || strcmp(got, want->sha256)) {
		snprintf(why, whylen, "segment %" PRIu64 " (%.200s: %" PRIu64 " bytes, %" PRIu64
			 " lines, %.30s...) no longer matches its manifest line (%" PRIu64 " bytes, %"
			 PRIu64 " lines, %.30s...): it changed while no collector ran "
			 "(segment_mismatch)", want->n, path, bytes, lines, got, want->bytes,
			 want->lines, want->sha256);
		return -EBADMSG;
	}
	return 0;
}

static bool segment_exists(const char *log_path, uint64_t n)
{
	char path[4300];
	struct stat st;

	return !kw_segment_name(path, sizeof(path), log_path, n) && lstat(path, &st) == 0;
}

/* Segment n, the first unlisted one, is the one being written: made
 * (empty) when the previous collector listed the last file and stopped
 * before making the next; nothing may follow it. 0 or -errno with why. */
static int being_written(const char *log_path, uint64_t n, char *why, size_t whylen)
{
	char path[4300];
	int fd, e;

	if (segment_exists(log_path, n + 1)) {
		snprintf(why, whylen, "segment %" PRIu64 " is not in the manifest but segment %"
			 PRIu64 " follows it (segment_unlisted)", n, n + 1);
		return -EBADMSG;
	}
	if (kw_segment_name(path, sizeof(path), log_path, n))
		return -ENAMETOOLONG;
	if (n == 1 || segment_exists(log_path, n))
		return 0;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0) {
		e = -errno;
		snprintf(why, whylen, "%.200s: %s", path, strerror(errno));
		return e;
	}
	close(fd);
	e = kwd_sync_dir_of(path);
	if (e)
		snprintf(why, whylen, "%.200s: syncing its folder: %s", path, strerror(-e));
	return e;
}

/* The manifest, opened to be read and, when its last line is torn, cut.
 * NULL with why (and *e) when it cannot be. */
static FILE *open_manifest(const char *log_path, int *e, char *why, size_t whylen)
{
	char path[4300];
	struct stat st;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s%s", log_path, KW_SEGMENT_MANIFEST_SUFFIX);
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		*e = -errno;
		snprintf(why, whylen, "%.200s: %s%s", path, strerror(errno),
			 errno == ENOENT ? " but the log has a second segment "
					   "(segment_manifest_missing)" : "");
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*e = -EINVAL;
		snprintf(why, whylen, "%.200s: not a regular file", path);
		close(fd);
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		*e = -ENOMEM;
		snprintf(why, whylen, "out of memory");
		close(fd);
	}
	return f;
}

int kwd_resume_segments(struct kw_logwriter *log, const char *log_path,
			kw_logwriter_line_fn line_fn, void *ctx, uint64_t *cur, char *why,
			size_t whylen)
{
	char path[4300];
	struct kw_segment s;
	uint64_t n = 1;
	off_t whole = 0;
	bool torn = false;
	FILE *f;
	int e = kw_logwriter_resume_begin(log), r;

	if (e) {
		snprintf(why, whylen, "%.200s: %s", log_path, strerror(-e));
		return e;
	}
	f = open_manifest(log_path, &e, why, whylen);
	if (!f)
		goto fail;
	while ((r = next_listed(f, &s, &torn, &whole)) > 0) {
		if (s.n != n) {
			snprintf(why, whylen, "manifest line %" PRIu64 " lists segment %" PRIu64
				 " (segment_manifest_malformed)", n, s.n);
			e = -EBADMSG;
			goto fail;
		}
		e = feed_listed(log, log_path, &s, line_fn, ctx, why, whylen);
		if (e)
			goto fail;
		n++;
	}
	if (r < 0) {
		snprintf(why, whylen, "manifest line %" PRIu64 " is not a canonical %s line "
			 "(segment_manifest_malformed)", n, KW_SEGMENT_TYPE);
		e = -EBADMSG;
		goto fail;
	}
	e = being_written(log_path, n, why, whylen);
	if (e)
		goto fail;
	/* the next cut appends its line after the whole ones */
	if (torn && ftruncate(fileno(f), whole) < 0) {
		e = -errno;
		snprintf(why, whylen, "%.200s%s: cutting a torn last line: %s", log_path,
			 KW_SEGMENT_MANIFEST_SUFFIX, strerror(errno));
		goto fail;
	}
	fclose(f);
	if (kw_segment_name(path, sizeof(path), log_path, n)) {
		kw_logwriter_abort(log);
		return -ENAMETOOLONG;
	}
	e = kw_logwriter_resume_last(log, path, line_fn, ctx, why, whylen);
	if (!e)
		*cur = n;
	return e;
fail:
	if (f)
		fclose(f);
	kw_logwriter_abort(log);
	return e;
}
