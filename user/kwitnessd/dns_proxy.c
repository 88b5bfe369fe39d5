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
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "collector/dns_query.h"
#include "kwitness/dns_wire.h"
#include "kwitness/hooks.h"
#include "kwitness/name_table.h"
#include "kwitness/policy.h"
#include "dns_proxy.h"
#include "kwd.h"
#include "util.h"

/* Questions waiting for the upstream, per session; more get SERVFAIL. */
#define KWD_DNS_PENDING 64
/* TCP connections per session, and the largest question over TCP. */
#define KWD_DNS_TCP_MAX 16
#define KWD_DNS_TCP_QUERY_MAX 4096
#define KWD_DNS_TCP_IDLE_MS 10000
/* How long one upstream gets before the next is tried (then SERVFAIL). */
#define KWD_DNS_TRY_MS 1500
/* Datagrams read per wakeup, so one session does not hold the loop. */
#define KWD_DNS_BURST 64
/* Recent queries whose name a connect's "via" can give. */
#define KWD_DNS_VIA_NAMES 1024

enum sock_kind { SK_UDP4, SK_UDP6, SK_TCP4, SK_TCP6, SK_UP4, SK_UP6, SK_CONN, SK_N = SK_CONN };

struct dns_sock {
	struct kwd_watch w;  /* kind KWD_W_DNS, ptr this */
	struct kwd_dns *dns;
	enum sock_kind kind;
	int fd;
	/* SK_CONN */
	uint32_t conn_gen;   /* bumps when the slot is reused */
	uint8_t in[2 + KWD_DNS_TCP_QUERY_MAX];
	size_t have;
	int64_t idle_deadline_ms;
	char peer[64];
};

struct pending {
	bool used;
	uint16_t up_id;      /* the id the upstream sees */
	uint16_t client_id;
	bool tcp;
	int client_sock;     /* SK_UDP4/6: the socket it came in on; SK_CONN: index */
	uint32_t conn_gen;
	struct sockaddr_storage client;
	socklen_t client_len;
	char peer[64];
	int64_t deadline_ms;
	unsigned tried;      /* upstreams tried */
	bool permit, enforced;
	const struct kw_name_rule *rule[2]; /* connect rule, send rule (may be NULL) */
	char rule_name[48];
	struct kw_dns_question q; /* q.id: the client's */
	uint8_t *msg;        /* the question as sent upstream (owned) */
	size_t len;
};

struct via_name {
	uint64_t seq;
	char name[KW_NAME_MAX + 1];
};

struct kwd_dns {
	struct kwd_dns_env env;     /* what the session handed over */
	struct dns_sock sock[SK_N];
	struct dns_sock conn[KWD_DNS_TCP_MAX];
	struct pending pend[KWD_DNS_PENDING];
	struct kw_dns_conf conf;    /* resolvers filled in (the host's if none) */
	struct kw_name_table table;
	struct via_name *via;       /* KWD_DNS_VIA_NAMES, by seq modulo */
	uint64_t queries, refused, servfail, malformed, not_opened;
};

static uint8_t kwd_dns_buf[KW_DNS_MSG_MAX + 2];

static uint64_t boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void peer_text(const struct sockaddr_storage *ss, char out[64])
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;

		inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
		snprintf(out, 64, "%s:%u", a, ntohs(in->sin_port));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
		snprintf(out, 64, "[%s]:%u", a, ntohs(in6->sin6_port));
	} else {
		snprintf(out, 64, "?");
	}
}

static void resolver_addr(const struct kw_dns_resolver *r, struct sockaddr_storage *ss,
			  socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (r->family == 4) {
		struct sockaddr_in *in = (void *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(r->port);
		memcpy(&in->sin_addr, r->addr, 4);
		*len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (void *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(r->port);
		memcpy(&in6->sin6_addr, r->addr, 16);
		*len = sizeof(*in6);
	}
}

static int watch(struct kwd_dns *dns, struct dns_sock *k)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &k->w };

	k->w.kind = KWD_W_DNS;
	k->w.ptr = k;
	k->dns = dns;
	return epoll_ctl(dns->env.d->epfd, EPOLL_CTL_ADD, k->fd, &ev) ? -errno : 0;
}

static void unwatch(struct kwd_dns *dns, struct dns_sock *k)
{
	if (k->fd < 0)
		return;
	epoll_ctl(dns->env.d->epfd, EPOLL_CTL_DEL, k->fd, NULL);
	close(k->fd);
	k->fd = -1;
}

