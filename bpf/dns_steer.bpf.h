/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Egress by name, kernel side (docs/policy.md, "Host names"). For a session
 * whose policy names hosts (class net.dns):
 *  - every DNS packet (UDP or TCP, port 53, to any address) is steered to the
 *    session's resolver in kwitnessd: connect4/6 and sendmsg4/6 rewrite the
 *    destination, and remember the one asked for in the socket's storage;
 *  - recvmsg4/6 give the answer the source the client asked, so a stub
 *    resolver that checks where its answer came from accepts it;
 *  - a destination no CIDR rule matches is checked against the addresses the
 *    session's DNS answers opened (kw_name_allow), which only kwitnessd
 *    writes: a sandbox opens an address only by asking for an allowed name.
 * Layouts and the evaluation: include/kwitness/abi/name_match.h. */
#ifndef KWITNESS_DNS_STEER_BPF_H
#define KWITNESS_DNS_STEER_BPF_H

#include "base.bpf.h"
#include "maps.bpf.h"
#include "session.bpf.h"
#include "resolver_guard.bpf.h"
#include "kwitness/abi/name_match.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KW_MAX_SESSIONS);
	__type(key, __u32);
	__type(value, struct kw_dns_steer);
} kw_dns_steer SEC(".maps");

/* resolver port (host order) -> slot, for every session's four sockets */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KW_MAX_SESSIONS * 4);
	__type(key, __u32);
	__type(value, __u32);
} kw_dns_ports SEC(".maps");

KW_SPARSE_MAP(BPF_MAP_TYPE_HASH, KW_NAME_ALLOW_MAX, struct kw_name_key, struct kw_name_allow)
kw_name_allow SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct kw_dns_orig);
} kw_dns_orig SEC(".maps");

#define KW_LOOPBACK4 0x7f000001

/* 1: the destination was DNS and now goes to the session's resolver (the
 * operation proceeds; the resolver records the question). -1: refuse it
 * (another session's resolver, or DNS that cannot be steered). 0: not DNS,
 * decide it by the rules. */
static __always_inline int kw_dns_steer_addr(struct bpf_sock_addr *ctx, struct kw_ctx *c, int v6)
{
	struct kw_dns_steer *st;
	struct kw_dns_orig *o;
	__u32 a0 = 0, a1 = 0, a2 = 0, a3 = 0, port, key, *owner, proto, family;
	int mapped = 0, lo;
	__u16 to;

	port = bpf_ntohs((__u16)ctx->user_port);
	if (v6) {
		a0 = ctx->user_ip6[0];
		a1 = ctx->user_ip6[1];
		a2 = ctx->user_ip6[2];
		a3 = ctx->user_ip6[3];
		mapped = a0 == 0 && a1 == 0 && a2 == bpf_htonl(0xffff);
		lo = mapped ? a3 == bpf_htonl(KW_LOOPBACK4) :
			      a0 == 0 && a1 == 0 && a2 == 0 && a3 == bpf_htonl(1);
	} else {
		lo = ctx->user_ip4 == bpf_htonl(KW_LOOPBACK4);
	}
	proto = ctx->type == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP;
	family = v6 && !mapped ? 6 : 4;
	if (lo) {
		key = port;
		owner = bpf_map_lookup_elem(&kw_dns_ports, &key);
		/* another session's resolver is not this sandbox's to ask */
		if (owner && *owner != c->slot)
			return -1;
		/* its own, asked directly: only while kwitnessd holds the port */
		if (owner)
			return kw_resolver_listening(family, proto, (__u16)port) ? 0 : -1;
	}
	if (port != 53)
		return 0;
	st = bpf_map_lookup_elem(&kw_dns_steer, &c->slot);
	if (!st || st->generation != c->s->generation)
		return -1; /* names in the policy, no resolver: DNS fails closed */
	if (ctx->type == SOCK_STREAM)
		to = v6 && !mapped ? st->tcp6 : st->tcp4;
	else if (ctx->type == SOCK_DGRAM)
		to = v6 && !mapped ? st->udp6 : st->udp4;
	else
		return -1;
	/* kwitnessd down: its port may be anyone's now, DNS fails closed */
	if (!to || !ctx->sk || !kw_resolver_listening(family, proto, to))
		return -1;
	o = bpf_sk_storage_get(&kw_dns_orig, ctx->sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!o)
		return -1;
	o->port = bpf_htons(53);
	o->v4mapped = mapped;
	if (v6 && !mapped) {
		o->family = 6;
		o->addr[0] = a0;
		o->addr[1] = a1;
		o->addr[2] = a2;
		o->addr[3] = a3;
		ctx->user_ip6[0] = 0;
		ctx->user_ip6[1] = 0;
		ctx->user_ip6[2] = 0;
		ctx->user_ip6[3] = bpf_htonl(1);
	} else if (v6) {
		o->family = 4;
		o->addr[0] = a3;
		ctx->user_ip6[3] = bpf_htonl(KW_LOOPBACK4);
	} else {
		o->family = 4;
		o->addr[0] = ctx->user_ip4;
		ctx->user_ip4 = bpf_htonl(KW_LOOPBACK4);
	}
	ctx->user_port = bpf_htons(to);
	return 1;
}

