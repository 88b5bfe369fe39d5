/* SPDX-License-Identifier: Apache-2.0 */
/* kwd_seal_one (recover.c) for a log cut into segments (trace/logsegment.h):
 * the segments read joined, the seal appended to the last one (or, when
 * the manifest lists that one already, to a new one, so a listed segment
 * keeps its hash), which is then listed too. */
#ifndef KWITNESSD_SEAL_SEGMENTS_H
#define KWITNESSD_SEAL_SEGMENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

struct kwd_seal_log {
	uint64_t last;      /* the last segment file there */
	uint64_t last_size; /* its size */
	uint64_t listed;    /* whole lines of the manifest */
	uint64_t seal_n;    /* the segment the seal goes into */
	char seal_path[4300];
};

/* The log's segments joined into out (at most max bytes). 0 or -errno. */
int kwd_seal_read(const char *log_path, size_t max, struct kw_buf *out, struct kwd_seal_log *sl);
/* Opens the segment the seal goes into for appending (appending: a seal
 * will be written), cutting a torn last line (keep: whole-line bytes of
 * the len joined). The fd, or -errno with why. */
int kwd_seal_open_last(const char *log_path, struct kwd_seal_log *sl, size_t keep, size_t len,
		       bool appending, char *why, size_t whylen);
/* Lists the segment the seal went into in the manifest, synced. 0 or -errno. */
int kwd_seal_list_last(const char *log_path, const struct kwd_seal_log *sl);

#endif
