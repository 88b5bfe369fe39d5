// SPDX-License-Identifier: Apache-2.0
/* Decision numbers taken in user space (egress by name: the DNS proxy's
 * decisions), and the bitmap of numbers whose events were dropped. Both live
 * in mapped arrays (kw_sessions, kw_lost) the programs share. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "state.h"

int kw_hooks_take_seq(struct kw_hooks *h, uint32_t slot, bool permit, uint64_t *seq)
{
	struct kw_session *s;

	if (slot >= KW_MAX_SESSIONS || !h->sessions_mm)
		return -EINVAL;
	s = &h->sessions_mm[slot];
	/* the same counting as kw_record_decision (bpf/session.bpf.h) */
	if (!permit) {
		__atomic_fetch_add(&s->denials, 1, __ATOMIC_RELAXED);
	} else if (__atomic_load_n(&s->record, __ATOMIC_RELAXED) == KW_RECORD_DENY) {
		__atomic_fetch_add(&s->unrecorded, 1, __ATOMIC_RELAXED);
		return -ENOENT;
	}
	*seq = __atomic_fetch_add(&s->next_seq, 1, __ATOMIC_SEQ_CST);
	return 0;
}

int kw_hooks_take_note_seq(struct kw_hooks *h, uint32_t slot, uint64_t *seq)
{
	if (slot >= KW_MAX_SESSIONS || !h->sessions_mm)
		return -EINVAL;
	*seq = __atomic_fetch_add(&h->sessions_mm[slot].next_seq, 1, __ATOMIC_SEQ_CST);
	return 0;
}

/* kw_lost's word and bit for seq. */
static __u64 *lost_word(struct kw_hooks *h, uint32_t slot, uint64_t seq, __u64 *bit)
{
	*bit = 1ULL << (seq & 63);
	return &h->lost_mm[slot].bits[(seq / 64) % (KW_LOST_BITS / 64)];
}

bool kw_hooks_seq_lost(struct kw_hooks *h, uint32_t slot, uint64_t seq)
{
	__u64 bit, *w;

	if (slot >= KW_MAX_SESSIONS || !h->lost_mm)
		return false;
	w = lost_word(h, slot, seq, &bit);
	if (!(__atomic_load_n(w, __ATOMIC_ACQUIRE) & bit))
		return false;
	/* The bit is seq's own unless a number KW_LOST_BITS or more above it
	 * was handed out (and dropped) before the bit was read: next_seq, read
	 * after it, would show that number. */
	if (__atomic_load_n(&h->sessions_mm[slot].next_seq, __ATOMIC_ACQUIRE) >
	    seq + KW_LOST_BITS)
		return false;
	__atomic_fetch_and(w, ~bit, __ATOMIC_RELAXED);
	return true;
}

void kw_hooks_lost_forget(struct kw_hooks *h, uint32_t slot, uint64_t from, uint64_t to)
{
	__u64 bit, *w;

	if (slot >= KW_MAX_SESSIONS || !h->lost_mm)
		return;
	if (to - from > KW_LOST_BITS)
		from = to - KW_LOST_BITS;
	for (uint64_t seq = from; seq < to; seq++) {
		w = lost_word(h, slot, seq, &bit);
		if (__atomic_load_n(w, __ATOMIC_RELAXED) & bit)
			__atomic_fetch_and(w, ~bit, __ATOMIC_RELAXED);
	}
}

