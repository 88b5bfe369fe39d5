/* SPDX-License-Identifier: Apache-2.0 */
#ifndef KWITNESSD_WAKEUP_H
#define KWITNESSD_WAKEUP_H

#include <stddef.h>

/* Batched wakeups: the programs wake the loop only once a ring buffer holds
 * 1/KWD_WAKEUP_FRACTION of its size. For the rest the loop consumes the ring
 * buffers of sessions that had events in the last KWD_HOT_MS every
 * KWD_POLL_MS, and every open session's on the timer tick (which is also
 * when a quiet session's log lines are flushed). Idle sessions cost no
 * wakeups. Ring buffers below KWD_WAKEUP_MIN_RINGBUF keep a wakeup per event:
 * they hold too few events to wait for a batch. */
#define KWD_WAKEUP_FRACTION 8
#define KWD_WAKEUP_MIN_RINGBUF (64 * 1024)
#define KWD_POLL_MS 2
#define KWD_HOT_MS 50

/* kw_hooks_opts.wakeup_bytes for a ring buffer size (0: wake per event). */
static inline size_t kwd_wakeup_bytes(size_t ringbuf_size)
{
	return ringbuf_size >= KWD_WAKEUP_MIN_RINGBUF ? ringbuf_size / KWD_WAKEUP_FRACTION : 0;
}

#endif
