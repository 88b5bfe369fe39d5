/* SPDX-License-Identifier: Apache-2.0 */
/* Decision log writer, see logwriter.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "collector/decision.h"
#include "collector/logwriter.h"

int kw_logwriter_open(struct kw_logwriter *log, const char *path)
{
	int e;

	memset(log, 0, sizeof(*log));
	log->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (log->fd < 0)
		return -errno;
	e = kw_transcript_init(&log->tr);
	if (e) {
		close(log->fd);
		log->fd = -1;
		return e;
	}
	log->tr_live = 1;
	/* The output buffer grows with the first burst; an idle session stays small. */
	if (kw_buf_reserve(&log->entry, 512)) {
		kw_logwriter_abort(log);
		return -ENOMEM;
	}
	return 0;
}

/* A log line longer than this is not one kwitnessd wrote. */
#define KW_LOGWRITER_LINE_MAX (1024 * 1024)

static int reopen_fail(struct kw_logwriter *log, int e, char *why, size_t whylen, const char *path,
		       const char *what)
{
	snprintf(why, whylen, "%.200s: %s%s%s", path, what, what[0] ? ": " : "", strerror(-e));
	kw_logwriter_abort(log);
	return e;
}

int kw_logwriter_resume_begin(struct kw_logwriter *log)
{
	int e;

	memset(log, 0, sizeof(*log));
	log->fd = -1;
	e = kw_transcript_init(&log->tr);
	if (e)
		return e;
	log->tr_live = 1;
	return 0;
}

/* Streams the lines of fd from its offset into the transcript and line_fn
 * (and its bytes into also, when set): *good, the bytes of whole lines;
 * *pos, the bytes read. 0, or -errno with what failed. */
static int feed_lines(struct kw_logwriter *log, int fd, kw_logwriter_line_fn line_fn, void *ctx,
		      struct kw_digest *also, off_t *good, off_t *pos, const char **what)
{
	char buf[65536];
	struct kw_buf line = { 0 };
	ssize_t n;
	int e = 0;

	*good = *pos = 0;
	while (!e && (n = read(fd, buf, sizeof(buf))) != 0) {
		const char *p = buf, *end;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			e = -errno;
			*what = "reading";
			break;
		}
		*pos += n;
		if (also && (e = kw_digest_update(also, buf, (size_t)n)))
			break;
		while (p < buf + n) {
			end = memchr(p, '\n', (size_t)(buf + n - p));
			if (kw_buf_append(&line, p, end ? (size_t)(end - p) : (size_t)(buf + n - p)) ||
			    line.len > KW_LOGWRITER_LINE_MAX) {
				*what = "a line too long";
				e = -E2BIG;
				break;
			}
			if (!end)
				break;
			*good += (off_t)line.len + 1;
			e = kw_transcript_append(&log->tr, line.data ? line.data : "", line.len);
			if (!e && line_fn)
				e = line_fn(ctx, line.data ? line.data : "", line.len);
			if (e) {
				*what = "a line was refused";
				e = e < 0 ? e : -EINVAL;
				break;
			}
			log->entries++;
			kw_buf_reset(&line);
			p = end + 1;
		}
	}
	kw_buf_free(&line);
	return e;
}

int kw_logwriter_resume_part(struct kw_logwriter *log, int fd, kw_logwriter_line_fn line_fn,
			     void *ctx, struct kw_digest *also, uint64_t *bytes, const char **what)
{
	off_t good, pos;
	int e;

	*what = "";
	e = feed_lines(log, fd, line_fn, ctx, also, &good, &pos, what);
	if (!e && good != pos) {
		*what = "it ends inside a line";
		e = -EINVAL;
	}
	log->bytes += (uint64_t)pos;
	*bytes = (uint64_t)pos;
	return e;
}

