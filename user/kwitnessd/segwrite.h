/* SPDX-License-Identifier: Apache-2.0 */
/* The I/O worker's side of log segments (trace/logsegment.h): a session's
 * log, registered with a size bound, is rolled into LOG.2, LOG.3, ... at
 * line boundaries; each finished segment (synced) gets its manifest line
 * (synced) before the next file is made. The next file takes the log's
 * descriptor number (dup3), so the loop, its jobs and the seal go on
 * writing "the log's fd" unaware. Worker thread only, but for the two
 * first functions (config and the loop). */
#ifndef KWITNESSD_SEGWRITE_H
#define KWITNESSD_SEGWRITE_H

#include <stddef.h>
#include <stdint.h>

struct kwd;
struct kwd_segs;
struct kwd_seg;

/* Loop: asks the worker to cut the log at path every limit bytes, ahead of
 * its next chunk: fd is its segment n (1: path itself, just opened; more:
 * a resumed log's segment being written, the earlier ones listed). 0 or
 * -ENOMEM. */
int kwd_segs_request(struct kwd *d, int fd, const char *path, uint64_t n, uint64_t limit);

/* Registers fd, segment n of the log at path, to be cut every limit bytes;
 * what the segment already holds counts towards it. 0 or -errno. */
int kwd_segs_add(struct kwd_segs **t, int fd, const char *path, uint64_t n, uint64_t limit);
/* fd's segments, or NULL (not registered, or fd is no longer that log). */
struct kwd_seg *kwd_segs_get(struct kwd_segs *t, int fd);
/* How many of data's len bytes (whole lines) go into the current segment:
 * len when they fit; 0: roll first. A line longer than the bound fills a
 * segment of its own. */
size_t kwd_seg_room(const struct kwd_seg *s, const char *data, size_t len);
/* The current segment took data's len bytes. 0 or -errno. */
int kwd_seg_wrote(struct kwd_seg *s, const char *data, size_t len);
/* Finishes the current segment (fsync, manifest line, fsync) and makes the
 * next one fd's file. 0 or -errno (the log is then incomplete). */
int kwd_seg_roll(struct kwd_seg *s, int fd);
/* A descriptor of fd's current segment for a checkpoint to sync (the
 * caller closes it), or -1 when fd is not segmented. */
int kwd_segs_dup(struct kwd_segs *t, int fd);
/* At the seal: lists the last segment in the manifest (when the log was
 * cut at all) and forgets fd. 0 or -errno. */
int kwd_segs_finish(struct kwd_segs *t, int fd);
void kwd_segs_free(struct kwd_segs *t);
/* Syncs the folder path is in (a file made there outlives a power loss).
 * Any thread. 0 or -errno. */
int kwd_sync_dir_of(const char *path);

#endif
