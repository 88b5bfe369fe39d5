/* SPDX-License-Identifier: Apache-2.0 */
/* Growable byte buffer and bounded file reading used by every part of kwitness. */
#ifndef KWITNESS_BUF_H
#define KWITNESS_BUF_H

#include <stddef.h>

/* A growable byte buffer. Zero-initialise it ({0}); the caller owns data and
 * releases it with kw_buf_free(). data is always NUL-terminated after a
 * successful append, so text can be used as a C string (len excludes the NUL). */
struct kw_buf {
	char *data;
	size_t len;
	size_t cap;
};

/* All return 0, or -ENOMEM (the buffer is left as it was). */
int kw_buf_reserve(struct kw_buf *b, size_t extra);
int kw_buf_append(struct kw_buf *b, const void *p, size_t n);
int kw_buf_puts(struct kw_buf *b, const char *s);
int kw_buf_putc(struct kw_buf *b, char c);
/* Empties the buffer but keeps its memory. */
void kw_buf_reset(struct kw_buf *b);
void kw_buf_free(struct kw_buf *b);

/* Room for more items in an array of size-byte items (*cap of them at
 * items): the block doubled (first items at the start), the items kept, *cap
 * updated. NULL, with items and *cap untouched, when out of memory or when
 * the size would overflow. */
void *kw_array_grow(void *items, size_t *cap, size_t size, size_t first);

/* Reads a whole file ("-" is stdin) into out, refusing anything larger than max
 * bytes. Returns 0, -EFBIG when the file is larger than max, or -errno. */
int kw_read_file(const char *path, size_t max, struct kw_buf *out);

/* Reads fd to its end into out, refusing more than max bytes (-EFBIG). */
int kw_read_fd(int fd, size_t max, struct kw_buf *out);

/* Like kw_read_file, for files a privileged reader finds by path: a symlink
 * in the last component is not followed (-ELOOP) and anything but a regular
 * file is refused (-EINVAL), so a FIFO cannot block the reader. */
int kw_read_regular_file(const char *path, size_t max, struct kw_buf *out);

/* Opens name below dirfd (AT_FDCWD: a path) for reading without following
 * a link in its last component (-ELOOP) or blocking on a FIFO: only a
 * regular file is returned (-EBADFD otherwise). Returns the descriptor, in
 * blocking mode, or -errno. */
int kw_open_regular_at(int dirfd, const char *name);

/* Writes all len bytes to fd, retrying short writes and EINTR.
 * Returns 0 or -errno. */
int kw_write_all(int fd, const void *data, size_t len);

/* Writes data to path atomically: a temporary file in the same directory,
 * fsync, rename, fsync of the directory. mode is the new file's mode.
 * Returns 0 or -errno. */
int kw_write_file_atomic(const char *path, const void *data, size_t len, unsigned mode);

/* As kw_write_file_atomic without the fsyncs: whole or absent if this process
 * dies (the page cache outlives it), not across a power loss. For files that
 * must exist as soon as a request is answered, without a disk wait on the
 * caller's thread (kw_sync_file can follow elsewhere). */
int kw_write_file_replace(const char *path, const void *data, size_t len, unsigned mode);

/* fsyncs path (not through a symlink) and its folder. Returns 0 or -errno. */
int kw_sync_file(const char *path);

#endif
