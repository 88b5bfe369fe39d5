/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* net.unix: unix_stream_connect and unix_may_send, judged by the peer's bound
 * path (or "@name" for an abstract socket) against net.unix. */
#ifndef KWITNESS_LSM_UNIX_BPF_H
#define KWITNESS_LSM_UNIX_BPF_H

#include "base.bpf.h"
#include "maps.bpf.h"
#include "session.bpf.h"
#include "lsm_path.bpf.h"

/* Judges a connect or send to the unix socket other (its bound path, or
 * "@name" for an abstract one) against net.unix. */
static __always_inline int kw_unix_judge(struct kw_ctx *c, struct sock *other, __u32 access)
{
	struct unix_sock *u = (struct unix_sock *)other;
	struct kw_lsm_scratch *sc;
	struct dentry *d;
	__u16 rule = KW_RULE_DEFAULT;
	int permit = 0;

	sc = kw_scratch();
	if (!sc)
		return kw_fail_closed(c, KW_EV_NET_UNIX, -EACCES);
	d = BPF_CORE_READ(u, path.dentry);
	if (d) {
		/* the path the listener bound, in its own mount namespace */
		kw_path_build_ex(sc, BPF_CORE_READ(u, path.mnt), d, NULL, 1);
		permit = kw_path_judge(sc, c->slot, KW_WANT(KW_PK_UNIX), &rule);
	} else {
		/* abstract socket: no path a rule can name, "@name"; the name is
		 * addr->len bytes, not NUL-terminated */
		struct unix_address *addr = BPF_CORE_READ(u, addr);
		__u32 n = 0;
		int alen;

		__builtin_memset(sc->path, 0, sizeof(sc->path));
		sc->path[0] = '@';
		sc->truncated = 0;
		sc->detached = 0;
		if (addr) {
			alen = BPF_CORE_READ(addr, len);
			/* sun_family (2 bytes) and the leading NUL come first */
			if (alen > 3)
				n = alen - 3;
			if (n > KW_PATH_MAX - 2) {
				n = KW_PATH_MAX - 2;
				sc->truncated = 1;
			}
			if (n) {
				__u64 sz = n;

				/* a mask the compiler cannot drop: the verifier needs
				 * the bound on the very register passed on */
				asm volatile("%0 &= 255" : "+r"(sz));
				bpf_probe_read_kernel(&sc->path[1], sz,
						      (void *)addr->name[0].sun_path + 1);
			}
		}
		sc->len = 1 + n;
	}
	return kw_path_record(c, sc, KW_EV_NET_UNIX, access, permit, rule, EACCES);
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(kw_lsm_unix_connect, struct sock *sock, struct sock *other, struct sock *newsk,
	     int ret)
{
	struct kw_ctx c;

	if (ret || !kw_session_find(&c, KW_CLASS_UNIX))
		return ret;
	return kw_unix_judge(&c, other, KW_UNIX_CONNECT);
}

/* Datagrams: connect() of a datagram socket and every send. A peer with no
 * address at all is the other end of a socketpair: nothing to judge. */
SEC("lsm/unix_may_send")
int BPF_PROG(kw_lsm_unix_may_send, struct socket *sock, struct socket *other, int ret)
{
	struct sock *osk;
	struct kw_ctx c;

	if (ret || !kw_session_find(&c, KW_CLASS_UNIX))
		return ret;
	osk = BPF_CORE_READ(other, sk);
	if (!osk || !BPF_CORE_READ((struct unix_sock *)osk, addr))
		return 0;
	return kw_unix_judge(&c, osk, KW_UNIX_SEND);
}

#endif
