/* SPDX-License-Identifier: Apache-2.0 */
/* A session's decision log: canonical entries, one per line, hashed while
 * they are written (the transcript is "[" + entries joined by "," + "]"). */
#ifndef KWITNESSD_LOGWRITER_H
#define KWITNESSD_LOGWRITER_H

#include <stddef.h>
#include <stdint.h>

#include "kwitness/buf.h"
#include "kwitness/record.h"

/* Output is written to the file once this much is buffered (and at close). */
#define KWD_LOG_FLUSH_BYTES (256 * 1024)

/* Takes a chunk of log bytes (ownership of data: free() it) to write to fd
 * elsewhere, in order. Returns 0, or -errno (data is then freed by the callee). */
typedef int (*kwd_log_submit_fn)(void *ctx, int fd, char *data, size_t len);

struct kwd_log {
	int fd;
	kwd_log_submit_fn submit; /* NULL: write() here, synchronously */
	void *submit_ctx;
	struct kw_buf out;    /* lines not yet written */
	struct kw_buf entry;  /* scratch for one entry */
	struct kw_transcript tr;
	uint64_t entries;
	uint64_t bytes;
	int err;              /* first write error: the log is then incomplete */
	int tr_live;
};

/* Creates path (must not exist, mode 0640). 0 or -errno. */
int kwd_log_open(struct kwd_log *log, const char *path);
/* Sees one whole line of a log being reopened (no newline). Nonzero stops. */
typedef int (*kwd_log_line_fn)(void *ctx, const char *line, size_t len);
/* Reopens an existing log to continue it (O_NOFOLLOW, a regular file): a
 * torn last line is cut off, the streaming transcript hash is rebuilt from
 * the lines, and line_fn sees each of them. 0 or -errno with why. */
int kwd_log_reopen(struct kwd_log *log, const char *path, kwd_log_line_fn line_fn, void *ctx,
		   char *why, size_t whylen);
/* Appends one canonical entry (no newline). */
int kwd_log_append(struct kwd_log *log, const char *entry, size_t len);
/* Appends the entry for one ring buffer record. -EINVAL: undecodable record. */
int kwd_log_event(struct kwd_log *log, const void *data, size_t size, int64_t boot_to_realtime_ns);
/* Writes (or submits) the buffered lines. */
int kwd_log_flush(struct kwd_log *log);
/* Finishes the transcript and hands back the unwritten lines (*data, owned by
 * the caller, may be NULL) and the fd (the caller closes it, after fsync):
 * for a collector that writes on another thread. */
int kwd_log_detach(struct kwd_log *log, char hash[KW_DIGEST_STR_MAX], uint64_t *count,
		   char **data, size_t *len, int *fd);
/* Flushes, fsyncs and closes the file, and finishes the transcript. */
int kwd_log_finish(struct kwd_log *log, char hash[KW_DIGEST_STR_MAX], uint64_t *count);
/* Releases everything without finishing (error paths). */
void kwd_log_abort(struct kwd_log *log);

#endif
