/* SPDX-License-Identifier: Apache-2.0 */
/* The writer of a tlog-tiles log directory: appends entries, writes the
 * tiles, the entry bundles and a checkpoint signed by the log key, each file
 * atomically, the checkpoint last; recovers a torn append when it opens.
 *
 *   DIR/checkpoint                the signed checkpoint (with cosignatures)
 *   DIR/tile/<L>/<N>[.p/<W>]      hash tiles
 *   DIR/tile/entries/<N>[.p/<W>]  entry bundles
 *   DIR/.kwitness/lock            the writers' lock (flock)
 *   DIR/.kwitness/pending         the size an append in progress aims at
 */
#ifndef KWITNESS_TLOG_LOG_H
#define KWITNESS_TLOG_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "tlog/note.h"

struct tlog_log;

/* Creates DIR (mode 0755, may exist but must hold no checkpoint) and its
 * empty-tree checkpoint signed by key, whose name is the log's origin. */
int tlog_log_create(const char *dir, const struct tlog_key *key);
/* Opens DIR for appending under an exclusive lock: checks the checkpoint
 * against key, undoes a torn append, reloads the right edge of the tree and
 * checks it hashes to the checkpoint's root (-EBADMSG when not). key is
 * borrowed for the life of the handle. */
int tlog_log_open(const char *dir, const struct tlog_key *key, struct tlog_log **out);
/* Appends n entries (each at most 65535 bytes) and publishes a checkpoint
 * for the new size. *first gets the first new index. On failure nothing is
 * published and the next open recovers. */
int tlog_log_append(struct tlog_log *l, const void *const *entries, const size_t *lens,
		    size_t n, uint64_t *first);
/* Adds signature lines (cosignatures) to the current checkpoint when its
 * text is still `text` (-ESTALE when the log moved on). */
int tlog_log_add_signatures(struct tlog_log *l, const char *text, size_t text_len,
			    const char *lines, size_t lines_len);
uint64_t tlog_log_size(const struct tlog_log *l);
/* The current signed checkpoint (note text and signatures). */
const struct kw_buf *tlog_log_checkpoint(const struct tlog_log *l);
int tlog_log_dirfd(const struct tlog_log *l);
void tlog_log_close(struct tlog_log *l);

/* Reads and parses DIR/checkpoint (dirfd) into buf, note and cp. */
int tlog_read_checkpoint(int dirfd, struct kw_buf *buf, struct tlog_note *note,
			 struct tlog_checkpoint *cp);

#endif
