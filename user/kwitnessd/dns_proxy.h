/* SPDX-License-Identifier: Apache-2.0 */
/* dns_proxy.c: the per-session resolver of a policy that names hosts. It is
 * handed what it needs at start (kwd_dns_env) and calls nothing of the
 * session's: its dns.query entries go out through env->emit. */
#ifndef KWITNESSD_DNS_PROXY_H
#define KWITNESSD_DNS_PROXY_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "kwitness/abi/event.h"

struct kwd;
struct kwd_dns;
struct kwd_watch;
struct kw_dns_steer;
struct kw_policy;

/* h->kind of an entry the collector writes itself (dns.query) under a
 * sequence number it took from the session's kernel counter: it goes
 * through the session's reorder window like a kernel record. */
#define KWD_EV_COLLECTOR 0x8000

struct kwd_dns_env {
	struct kwd *d;               /* the loop's epoll set, the hooks, the log */
	const char *session;         /* the session id, for log lines (outlives the resolver) */
	uint32_t slot, generation;   /* the session's kernel slot */
	const struct kw_policy *pol; /* its names, DNS settings and mode */
	/* Writes a dns.query entry numbered from the session's kernel counter
	 * (h->kind KWD_EV_COLLECTOR) into the session's log: 0 or -errno. */
	int (*emit)(void *ctx, const struct kw_event_hdr *h, const char *line, size_t len);
	void *ctx;
};

/* Opens the loopback sockets, fills steer with their ports (for
 * kw_hooks_dns_steer) and *out; 0 or -errno with err. */
int kwd_dns_start(const struct kwd_dns_env *env, struct kwd_dns **out, struct kw_dns_steer *steer,
		  char *err, size_t errlen);
/* Closes the sockets (no dns.query takes a number after it). */
void kwd_dns_stop(struct kwd_dns *dns);
/* stop, then frees it (the names "via" gives go too). NULL: nothing. */
void kwd_dns_free(struct kwd_dns *dns);
void kwd_dns_ready(struct kwd_watch *w);
/* Upstream timeouts, idle TCP clients, expired addresses. */
void kwd_dns_tick(struct kwd_dns *dns, int64_t now_ms);
/* The name asked in the dns.query numbered seq, if still known. */
const char *kwd_dns_via_name(const struct kwd_dns *dns, uint64_t seq);
/* {"queries","refused","servfail","malformed","open_addresses","not_opened"}, or NULL. */
json_t *kwd_dns_status(const struct kwd_dns *dns);

#endif
