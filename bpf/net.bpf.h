/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* net.connect, net.send, net.bind (cgroup sock_addr hooks) and net.socket
 * (cgroup/sock_create, and lsm/socket_create for packet sockets). A cgroup
 * program's 1 lets the operation proceed, 0 refuses it with EPERM. */
#ifndef KWITNESS_NET_BPF_H
#define KWITNESS_NET_BPF_H

#include "base.bpf.h"
#include "maps.bpf.h"
#include "session.bpf.h"
#include "dns_steer.bpf.h"
#include "resolver_guard.bpf.h"
#include "kwitness/abi/net_match.h"

/* Network rules: (slot, op, family, address prefix) -> port rules. */
KW_SPARSE_MAP(BPF_MAP_TYPE_LPM_TRIE, 65536, struct kw_net_key, struct kw_net_rules)
kw_net_rules SEC(".maps");

/* ctx's destination as a rule key of op (IPv4-mapped: the IPv4 address). */
static __always_inline void kw_net_key_of(struct bpf_sock_addr *ctx, __u8 op, int v6,
					  struct kw_net_key *key)
{
	key->op = op;
	if (v6) {
		__u32 a0 = ctx->user_ip6[0], a1 = ctx->user_ip6[1];
		__u32 a2 = ctx->user_ip6[2], a3 = ctx->user_ip6[3];

		if (a0 == 0 && a1 == 0 && a2 == bpf_htonl(0xffff)) {
			/* IPv4-mapped: evaluated as the IPv4 address it carries */
			key->family = 4;
			__builtin_memcpy(key->addr, &a3, 4);
		} else {
			key->family = 6;
			__builtin_memcpy(key->addr, &a0, 4);
			__builtin_memcpy(key->addr + 4, &a1, 4);
			__builtin_memcpy(key->addr + 8, &a2, 4);
			__builtin_memcpy(key->addr + 12, &a3, 4);
		}
	} else {
		__u32 a = ctx->user_ip4;

		key->family = 4;
		__builtin_memcpy(key->addr, &a, 4);
	}
	key->prefixlen = KW_NET_KEY_FIXED_BITS + (key->family == 4 ? 32 : 128);
}

/* Records a decision on ctx's address; its verdict. forced: refused
 * whatever the mode (the resolver guard). */
static __always_inline int kw_net_record(struct bpf_sock_addr *ctx, struct kw_ctx *c, __u16 kind,
					 const struct kw_net_key *key, int permit, __u16 rule,
					 __u64 via, int named, int forced)
{
	struct kw_ev_net *e;
	int verdict;

	e = kw_record_decision(c, kind, permit, rule, sizeof(*e), &verdict);
	if (e) {
		e->family = key->family;
		e->proto = (__u8)ctx->protocol;
		e->port = bpf_ntohs((__u16)ctx->user_port);
		e->sock_type = ctx->type;
		__builtin_memcpy(e->addr, key->addr, 16);
		e->via_seq = via;
		if (named && via != KW_NO_SEQ)
			e->h.flags |= KW_EVF_VIA;
		if (forced)
			e->h.enforced = 1;
		kw_event_submit(e);
	}
	return forced ? 0 : verdict;
}

/* One recorded decision on ctx's address under the rules of op. */
static __always_inline int kw_net_decide(struct bpf_sock_addr *ctx, struct kw_ctx *c, __u8 op,
					 __u16 kind, int v6)
{
	struct kw_net_key key = {};
	struct kw_net_rules *rules;
	__u16 rule, port;
	__u64 via = KW_NO_SEQ;
	int permit, named = 0;

	key.slot = c->slot;
	kw_net_key_of(ctx, op, v6, &key);
	port = bpf_ntohs((__u16)ctx->user_port);

	rules = bpf_map_lookup_elem(&kw_net_rules, &key);
	permit = kw_net_eval(rules, port, &rule);
	/* no CIDR rule matched (a CIDR deny still wins): an address a DNS
	 * answer opened for a name rule */
	if (!permit && rule == KW_RULE_DEFAULT && op != KW_NET_BIND &&
	    (c->s->classes & KW_CLASS_NET_DNS))
		permit = named = kw_name_permits(c, op, key.family, key.addr, port, &rule, &via);
	return kw_net_record(ctx, c, kind, &key, permit, rule, via, named, 0);
}

