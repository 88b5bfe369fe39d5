// SPDX-License-Identifier: Apache-2.0
/* The per-session resolver (egress by name, docs/policy.md). The kernel
 * steers every DNS packet of a session that names hosts to this session's
 * sockets on the loopback. Here a question is decided against the policy's
 * names: refused (REFUSED), or forwarded to the upstream resolver; before
 * the answer goes back, its A/AAAA addresses (CNAME chains followed) are
 * opened in the session's kw_name_allow entries for the rule's ports until
 * TTL + grace. Every question is a dns.query decision in the session's log,
 * numbered from the session's kernel counter, so it is ordered with the
 * kernel's decisions and the connects it opens come after it.
 *
 * Everything runs on the collector's loop: non-blocking sockets, bounded
 * tables (pending questions, TCP connections), timeouts on the tick. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "bpf/resolver_guard.h"
#include "bpf/hooks.h"
#include "dns_proxy.h"
#include "dns_state.h"
#include "kwd.h"
#include "util.h"

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

static uint8_t kwd_dns_buf[KW_DNS_MSG_MAX + 2];

int kwd_dns_start(const struct kwd_dns_env *env, struct kwd_dns **out, struct kw_dns_steer *steer,
		  char *err, size_t errlen)
{
	static const struct {
		int family, type;
	} socks[SK_N] = { [SK_UDP4] = { AF_INET, SOCK_DGRAM }, [SK_UDP6] = { AF_INET6, SOCK_DGRAM },
			  [SK_TCP4] = { AF_INET, SOCK_STREAM }, [SK_TCP6] = { AF_INET6, SOCK_STREAM } };
	struct kwd_dns *dns;
	uint16_t ports[SK_N] = { 0 };
	int e = 0;

	dns = calloc(1, sizeof(*dns));
	if (!dns || !(dns->via = calloc(KWD_DNS_VIA_NAMES, sizeof(*dns->via)))) {
		free(dns);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	dns->env = *env;
	dns->conf = env->pol->dns;
	for (int i = 0; i < SK_N; i++)
		dns->sock[i].fd = -1;
	for (int i = 0; i < KWD_DNS_TCP_MAX; i++)
		dns->conn[i].k.fd = -1;
	for (int i = 0; i < KWD_DNS_PENDING; i++)
		dns->pend[i].up.fd = -1;
	if (!dns->conf.n_resolvers) {
		char text[4096];
		int fd = open("/etc/resolv.conf", O_RDONLY | O_CLOEXEC);
		ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof(text));

		if (fd >= 0)
			close(fd);
		dns->conf.n_resolvers = n > 0 ? kw_dns_resolv_conf(text, (size_t)n,
								 dns->conf.resolvers) : 0;
		/* none: every question is answered SERVFAIL */
	}
	kw_name_table_init(&dns->table, env->slot, env->generation, KW_NAME_SESSION_MAX);
	for (int i = 0; i < SK_N && !e; i++) {
		struct dns_sock *k = &dns->sock[i];

		k->kind = (enum sock_kind)i;
		k->fd = dns_open_sock(socks[i].family, socks[i].type, &ports[i]);
		if (k->fd < 0) {
			e = k->fd;
			k->fd = -1;
			/* a host without IPv6 still steers IPv4 */
			if (socks[i].family == AF_INET6 && (e == -EAFNOSUPPORT || e == -EADDRNOTAVAIL)) {
				e = 0;
				continue;
			}
			snprintf(err, errlen, "resolver socket: %s", strerror(-e));
			break;
		}
		/* only this session reaches it, and only while it is open */
		e = kw_resolver_guard_listener(env->d->hooks, env->slot, k->fd);
		if (e) {
			snprintf(err, errlen, "resolver guard: %s", strerror(-e));
			close(k->fd);
			k->fd = -1;
			break;
		}
		e = dns_watch(dns, k);
		if (e)
			snprintf(err, errlen, "epoll: %s", strerror(-e));
	}
	if (e) {
		kwd_dns_free(dns);
		return e;
	}
	memset(steer, 0, sizeof(*steer));
	steer->generation = env->generation;
	steer->udp4 = ports[SK_UDP4];
	steer->tcp4 = ports[SK_TCP4];
	steer->udp6 = ports[SK_UDP6];
	steer->tcp6 = ports[SK_TCP6];
	*out = dns;
	return 0;
}

