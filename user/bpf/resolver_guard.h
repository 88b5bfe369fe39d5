/* SPDX-License-Identifier: Apache-2.0 */
/* The resolver guard, user side (bpf/resolver_guard.bpf.h): kwitnessd's
 * resolver hands the kernel each socket it talks on, so that no session task
 * can use its port and the steering reaches only a listener kwitnessd holds. */
#ifndef KWITNESS_USER_BPF_RESOLVER_GUARD_H
#define KWITNESS_USER_BPF_RESOLVER_GUARD_H

#include <stdint.h>

struct kw_hooks;
struct kwitness_bpf;

/* A listener of slot's resolver (bound, TCP listening): its port guarded
 * (only slot's tasks may reach it) and the socket put in kw_resolver_socks.
 * 0 or -errno. */
int kw_resolver_guard_listener(struct kw_hooks *h, uint32_t slot, int fd);
/* A socket connected to an upstream resolver: its local port guarded from
 * every session task. 0 or -errno. */
int kw_resolver_guard_upstream(struct kw_hooks *h, int fd);
/* fd's port no longer guarded; call before closing it. */
void kw_resolver_guard_release(struct kw_hooks *h, int fd);
/* At open: forget the ports of a kwitnessd that is gone (its sockets are
 * closed; their kw_resolver_socks entries went with them). */
void kw_resolver_guard_forget(struct kw_hooks *h);

/* hooks.c: the loaded skeleton */
struct kwitness_bpf *kw_hooks_skeleton(struct kw_hooks *h);

#endif
