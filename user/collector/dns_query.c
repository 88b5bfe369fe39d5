// SPDX-License-Identifier: Apache-2.0
/* The dns.query decision-log entry (docs/decision-log.md). Members in RFC
 * 8785 order (every key is ASCII, so byte order). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "collector/dns_query.h"
#include "jcs/jcs.h"

/* "ADDR=TTL,..." for the opened (or, with want_opened false, the refused)
 * addresses of the answer. */
static int answer_list(const struct kw_dns_query_entry *e, bool want_opened, struct kw_buf *b)
{
	const struct kw_dns_answer *a = e->answer;

	for (size_t i = 0; i < a->n_addrs; i++) {
		char host[INET6_ADDRSTRLEN], ttl[16];

		if (e->opened[i] != want_opened)
			continue;
		inet_ntop(a->addrs[i].family == 4 ? AF_INET : AF_INET6, a->addrs[i].addr, host,
			  sizeof(host));
		snprintf(ttl, sizeof(ttl), "=%u", e->granted_ttl[i]);
		if (b->len && kw_buf_putc(b, ','))
			return -ENOMEM;
		if (kw_buf_puts(b, host) || kw_buf_puts(b, ttl))
			return -ENOMEM;
	}
	return 0;
}

int kw_dns_query_entry(const struct kw_dns_query_entry *e, struct kw_buf *out)
{
	struct kw_buf answers = { 0 }, refused = { 0 }, cnames = { 0 };
	const struct kw_dns_answer *a = e->answer;
	const char *type = kw_dns_type_name(e->q->qtype);
	const char *rcode = kw_dns_rcode_name(e->rcode);
	size_t start = out->len;
	struct jcs_obj o;
	int r = 0;

	if (e->seq > (uint64_t)JCS_MAX_SAFE_INT)
		return -EINVAL;
	if (a) {
		r = answer_list(e, true, &answers);
		r = r ?: answer_list(e, false, &refused);
		for (size_t i = 0; !r && i < a->n_cnames; i++)
			r = (i && kw_buf_putc(&cnames, ',')) || kw_buf_puts(&cnames, a->cnames[i]) ?
				    -ENOMEM : 0;
	}
	r = r ?: jcs_obj_begin(&o, out);
	if (a)
		r = r ?: jcs_obj_strn(&o, "answers", answers.data ? answers.data : "", answers.len);
	r = r ?: jcs_obj_str(&o, "client", e->client);
	if (a && a->n_cnames)
		r = r ?: jcs_obj_strn(&o, "cnames", cnames.data, cnames.len);
	r = r ?: jcs_obj_str(&o, "decision", e->permit ? "permit" : "deny");
	r = r ?: jcs_obj_bool(&o, "enforced", !e->permit && e->enforced);
	if (e->error)
		r = r ?: jcs_obj_str(&o, "error", e->error);
	r = r ?: jcs_obj_strn_lossy(&o, "name", e->q->name, strlen(e->q->name), NULL);
	if (a && refused.len)
		r = r ?: jcs_obj_strn(&o, "not_opened", refused.data, refused.len);
	r = r ?: jcs_obj_str(&o, "proto", e->proto);
	if (type)
		r = r ?: jcs_obj_str(&o, "qtype", type);
	else
		r = r ?: jcs_obj_int(&o, "qtype", e->q->qtype);
	if (rcode)
		r = r ?: jcs_obj_str(&o, "rcode", rcode);
	else
		r = r ?: jcs_obj_int(&o, "rcode", e->rcode);
	r = r ?: jcs_obj_str(&o, "rule", e->rule);
	r = r ?: jcs_obj_int(&o, "seq", (int64_t)e->seq);
	r = r ?: jcs_obj_str(&o, "source", "collector");
	r = r ?: jcs_obj_str(&o, "tool", "dns.query");
	r = r ?: jcs_obj_int(&o, "ts", e->ts_us);
	r = r ?: jcs_obj_end(&o);
	kw_buf_free(&answers);
	kw_buf_free(&refused);
	kw_buf_free(&cnames);
	if (r && out->len > start) {
		out->len = start;
		out->data[start] = '\0';
	}
	return r == -EILSEQ ? -EINVAL : r;
}
