/* SPDX-License-Identifier: Apache-2.0 */
/* The per-session resolver's state, shared by its three files:
 * dns_proxy.c (the sockets' lifecycle, readiness, the tick), dns_decide.c
 * (questions decided against the policy, answers opening addresses, the
 * dns.query entries) and dns_io.c (sockets and replies, the leaf). */
#ifndef KWITNESSD_DNS_STATE_H
#define KWITNESSD_DNS_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "policy/dns_wire.h"
#include "policy/name_table.h"
#include "policy/policy.h"
#include "dns_proxy.h"
#include "kwd.h"

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

/* The listeners on the loopback (SK_N of them), an accepted TCP client, and
 * the connected socket of one question sent upstream. */
enum sock_kind { SK_UDP4, SK_UDP6, SK_TCP4, SK_TCP6, SK_N, SK_CONN = SK_N, SK_UPSTREAM };

struct dns_sock {
	struct kwd_watch w;  /* kind KWD_W_DNS, ptr this */
	struct kwd_dns *dns;
	enum sock_kind kind;
	int fd;
};

/* A TCP client of the resolver. */
struct dns_conn {
	struct dns_sock k;   /* kind SK_CONN */
	uint32_t conn_gen;   /* bumps when the slot is reused */
	uint8_t in[2 + KWD_DNS_TCP_QUERY_MAX];
	size_t have;
	int64_t idle_deadline_ms;
	char peer[64];
};

struct pending {
	bool used;
	uint16_t up_id;      /* the id the upstream sees (fresh for every try) */
	uint16_t client_id;
	bool tcp;
	int client_sock;     /* SK_UDP4/6: the socket it came in on; SK_CONN: index */
	uint32_t conn_gen;
	struct sockaddr_storage client;
	socklen_t client_len;
	char peer[64];
	int64_t deadline_ms;
	unsigned tried;      /* upstreams tried */
	/* SK_UPSTREAM: this try's socket, connected to resolvers[tried - 1]
	 * from a port the kernel picked at random (fd -1: none) */
	struct dns_sock up;
	bool permit, enforced;
	const struct kw_name_rule *rule[2]; /* connect rule, send rule (may be NULL) */
	char rule_name[48];
	struct kw_dns_question q; /* q.id: the id of this try */
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
	struct dns_conn conn[KWD_DNS_TCP_MAX];
	struct pending pend[KWD_DNS_PENDING];
	struct kw_dns_conf conf;    /* resolvers filled in (the host's if none) */
	struct kw_name_table table;
	struct via_name *via;       /* KWD_DNS_VIA_NAMES, by seq modulo */
	uint64_t queries, refused, servfail, malformed, not_opened;
};

/* dns_io.c: sockets, clocks, replies (calls nothing of the resolver's). */
uint64_t dns_boot_ns(void);
void dns_peer_text(const struct sockaddr_storage *ss, char out[64]);
void dns_resolver_addr(const struct kw_dns_resolver *r, struct sockaddr_storage *ss,
		       socklen_t *len);
int dns_watch(struct kwd_dns *dns, struct dns_sock *k);
void dns_unwatch(struct kwd_dns *dns, struct dns_sock *k);
int dns_open_sock(int family, int type, uint16_t *port);
int dns_open_upstream(struct kwd_dns *dns, const struct kw_dns_resolver *r);
void dns_pending_free(struct kwd_dns *dns, struct pending *p);
void dns_send_reply(struct kwd_dns *dns, const struct pending *p, uint8_t *msg, size_t len);

/* dns_decide.c: a client's question and the upstream's answer. */
int dns_send_upstream(struct kwd_dns *dns, struct pending *p);
void dns_fail_pending(struct kwd_dns *dns, struct pending *p, const char *why);
void dns_handle_query(struct kwd_dns *dns, const uint8_t *msg, size_t len, bool tcp,
		      int sock, uint32_t conn_gen, const struct sockaddr_storage *from,
		      socklen_t fromlen);
void dns_handle_answer(struct kwd_dns *dns, struct pending *p, uint8_t *msg, size_t len);

#endif
