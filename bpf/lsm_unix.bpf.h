/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* net.unix (BPF-LSM unix_stream_connect): the socket's path must be on
 * net.unix; an abstract socket is recorded as "@name" and never allowed. */
#ifndef KWITNESS_LSM_UNIX_BPF_H
#define KWITNESS_LSM_UNIX_BPF_H

#include "lsm_path.bpf.h"

SEC("lsm/unix_stream_connect")
int BPF_PROG(kw_lsm_unix_connect, struct sock *sock, struct sock *other, struct sock *newsk,
	     int ret)
{
	struct unix_sock *u = (struct unix_sock *)other;
	struct kw_lsm_scratch *sc;
	struct dentry *d;
	struct kw_ctx c;
	__u16 rule = KW_RULE_DEFAULT;
	int permit = 0;

	if (ret || !kw_session_find(&c, KW_CLASS_UNIX))
		return ret;
	sc = kw_scratch();
	if (!sc)
		return kw_fail_closed(&c, KW_EV_NET_UNIX, -EACCES);
	d = BPF_CORE_READ(u, path.dentry);
	if (d) {
		kw_path_build(sc, BPF_CORE_READ(u, path.mnt), d, NULL);
		permit = kw_path_judge(sc, c.slot, KW_WANT(KW_PK_UNIX), &rule);
	} else {
		/* abstract (or unbound) socket: no path a rule can name, "@name";
		 * the name is addr->len bytes, not NUL-terminated */
		struct unix_address *addr = BPF_CORE_READ(u, addr);
		__u32 n = 0;
		int alen;

		__builtin_memset(sc->path, 0, sizeof(sc->path));
		sc->path[0] = '@';
		sc->truncated = 0;
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
	return kw_path_record(&c, sc, KW_EV_NET_UNIX, 0, permit, rule, EACCES);
}

#include "lsm_proc.bpf.h"

#endif
