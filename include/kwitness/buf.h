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

/* Reads a whole file ("-" is stdin) into out, refusing anything larger than max
 * bytes. Returns 0, -EFBIG when the file is larger than max, or -errno. */
int kw_read_file(const char *path, size_t max, struct kw_buf *out);
/* Reads fd to its end into buf (cap bytes, the last kept for a NUL), never
 * growing or copying it (key material stays where the caller put it).
 * 0 with *len, -EFBIG when it does not fit, -errno. */
int kw_read_fd_fixed(int fd, char *buf, size_t cap, size_t *len);

/* Writes all len bytes to fd, retrying short writes and EINTR.
 * Returns 0 or -errno. */
int kw_write_all(int fd, const void *data, size_t len);

/* Writes data to path atomically: a temporary file in the same directory,
 * fsync, rename, fsync of the directory. mode is the new file's mode.
 * Returns 0 or -errno. */
int kw_write_file_atomic(const char *path, const void *data, size_t len, unsigned mode);

#endif