/* A port of kwitnessd's resolvers that this session task may not use
 * (resolver_guard.bpf.h): refused and recorded whatever the session's
 * policy and mode. 1 when it was. */
static __always_inline int kw_net_guarded(struct bpf_sock_addr *ctx, __u8 op, __u16 kind, int v6)
{
	struct kw_net_key key = {};
	struct kw_ctx c;

	if (!kw_guard_addr(ctx, &c, op == KW_NET_BIND))
		return 0;
	key.slot = c.slot;
	kw_net_key_of(ctx, op, v6, &key);
	kw_net_record(ctx, &c, kind, &key, 0, KW_RULE_RESOLVER_GUARD, KW_NO_SEQ, 0, 1);
	return 1;
}

/* A session whose policy names hosts: its DNS goes to its resolver
 * (dns_steer.bpf.h). 1 or 0: the verdict, steered or refused; -1: not DNS. */
static __always_inline int kw_net_steer(struct bpf_sock_addr *ctx, struct kw_ctx *c, int v6)
{
	int steered;

	if (!(c->s->classes & KW_CLASS_NET_DNS))
		return -1;
	steered = kw_dns_steer_addr(ctx, c, v6);
	return steered ? steered > 0 : -1;
}

static __always_inline int kw_net_hook(struct bpf_sock_addr *ctx, __u8 op, __u32 class_bit,
				       __u16 kind, int v6)
{
	__u32 dns = op == KW_NET_SEND ? KW_CLASS_NET_DNS : 0;
	struct kw_ctx c;
	int steered;

	if (kw_net_guarded(ctx, op, kind, v6))
		return 0;
	if (!kw_session_find(&c, class_bit | dns))
		return 1;
	if (dns && (steered = kw_net_steer(ctx, &c, v6)) >= 0)
		return steered;
	if (!(c.s->classes & class_bit))
		return 1;
	return kw_net_decide(ctx, &c, op, kind, v6);
}

/* A connected datagram socket sends without naming a destination, which
 * cgroup/sendmsg never sees: its connect() is also a net.send decision, so
 * connect and send govern connected UDP alike. */
static __always_inline int kw_connect_hook(struct bpf_sock_addr *ctx, int v6)
{
	struct kw_ctx c;
	int verdict = 1, steered;

	if (kw_net_guarded(ctx, KW_NET_CONNECT, KW_EV_NET_CONNECT, v6))
		return 0;
	if (!kw_session_find(&c, KW_CLASS_NET_CONNECT | KW_CLASS_NET_SEND | KW_CLASS_NET_DNS))
		return 1;
	if ((steered = kw_net_steer(ctx, &c, v6)) >= 0)
		return steered;
	if (c.s->classes & KW_CLASS_NET_CONNECT)
		verdict = kw_net_decide(ctx, &c, KW_NET_CONNECT, KW_EV_NET_CONNECT, v6);
	if (verdict && ctx->type == SOCK_DGRAM && (c.s->classes & KW_CLASS_NET_SEND))
		verdict = kw_net_decide(ctx, &c, KW_NET_SEND, KW_EV_NET_SEND, v6);
	return verdict;
}

static __always_inline int kw_sendmsg_hook(struct bpf_sock_addr *ctx, int v6)
{
	return kw_net_hook(ctx, KW_NET_SEND, KW_CLASS_NET_SEND, KW_EV_NET_SEND, v6);
}

static __always_inline int kw_bind_hook(struct bpf_sock_addr *ctx, int v6)
{
	return kw_net_hook(ctx, KW_NET_BIND, KW_CLASS_NET_BIND, KW_EV_NET_BIND, v6);
}

/* The programs of a sock_addr hook, one per address family: kw_<hook>4 on
 * cgroup/<hook>4 and kw_<hook>6 on cgroup/<hook>6, each calling fn(ctx, v6). */
