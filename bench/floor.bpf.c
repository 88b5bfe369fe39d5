// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Control programs for bench_hooks and bench_lsm: the floors kwitness's own
 * programs are measured against, on the same hooks, in the same run.
 *   (a) floor_empty_*:  return "allow" and nothing else: the price of having
 *       a program on the hook at all (trampoline or cgroup array run).
 *       floor_gate_file_open adds one array read (a class gate that stays
 *       closed): the least a hook can do to learn no session wants it.
 *       floor_empty_file_free is (a) on file_free_security, the other hook
 *       an open()+close() crosses where kwitness has a program.
 *   (b) floor_record_*: only what recording a decision cannot avoid: find the
 *       task's session (cgroup id -> slot hash, slot -> session array), take a
 *       sequence number, find the session's ring buffer and reserve and submit
 *       one event of the same size as kwitness's event for that hook. No
 *       policy, no timestamp, no pid/uid/comm, no event fields.
 *   floor_steps_connect4: (b), then kwitness's other per-decision work added
 *       one piece at a time up to floor_steps (set by the benchmark between
 *       measurements), so the cost of each piece shows as a difference:
 *       1 boot-time stamp, 2 pid/tgid and uid, 3 comm, 4 the ring buffer
 *       query that batches wakeups (on one decision in 16, as kwitness),
 *       5 the LPM rule lookup and port scan, 6 the event's fields; 7 is 6
 *       with pid, uid and comm read from the current task (BTF loads)
 *       instead of three helper calls, as kwitness does; 8 is 7 with the coarse clock (bpf_ktime_get_coarse_ns, one
 *       tick's resolution) instead of boot time; 9 is 7 with the rule
 *       looked up in a hash instead of the LPM trie; 10 is 7 with the ring
 *       buffer queried on every decision, as kwitness did before; 11 is 7
 *       with the monotonic clock (bpf_ktime_get_ns, no suspend time).
 * Not part of the product: the maps here are the benchmark's own, filled by
 * the benchmark with its one session. */
#include "../bpf/base.bpf.h"
#include "kwitness/abi/net_match.h"

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

KW_SPARSE_MAP(BPF_MAP_TYPE_LPM_TRIE, 16, struct kw_net_key, struct kw_net_rules)
floor_net_rules SEC(".maps");

/* the same rule in a hash: the alternative to the trie for whole-address
 * rules, measured beside it (step 9) */
KW_SPARSE_MAP(BPF_MAP_TYPE_HASH, 16, struct kw_net_key, struct kw_net_rules)
floor_net_exact SEC(".maps");

__u32 floor_steps;

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

SEC("lsm/file_free_security")
int BPF_PROG(floor_empty_file_free, struct file *file)
{
	return 0;
}

/* One array value read before returning: what kwitness's class gate does
 * while no session governs the hook's class (floor_gate holds 0). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} floor_gate SEC(".maps");

SEC("lsm/file_open")
int BPF_PROG(floor_gate_file_open, struct file *file, int ret)
{
	__u32 zero = 0, *governed;

	if (ret)
		return ret;
	governed = bpf_map_lookup_elem(&floor_gate, &zero);
	if (governed && (*governed & KW_CLASS_FS))
		floor_record(sizeof(struct kw_ev_path));
	return 0;
}

SEC("lsm/file_open")
int BPF_PROG(floor_record_file_open, struct file *file, int ret)
{
	if (ret)
		return ret;
	floor_record(sizeof(struct kw_ev_path));
	return 0;
}

SEC("cgroup/connect4")
int floor_steps_connect4(struct bpf_sock_addr *ctx)
{
	__u64 cgid = bpf_get_current_cgroup_id();
	__u32 steps = floor_steps, *slot, k, a;
	struct kw_net_key key = {};
	struct kw_net_rules *rules;
	struct floor_session *s;
	struct kw_ev_net *e;
	__u16 rule = 0, port;
	int permit = 1;
	__u64 seq;
	void *rb;

	slot = bpf_map_lookup_elem(&floor_cgroups, &cgid);
	if (!slot)
		return 1;
	k = *slot;
	s = bpf_map_lookup_elem(&floor_sessions, &k);
	if (!s)
		return 1;
	port = bpf_ntohs((__u16)ctx->user_port);
	if (steps >= 5) {
		a = ctx->user_ip4;
		key.slot = k;
		key.op = KW_NET_CONNECT;
		key.family = 4;
		__builtin_memcpy(key.addr, &a, 4);
		key.prefixlen = KW_NET_KEY_FIXED_BITS + 32;
		/* one map per call site, so the verifier can inline each lookup */
		if (steps == 9)
			rules = bpf_map_lookup_elem(&floor_net_exact, &key);
		else
			rules = bpf_map_lookup_elem(&floor_net_rules, &key);
		permit = kw_net_eval(rules, port, &rule);
	}
	rb = bpf_map_lookup_elem(&floor_ringbufs, &k);
	if (!rb)
		return 1;
	e = bpf_ringbuf_reserve(rb, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&s->dropped, 1);
		return 1;
	}
	e->h.seq = seq = __sync_fetch_and_add(&s->next_seq, 1);
	if (steps == 8)
		e->h.ts_ns = bpf_ktime_get_coarse_ns();
	else if (steps == 11)
		e->h.ts_ns = bpf_ktime_get_ns();
	else if (steps >= 1)
		e->h.ts_ns = bpf_ktime_get_boot_ns();
	if (steps >= 7) {
		struct task_struct *t = bpf_get_current_task_btf();

		e->h.pid = t->tgid;
		e->h.uid = t->cred->uid.val;
		__builtin_memcpy(e->h.comm, t->comm, sizeof(e->h.comm));
	} else {
		if (steps >= 2) {
			e->h.pid = bpf_get_current_pid_tgid() >> 32;
			e->h.uid = (__u32)bpf_get_current_uid_gid();
		}
		if (steps >= 3)
			bpf_get_current_comm(e->h.comm, sizeof(e->h.comm));
	}
	/* kwitness looks at the ring buffer on one decision in 16 */
	if (steps >= 4 && (steps == 10 || !(seq & 15)))
		e->h.wake = bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) >= (1u << 21);
	if (steps >= 6) {
		e->h.cgroup_id = cgid;
		e->h.slot = k;
		e->h.generation = 1;
		e->h.kind = KW_EV_NET_CONNECT;
		e->h.rule = rule;
		e->h.decision = permit;
		e->h.enforced = 0;
		e->h.flags = 0;
		e->family = 4;
		e->proto = (__u8)ctx->protocol;
		e->port = port;
		e->sock_type = ctx->type;
		__builtin_memcpy(e->addr, key.addr, 16);
	}
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 1;
}

