/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* net.connect, net.send, net.bind (cgroup sock_addr hooks) and net.socket
 * (cgroup/sock_create). Return 1 lets the operation proceed, 0 refuses it
 * with EPERM. */
#ifndef KWITNESS_NET_BPF_H
#define KWITNESS_NET_BPF_H

#include "session.bpf.h"

#include "kwitness/abi/net_match.h"

static __always_inline int kw_net_hook(struct bpf_sock_addr *ctx, __u8 op, __u32 class_bit,
				       __u16 kind, int v6)
{
	struct kw_net_key key = {};
	struct kw_net_rules *rules;
	struct kw_ev_net *e;
	struct kw_ctx c;
	__u16 rule, port;
	int permit, verdict;

	if (!kw_session_find(&c, class_bit))
		return 1;

	key.slot = c.slot;
	key.op = op;
	if (v6) {
		__u32 a0 = ctx->user_ip6[0], a1 = ctx->user_ip6[1];
		__u32 a2 = ctx->user_ip6[2], a3 = ctx->user_ip6[3];

		if (a0 == 0 && a1 == 0 && a2 == bpf_htonl(0xffff)) {
			/* IPv4-mapped: evaluated as the IPv4 address it carries */
			key.family = 4;
			__builtin_memcpy(key.addr, &a3, 4);
		} else {
			key.family = 6;
			__builtin_memcpy(key.addr, &a0, 4);
			__builtin_memcpy(key.addr + 4, &a1, 4);
			__builtin_memcpy(key.addr + 8, &a2, 4);
			__builtin_memcpy(key.addr + 12, &a3, 4);
		}
	} else {
		__u32 a = ctx->user_ip4;

		key.family = 4;
		__builtin_memcpy(key.addr, &a, 4);
	}
	key.prefixlen = KW_NET_KEY_FIXED_BITS + (key.family == 4 ? 32 : 128);
	port = bpf_ntohs((__u16)ctx->user_port);

	rules = bpf_map_lookup_elem(&kw_net_rules, &key);
	permit = kw_net_eval(rules, port, &rule);

	e = kw_record_decision(&c, kind, permit, rule, sizeof(*e), &verdict);
	if (e) {
		e->family = key.family;
		e->proto = (__u8)ctx->protocol;
		e->port = port;
		e->sock_type = ctx->type;
		__builtin_memcpy(e->addr, key.addr, 16);
		kw_event_submit(e);
	}
	return verdict;
}

/* The sock_addr programs, IPv4 and IPv6, of one operation: hook "connect"
 * makes kw_connect4 (SEC "cgroup/connect4") and kw_connect6. */
#define KW_SOCK_ADDR_PROGS(hook, OP)                                                          \
	SEC("cgroup/" #hook "4")                                                              \
	int kw_##hook##4(struct bpf_sock_addr *ctx)                                           \
	{                                                                                     \
		return kw_net_hook(ctx, KW_NET_##OP, KW_CLASS_NET_##OP, KW_EV_NET_##OP, 0);   \
	}                                                                                     \
	SEC("cgroup/" #hook "6")                                                              \
	int kw_##hook##6(struct bpf_sock_addr *ctx)                                           \
	{                                                                                     \
		return kw_net_hook(ctx, KW_NET_##OP, KW_CLASS_NET_##OP, KW_EV_NET_##OP, 1);   \
	}

KW_SOCK_ADDR_PROGS(connect, CONNECT)
KW_SOCK_ADDR_PROGS(sendmsg, SEND)
KW_SOCK_ADDR_PROGS(bind, BIND)

/* Only inet and inet6 sockets reach this hook; other families are outside the
 * cgroup hook's reach (docs/policy.md). */
SEC("cgroup/sock_create")
int kw_sock_create(struct bpf_sock *sk)
{
	__u32 family = sk->family, type = sk->type, bit = 64;
	struct kw_ev_socket *e;
	int permit = 0, verdict;
	__u16 rule = KW_RULE_DEFAULT;
	struct kw_ctx c;

	if (!kw_session_find(&c, KW_CLASS_NET_SOCKET))
		return 1;
	if (family == AF_INET && type < 8)
		bit = type;
	else if (family == AF_INET6 && type < 8)
		bit = 8 + type;
	if (bit < 16 && (c.s->socket_allow >> bit) & 1) {
		permit = 1;
		/* keep the mask: the verifier needs the bound the compiler knows */
		asm volatile("" : "+r"(bit));
		rule = c.s->socket_rule[bit & 15];
	}

	e = kw_record_decision(&c, KW_EV_NET_SOCKET, permit, rule, sizeof(*e), &verdict);
	if (e) {
		e->family = family;
		e->type = type;
		e->protocol = sk->protocol;
		e->pad = 0;
		kw_event_submit(e);
	}
	return verdict;
}

#endif
