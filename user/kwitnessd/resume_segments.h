/* SPDX-License-Identifier: Apache-2.0 */
/* Resuming a session whose log is cut into segments (resume.c,
 * trace/logsegment.h): the finished segments the manifest lists are
 * checked against it and hashed in order, the one being written is
 * reopened; the worker then goes on cutting (segwrite.h). */
#ifndef KWITNESSD_RESUME_SEGMENTS_H
#define KWITNESSD_RESUME_SEGMENTS_H

#include <stddef.h>
#include <stdint.h>

#include "collector/logwriter.h"

/* kw_logwriter_reopen for the segmented log at log_path: each segment the
 * manifest lists is streamed through log's transcript and line_fn, in
 * order, and must have the size, line count and SHA-256 its manifest line
 * says; then the first unlisted segment (made, empty, when the manifest
 * lists the last file already) is reopened for appending after its last
 * whole line (a torn last line cut off) and is *cur; a torn last manifest
 * line is cut off too. Nothing after it may exist. Memory: one read
 * buffer, one manifest line, one digest. 0, or -errno with why (naming the
 * segment_* reason verify gives; log is then released). */
int kwd_resume_segments(struct kw_logwriter *log, const char *log_path,
			kw_logwriter_line_fn line_fn, void *ctx, uint64_t *cur, char *why,
			size_t whylen);

#endif
