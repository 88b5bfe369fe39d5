/* SPDX-License-Identifier: Apache-2.0 */
/* A whole input file without the copy: a regular file is mapped (private,
 * read-only, its pages populated at once) instead of read into freshly
 * allocated memory, whose page faults and zeroing cost more than the read
 * on a VM. Anything else (a pipe, stdin from a terminal, a file the kernel
 * cannot map) is read as kw_read_fd does.
 *
 * A mapped file that is cut short while mapped (another process truncates
 * it) makes reads past its new end fault with SIGBUS. Code that reads a
 * mapping runs under kw_mapped_guard(), which turns that fault into an
 * error instead of a crash. */
#ifndef KWITNESS_LIB_MAPPED_H
#define KWITNESS_LIB_MAPPED_H

#include <stddef.h>

#include "lib/buf.h"

struct kw_mapped {
	const char *data; /* len bytes; not NUL-terminated when mapped */
	size_t len;
	void *map;        /* the mapping, or NULL when read into buf */
	size_t map_len;
	struct kw_buf buf;
};

/* Maps or reads path ("-": standard input) refusing more than max bytes.
 * 0, -EFBIG, or -errno. Release with kw_mapped_free (also after a failure). */
int kw_mapped_open(const char *path, size_t max, struct kw_mapped *m);
/* The same for an open descriptor (not closed). */
int kw_mapped_fd(int fd, size_t max, struct kw_mapped *m);
void kw_mapped_free(struct kw_mapped *m);

/* Runs fn(ctx) and returns what it returns, or -ESTALE when m's file
 * shrank while fn read it (fn is then abandoned where it faulted: memory it
 * allocated is lost, so use this where the caller reports and exits or the
 * loss is bounded). Not nestable within one thread. */
int kw_mapped_guard(const struct kw_mapped *m, int (*fn)(void *ctx), void *ctx);

#endif