void kwd_dns_stop(struct kwd_dns *dns)
{
	if (!dns)
		return;
	/* Questions still waiting took no number: after this no dns.query
	 * takes one, so the close's next_seq is final. */
	for (int i = 0; i < SK_N; i++)
		dns_unwatch(dns, &dns->sock[i]);
	for (int i = 0; i < KWD_DNS_TCP_MAX; i++)
		dns_unwatch(dns, &dns->conn[i].k);
	for (int i = 0; i < KWD_DNS_PENDING; i++)
		dns_pending_free(dns, &dns->pend[i]);
}

void kwd_dns_free(struct kwd_dns *dns)
{
	if (!dns)
		return;
	kwd_dns_stop(dns);
	/* the kernel entries go with the slot (kw_hooks_session_free) */
	kw_name_table_free(&dns->table);
	free(dns->via);
	free(dns);
}

const char *kwd_dns_via_name(const struct kwd_dns *dns, uint64_t seq)
{
	const struct via_name *v;

	if (!dns || seq == KW_NO_SEQ)
		return NULL;
	v = &dns->via[seq % KWD_DNS_VIA_NAMES];
	return v->seq == seq && v->name[0] ? v->name : NULL;
}

/* The answer to one try of one question. Its socket is connected, so the
 * kernel gave it only what came from that upstream's address and port;
 * checked here too, then the id (the parser checks the question). */
static void upstream_ready(struct kwd_dns *dns, struct pending *p)
{
	for (int i = 0; i < KWD_DNS_BURST && p->used && p->up.fd >= 0; i++) {
		struct sockaddr_storage from, want;
		socklen_t flen = sizeof(from), wlen;
		ssize_t n = recvfrom(p->up.fd, kwd_dns_buf, sizeof(kwd_dns_buf), MSG_DONTWAIT,
				     (struct sockaddr *)&from, &flen);

		if (n < 0)
			return;
		dns_resolver_addr(&dns->conf.resolvers[p->tried - 1], &want, &wlen);
		if (n < KW_DNS_HDR_LEN || flen != wlen || memcmp(&from, &want, wlen) ||
		    (uint16_t)(kwd_dns_buf[0] << 8 | kwd_dns_buf[1]) != p->up_id)
			continue;
		dns_handle_answer(dns, p, kwd_dns_buf, (size_t)n);
	}
}

static void udp_ready(struct kwd_dns *dns, struct dns_sock *k)
{
	for (int i = 0; i < KWD_DNS_BURST; i++) {
		struct sockaddr_storage from;
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(k->fd, kwd_dns_buf, KWD_DNS_TCP_QUERY_MAX, MSG_DONTWAIT,
				     (struct sockaddr *)&from, &flen);

		if (n < 0)
			return;
		dns_handle_query(dns, kwd_dns_buf, (size_t)n, false, k->kind, 0, &from, flen);
	}
}

static void tcp_accept(struct kwd_dns *dns, struct dns_sock *k)
{
	for (;;) {
		struct sockaddr_storage from;
		socklen_t flen = sizeof(from);
		int fd = accept4(k->fd, (struct sockaddr *)&from, &flen,
				 SOCK_NONBLOCK | SOCK_CLOEXEC), i;
		struct dns_conn *c = NULL;

		if (fd < 0)
			return;
		for (i = 0; i < KWD_DNS_TCP_MAX && !c; i++)
			if (dns->conn[i].k.fd < 0)
				c = &dns->conn[i];
		if (!c) {
			close(fd); /* bounded: the client retries */
			continue;
		}
		c->k.kind = SK_CONN;
		c->k.fd = fd;
		c->have = 0;
		c->conn_gen++;
		c->idle_deadline_ms = kwd_now_ms() + KWD_DNS_TCP_IDLE_MS;
		dns_peer_text(&from, c->peer);
		if (dns_watch(dns, &c->k)) {
			close(fd);
			c->k.fd = -1;
		}
	}
}

