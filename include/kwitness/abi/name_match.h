/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Egress by name, the kernel's half: where a session's DNS is steered
 * (kw_dns_steer), the addresses DNS answers opened (kw_name_allow), and how
 * a destination is checked against them. Plain C, so the same evaluation
 * runs in bpf/dns_steer.bpf.h and in tests/unit/test_name_match.c. Only
 * kwitnessd writes these maps; a sandbox opens an address only by asking
 * kwitnessd's resolver for a name its policy allows. */
#ifndef KWITNESS_ABI_NAME_MATCH_H
#define KWITNESS_ABI_NAME_MATCH_H

#include "kwitness/abi/event.h"

/* Port rules one opened address can hold (several names, or rules, may
 * answer with the same address). */
#define KW_NAME_ALLOW_PORTS 8
/* Addresses one session may have open at once; a full session's new
 * answers open nothing (the dns.query entry lists them under not_opened). */
#define KW_NAME_SESSION_MAX 512
/* Entries of kw_name_allow for every session together. */
#define KW_NAME_ALLOW_MAX 65536
/* via_seq of an address whose query was not recorded (record: deny). */
#define KW_NO_SEQ (~0ULL)

/* kw_dns_steer[slot]: the session's resolver sockets on the loopback
 * (127.0.0.1 and ::1), host-order ports; generation guards a reused slot. */
struct kw_dns_steer {
	__u32 generation;
	__u16 udp4, tcp4, udp6, tcp6;
	__u32 pad;
};

/* kw_dns_ports: resolver port (host order) -> slot. A session's socket may
 * not talk to another session's resolver directly. */

/* The resolver guard (bpf/resolver_guard.bpf.h). kw_resolver_ports: every
 * local port kwitnessd's resolvers use, keyed KW_GUARD_KEY(0, proto, port):
 * a listener's value is its session's slot, an upstream question's socket
 * KW_GUARD_UPSTREAM. No session task may connect, send to or bind such a port
 * (whatever the address) but its own session's listeners.
 * kw_resolver_socks: KW_GUARD_KEY(family, proto, port) -> kwitnessd's listener
 * socket; an entry goes when the socket closes, so steering finds no socket
 * while kwitnessd is down and refuses the question. proto is the socket's,
 * masked to 8 bits: IPPROTO_MPTCP (262) becomes IPPROTO_TCP (6), as an MPTCP
 * connect reaches a TCP listener. */
#define KW_GUARD_KEY(family, proto, port) \
	((__u32)(family) << 24 | (__u32)((proto) & 0xff) << 16 | (__u32)((port) & 0xffff))
#define KW_GUARD_UPSTREAM 0xffffffffu

/* kw_name_allow key: the address a session may reach for op. */
struct kw_name_key {
	__u32 slot;
	__u8 op;      /* KW_NET_CONNECT or KW_NET_SEND */
	__u8 family;  /* 4 or 6 (IPv4-mapped destinations are looked up as 4) */
	__u8 pad[2];
	__u8 addr[16];
};

struct kw_name_port {
	__u64 expires_ns; /* CLOCK_BOOTTIME: TTL (clamped) + grace after the answer */
	__u64 via_seq;    /* the dns.query entry that opened it, or KW_NO_SEQ */
	__u16 port_lo, port_hi;
	__u16 rule;       /* the name rule's index in its list */
	__u16 pad;
};

struct kw_name_allow {
	__u32 generation; /* the session's */
	__u32 count;
	struct kw_name_port p[KW_NAME_ALLOW_PORTS];
};

/* sk storage of a steered socket: the DNS server it asked for, restored as
 * the source of what it receives from the resolver. */
struct kw_dns_orig {
	__u32 addr[4];   /* v4 in addr[0], network order */
	__u16 port;      /* network order */
	__u8 family;     /* 4 or 6 */
	__u8 v4mapped;   /* an IPv6 socket that asked for an IPv4-mapped address */
};

/* 1 when an answer opened port for v at now (boot ns); *rule and *via
 * from the first port rule that is open. */
static inline int kw_name_eval(const struct kw_name_allow *v, __u32 generation, __u16 port,
			       __u64 now, __u16 *rule, __u64 *via)
{
	__u32 i, n;

	if (!v || v->generation != generation)
		return 0;
	n = v->count;
	for (i = 0; i < KW_NAME_ALLOW_PORTS; i++) {
		const struct kw_name_port *p;

		if (i >= n)
			break;
		p = &v->p[i];
		if (now >= p->expires_ns || port < p->port_lo || port > p->port_hi)
			continue;
		*rule = p->rule;
		*via = p->via_seq;
		return 1;
	}
	return 0;
}

#endif
