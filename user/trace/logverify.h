/* SPDX-License-Identifier: Apache-2.0 */
/* Streaming check of a decision log as kwitnessd writes it (JSON Lines of
 * RFC 8785 canonical entries): read in fixed-size chunks, each line compared
 * byte for byte with its canonical form, hashed into the transcript, and the
 * log's own structure followed as it passes (sequence numbers, the open and
 * close entries, the trailer's counts, completeness). Memory does not grow
 * with the log: see KW_LOG_CHECK_MEMORY. */
#ifndef KWITNESS_LOGVERIFY_H
#define KWITNESS_LOGVERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/digest.h"
#include "jcs/jcs.h"
#include "trace/record.h"

/* The longest line accepted, without its newline. kwitnessd's lines are a
 * few KiB (paths are cut at 256 bytes; the open entry's strings at 1 KiB,
 * up to 6 KiB escaped, plus the list of loaded programs). */
#define KW_LOG_LINE_MAX ((size_t)256 << 10)
/* Bytes asked of each read(). */
#define KW_LOG_READ_CHUNK ((size_t)1 << 20)
/* Separate sequence gaps remembered, so that a late entry (written after its
 * gap was given up) is told from a duplicate. Beyond this many the newest
 * gaps are merged, and a duplicate inside a merged span goes unnoticed; such
 * a log is incomplete anyway. */
#define KW_LOG_GAP_RANGES 1024
/* Open entry strings kept for comparing with the record, canonical JSON
 * (a 1 KiB string escaped, and its quotes). */
#define KW_LOG_FIELD_MAX 8192
/* The most memory one check holds: the read buffer (line + chunk), and
 * for one line the canonical copy and the parser's member table and
 * reordering scratch, which grow with the line (numbers may lengthen up to
 * 4 times in canonical form: "1e15"). Documented in docs/record.md. */
#define KW_LOG_CHECK_MEMORY (KW_LOG_LINE_MAX + KW_LOG_READ_CHUNK + 24 * KW_LOG_LINE_MAX)

struct kw_log_gap {
	uint64_t lo, hi; /* missing numbers lo..hi-1 */
};

/* One open-entry string as canonical JSON text (with its quotes). */
struct kw_log_field {
	char text[KW_LOG_FIELD_MAX];
	size_t len;
	bool too_long;
};

struct kw_log_check {
	/* --- settings (set before kw_log_check_init's caller streams) --- */
	const char *expect_session; /* NULL, or the id the open entry must name */
	/* Called after every chunk with the bytes read so far (any thread). */
	void (*progress)(void *ctx, uint64_t bytes);
	void *progress_ctx;
	/* Called, when set, with every line that is its own canonical form, in
	 * file order, without its newline (valid until the call returns). A
	 * non-zero return stops the check: kw_log_check_fd/feed return it. */
	int (*on_entry)(void *ctx, const char *line, size_t len);
	void *entry_ctx;
	/* When set, kw_log_check_fd follows the log's segments: fd is the
	 * first, seg_log its name in seg_dirfd (AT_FDCWD: a path), and the
	 * manifest beside it lists the others (logsegment.h). */
	int seg_dirfd;
	const char *seg_log;

	/* --- results --- */
	uint64_t bytes, lines;
	/* First problem that stopped the reading: KW_VERIFY_OK, or one of
	 * LOG_UNREADABLE, LOG_TRUNCATED, LOG_LINE_TOO_LONG, LOG_MALFORMED,
	 * LOG_NOT_CANONICAL. */
	enum kw_verify_reason problem;
	char why[256];
	char hash[KW_DIGEST_STR_MAX]; /* transcript hash, when problem is OK */
	uint64_t entries;             /* = call_count */

	bool has_open, has_close, sealed, complete_claimed;
	struct kw_log_field session, sandbox_id, bundle_hash, image_digest, mode, machine_id;
	struct kw_log_field tpm_counter; /* the open entry's TPM counter value; empty: none */
	/* The close entry's TPM evidence digest (the binding the record is
	 * signed under); empty when it names none. */
	struct kw_log_field close_evidence;
	bool session_mismatch;        /* open entry's session != expect_session */
	uint64_t decisions, denials, resumes;
	/* The trailer's counts; -1 when it has no such member. */
	int64_t t_decisions, t_denials, t_dropped, t_next_seq, t_seq_gaps;
	int64_t t_kill_failed; /* processes a close with kill did not end; -1: absent */

	/* Sequence numbers: next expected, highest seen + 1, missing so far. */
	uint64_t seq_next, seq_missing, seq_late;
	struct kw_log_gap gaps[KW_LOG_GAP_RANGES];
	size_t n_gaps;
	bool gaps_merged;

	/* Set by kw_log_check_finish: the log contradicts itself (why), and
	 * whether it holds every decision (else incomplete_why). */
	bool inconsistent;
	char inconsistent_why[256];
	bool complete;
	char incomplete_why[256];

	/* --- internal --- */
	struct kw_digest digest; /* the transcript: "[" + lines joined by "," + "]" */
	struct kw_buf canon;
	struct jcs_scratch scratch;
	char *buf;
	size_t fill;
	bool digest_live;
};

/* Prepares c (zeroes the results, keeps the settings). Returns 0 or -ENOMEM. */
int kw_log_check_init(struct kw_log_check *c);
/* Reads fd to its end (or to the first problem) in chunks and checks every
 * line. Returns 0 (a problem, if any, is in c->problem), -errno for an
 * internal failure (out of memory), or the on_entry callback's non-zero
 * return. */
int kw_log_check_fd(struct kw_log_check *c, int fd);
/* Reads fd to its end into the check without ending it (a segment of a
 * log), adding the raw bytes to *also (may be NULL) and their count to
 * *nbytes. 0, -ENOMEM or the on_entry callback's non-zero return. */
int kw_log_check_read(struct kw_log_check *c, int fd, struct kw_digest *also, uint64_t *nbytes);
/* Feeds bytes as they come; kw_log_check_end after the last. Both return
 * 0 or -ENOMEM; once c->problem is set, further bytes are ignored. */
int kw_log_check_feed(struct kw_log_check *c, const char *data, size_t len);
int kw_log_check_end(struct kw_log_check *c);
/* Releases the buffers (results stay readable). */
void kw_log_check_free(struct kw_log_check *c);

/* Calls fn with each top-level member of an object text the check found
 * canonical (the lines on_entry gets): its name without quotes and its
 * value's text as written. The check's own reading of a line; bounded by n
 * on any input. */
typedef void (*kw_log_member_fn)(void *ctx, const char *name, size_t name_len, const char *value,
				 size_t value_len);
void kw_log_members(const char *p, size_t n, kw_log_member_fn fn, void *ctx);

/* True when the open entry's field equals value (compared as canonical
 * JSON strings). False when the log has no open entry or no such field. */
bool kw_log_field_equals(const struct kw_log_field *f, const char *value);
/* The field's value when it is a JSON string without escapes (what ids and
 * digests are), else "": out holds outlen bytes. */
void kw_log_field_string(const struct kw_log_field *f, char *out, size_t outlen);

#endif
