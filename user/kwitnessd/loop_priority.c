/* SPDX-License-Identifier: Apache-2.0 */
/* The loop thread reads every session's ring buffer and the I/O thread
 * writes what it read; the space is released after the write. When either
 * waits for a CPU longer than a ring buffer holds, decisions are dropped
 * (and marked). On a busy host a higher priority for these two threads keeps
 * them running; the signer, the exporters and the metrics thread stay at the
 * priority kwitnessd was started with. */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include "kwd.h"
#include "loop_priority.h"
#include "util.h"

static const char *const names[] = {
	[KWD_LOOP_NORMAL] = "normal",
	[KWD_LOOP_REALTIME] = "realtime",
};

int kwd_loop_priority_parse(const char *v, unsigned *out)
{
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(v, names[i])) {
			*out = i;
			return 0;
		}
	return -EINVAL;
}

const char *kwd_loop_priority_name(unsigned p)
{
	return p < sizeof(names) / sizeof(names[0]) ? names[p] : "?";
}

void kwd_loop_priority_apply(struct kwd *d, const char *which)
{
	unsigned p = d->cfg.loop_priority;
	struct sched_param sp = { .sched_priority = KWD_LOOP_RT_PRIORITY };

	/* normal: the process's nice -10 (main.c), which bounds no wake-up delay */
	if (p != KWD_LOOP_REALTIME)
		return;
	/* pid 0: the calling thread only, not the process. */
	if (sched_setscheduler(0, SCHED_RR | SCHED_RESET_ON_FORK, &sp) < 0) {
		kwd_log(d, LOG_WARNING, "loop_priority = %s not set (%s): the %s runs at the "
			"priority kwitnessd was started with", names[p], strerror(errno), which);
		return;
	}
	kwd_log(d, LOG_NOTICE, "%s %d: loop_priority = %s (SCHED_RR priority %d)", which,
		(int)gettid(), names[p], KWD_LOOP_RT_PRIORITY);
}
