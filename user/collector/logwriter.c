/* SPDX-License-Identifier: Apache-2.0 */
/* Decision log writer, see logwriter.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "collector/decision.h"
#include "collector/logwriter.h"

int kw_logwriter_open(struct kw_logwriter *log, const char *path)
{
	int e;

	memset(log, 0, sizeof(*log));
	log->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
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

int kw_logwriter_flush(struct kw_logwriter *log)
{
	int e;

	if (log->submit) {
		if (!log->out.len)
			return log->err;
		e = log->submit(log->submit_ctx, log->fd, log->out.data, log->out.len);
		log->bytes += log->out.len;
		memset(&log->out, 0, sizeof(log->out));
		if (e && !log->err)
			log->err = e;
		return log->err;
	}

	e = kw_write_all(log->fd, log->out.data, log->out.len);
	if (e && !log->err)
		log->err = e;
	log->bytes += log->out.len;
	kw_buf_reset(&log->out);
	return log->err;
}

int kw_logwriter_append(struct kw_logwriter *log, const char *entry, size_t len)
{
	int e = kw_transcript_append(&log->tr, entry, len);

	if (e)
		return e;
	if (kw_buf_append(&log->out, entry, len) || kw_buf_putc(&log->out, '\n'))
		return -ENOMEM;
	log->entries++;
	if (log->out.len >= KW_LOGWRITER_FLUSH_BYTES)
		return kw_logwriter_flush(log);
	return 0;
}

int kw_logwriter_event(struct kw_logwriter *log, const void *data, size_t size, int64_t boot_to_realtime_ns)
{
	int e;

	kw_buf_reset(&log->entry);
	e = kw_event_to_entry(data, size, boot_to_realtime_ns, &log->entry);
	if (e)
		return e;
	return kw_logwriter_append(log, log->entry.data, log->entry.len);
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

int kw_logwriter_detach(struct kw_logwriter *log, char hash[KW_DIGEST_STR_MAX], uint64_t *count,
		   char **data, size_t *len, int *fd)
{
	int e = log->tr_live ? kw_transcript_final(&log->tr, hash, count) : -EINVAL;

	log->tr_live = 0;
	*data = log->out.data;
	*len = log->out.len;
	*fd = log->fd;
	log->bytes += log->out.len;
	memset(&log->out, 0, sizeof(log->out));
	log->fd = -1;
	kw_buf_free(&log->entry);
	return e ? e : log->err;
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
