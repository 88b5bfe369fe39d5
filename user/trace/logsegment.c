/* SPDX-License-Identifier: Apache-2.0 */
/* Log segments: the manifest's lines and the streaming read across the
 * segments, see logsegment.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "jcs/jcs.h"
#include "trace/logsegment.h"
#include "trace/logverify.h"

int kw_segment_line(const struct kw_segment *s, struct kw_buf *out)
{
	struct jcs_obj o;
	int e;

	e = jcs_obj_begin(&o, out);
	e = e ?: jcs_obj_int(&o, "bytes", (int64_t)s->bytes);
	e = e ?: jcs_obj_int(&o, "lines", (int64_t)s->lines);
	e = e ?: jcs_obj_int(&o, "n", (int64_t)s->n);
	e = e ?: jcs_obj_str(&o, "sha256", s->sha256);
	e = e ?: jcs_obj_str(&o, "type", KW_SEGMENT_TYPE);
	return e ?: jcs_obj_end(&o);
}

int kw_segment_bytes_parse(const char *v, uint64_t *out)
{
	unsigned long long n;
	unsigned shift = 0;
	char *end;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v || *v == '-')
		return -EINVAL;
	switch (*end) {
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end || n > KW_SEGMENT_BYTES_MAX >> shift || (n && (n << shift) < KW_SEGMENT_BYTES_MIN))
		return -EINVAL;
	*out = (uint64_t)n << shift;
	return 0;
}

static bool get_count(json_t *o, const char *k, uint64_t *v)
{
	json_t *j = json_object_get(o, k);

	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return false;
	*v = (uint64_t)json_integer_value(j);
	return true;
}

int kw_segment_read(const char *line, size_t len, struct kw_segment *s)
{
	struct kw_buf canon = { 0 };
	const char *sha, *type;
	json_t *o;
	int e = -EINVAL;

	memset(s, 0, sizeof(*s));
	o = len <= KW_SEGMENT_LINE_MAX ? jcs_parse(line, len, NULL) : NULL;
	if (!o || !json_is_object(o))
		goto out;
	if (jcs_dump(o, &canon)) {
		e = -ENOMEM;
		goto out;
	}
	/* only the bytes kwitnessd writes: canonical, exactly these members */
	if (canon.len != len || memcmp(canon.data, line, len) || json_object_size(o) != 5)
		goto out;
	sha = json_string_value(json_object_get(o, "sha256"));
	type = json_string_value(json_object_get(o, "type"));
	if (!get_count(o, "bytes", &s->bytes) || !get_count(o, "lines", &s->lines) ||
	    !get_count(o, "n", &s->n) || s->n == 0 || !sha || strncmp(sha, "sha256:", 7) ||
	    !kw_digest_valid(sha) || !type || strcmp(type, KW_SEGMENT_TYPE))
		goto out;
	snprintf(s->sha256, sizeof(s->sha256), "%s", sha);
	e = 0;
out:
	if (e)
		memset(s, 0, sizeof(*s));
	json_decref(o);
	kw_buf_free(&canon);
	return e;
}

int kw_segment_name(char *out, size_t cap, const char *log, uint64_t n)
{
	int w = n <= 1 ? snprintf(out, cap, "%s", log) : snprintf(out, cap, "%s.%" PRIu64, log, n);

	return w < 0 || (size_t)w >= cap ? -ENAMETOOLONG : 0;
}

