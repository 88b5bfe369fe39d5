/* SPDX-License-Identifier: Apache-2.0 */
/* Reordering window, see reorder.h. In-order events (the common case) are
 * emitted straight from the ring buffer without a copy. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collector/reorder.h"

void kw_reorder_init(struct kw_reorder *r, kw_reorder_emit_fn emit, void *ctx)
{
	memset(r, 0, sizeof(*r));
	r->emit = emit;
	r->ctx = ctx;
}

static void emit_one(struct kw_reorder *r, const void *data, size_t len)
{
	int e = r->emit(r->ctx, data, len);

	if (e && !r->err)
		r->err = e;
}

/* Emits held events from next on while they are contiguous. */
static void drain(struct kw_reorder *r)
{
	while (r->pending) {
		struct kw_reorder_slot *s = &r->win[r->next & (r->cap - 1)];

		if (!s->data || s->seq != r->next)
			return;
		emit_one(r, s->data, s->len);
		free(s->data);
		s->data = NULL;
		r->pending--;
		r->next++;
	}
}

static int grow(struct kw_reorder *r, uint64_t distance)
{
	size_t cap = r->cap ? r->cap : 64;
	struct kw_reorder_slot *win;

	while (cap <= distance)
		cap *= 2;
	if (cap > KW_REORDER_MAX)
		return -ENOSPC;
	win = calloc(cap, sizeof(*win));
	if (!win)
		return -ENOMEM;
	for (size_t i = 0; i < r->cap; i++)
		if (r->win[i].data)
			win[r->win[i].seq & (cap - 1)] = r->win[i];
	free(r->win);
	r->win = win;
	r->cap = cap;
	return 0;
}

int kw_reorder_push(struct kw_reorder *r, uint64_t seq, const void *data, size_t len)
{
	struct kw_reorder_slot *s;
	uint64_t distance;
	int e;

	if (seq == r->next) {
		r->arrived++;
		emit_one(r, data, len);
		r->next++;
		drain(r);
		return 0;
	}
	if (seq < r->next) {
		/* Its number was given up as dropped: keep it anyway, nothing is
		 * thrown away; the trailer counts it. */
		r->arrived++;
		r->late++;
		emit_one(r, data, len);
		return 0;
	}
	distance = seq - r->next;
	if (distance >= r->cap) {
		e = grow(r, distance);
		if (e)
			return e;
	}
	s = &r->win[seq & (r->cap - 1)];
	if (s->data) {
		r->duplicates++;
		return 0;
	}
	s->data = malloc(len ? len : 1);
	if (!s->data)
		return -ENOMEM;
	memcpy(s->data, data, len);
	s->len = (uint32_t)len;
	s->seq = seq;
	r->pending++;
	r->arrived++;
	return 0;
}

uint64_t kw_reorder_skip(struct kw_reorder *r)
{
	uint64_t n = 0;

	if (!r->pending)
		return 0;
	while (r->pending) {
		struct kw_reorder_slot *s = &r->win[r->next & (r->cap - 1)];

		if (s->data && s->seq == r->next)
			break;
		r->next++;
		n++;
	}
	drain(r);
	return n;
}

uint64_t kw_reorder_skip_lost(struct kw_reorder *r, kw_reorder_lost_fn lost, void *ctx)
{
	uint64_t n = 0;

	/* held events keep a gap at next (drain emits up to the first one) */
	while (r->pending && lost(ctx, r->next)) {
		r->next++;
		n++;
		drain(r);
	}
	return n;
}

uint64_t kw_reorder_flush(struct kw_reorder *r)
{
	uint64_t n = 0;

	while (r->pending)
		n += kw_reorder_skip(r);
	return n;
}

uint64_t kw_reorder_jump(struct kw_reorder *r, uint64_t seq)
{
	uint64_t n = kw_reorder_flush(r);

	if (seq > r->next) {
		n += seq - r->next;
		r->next = seq;
	}
	return n;
}

void kw_reorder_free(struct kw_reorder *r)
{
	for (size_t i = 0; i < r->cap; i++)
		free(r->win[i].data);
	free(r->win);
	r->win = NULL;
	r->cap = 0;
	r->pending = 0;
}