#define KW_SOCK_ADDR_PROGS(hook, fn)                          \
	SEC("cgroup/" #hook "4")                              \
	int kw_##hook##4(struct bpf_sock_addr *ctx)           \
	{                                                     \
		return fn(ctx, 0);                            \
	}                                                     \
	SEC("cgroup/" #hook "6")                              \
	int kw_##hook##6(struct bpf_sock_addr *ctx)           \
	{                                                     \
		return fn(ctx, 1);                            \
	}

KW_SOCK_ADDR_PROGS(connect, kw_connect_hook)
KW_SOCK_ADDR_PROGS(sendmsg, kw_sendmsg_hook)
KW_SOCK_ADDR_PROGS(bind, kw_bind_hook)

/* bit of a socket the resolver guard refuses whatever the policy says */
#define KW_SOCK_GUARD 0xffffffffu

/* Decides creating a socket of family/type/protocol whose kw_session.socket_allow
 * bit is bit (KW_SOCK_BITS or more: none, never allowed; KW_SOCK_GUARD: refused
 * by the resolver guard). 1 when it may be created. */
static __always_inline int kw_socket_decide(struct kw_ctx *c, __u32 family, __u32 type,
					    __u32 protocol, __u32 bit)
{
	__u16 rule = KW_RULE_DEFAULT;
	struct kw_ev_socket *e;
	int permit = 0, verdict, forced = bit == KW_SOCK_GUARD;

	if (forced) {
		rule = KW_RULE_RESOLVER_GUARD;
	} else if (bit < KW_SOCK_BITS && (c->s->socket_allow >> bit) & 1) {
		/* Implicit governance decides only what it refuses. */
		if (c->s->flags & KW_SESSF_SOCKET_IMPLICIT)
			return 1;
		permit = 1;
		/* keep the mask: the verifier needs the bound the compiler knows */
		asm volatile("" : "+r"(bit));
		rule = c->s->socket_rule[bit & (KW_SOCK_BITS - 1)];
	}

	e = kw_record_decision(c, KW_EV_NET_SOCKET, permit, rule, sizeof(*e), &verdict);
	if (e) {
		e->family = family;
		e->type = type;
		e->protocol = protocol;
		e->pad = 0;
		if (forced)
			e->h.enforced = 1;
		kw_event_submit(e);
	}
	return forced ? 0 : verdict;
}

/* Only inet and inet6 sockets reach this hook; other families are outside the
 * cgroup hook's reach (docs/policy.md). Ping sockets are told apart from
 * other datagram sockets by their protocol. */
SEC("cgroup/sock_create")
int kw_sock_create(struct bpf_sock *sk)
{
	__u32 family = sk->family, type = sk->type, protocol = sk->protocol, bit = 64;
	struct kw_ctx c;

	/* a raw socket reads and forges any datagram, a resolver's too */
	if (type == SOCK_RAW && kw_guard_raw(&c))
		return kw_socket_decide(&c, family, type, protocol, KW_SOCK_GUARD);
	if (!kw_session_find(&c, KW_CLASS_NET_SOCKET))
		return 1;
	if (family == AF_INET && type == SOCK_DGRAM && protocol == IPPROTO_ICMP)
		bit = KW_SOCK_BIT_INET_ICMP;
	else if (family == AF_INET6 && type == SOCK_DGRAM && protocol == IPPROTO_ICMPV6)
		bit = KW_SOCK_BIT_INET6_ICMP;
	else if (family == AF_INET && type < 8)
		bit = KW_SOCK_BIT(0, type);
	else if (family == AF_INET6 && type < 8)
		bit = KW_SOCK_BIT(1, type);
	return kw_socket_decide(&c, family, type, protocol, bit);
}

/* Packet sockets send frames of any protocol to any address and never reach
 * cgroup/sock_create, so where BPF-LSM works this hook decides them under
 * net.socket ("packet"). It extends the net.socket class and is not part of
 * its availability: without BPF-LSM the class is governed by the cgroup
 * program alone (kwitness probe names AF_PACKET). Sockets the kernel makes for
 * itself are not the sandbox's. */
SEC("lsm/socket_create")
int BPF_PROG(kw_lsm_socket_create, int family, int type, int protocol, int kern, int ret)
{
	struct kw_ctx c;

	if (ret)
		return ret;
	if (kern || family != AF_PACKET)
		return 0;
	if (kw_guard_raw(&c))
		return kw_socket_decide(&c, (__u32)family, (__u32)type & 0xf, (__u32)protocol,
					KW_SOCK_GUARD) ? 0 : -EPERM;
	if (!kw_session_find(&c, KW_CLASS_NET_SOCKET))
		return 0;
	return kw_socket_decide(&c, (__u32)family, (__u32)type & 0xf, (__u32)protocol,
				KW_SOCK_BIT_PACKET) ? 0 : -EPERM;
}

#endif
