/* SPDX-License-Identifier: Apache-2.0 */
/* kwitnessd.conf loop_priority: the scheduling of the two threads that
 * empty the ring buffers: the loop, which reads them, and the I/O thread,
 * which writes what was read (its space is released only then). */
#ifndef KWITNESSD_LOOP_PRIORITY_H
#define KWITNESSD_LOOP_PRIORITY_H

#include <stddef.h>

struct kwd;

enum kwd_loop_priority {
	KWD_LOOP_NORMAL,   /* as the process (nice -10, main.c) (default) */
	KWD_LOOP_REALTIME, /* SCHED_RR at priority KWD_LOOP_RT_PRIORITY */
};
#define KWD_LOOP_RT_PRIORITY 1

/* "normal" or "realtime": 0, or -EINVAL. */
int kwd_loop_priority_parse(const char *v, unsigned *out);
const char *kwd_loop_priority_name(unsigned p);
/* Sets the calling thread's scheduling as configured (which: its name in
 * the log); a failure is logged and the thread goes on as it was. Threads
 * and processes it creates later start at the normal priority
 * (SCHED_RESET_ON_FORK). */
void kwd_loop_priority_apply(struct kwd *d, const char *which);

#endif
