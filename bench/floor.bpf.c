// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Control programs for bench_hooks and bench_lsm: the floors kwitness's own
 * programs are measured against, on the same hooks, in the same run.
 *   (a) floor_empty_*:  return "allow" and nothing else: the price of having
 *       a program on the hook at all (trampoline or cgroup array run).
 *   (b) floor_record_*: only what recording a decision cannot avoid: find the
 *       task's session (cgroup id -> slot hash, slot -> session array), take a
 *       sequence number, find the session's ring buffer and reserve and submit
 *       one event of the same size as kwitness's event for that hook. No
 *       policy, no timestamp, no pid/uid/comm, no event fields.
 * Not part of the product: the maps here are the benchmark's own, filled by
 * the benchmark with its one session. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "kwitness/abi/event.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct floor_session {
	__u64 next_seq;
	__u64 dropped;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u64);
	__type(value, __u32);
} floor_cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct floor_session);
} floor_sessions SEC(".maps");

struct floor_ringbuf_tmpl {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 4);
	__type(key, __u32);
	__array(values, struct floor_ringbuf_tmpl);
} floor_ringbufs SEC(".maps");

/* 1 when the current task's cgroup belongs to the benchmark's session. */
static __always_inline int floor_record(__u64 size)
{
	__u64 cgid = bpf_get_current_cgroup_id();
	struct floor_session *s;
	__u32 *slot, k;
	__u64 *e;
	void *rb;

	slot = bpf_map_lookup_elem(&floor_cgroups, &cgid);
	if (!slot)
		return 0;
	k = *slot;
	s = bpf_map_lookup_elem(&floor_sessions, &k);
	if (!s)
		return 0;
	rb = bpf_map_lookup_elem(&floor_ringbufs, &k);
	if (!rb)
		return 0;
	e = bpf_ringbuf_reserve(rb, size, 0);
	if (!e) {
		__sync_fetch_and_add(&s->dropped, 1);
		return 1;
	}
	*e = __sync_fetch_and_add(&s->next_seq, 1);
	/* the consumer polls, as kwitnessd's does under load */
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 1;
}

SEC("cgroup/connect4")
int floor_empty_connect4(struct bpf_sock_addr *ctx)
{
	return 1;
}

SEC("cgroup/connect4")
int floor_record_connect4(struct bpf_sock_addr *ctx)
{
	floor_record(sizeof(struct kw_ev_net));
	return 1;
}

SEC("lsm/file_open")
int BPF_PROG(floor_empty_file_open, struct file *file, int ret)
{
	return ret;
}

SEC("lsm/file_open")
int BPF_PROG(floor_record_file_open, struct file *file, int ret)
{
	if (ret)
		return ret;
	floor_record(sizeof(struct kw_ev_path));
	return 0;
}