static void conn_ready(struct kwd_dns *dns, struct dns_conn *c)
{
	ssize_t n = recv(c->k.fd, c->in + c->have, sizeof(c->in) - c->have, MSG_DONTWAIT);
	size_t need;

	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			dns_unwatch(dns, &c->k);
		return;
	}
	c->have += (size_t)n;
	c->idle_deadline_ms = kwd_now_ms() + KWD_DNS_TCP_IDLE_MS;
	while (c->have >= 2) {
		need = (size_t)(c->in[0] << 8 | c->in[1]);
		if (need > KWD_DNS_TCP_QUERY_MAX || need < KW_DNS_HDR_LEN) {
			dns_unwatch(dns, &c->k);
			return;
		}
		if (c->have < 2 + need)
			return;
		dns_handle_query(dns, c->in + 2, need, true, (int)(c - dns->conn), c->conn_gen, NULL, 0);
		if (c->k.fd < 0)
			return;
		memmove(c->in, c->in + 2 + need, c->have - 2 - need);
		c->have -= 2 + need;
	}
}

void kwd_dns_ready(struct kwd_watch *w)
{
	struct dns_sock *k = w->ptr;
	struct kwd_dns *dns = k->dns;

	switch (k->kind) {
	case SK_UDP4:
	case SK_UDP6:
		udp_ready(dns, k);
		break;
	case SK_TCP4:
	case SK_TCP6:
		tcp_accept(dns, k);
		break;
	case SK_CONN:
		conn_ready(dns, container_of(k, struct dns_conn, k));
		break;
	case SK_UPSTREAM:
		upstream_ready(dns, container_of(k, struct pending, up));
		break;
	}
}

static void expired_put(void *ctx, const struct kw_name_entry *e)
{
	struct kwd_dns *dns = ctx;

	kw_hooks_name_put(dns->env.d->hooks, &e->key, &e->val);
}

static void expired_del(void *ctx, const struct kw_name_entry *e)
{
	struct kwd_dns *dns = ctx;

	kw_hooks_name_del(dns->env.d->hooks, &e->key);
}

void kwd_dns_tick(struct kwd_dns *dns, int64_t now_ms)
{
	if (!dns)
		return;
	for (int i = 0; i < KWD_DNS_PENDING; i++) {
		struct pending *p = &dns->pend[i];

		if (!p->used || now_ms < p->deadline_ms)
			continue;
		if (dns_send_upstream(dns, p))
			dns_fail_pending(dns, p, "upstream timeout");
	}
	for (int i = 0; i < KWD_DNS_TCP_MAX; i++)
		if (dns->conn[i].k.fd >= 0 && now_ms >= dns->conn[i].idle_deadline_ms)
			dns_unwatch(dns, &dns->conn[i].k);
	/* the kernel already refuses what expired (it compares the time
	 * itself); this gives the room back */
	kw_name_table_expire(&dns->table, dns_boot_ns(), expired_put, expired_del, dns);
}

json_t *kwd_dns_status(const struct kwd_dns *dns)
{
	if (!dns)
		return NULL;
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "queries", (json_int_t)dns->queries,
			 "refused", (json_int_t)dns->refused, "servfail", (json_int_t)dns->servfail,
			 "malformed", (json_int_t)dns->malformed, "open_addresses",
			 (json_int_t)dns->table.n, "not_opened", (json_int_t)dns->not_opened);
}