static bool exists_at(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

bool kw_log_is_segmented(int dirfd, const char *log)
{
	char name[4300];

	return (snprintf(name, sizeof(name), "%s%s", log, KW_SEGMENT_MANIFEST_SUFFIX) <
			(int)sizeof(name) && exists_at(dirfd, name)) ||
	       (!kw_segment_name(name, sizeof(name), log, 2) && exists_at(dirfd, name));
}

/* A segment problem explains what the log check saw in that segment: it
 * takes the place of any problem the lines showed. */
static void seg_problem(struct kw_log_check *c, enum kw_verify_reason r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void seg_problem(struct kw_log_check *c, enum kw_verify_reason r, const char *fmt, ...)
{
	va_list ap;

	c->problem = r;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
}

/* The next manifest entry: 1, 0 at its end (a torn last line, cut by a
 * power loss, is no entry), -1 with the problem set. */
static int next_entry(struct kw_log_check *c, FILE *f, uint64_t *lineno, struct kw_segment *s)
{
	char line[KW_SEGMENT_LINE_MAX + 2];
	size_t len;

	if (!fgets(line, sizeof(line), f))
		return 0;
	++*lineno;
	len = strlen(line);
	if (!len || line[len - 1] != '\n') {
		if (feof(f) && len <= KW_SEGMENT_LINE_MAX)
			return 0;
		seg_problem(c, KW_VERIFY_SEGMENT_MANIFEST_MALFORMED, "segment manifest line %" PRIu64
			    " is too long", *lineno);
		return -1;
	}
	if (kw_segment_read(line, len - 1, s)) {
		seg_problem(c, KW_VERIFY_SEGMENT_MANIFEST_MALFORMED, "segment manifest line %" PRIu64
			    " is not a canonical %s line", *lineno, KW_SEGMENT_TYPE);
		return -1;
	}
	return 1;
}

/* The manifest's segment whose file hashes to sha, or 0. */
static uint64_t listed_as(FILE *f, const char *sha)
{
	char line[KW_SEGMENT_LINE_MAX + 2];
	struct kw_segment s;

	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);

		if (len && line[len - 1] == '\n' && !kw_segment_read(line, len - 1, &s) &&
		    !strcmp(s.sha256, sha))
			return s.n;
	}
	return 0;
}

/* Streams one listed segment (sfd) through the check and compares it with
 * its manifest entry. 0 (a mismatch is c->problem) or as kw_log_check_read. */
static int check_listed(struct kw_log_check *c, FILE *f, int sfd, const char *name,
			const struct kw_segment *s)
{
	struct kw_digest d;
	char got[KW_DIGEST_STR_MAX], rest[65536];
	uint64_t nb = 0, m;
	ssize_t r;
	int e = kw_digest_init(&d, KW_SHA256);

	if (e)
		return e;
	e = kw_log_check_read(c, sfd, &d, &nb);
	/* a line problem stopped the check: hash the rest, to say which segment it is */
	while (!e && (r = read(sfd, rest, sizeof(rest))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = -errno;
			break;
		}
		nb += (uint64_t)r;
		e = kw_digest_update(&d, rest, (size_t)r);
	}
	if (e) {
		kw_digest_free(&d);
		return e;
	}
	if (kw_digest_final(&d, got))
		return -ENOMEM;
	if (!strcmp(got, s->sha256) && nb == s->bytes)
		return 0;
	m = listed_as(f, got);
	if (m && m != s->n)
		seg_problem(c, KW_VERIFY_SEGMENT_REORDERED, "%.120s holds segment %" PRIu64
			    " of the manifest, not segment %" PRIu64, name, m, s->n);
	else
		seg_problem(c, KW_VERIFY_SEGMENT_MISMATCH, "%.120s (%" PRIu64 " bytes, %.40s...) is "
			    "not segment %" PRIu64 " of the manifest (%" PRIu64 " bytes, %.40s...)",
			    name, nb, got, s->n, s->bytes, s->sha256);
	return 0;
}

/* Opens segment n; -1 with the problem set when it cannot be. */
static int open_segment(struct kw_log_check *c, uint64_t n, char *name, size_t cap, bool listed)
{
	int fd;

	if (kw_segment_name(name, cap, c->seg_log, n)) {
		seg_problem(c, KW_VERIFY_LOG_UNREADABLE, "segment %" PRIu64 ": name too long", n);
		return -1;
	}
	fd = openat(c->seg_dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd >= 0)
		return fd;
	if (errno == ENOENT && listed)
		seg_problem(c, KW_VERIFY_SEGMENT_MISSING, "segment %" PRIu64 " (%.160s) is missing",
			    n, name);
	else if (errno != ENOENT)
		seg_problem(c, KW_VERIFY_LOG_UNREADABLE, "segment %" PRIu64 " (%.160s): %s", n, name,
			    strerror(errno));
	return -1;
}

