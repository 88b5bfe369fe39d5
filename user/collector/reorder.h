/* SPDX-License-Identifier: Apache-2.0 */
/* Per-session reordering by kernel sequence number. Two CPUs can take seq 5
 * and 6 and reserve ring buffer space in the other order, and a reservation
 * that failed leaves a number that never arrives (a drop). The window holds
 * early events until the gap before them is filled or declared dropped. */
#ifndef KWITNESS_COLLECTOR_REORDER_H
#define KWITNESS_COLLECTOR_REORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest window: further ahead than this, the caller must give up gaps. */
#define KW_REORDER_MAX (1u << 20)

typedef int (*kw_reorder_emit_fn)(void *ctx, const void *data, size_t len);

struct kw_reorder_slot {
	uint64_t seq;
	void *data; /* NULL: empty */
	uint32_t len;
};

struct kw_reorder {
	uint64_t next;       /* the sequence number to emit next */
	struct kw_reorder_slot *win;
	size_t cap;          /* power of two, 0 until the first early event */
	size_t pending;      /* events held */
	uint64_t arrived;    /* distinct events seen */
	uint64_t late;       /* arrived after their number was given up (still emitted) */
	uint64_t duplicates; /* a sequence number seen twice (ignored) */
	kw_reorder_emit_fn emit;
	void *ctx;
	int err;             /* first error returned by emit */
};

void kw_reorder_init(struct kw_reorder *r, kw_reorder_emit_fn emit, void *ctx);
/* One event. Returns 0, -ENOMEM, or -ENOSPC when seq is too far ahead (the
 * caller gives up gaps with kw_reorder_skip and tries again). */
int kw_reorder_push(struct kw_reorder *r, uint64_t seq, const void *data, size_t len);
/* Gives up the missing number at next (a drop) and emits what follows it.
 * Returns how many numbers were given up (0 when nothing is held). */
uint64_t kw_reorder_skip(struct kw_reorder *r);
/* Gives up missing numbers from next on for as long as lost(ctx, seq) says
 * the kernel dropped them, emitting what follows each. Returns how many. */
typedef bool (*kw_reorder_lost_fn)(void *ctx, uint64_t seq);
uint64_t kw_reorder_skip_lost(struct kw_reorder *r, kw_reorder_lost_fn lost, void *ctx);
/* Gives up every gap: emits everything held. Returns numbers given up. */
uint64_t kw_reorder_flush(struct kw_reorder *r);
/* Gives up every number below seq: emits what is held, then moves next to seq
 * (for an event too far ahead of the window). Returns numbers given up. */
uint64_t kw_reorder_jump(struct kw_reorder *r, uint64_t seq);
void kw_reorder_free(struct kw_reorder *r);

#endif
