/* SPDX-License-Identifier: Apache-2.0 */
/* The test packet bench_collector hands bench/producer.bpf.c: which session
 * slot to record into, and the cgroup id to put in its events. */
#ifndef KWITNESS_BENCH_PRODUCER_H
#define KWITNESS_BENCH_PRODUCER_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

struct bench_produce_arg {
	__u32 slot;
	__u32 pad;
	__u64 cgroup_id;
};

#endif
