/* SPDX-License-Identifier: Apache-2.0 */
/* A decision log split into size-bounded segments (docs/decision-log.md,
 * "Segments"): LOG is segment 1, LOG.2, LOG.3, ... follow, and the
 * manifest LOG.segments lists each finished segment, one canonical line
 * each: {"bytes":B,"lines":L,"n":N,"sha256":"sha256:...","type":"kwitness.segment"}.
 * Segments are a storage split only: the log is their concatenation, and
 * its transcript hash is the one of an unsplit log. */
#ifndef KWITNESS_TRACE_LOGSEGMENT_H
#define KWITNESS_TRACE_LOGSEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/buf.h"
#include "lib/digest.h"

#define KW_SEGMENT_MANIFEST_SUFFIX ".segments"
#define KW_SEGMENT_TYPE "kwitness.segment"
/* A manifest line is about 150 bytes; longer is not one kwitnessd wrote. */
#define KW_SEGMENT_LINE_MAX 512
/* The smallest segment kwitnessd cuts (a bound below a line's size would
 * make a file per line). */
#define KW_SEGMENT_BYTES_MIN 4096u

struct kw_log_check;

/* A segment size as kwitnessd.conf's log_segment_bytes and `session open
 * --log-segment-bytes` take it: "0" (one file) or 4096 up to 1T, with a K,
 * M, G or T suffix (powers of 1024). 0 or -EINVAL. */
int kw_segment_bytes_parse(const char *v, uint64_t *out);
/* The largest segment size. */
#define KW_SEGMENT_BYTES_MAX (1ull << 40)

struct kw_segment {
	uint64_t n;     /* 1, 2, ... */
	uint64_t bytes; /* the file's size */
	uint64_t lines; /* newlines in it */
	char sha256[KW_DIGEST_STR_MAX]; /* "sha256:<hex>" of the file's bytes */
};

/* The canonical manifest line of s (no newline) into out. 0 or -ENOMEM. */
int kw_segment_line(const struct kw_segment *s, struct kw_buf *out);
/* Reads one manifest line (no newline): 0 when it is a canonical
 * kwitness.segment with every member, -EINVAL when not, -ENOMEM. */
int kw_segment_read(const char *line, size_t len, struct kw_segment *s);
/* The file name of segment n of log (n 1: log itself). 0, or -ENAMETOOLONG. */
int kw_segment_name(char *out, size_t cap, const char *log, uint64_t n);
/* Whether log (in dirfd, AT_FDCWD for a path) is segmented: its manifest
 * or a second segment is there. */
bool kw_log_is_segmented(int dirfd, const char *log);
/* kw_log_check_fd for a check with seg_log set: streams segment 1 (fd),
 * then each segment the manifest lists, checking its size and SHA-256,
 * then the one segment being written after them (not yet listed), and
 * ends the check. A segment problem is c->problem (KW_VERIFY_SEGMENT_*).
 * Memory: the check's, one manifest line and one digest. Returns as
 * kw_log_check_fd. */
int kw_log_check_segments(struct kw_log_check *c, int fd);
/* The log at path as one stream: path, then path.2, path.3, ... while they
 * are there, in order (no manifest check: for tools that show a log, not
 * for verifying it). NULL with errno when path cannot be opened. */
FILE *kw_log_open_joined(const char *path);

#endif
