/* SPDX-License-Identifier: Apache-2.0 */
/* Sealing a log cut into segments after an unclean stop, see
 * seal_segments.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/digest.h"
#include "trace/logsegment.h"
#include "seal_segments.h"

static int count_lines(const char *path, uint64_t *n)
{
	struct kw_buf text = { 0 };
	int e = kw_read_regular_file(path, (size_t)1 << 30, &text);

	*n = 0;
	if (e == -ENOENT)
		return 0;
	for (size_t i = 0; !e && i < text.len; i++)
		*n += text.data[i] == '\n';
	kw_buf_free(&text);
	return e;
}

int kwd_seal_read(const char *log_path, size_t max, struct kw_buf *out, struct kwd_seal_log *sl)
{
	char path[4300];
	struct stat st;
	FILE *f;
	size_t n;
	int e = 0;

	memset(sl, 0, sizeof(*sl));
	kw_buf_free(out);
	sl->last = 1;
	while (!kw_segment_name(path, sizeof(path), log_path, sl->last + 1) &&
	       lstat(path, &st) == 0)
		sl->last++;
	if (kw_segment_name(path, sizeof(path), log_path, sl->last) || lstat(path, &st) < 0 ||
	    !S_ISREG(st.st_mode))
		return -EINVAL;
	sl->last_size = (uint64_t)st.st_size;
	snprintf(path, sizeof(path), "%s%s", log_path, KW_SEGMENT_MANIFEST_SUFFIX);
	e = count_lines(path, &sl->listed);
	if (e)
		return e;
	f = kw_log_open_joined(log_path);
	if (!f)
		return -errno;
	do {
		if (kw_buf_reserve(out, 65536)) {
			e = -ENOMEM;
			break;
		}
		n = fread(out->data + out->len, 1, 65536, f);
		out->len += n;
		if (out->len > max)
			e = -EFBIG;
	} while (!e && n);
	if (!e && ferror(f))
		e = -EIO;
	fclose(f);
	if (!e && out->data)
		out->data[out->len] = '\0';
	return e;
}

int kwd_seal_open_last(const char *log_path, struct kwd_seal_log *sl, size_t keep, size_t len,
		       bool appending, char *why, size_t whylen)
{
	uint64_t before = len - sl->last_size; /* the joined log's bytes before the last file */
	struct stat st;
	int fd, flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;

	sl->seal_n = sl->last;
	if (keep < before) {
		snprintf(why, whylen, "%.200s: a segment before the last ends inside a line", log_path);
		return -EINVAL;
	}
	/* a listed segment keeps the bytes its manifest line hashes: the seal
	 * goes into a new one */
	if (appending && sl->listed >= sl->last) {
		sl->seal_n = sl->last + 1;
		flags |= O_CREAT | O_EXCL;
	}
	if (kw_segment_name(sl->seal_path, sizeof(sl->seal_path), log_path, sl->seal_n))
		return -ENAMETOOLONG;
	fd = open(sl->seal_path, flags, 0640);
	if (fd < 0) {
		snprintf(why, whylen, "%.200s: %s", sl->seal_path, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "%.200s: not a regular file", sl->seal_path);
		close(fd);
		return -EINVAL;
	}
	/* a line the previous collector did not finish is not an entry */
	if (sl->seal_n == sl->last && keep < len && ftruncate(fd, (off_t)(keep - before)) < 0) {
		snprintf(why, whylen, "%.200s: cutting a torn last line: %s", sl->seal_path,
			 strerror(errno));
		close(fd);
		return -errno;
	}
	return fd;
}

int kwd_seal_list_last(const char *log_path, const struct kwd_seal_log *sl)
{
	struct kw_segment s = { .n = sl->seal_n };
	struct kw_buf text = { 0 }, line = { 0 };
	char path[4300];
	int fd, e;

	if (sl->listed >= sl->seal_n)
		return 0; /* listed already (the trailer was there, only the record missing) */
	if (sl->listed + 1 != sl->seal_n)
		return -EINVAL; /* a segment before it unlisted: verify says so */
	e = kw_read_regular_file(sl->seal_path, (size_t)1 << 40, &text);
	for (size_t i = 0; !e && i < text.len; i++)
		s.lines += text.data[i] == '\n';
	s.bytes = text.len;
	e = e ?: kw_digest_buf(KW_SHA256, text.data ? text.data : "", text.len, s.sha256);
	e = e ?: kw_segment_line(&s, &line);
	e = e ?: kw_buf_putc(&line, '\n');
	kw_buf_free(&text);
	snprintf(path, sizeof(path), "%s%s", log_path, KW_SEGMENT_MANIFEST_SUFFIX);
	fd = e ? -1 : open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (!e && fd < 0)
		e = -errno;
	e = e ?: kw_write_all(fd, line.data, line.len);
	if (!e && fsync(fd) < 0)
		e = -errno;
	if (fd >= 0)
		close(fd);
	kw_buf_free(&line);
	return e;
}
