/* SPDX-License-Identifier: Apache-2.0 */
/* One record's log verified on a thread of its own, ahead of the database
 * writer. The verifier (verify_record, its log check) and the reading of
 * each canonical line into its columns run on the verifying thread; every
 * entry is put in a bounded ring (PIPE_SLOTS entries, each with a copy of
 * its line) and the calling thread, the only one that uses the database,
 * takes them in order and stores them. The verdict is known once the
 * verifying thread ends; the record's transaction is kept or rolled back
 * after it, as before: nothing of a record is committed before it has
 * verified. */
#ifndef KWITNESS_ESTATE_INGEST_PIPE_H
#define KWITNESS_ESTATE_INGEST_PIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "estate/entry.h"

struct estate_pipe;

struct estate_pipe *estate_pipe_new(void);
void estate_pipe_free(struct estate_pipe *p);

/* Runs verify(arg) on the pipe's verifying thread (started by the first
 * call, ended by estate_pipe_free), giving every entry it puts to
 * store(ctx, e) on this thread, in order. A non-zero store stops the
 * verifying side (its next estate_pipe_slot returns NULL); the rest of
 * the ring is dropped. Returns verify's return value, or -1 when the
 * thread cannot start (errno-style failure in *err_no). *store_rc: the
 * first non-zero store return, or 0. */
int estate_pipe_run(struct estate_pipe *p, int (*verify)(void *arg), void *arg,
		    int (*store)(void *ctx, struct estate_entry *e), void *ctx, int *store_rc);

/* The verifying side: the next slot with a copy of the line read into its
 * columns (estate_entry_parse_canonical; a line that is not an object
 * with a tool gets tool "" and its text), or NULL when the writer stopped
 * or memory ran out (*oom). Fill-in done, estate_pipe_push hands it over. */
struct estate_entry *estate_pipe_slot(struct estate_pipe *p, uint64_t line, const char *text,
				      size_t len, bool *oom);
void estate_pipe_push(struct estate_pipe *p);

#endif
