// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* bench_collector's in-kernel decision source: on a 2-core machine no set of
 * processes can make 8 sessions decide 200,000 times a second each (a hooked
 * syscall costs microseconds), so the collector's side is measured with
 * decisions made here instead. Each run of bench_produce records one
 * net.connect permit, through kwitness's own recording code (session.bpf.h:
 * sequence number, reservation, header, wakeup batching), into the ring
 * buffer of the session slot the packet names. bench_collector runs it with
 * BPF_PROG_TEST_RUN (repeat = a batch), on the maps of the kwitnessd it
 * started, whose sessions it opened for this. Not part of the product: the
 * decisions it records were never made by any task. */
#include "../bpf/session.bpf.h"
#include "kwitness/abi/name_match.h"
#include "producer.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";


SEC("tc")
int bench_produce(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct bench_produce_arg *a = data;
	struct kw_ev_net *e;
	struct kw_ctx c;
	int verdict;

	if ((void *)(a + 1) > end)
		return 0;
	c.slot = a->slot;
	c.cgroup_id = a->cgroup_id;
	c.s = bpf_map_lookup_elem(&kw_sessions, &c.slot);
	if (!c.s || !(c.s->classes & KW_CLASS_NET_CONNECT))
		return 0;
	/* rule 0: the benchmark policy's connect[0], 127.0.0.1/32:9 */
	e = kw_record_decision(&c, KW_EV_NET_CONNECT, 1, 0, sizeof(*e), &verdict);
	if (!e)
		return 0;
	e->family = 4;
	e->proto = IPPROTO_UDP;
	e->port = 9;
	e->sock_type = SOCK_DGRAM;
	__builtin_memset(e->addr, 0, sizeof(e->addr));
	e->addr[0] = 127;
	e->addr[3] = 1;
	e->via_seq = KW_NO_SEQ;
	kw_event_submit(e);
	return 0;
}