/* A socket on the loopback, port chosen by the kernel. */
static int open_sock(int family, int type, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *in = (void *)&ss;

		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (void *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_addr = in6addr_loopback;
		len = sizeof(*in6);
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	if (port && bind(fd, (struct sockaddr *)&ss, len) < 0)
		goto fail;
	if (type == SOCK_STREAM && listen(fd, 16) < 0)
		goto fail;
	if (port) {
		len = sizeof(ss);
		if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
			goto fail;
		*port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
						  ((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	return fd;
fail:
	one = -errno;
	close(fd);
	return one;
}

/* An upstream socket of family, unbound (the kernel picks its port). */
static int open_upstream(int family)
{
	int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	return fd < 0 ? -errno : fd;
}

int kwd_dns_start(const struct kwd_dns_env *env, struct kwd_dns **out, struct kw_dns_steer *steer,
		  char *err, size_t errlen)
{
	static const struct {
		int family, type;
	} socks[SK_N] = { [SK_UDP4] = { AF_INET, SOCK_DGRAM }, [SK_UDP6] = { AF_INET6, SOCK_DGRAM },
			  [SK_TCP4] = { AF_INET, SOCK_STREAM }, [SK_TCP6] = { AF_INET6, SOCK_STREAM },
			  [SK_UP4] = { AF_INET, 0 }, [SK_UP6] = { AF_INET6, 0 } };
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
		dns->conn[i].fd = -1;
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
		bool up = i == SK_UP4 || i == SK_UP6;

		k->kind = (enum sock_kind)i;
		k->fd = up ? open_upstream(socks[i].family) :
			     open_sock(socks[i].family, socks[i].type, &ports[i]);
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
		e = watch(dns, k);
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

static void pending_free(struct pending *p)
{
	free(p->msg);
	memset(p, 0, sizeof(*p));
}

void kwd_dns_stop(struct kwd_dns *dns)
{
	if (!dns)
		return;
	/* Questions still waiting took no number: after this no dns.query
	 * takes one, so the close's next_seq is final. */
	for (int i = 0; i < SK_N; i++)
		unwatch(dns, &dns->sock[i]);
	for (int i = 0; i < KWD_DNS_TCP_MAX; i++)
		unwatch(dns, &dns->conn[i]);
	for (int i = 0; i < KWD_DNS_PENDING; i++)
		pending_free(&dns->pend[i]);
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

/* ---- answering the client --------------------------------------------- */

static void send_reply(struct kwd_dns *dns, const struct pending *p, uint8_t *msg, size_t len)
{
	/* the client's id */
	msg[0] = (uint8_t)(p->client_id >> 8);
	msg[1] = (uint8_t)p->client_id;
	if (!p->tcp) {
		const struct dns_sock *k = &dns->sock[p->client_sock];

		if (k->fd >= 0)
			sendto(k->fd, msg, len, MSG_DONTWAIT, (const struct sockaddr *)&p->client,
			       p->client_len);
		return;
	}
	{
		struct dns_sock *c = &dns->conn[p->client_sock];
		uint8_t hdr[2] = { (uint8_t)(len >> 8), (uint8_t)len };
		struct iovec iov[2] = { { hdr, 2 }, { msg, len } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

		if (c->fd < 0 || c->conn_gen != p->conn_gen)
			return; /* the connection went away */
		if (sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)(len + 2))
			unwatch(dns, c); /* a client that does not read its answer */
	}
}

/* ---- the decision entry ----------------------------------------------- */

/* The collector's own entries go through the session's reorder window as
 * records with a kernel-like header, so they are emitted in seq order. */
static void log_query(struct kwd_dns *dns, const struct pending *p, uint8_t rcode,
		      const struct kw_dns_answer *a, const uint32_t *ttl, const bool *opened,
		      uint64_t seq, const char *error)
{
	const struct kwd_dns_env *s = &dns->env;
	struct kw_buf line = { 0 };
	struct kw_dns_query_entry e = {
		.seq = seq, .ts_us = kwd_now_us(), .q = &p->q, .permit = p->permit,
		.enforced = p->enforced, .rule = p->rule_name, .rcode = rcode,
		.proto = p->tcp ? "tcp" : "udp", .client = p->peer, .answer = a,
		.granted_ttl = ttl, .opened = opened, .error = error,
	};
	struct kw_event_hdr h;
	int r;

	if (seq == KW_NO_SEQ)
		return; /* a permit under record: deny: counted, not written */
	r = kw_dns_query_entry(&e, &line);
	memset(&h, 0, sizeof(h));
	h.seq = seq;
	h.kind = KWD_EV_COLLECTOR;
	h.decision = p->permit ? KW_PERMIT : KW_DENY;
	h.enforced = !p->permit && p->enforced;
	if (!r)
		r = s->emit(s->ctx, &h, line.data, line.len);
	if (r)
		/* its number stays a gap: the trailer counts it */
		kwd_log(s->d, LOG_ERR, "session %s: dns.query %llu not logged: %s", s->session,
			(unsigned long long)seq, strerror(-r));
	kw_buf_free(&line);
	if (p->permit && a && a->n_addrs) {
		struct via_name *v = &dns->via[seq % KWD_DNS_VIA_NAMES];

		v->seq = seq;
		memcpy(v->name, p->q.name, sizeof(v->name));
	}
}

/* The number of a decision about to be made, from the session's kernel
 * counter (KW_NO_SEQ: not recorded). */
static uint64_t take_seq(struct kwd_dns *dns, bool permit)
{
	const struct kwd_dns_env *s = &dns->env;
	uint64_t seq = KW_NO_SEQ;
	int r = kw_hooks_take_seq(s->d->hooks, s->slot, permit, &seq);

	if (r && r != -ENOENT)
		kwd_log(s->d, LOG_ERR, "session %s: no sequence number for a dns.query: %s", s->session,
			strerror(-r));
	return r ? KW_NO_SEQ : seq;
}

/* ---- questions ---------------------------------------------------------- */

static void decide(struct kwd_dns *dns, struct pending *p)
{
	const struct kw_policy *pol = dns->env.pol;
	const struct kw_name_rule *first = NULL;

	p->rule[0] = p->rule[1] = NULL;
	if (p->q.valid_name) {
		for (size_t i = 0; i < pol->n_names; i++) {
			const struct kw_name_rule *r = &pol->names[i];
			int op = r->op == KW_NET_CONNECT ? 0 : 1;

			if (p->rule[op] || !kw_name_rule_matches(r, p->q.name))
				continue;
			p->rule[op] = r;
			if (!first)
				first = r;
		}
	}
	if (first) {
		p->permit = true;
		kw_rule_name(first->op == KW_NET_CONNECT ? KW_EV_NET_CONNECT : KW_EV_NET_SEND,
			     first->index, p->rule_name, sizeof(p->rule_name));
	} else if (dns->conf.allow_other_names) {
		p->permit = true;
		snprintf(p->rule_name, sizeof(p->rule_name), "net.dns.allow_other_names");
	} else {
		p->permit = false;
		snprintf(p->rule_name, sizeof(p->rule_name), "net.dns:default");
	}
	p->enforced = !p->permit && pol->mode != KW_MODE_ADVISORY;
}

static int send_upstream(struct kwd_dns *dns, struct pending *p)
{
	while (p->tried < dns->conf.n_resolvers) {
		const struct kw_dns_resolver *r = &dns->conf.resolvers[p->tried++];
		const struct dns_sock *k = &dns->sock[r->family == 4 ? SK_UP4 : SK_UP6];
		struct sockaddr_storage ss;
		socklen_t len;

		if (k->fd < 0)
			continue;
		resolver_addr(r, &ss, &len);
		if (sendto(k->fd, p->msg, p->len, MSG_DONTWAIT, (struct sockaddr *)&ss, len) ==
		    (ssize_t)p->len) {
			p->deadline_ms = kwd_now_ms() + KWD_DNS_TRY_MS;
			return 0;
		}
	}
	return -EHOSTUNREACH;
}

/* Nothing came back from any upstream: SERVFAIL, nothing opened. */
static void fail_pending(struct kwd_dns *dns, struct pending *p, const char *why)
{
	uint8_t out[KWD_DNS_TCP_QUERY_MAX];
	size_t n;
	uint64_t seq = take_seq(dns, p->permit);

	dns->servfail++;
	/* p->msg holds the question with the upstream id; the reply gets the client's */
	n = kw_dns_reply_rcode(p->msg, &p->q, KW_DNS_SERVFAIL, out, sizeof(out));
	log_query(dns, p, KW_DNS_SERVFAIL, NULL, NULL, NULL, seq, why);
	if (n)
		send_reply(dns, p, out, n);
	pending_free(p);
}

static void handle_query(struct kwd_dns *dns, const uint8_t *msg, size_t len, bool tcp,
			 int sock, uint32_t conn_gen, const struct sockaddr_storage *from,
			 socklen_t fromlen)
{
	struct pending tmp, *p = NULL;
	const char *why;
	uint8_t out[KWD_DNS_TCP_QUERY_MAX];
	size_t n;

	dns->queries++;
	memset(&tmp, 0, sizeof(tmp));
	if (kw_dns_parse_query(msg, len, &tmp.q, &why)) {
		/* not a question: nothing to decide, nothing sent back */
		dns->malformed++;
		return;
	}
	tmp.client_id = tmp.q.id;
	tmp.tcp = tcp;
	tmp.client_sock = sock;
	tmp.conn_gen = conn_gen;
	if (from) {
		memcpy(&tmp.client, from, fromlen);
		tmp.client_len = fromlen;
		peer_text(from, tmp.peer);
	} else {
		snprintf(tmp.peer, sizeof(tmp.peer), "%s", dns->conn[sock].peer);
	}
	decide(dns, &tmp);
	if (!tmp.permit && tmp.enforced) {
		uint64_t seq = take_seq(dns, false);

		dns->refused++;
		n = kw_dns_reply_rcode(msg, &tmp.q, KW_DNS_REFUSED, out, sizeof(out));
		log_query(dns, &tmp, KW_DNS_REFUSED, NULL, NULL, NULL, seq, NULL);
		if (n)
			send_reply(dns, &tmp, out, n);
		return;
	}
	for (int i = 0; i < KWD_DNS_PENDING && !p; i++)
		if (!dns->pend[i].used)
			p = &dns->pend[i];
	tmp.msg = p ? malloc(len) : NULL;
	if (!tmp.msg) {
		/* bounded: an answer now rather than a question held */
		dns->servfail++;
		n = kw_dns_reply_rcode(msg, &tmp.q, KW_DNS_SERVFAIL, out, sizeof(out));
		log_query(dns, &tmp, KW_DNS_SERVFAIL, NULL, NULL, NULL, take_seq(dns, tmp.permit),
			  p ? "out of memory" : "too many questions waiting");
		if (n)
			send_reply(dns, &tmp, out, n);
		return;
	}
	memcpy(tmp.msg, msg, len);
	tmp.len = len;
	if (getrandom(&tmp.up_id, sizeof(tmp.up_id), 0) != sizeof(tmp.up_id))
		tmp.up_id ^= (uint16_t)kwd_now_us();
	tmp.msg[0] = (uint8_t)(tmp.up_id >> 8);
	tmp.msg[1] = (uint8_t)tmp.up_id;
	tmp.used = true;
	*p = tmp;
	p->q.id = p->up_id;
	if (send_upstream(dns, p))
		fail_pending(dns, p, dns->conf.n_resolvers ? "upstream unreachable" :
							    "no upstream resolver");
}

/* ---- answers -------------------------------------------------------------- */

static uint32_t clamp_ttl(const struct kw_dns_conf *c, uint32_t ttl)
{
	return ttl < c->min_ttl ? c->min_ttl : ttl > c->max_ttl ? c->max_ttl : ttl;
}

static bool open_addr(struct kwd_dns *dns, const struct pending *p, const struct kw_dns_addr *a,
		      uint32_t ttl, uint64_t now, uint64_t seq)
{
	const struct kwd_dns_env *s = &dns->env;
	bool ok = true;

	for (int op = 0; op < 2; op++) {
		const struct kw_name_entry *e;
		int err;

		if (!p->rule[op])
			continue;
		e = kw_name_table_open(&dns->table, a->family, a->addr, p->rule[op],
				       now + ((uint64_t)ttl + KW_DNS_GRACE_S) * 1000000000ull, seq,
				       &err);
		/* a failed map write leaves the table counting an address the
		 * kernel does not hold, until it expires: room lost, nothing opened */
		if (!e || kw_hooks_name_put(s->d->hooks, &e->key, &e->val))
			ok = false;
	}
	return ok;
}

static void handle_answer(struct kwd_dns *dns, struct pending *p, uint8_t *msg, size_t len)
{
	struct kw_dns_answer *a = malloc(sizeof(*a));
	uint32_t ttl[KW_DNS_MAX_ADDRS];
	bool opened[KW_DNS_MAX_ADDRS];
	const char *why;
	uint64_t seq, now;

	if (!a) {
		fail_pending(dns, p, "out of memory");
		return;
	}
	if (kw_dns_parse_answer(msg, len, &p->q, a, &why)) {
		/* not this question's answer (or malformed): keep waiting */
		free(a);
		return;
	}
	/* The number first, then the addresses: a connect they permit is
	 * numbered after this entry. */
	seq = take_seq(dns, p->permit);
	now = boot_ns();
	for (size_t i = 0; i < a->n_addrs; i++) {
		ttl[i] = clamp_ttl(&dns->conf, a->addrs[i].ttl);
		opened[i] = (p->rule[0] || p->rule[1]) && p->permit &&
			    open_addr(dns, p, &a->addrs[i], ttl[i], now, seq);
		if (!opened[i] && (p->rule[0] || p->rule[1]))
			dns->not_opened++;
	}
	log_query(dns, p, a->rcode, a, ttl, opened, seq, NULL);
	send_reply(dns, p, msg, len);
	free(a);
	pending_free(p);
}

static void upstream_ready(struct kwd_dns *dns, struct dns_sock *k)
{
	for (int i = 0; i < KWD_DNS_BURST; i++) {
		struct sockaddr_storage from, want;
		socklen_t flen = sizeof(from), wlen;
		ssize_t n = recvfrom(k->fd, kwd_dns_buf, sizeof(kwd_dns_buf), MSG_DONTWAIT,
				     (struct sockaddr *)&from, &flen);
		uint16_t id;

		if (n < 0)
			return;
		if (n < KW_DNS_HDR_LEN)
			continue;
		id = (uint16_t)(kwd_dns_buf[0] << 8 | kwd_dns_buf[1]);
		for (int j = 0; j < KWD_DNS_PENDING; j++) {
			struct pending *p = &dns->pend[j];

			if (!p->used || p->up_id != id || !p->tried)
				continue;
			/* only from the upstream it was sent to last */
			resolver_addr(&dns->conf.resolvers[p->tried - 1], &want, &wlen);
			if (flen != wlen || memcmp(&from, &want, wlen))
				continue;
			handle_answer(dns, p, kwd_dns_buf, (size_t)n);
			break;
		}
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
		handle_query(dns, kwd_dns_buf, (size_t)n, false, k->kind, 0, &from, flen);
	}
}

static void tcp_accept(struct kwd_dns *dns, struct dns_sock *k)
{
	for (;;) {
		struct sockaddr_storage from;
		socklen_t flen = sizeof(from);
		int fd = accept4(k->fd, (struct sockaddr *)&from, &flen,
				 SOCK_NONBLOCK | SOCK_CLOEXEC), i;
		struct dns_sock *c = NULL;

		if (fd < 0)
			return;
		for (i = 0; i < KWD_DNS_TCP_MAX && !c; i++)
			if (dns->conn[i].fd < 0)
				c = &dns->conn[i];
		if (!c) {
			close(fd); /* bounded: the client retries */
			continue;
		}
		c->kind = SK_CONN;
		c->fd = fd;
		c->have = 0;
		c->conn_gen++;
		c->idle_deadline_ms = kwd_now_ms() + KWD_DNS_TCP_IDLE_MS;
		peer_text(&from, c->peer);
		if (watch(dns, c)) {
			close(fd);
			c->fd = -1;
		}
	}
}

static void conn_ready(struct kwd_dns *dns, struct dns_sock *c)
{
	ssize_t n = recv(c->fd, c->in + c->have, sizeof(c->in) - c->have, MSG_DONTWAIT);
	size_t need;

	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			unwatch(dns, c);
		return;
	}
	c->have += (size_t)n;
	c->idle_deadline_ms = kwd_now_ms() + KWD_DNS_TCP_IDLE_MS;
	while (c->have >= 2) {
		need = (size_t)(c->in[0] << 8 | c->in[1]);
		if (need > KWD_DNS_TCP_QUERY_MAX || need < KW_DNS_HDR_LEN) {
			unwatch(dns, c);
			return;
		}
		if (c->have < 2 + need)
			return;
		handle_query(dns, c->in + 2, need, true, (int)(c - dns->conn), c->conn_gen, NULL, 0);
		if (c->fd < 0)
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
	case SK_UP4:
	case SK_UP6:
		upstream_ready(dns, k);
		break;
	case SK_CONN:
		conn_ready(dns, k);
		break;
	}
}

/* ---- the tick: timeouts and expiry -------------------------------------- */

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
		if (send_upstream(dns, p))
			fail_pending(dns, p, "upstream timeout");
	}
	for (int i = 0; i < KWD_DNS_TCP_MAX; i++)
		if (dns->conn[i].fd >= 0 && now_ms >= dns->conn[i].idle_deadline_ms)
			unwatch(dns, &dns->conn[i]);
	/* the kernel already refuses what expired (it compares the time
	 * itself); this gives the room back */
	kw_name_table_expire(&dns->table, boot_ns(), expired_put, expired_del, dns);
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