/* The segment being written, after the listed ones, and nothing beyond. */
static int read_tail(struct kw_log_check *c, int first_fd, uint64_t n)
{
	char name[4300];
	uint64_t nb;
	int sfd = n == 1 ? first_fd : open_segment(c, n, name, sizeof(name), false);
	int e = 0;

	if (sfd >= 0) {
		e = kw_log_check_read(c, sfd, NULL, &nb);
		if (sfd != first_fd)
			close(sfd);
	}
	/* a segment after it: the one in between is gone with its manifest line */
	if (!e && c->problem == KW_VERIFY_OK && !kw_segment_name(name, sizeof(name), c->seg_log, n + 1) &&
	    exists_at(c->seg_dirfd, name))
		seg_problem(c, KW_VERIFY_SEGMENT_UNLISTED, "segment %" PRIu64 " is not in the manifest "
			    "but %.160s follows it", n, name);
	return e;
}

int kw_log_check_segments(struct kw_log_check *c, int fd)
{
	char name[4300];
	struct kw_segment s;
	uint64_t n = 1, lineno = 0;
	FILE *f = NULL;
	int mfd, e = 0, r;

	snprintf(name, sizeof(name), "%s%s", c->seg_log, KW_SEGMENT_MANIFEST_SUFFIX);
	mfd = openat(c->seg_dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (mfd < 0 && errno != ENOENT)
		seg_problem(c, KW_VERIFY_LOG_UNREADABLE, "%.160s: %s", name, strerror(errno));
	else if (mfd < 0 && kw_log_is_segmented(c->seg_dirfd, c->seg_log))
		seg_problem(c, KW_VERIFY_SEGMENT_MANIFEST_MISSING, "%.160s is missing but the log has "
			    "a second segment", name);
	else if (mfd >= 0 && !(f = fdopen(mfd, "r"))) {
		close(mfd);
		return -ENOMEM;
	}
	while (f && c->problem == KW_VERIFY_OK && (r = next_entry(c, f, &lineno, &s)) > 0) {
		int sfd;

		if (s.n != n) {
			seg_problem(c, KW_VERIFY_SEGMENT_MANIFEST_MALFORMED, "segment manifest line %"
				    PRIu64 " lists segment %" PRIu64 ", not %" PRIu64, lineno, s.n, n);
			break;
		}
		sfd = n == 1 ? fd : open_segment(c, n, name, sizeof(name), true);
		if (sfd < 0)
			break;
		if (n == 1)
			kw_segment_name(name, sizeof(name), c->seg_log, 1);
		e = check_listed(c, f, sfd, name, &s);
		if (sfd != fd)
			close(sfd);
		if (e)
			break;
		n++;
	}
	if (f)
		fclose(f);
	if (!e && c->problem == KW_VERIFY_OK)
		e = read_tail(c, fd, n);
	return e ? e : kw_log_check_end(c);
}

struct joined {
	char *log;
	uint64_t n;
	int fd;
};

static ssize_t joined_read(void *cookie, char *buf, size_t size)
{
	struct joined *j = cookie;
	char name[4300];

	for (;;) {
		ssize_t r = read(j->fd, buf, size);

		if (r != 0)
			return r;
		if (kw_segment_name(name, sizeof(name), j->log, j->n + 1))
			return 0;
		r = open(name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
		if (r < 0)
			return errno == ENOENT ? 0 : -1;
		close(j->fd);
		j->fd = (int)r;
		j->n++;
	}
}

static int joined_close(void *cookie)
{
	struct joined *j = cookie;

	close(j->fd);
	free(j->log);
	free(j);
	return 0;
}

FILE *kw_log_open_joined(const char *path)
{
	static const cookie_io_functions_t io = { .read = joined_read, .close = joined_close };
	struct joined *j = calloc(1, sizeof(*j));
	FILE *f;

	if (!j || !(j->log = strdup(path))) {
		free(j);
		errno = ENOMEM;
		return NULL;
	}
	j->n = 1;
	j->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (j->fd < 0 || !(f = fopencookie(j, "r", io))) {
		int e = errno;

		if (j->fd >= 0)
			close(j->fd);
		free(j->log);
		free(j);
		errno = e;
		return NULL;
	}
	return f;
}
