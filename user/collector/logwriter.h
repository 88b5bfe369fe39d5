/* SPDX-License-Identifier: Apache-2.0 */
/* A session's decision log: canonical entries, one per line, hashed a chunk
 * at a time as they are written (the transcript is "[" + entries joined by
 * "," + "]"). */
#ifndef KWITNESS_COLLECTOR_LOGWRITER_H
#define KWITNESS_COLLECTOR_LOGWRITER_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "collector/transcript.h"

/* Output is written to the file once this much is buffered (and at close). */
#define KW_LOGWRITER_FLUSH_BYTES (256 * 1024)

/* Takes the chunk of log bytes in *out (out->len bytes; the callee owns
 * out->data from then on and frees it, on failure too) to write to fd
 * elsewhere, in order, and leaves *out empty (len 0) to go on with: no
 * buffer, or one of its own, such as a chunk buffer already written, so a
 * busy log does not grow a new one from nothing each time. Whoever writes
 * the chunk also hashes it, once written and in order, into the log's
 * transcript (kw_transcript_append_lines on log->tr): the lines are hashed
 * where they are written, not where they are made. 0 or -errno. */
typedef int (*kw_logwriter_submit_fn)(void *ctx, int fd, struct kw_buf *out);
/* Sees each entry appended (its canonical bytes, no newline) as it goes
 * into the output, before it is written: the live stream's source. */
typedef void (*kw_logwriter_tap_fn)(void *ctx, const char *line, size_t len);

struct kw_logwriter {
	int fd;
	kw_logwriter_submit_fn submit; /* NULL: write() here, synchronously */
	void *submit_ctx;
	kw_logwriter_tap_fn tap; /* NULL: none (set after open/reopen) */
	void *tap_ctx;
	struct kw_buf out;    /* lines not yet written */
	struct kw_buf entry;  /* scratch for the collector's own entries */
	struct kw_transcript tr; /* fed by whoever writes a chunk (see submit) */
	uint64_t entries;
	uint64_t bytes;
	int err;              /* first write error: the log is then incomplete */
	int tr_live;
};

/* Creates path (must not exist, mode 0640). 0 or -errno. */
int kw_logwriter_open(struct kw_logwriter *log, const char *path);
/* Sees one whole line of a log being reopened (no newline). Nonzero stops. */
typedef int (*kw_logwriter_line_fn)(void *ctx, const char *line, size_t len);
/* Reopens an existing log to continue it (O_NOFOLLOW, a regular file): a
 * torn last line is cut off, the streaming transcript hash is rebuilt from
 * the lines, and line_fn sees each of them. 0 or -errno with why. */
int kw_logwriter_reopen(struct kw_logwriter *log, const char *path, kw_logwriter_line_fn line_fn, void *ctx,
		   char *why, size_t whylen);
/* The same for a log cut into files (segments): begin starts an empty
 * transcript (fd -1); part streams one earlier, finished file (fd, read to
 * its end) through the transcript and line_fn, its raw bytes also into
 * also (may be NULL), its size into *bytes, and refuses a file that ends
 * inside a line (-EINVAL; what says which failure); last reopens the file
 * being written as kw_logwriter_reopen does. On failure the caller calls
 * kw_logwriter_abort (last does it itself). 0 or -errno. */
int kw_logwriter_resume_begin(struct kw_logwriter *log);
int kw_logwriter_resume_part(struct kw_logwriter *log, int fd, kw_logwriter_line_fn line_fn,
			     void *ctx, struct kw_digest *also, uint64_t *bytes, const char **what);
int kw_logwriter_resume_last(struct kw_logwriter *log, const char *path,
			     kw_logwriter_line_fn line_fn, void *ctx, char *why, size_t whylen);
/* Appends one canonical entry (no newline). */
int kw_logwriter_append(struct kw_logwriter *log, const char *entry, size_t len);
/* The collector's own entries (open, close, resume): begin builds the object
 * o in the log's scratch buffer; end closes and appends it when e, the first
 * error while building it, is 0. Both return 0 or -errno. */
int kw_logwriter_entry_begin(struct kw_logwriter *log, struct jcs_obj *o);
int kw_logwriter_entry_end(struct kw_logwriter *log, struct jcs_obj *o, int e);
/* Appends the entry for one ring buffer record. -EINVAL: undecodable record. */
int kw_logwriter_event(struct kw_logwriter *log, const void *data, size_t size, int64_t boot_to_realtime_ns);
/* The same for a network decision an answer of the query named via permitted. */
int kw_logwriter_event_via(struct kw_logwriter *log, const void *data, size_t size,
			   int64_t boot_to_realtime_ns, const char *via);
/* Writes (or submits) the buffered lines. */
int kw_logwriter_flush(struct kw_logwriter *log);
/* Hands back the unwritten lines (*data, owned by the caller, may be NULL),
 * the fd (the caller closes it, after fsync) and the transcript, not yet
 * finished: for a collector that writes on another thread, which hashes
 * the last lines once written and then finishes *tr (kw_transcript_final,
 * on failure too: it frees the hash). *tr lives in log, which must outlive
 * it. Returns the first write error, or 0. */
int kw_logwriter_detach(struct kw_logwriter *log, char **data, size_t *len, int *fd,
			struct kw_transcript **tr);
/* Flushes, fsyncs and closes the file, and finishes the transcript. */
int kw_logwriter_finish(struct kw_logwriter *log, char hash[KW_DIGEST_STR_MAX], uint64_t *count);
/* Releases everything without finishing (error paths). */
void kw_logwriter_abort(struct kw_logwriter *log);

#endif
