/* SPDX-License-Identifier: Apache-2.0 */
/* Per-session reordering by kernel sequence number. Two CPUs can take seq 5
 * and 6 and reserve ring buffer space in the other order, and a reservation
 * that failed leaves a number that never arrives (a drop). The window holds
 * early events until the gap before them is filled or declared dropped. */
#ifndef KWITNESSD_REORDER_H
#define KWITNESSD_REORDER_H

#include <stddef.h>
#include <stdint.h>

/* Largest window: further ahead than this, the caller must give up gaps. */
#define KWD_REORDER_MAX (1u << 20)

typedef int (*kwd_emit_fn)(void *ctx, const void *data, size_t len);

struct kwd_reorder_slot {
	uint64_t seq;
	void *data; /* NULL: empty */
	uint32_t len;
};

struct kwd_reorder {
	uint64_t next;       /* the sequence number to emit next */
	struct kwd_reorder_slot *win;
	size_t cap;          /* power of two, 0 until the first early event */
	size_t pending;      /* events held */
	uint64_t arrived;    /* distinct events seen */
	uint64_t late;       /* arrived after their number was given up (still emitted) */
	uint64_t duplicates; /* a sequence number seen twice (ignored) */
	kwd_emit_fn emit;
	void *ctx;
	int err;             /* first error returned by emit */
};

void kwd_reorder_init(struct kwd_reorder *r, kwd_emit_fn emit, void *ctx);
/* One event. Returns 0, -ENOMEM, or -ENOSPC when seq is too far ahead (the
 * caller gives up gaps with kwd_reorder_skip and tries again). */
int kwd_reorder_push(struct kwd_reorder *r, uint64_t seq, const void *data, size_t len);
/* Gives up the missing number at next (a drop) and emits what follows it.
 * Returns how many numbers were given up (0 when nothing is held). */
uint64_t kwd_reorder_skip(struct kwd_reorder *r);
/* Gives up every gap: emits everything held. Returns numbers given up. */
uint64_t kwd_reorder_flush(struct kwd_reorder *r);
/* Gives up every number below seq: emits what is held, then moves next to seq
 * (for an event too far ahead of the window). Returns numbers given up. */
uint64_t kwd_reorder_jump(struct kwd_reorder *r, uint64_t seq);
void kwd_reorder_free(struct kwd_reorder *r);

#endif