/* A destination no rule permits may still be one a DNS answer opened.
 * Returns 1 with *rule and *via when it is, for this port, now. */
static __always_inline int kw_name_permits(struct kw_ctx *c, __u8 op, __u8 family,
					   const __u8 addr[16], __u16 port, __u16 *rule, __u64 *via)
{
	struct kw_name_key k = {};

	k.slot = c->slot;
	k.op = op;
	k.family = family;
	__builtin_memcpy(k.addr, addr, 16);
	return kw_name_eval(bpf_map_lookup_elem(&kw_name_allow, &k), c->s->generation, port,
			    bpf_ktime_get_boot_ns(), rule, via);
}

/* The answer's source, as the client asked: only on a socket steered
 * before, and only for what comes from a resolver's port. */
static __always_inline void kw_dns_restore(struct bpf_sock_addr *ctx, int v6)
{
	struct kw_dns_orig *o;
	__u32 key, lo;

	if (!ctx->sk)
		return;
	o = bpf_sk_storage_get(&kw_dns_orig, ctx->sk, 0, 0);
	if (!o || !o->family)
		return;
	if (v6)
		lo = (ctx->user_ip6[0] == 0 && ctx->user_ip6[1] == 0 &&
		      ((ctx->user_ip6[2] == 0 && ctx->user_ip6[3] == bpf_htonl(1)) ||
		       (ctx->user_ip6[2] == bpf_htonl(0xffff) &&
			ctx->user_ip6[3] == bpf_htonl(KW_LOOPBACK4))));
	else
		lo = ctx->user_ip4 == bpf_htonl(KW_LOOPBACK4);
	key = bpf_ntohs((__u16)ctx->user_port);
	if (!lo || !bpf_map_lookup_elem(&kw_dns_ports, &key))
		return;
	if (!v6) {
		ctx->user_ip4 = o->addr[0];
	} else if (o->family == 4) {
		ctx->user_ip6[0] = 0;
		ctx->user_ip6[1] = 0;
		ctx->user_ip6[2] = bpf_htonl(0xffff);
		ctx->user_ip6[3] = o->addr[0];
	} else {
		ctx->user_ip6[0] = o->addr[0];
		ctx->user_ip6[1] = o->addr[1];
		ctx->user_ip6[2] = o->addr[2];
		ctx->user_ip6[3] = o->addr[3];
	}
	ctx->user_port = o->port;
}

SEC("cgroup/recvmsg4")
int kw_recvmsg4(struct bpf_sock_addr *ctx)
{
	kw_dns_restore(ctx, 0);
	return 1;
}

SEC("cgroup/recvmsg6")
int kw_recvmsg6(struct bpf_sock_addr *ctx)
{
	kw_dns_restore(ctx, 1);
	return 1;
}

#endif
