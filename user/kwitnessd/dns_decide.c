/* SPDX-License-Identifier: Apache-2.0 */
/* The resolver's decisions (dns_state.h): a question against the policy's
 * names (refused, or forwarded upstream), an answer's addresses opened in
 * the kernel for the rule's ports, and each question a dns.query entry in
 * the session's log. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <syslog.h>

#include "collector/dns_query.h"
#include "bpf/hooks.h"
#include "dns_proxy.h"
#include "dns_state.h"
#include "kwd.h"
#include "util.h"
#include "metrics.h"

/* The collector's own entries go through the session's reorder window as
 * records with a kernel-like header, so they are emitted in seq order. */
static void dns_log_query(struct kwd_dns *dns, const struct pending *p, uint8_t rcode,
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
static uint64_t dns_take_seq(struct kwd_dns *dns, bool permit)
{
	const struct kwd_dns_env *s = &dns->env;
	uint64_t seq = KW_NO_SEQ;
	int r = kw_hooks_take_seq(s->d->hooks, s->slot, permit, &seq);

	if (r && r != -ENOENT)
		kwd_log(s->d, LOG_ERR, "session %s: no sequence number for a dns.query: %s", s->session,
			strerror(-r));
	return r ? KW_NO_SEQ : seq;
}

static void dns_decide(struct kwd_dns *dns, struct pending *p)
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

/* The next upstream gets the question on a fresh socket under a fresh id:
 * what answers must come from that upstream's address and port, to a port
 * and with an id nobody who did not see the question can know. */
int dns_send_upstream(struct kwd_dns *dns, struct pending *p)
{
	dns_unwatch(dns, &p->up); /* the last try's socket: its answer no longer counts */
	while (p->tried < dns->conf.n_resolvers) {
		const struct kw_dns_resolver *r = &dns->conf.resolvers[p->tried++];
		int fd = dns_open_upstream(dns, r);

		if (fd < 0)
			continue;
		p->up.kind = SK_UPSTREAM;
		p->up.fd = fd;
		if (getrandom(&p->up_id, sizeof(p->up_id), 0) != sizeof(p->up_id)) {
			dns_unwatch(dns, &p->up); /* no id worth the name: not this upstream */
			continue;
		}
		p->msg[0] = (uint8_t)(p->up_id >> 8);
		p->msg[1] = (uint8_t)p->up_id;
		p->q.id = p->up_id;
		if (dns_watch(dns, &p->up) ||
		    send(fd, p->msg, p->len, MSG_DONTWAIT) != (ssize_t)p->len) {
			dns_unwatch(dns, &p->up);
			continue;
		}
		p->deadline_ms = kwd_now_ms() + KWD_DNS_TRY_MS;
		return 0;
	}
	return -EHOSTUNREACH;
}

/* Nothing came back from any upstream: SERVFAIL, nothing opened. */
void dns_fail_pending(struct kwd_dns *dns, struct pending *p, const char *why)
{
	uint8_t out[KWD_DNS_TCP_QUERY_MAX];
	size_t n;
	uint64_t seq = dns_take_seq(dns, p->permit);

	dns->servfail++;
	/* p->msg holds the question with the upstream id; the reply gets the client's */
	n = kw_dns_reply_rcode(p->msg, &p->q, KW_DNS_SERVFAIL, out, sizeof(out));
	dns_log_query(dns, p, KW_DNS_SERVFAIL, NULL, NULL, NULL, seq, why);
	if (n)
		dns_send_reply(dns, p, out, n);
	dns_pending_free(dns, p);
}

void dns_handle_query(struct kwd_dns *dns, const uint8_t *msg, size_t len, bool tcp,
		      int sock, uint32_t conn_gen, const struct sockaddr_storage *from,
		      socklen_t fromlen)
{
	struct pending tmp, *p = NULL;
	const char *why;
	uint8_t out[KWD_DNS_TCP_QUERY_MAX];
	size_t n;

	dns->queries++;
	kwd_metrics_count(KWD_M_DNS_QUESTIONS);
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
		dns_peer_text(from, tmp.peer);
	} else {
		snprintf(tmp.peer, sizeof(tmp.peer), "%s", dns->conn[sock].peer);
	}
	tmp.up.fd = -1;
	dns_decide(dns, &tmp);
	if (!tmp.permit && tmp.enforced) {
		uint64_t seq = dns_take_seq(dns, false);

		dns->refused++;
		kwd_metrics_count(KWD_M_DNS_REFUSED);
		n = kw_dns_reply_rcode(msg, &tmp.q, KW_DNS_REFUSED, out, sizeof(out));
		dns_log_query(dns, &tmp, KW_DNS_REFUSED, NULL, NULL, NULL, seq, NULL);
		if (n)
			dns_send_reply(dns, &tmp, out, n);
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
		dns_log_query(dns, &tmp, KW_DNS_SERVFAIL, NULL, NULL, NULL, dns_take_seq(dns, tmp.permit),
			  p ? "out of memory" : "too many questions waiting");
		if (n)
			dns_send_reply(dns, &tmp, out, n);
		return;
	}
	memcpy(tmp.msg, msg, len);
	tmp.len = len;
	tmp.used = true;
	*p = tmp;
	if (dns_send_upstream(dns, p))
		dns_fail_pending(dns, p, dns->conf.n_resolvers ? "upstream unreachable" :
							    "no upstream resolver");
}

static uint32_t dns_clamp_ttl(const struct kw_dns_conf *c, uint32_t ttl)
{
	return ttl < c->min_ttl ? c->min_ttl : ttl > c->max_ttl ? c->max_ttl : ttl;
}

static bool dns_open_addr(struct kwd_dns *dns, const struct pending *p, const struct kw_dns_addr *a,
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

void dns_handle_answer(struct kwd_dns *dns, struct pending *p, uint8_t *msg, size_t len)
{
	struct kw_dns_answer *a = malloc(sizeof(*a));
	uint32_t ttl[KW_DNS_MAX_ADDRS];
	bool opened[KW_DNS_MAX_ADDRS];
	const char *why;
	uint64_t seq, now;

	if (!a) {
		dns_fail_pending(dns, p, "out of memory");
		return;
	}
	/* exactly this question's answer: its id, one question, that name, type
	 * and class (an answer without its question does not count) */
	if (len < KW_DNS_HDR_LEN || (msg[4] << 8 | msg[5]) != 1 ||
	    kw_dns_parse_answer(msg, len, &p->q, a, &why)) {
		/* not this question's answer (or malformed): keep waiting */
		free(a);
		return;
	}
	/* The number first, then the addresses: a connect they permit is
	 * numbered after this entry. */
	seq = dns_take_seq(dns, p->permit);
	now = dns_boot_ns();
	for (size_t i = 0; i < a->n_addrs; i++) {
		ttl[i] = dns_clamp_ttl(&dns->conf, a->addrs[i].ttl);
		opened[i] = (p->rule[0] || p->rule[1]) && p->permit &&
			    dns_open_addr(dns, p, &a->addrs[i], ttl[i], now, seq);
		if (!opened[i] && (p->rule[0] || p->rule[1]))
			dns->not_opened++;
	}
	dns_log_query(dns, p, a->rcode, a, ttl, opened, seq, NULL);
	dns_send_reply(dns, p, msg, len);
	free(a);
	dns_pending_free(dns, p);
}