int kw_logwriter_resume_last(struct kw_logwriter *log, const char *path,
			     kw_logwriter_line_fn line_fn, void *ctx, char *why, size_t whylen)
{
	const char *what = "";
	struct stat st;
	off_t good, pos;
	int e;

	log->fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (log->fd < 0)
		return reopen_fail(log, -errno, why, whylen, path, "");
	if (fstat(log->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return reopen_fail(log, -EINVAL, why, whylen, path, "not a regular file");
	e = feed_lines(log, log->fd, line_fn, ctx, NULL, &good, &pos, &what);
	if (e)
		return reopen_fail(log, e, why, whylen, path, what);
	/* a line the previous collector did not finish is not an entry */
	if (pos > good && ftruncate(log->fd, good) < 0)
		return reopen_fail(log, -errno, why, whylen, path, "cutting a torn last line");
	if (lseek(log->fd, good, SEEK_SET) < 0)
		return reopen_fail(log, -errno, why, whylen, path, "");
	log->bytes += (uint64_t)good;
	if (kw_buf_reserve(&log->entry, 512))
		return reopen_fail(log, -ENOMEM, why, whylen, path, "");
	return 0;
}

int kw_logwriter_reopen(struct kw_logwriter *log, const char *path, kw_logwriter_line_fn line_fn, void *ctx,
		   char *why, size_t whylen)
{
	int e = kw_logwriter_resume_begin(log);

	if (e)
		return reopen_fail(log, e, why, whylen, path, "");
	return kw_logwriter_resume_last(log, path, line_fn, ctx, why, whylen);
}

int kw_logwriter_flush(struct kw_logwriter *log)
{
	int e;

	if (log->submit) {
		if (!log->out.len)
			return log->err;
		log->bytes += log->out.len;
		e = log->submit(log->submit_ctx, log->fd, &log->out);
		kw_buf_reset(&log->out);
		if (e && !log->err)
			log->err = e;
		return log->err;
	}

	e = kw_write_all(log->fd, log->out.data, log->out.len);
	/* hashed as written: the transcript never holds a line the file lacks */
	if (!e && log->out.len)
		e = kw_transcript_append_lines(&log->tr, log->out.data, log->out.len);
	if (e && !log->err)
		log->err = e;
	log->bytes += log->out.len;
	kw_buf_reset(&log->out);
	return log->err;
}

/* The entry just built at out[start..] is complete: end its line and count
 * it, or (out of memory) take it back, so a chunk only holds whole lines. */
static int line_done(struct kw_logwriter *log, size_t start)
{
	if (kw_buf_putc(&log->out, '\n')) {
		log->out.len = start;
		if (log->out.data)
			log->out.data[start] = '\0';
		return -ENOMEM;
	}
	log->entries++;
	if (log->tap)
		log->tap(log->tap_ctx, log->out.data + start, log->out.len - start - 1);
	if (log->out.len >= KW_LOGWRITER_FLUSH_BYTES)
		return kw_logwriter_flush(log);
	return 0;
}

int kw_logwriter_append(struct kw_logwriter *log, const char *entry, size_t len)
{
	size_t start = log->out.len;

	if (kw_buf_append(&log->out, entry, len))
		return -ENOMEM;
	return line_done(log, start);
}

int kw_logwriter_entry_begin(struct kw_logwriter *log, struct jcs_obj *o)
{
	kw_buf_reset(&log->entry);
	return jcs_obj_begin(o, &log->entry);
}

int kw_logwriter_entry_end(struct kw_logwriter *log, struct jcs_obj *o, int e)
{
	e = e ?: jcs_obj_end(o);
	return e ?: kw_logwriter_append(log, log->entry.data, log->entry.len);
}

int kw_logwriter_event(struct kw_logwriter *log, const void *data, size_t size, int64_t boot_to_realtime_ns)
{
	return kw_logwriter_event_via(log, data, size, boot_to_realtime_ns, NULL);
}

int kw_logwriter_event_via(struct kw_logwriter *log, const void *data, size_t size,
			   int64_t boot_to_realtime_ns, const char *via)
{
	/* built in place at the end of the output (taken back on error) */
	size_t start = log->out.len;
	int e = kw_event_to_entry_via(data, size, boot_to_realtime_ns, via, &log->out);

	return e ? e : line_done(log, start);
}

int kw_logwriter_finish(struct kw_logwriter *log, char hash[KW_DIGEST_STR_MAX], uint64_t *count)
{
	int e = kw_logwriter_flush(log);

	if (!e && fsync(log->fd) < 0)
		e = -errno;
	if (close(log->fd) < 0 && !e)
		e = -errno;
	log->fd = -1;
	if (log->tr_live) {
		int t = kw_transcript_final(&log->tr, hash, count);

		log->tr_live = 0;
		if (!e)
			e = t;
	}
	kw_buf_free(&log->out);
	kw_buf_free(&log->entry);
	return e;
}

int kw_logwriter_detach(struct kw_logwriter *log, char **data, size_t *len, int *fd,
			struct kw_transcript **tr)
{
	if (!log->tr_live)
		return -EINVAL;
	log->tr_live = 0;
	*tr = &log->tr;
	*data = log->out.data;
	*len = log->out.len;
	*fd = log->fd;
	log->bytes += log->out.len;
	memset(&log->out, 0, sizeof(log->out));
	log->fd = -1;
	kw_buf_free(&log->entry);
	return log->err;
}

void kw_logwriter_abort(struct kw_logwriter *log)
{
	if (log->fd >= 0)
		close(log->fd);
	log->fd = -1;
	if (log->tr_live)
		kw_digest_free(&log->tr.digest);
	log->tr_live = 0;
	kw_buf_free(&log->out);
	kw_buf_free(&log->entry);
}
