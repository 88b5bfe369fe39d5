/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The resolver guard (docs/security.md, "DNS answers only kwitnessd gives"):
 * what keeps every session task away from the sockets kwitnessd's resolvers
 * use, whatever its policy says, and a session's DNS from reaching anything
 * but kwitnessd's own listener.
 *  - kw_resolver_ports: the local ports of every resolver socket (listeners,
 *    and the connected socket of each question sent upstream). A session
 *    task's connect, send or bind to such a port, at any address, is refused
 *    and recorded with the rule net.dns:guard; only its own session's
 *    listeners stay reachable (not bindable).
 *  - Raw inet sockets (and packet sockets, where BPF-LSM works) see and forge
 *    any datagram: while any session has a resolver (the class gate holds
 *    net.dns), a session task may not create one.
 *  - kw_resolver_socks: kwitnessd's listener sockets themselves. An entry
 *    leaves the map when its socket closes, so while kwitnessd is down the
 *    steering finds no socket and refuses the question (DNS fails closed)
 *    instead of sending it to a port anyone may have bound since.
 * Only kwitnessd writes these maps (user/bpf/resolver_guard.c). */
#ifndef KWITNESS_RESOLVER_GUARD_BPF_H
#define KWITNESS_RESOLVER_GUARD_BPF_H

#include "base.bpf.h"
#include "maps.bpf.h"
#include "session.bpf.h"
#include "kwitness/abi/name_match.h"

/* listeners (4 per session) and questions waiting upstream (64 per session) */
KW_SPARSE_MAP(BPF_MAP_TYPE_HASH, KW_MAX_SESSIONS * 68, __u32, __u32) kw_resolver_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, KW_MAX_SESSIONS * 4);
	__type(key, __u32);
	__type(value, __u64);
} kw_resolver_socks SEC(".maps");

/* Some session has a resolver: the guard holds. One array read otherwise. */
static __always_inline int kw_guard_on(void)
{
	__u32 zero = 0, *governed = bpf_map_lookup_elem(&kw_governed, &zero);

	return governed && (*governed & KW_CLASS_NET_DNS);
}

/* 1, with c filled, when the current task is in a session and ctx's port is
 * one of kwitnessd's resolver sockets it may not use: another session's
 * listener, any upstream socket, or (bind) any of them. */
static __always_inline int kw_guard_addr(struct bpf_sock_addr *ctx, struct kw_ctx *c, int bind)
{
	__u32 key, *owner;

	if (!kw_guard_on())
		return 0;
	key = KW_GUARD_KEY(0, ctx->protocol, bpf_ntohs((__u16)ctx->user_port));
	owner = bpf_map_lookup_elem(&kw_resolver_ports, &key);
	if (!owner || !kw_session_of_task(c))
		return 0;
	return bind || *owner != c->slot;
}

/* 1, with c filled, when the current task is in a session and may not
 * create a socket that sees and forges any packet. */
static __always_inline int kw_guard_raw(struct kw_ctx *c)
{
	return kw_guard_on() && kw_session_of_task(c);
}

/* 1 when kwitnessd's listener (family 4 or 6, proto, port) is open. */
static __always_inline int kw_resolver_listening(__u32 family, __u32 proto, __u16 port)
{
	__u32 key = KW_GUARD_KEY(family, proto, port);
	struct bpf_sock *sk = bpf_map_lookup_elem(&kw_resolver_socks, &key);

	if (!sk)
		return 0;
	bpf_sk_release(sk);
	return 1;
}

#endif
