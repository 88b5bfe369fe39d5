// SPDX-License-Identifier: Apache-2.0
/* The collector's side of process lineage (see lineage.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "bpf/hooks.h"
#include "collector/proc_entry.h"
#include "policy/policy.h"
#include "dns_proxy.h"
#include "kwd.h"
#include "lineage.h"
#include "session.h"
#include "util.h"

/* One process: its reference and the digest of its last permitted exec
 * decision that its exec entry has not taken yet. */
struct proc_slot {
	uint32_t pid;
	uint64_t start_ns; /* 0: empty */
	bool has_digest;
	uint8_t sha256[KW_SHA256_LEN];
};

/* A "seen" entry waiting to enter the reorder window. */
struct queued {
	struct queued *next;
	size_t len;
	char rec[]; /* header (KWD_EV_COLLECTOR) + the line */
};

struct kwd_lineage {
	struct proc_slot *tab; /* open addressing, cap a power of two */
	size_t cap, used;
	struct queued *head, **tail;
};

static struct kwd_lineage *lineage_of(struct kwd_session *s)
{
	if (!s->lineage) {
		s->lineage = calloc(1, sizeof(*s->lineage));
		if (s->lineage)
			s->lineage->tail = &s->lineage->head;
	}
	return s->lineage;
}

void kwd_lineage_free(struct kwd_lineage *l)
{
	struct queued *q, *n;

	if (!l)
		return;
	for (q = l->head; q; q = n) {
		n = q->next;
		free(q);
	}
	free(l->tab);
	free(l);
}

static size_t hash_ref(uint32_t pid, uint64_t start_ns)
{
	uint64_t x = start_ns ^ ((uint64_t)pid << 32) ^ pid;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

static int grow(struct kwd_lineage *l)
{
	size_t cap = l->cap ? l->cap * 2 : 256, i;
	struct proc_slot *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (i = 0; i < l->cap; i++) {
		struct proc_slot *p = &l->tab[i];
		size_t j;

		if (!p->start_ns)
			continue;
		for (j = hash_ref(p->pid, p->start_ns) & (cap - 1); t[j].start_ns; j = (j + 1) & (cap - 1))
			;
		t[j] = *p;
	}
	free(l->tab);
	l->tab = t;
	l->cap = cap;
	return 0;
}

/* The process's slot; *fresh when it was not known. NULL: not known and
 * the table is full (or out of memory): the process is not remembered. */
static struct proc_slot *find(struct kwd_lineage *l, uint32_t pid, uint64_t start_ns, bool *fresh)
{
	size_t j;

	*fresh = false;
	if (!start_ns || (!l->cap && grow(l)))
		return NULL;
	for (j = hash_ref(pid, start_ns) & (l->cap - 1); l->tab[j].start_ns; j = (j + 1) & (l->cap - 1))
		if (l->tab[j].pid == pid && l->tab[j].start_ns == start_ns)
			return &l->tab[j];
	if (l->used >= KWD_LINEAGE_MAX)
		return NULL;
	if ((l->used + 1) * 2 > l->cap) {
		if (grow(l))
			return NULL;
		for (j = hash_ref(pid, start_ns) & (l->cap - 1); l->tab[j].start_ns;
		     j = (j + 1) & (l->cap - 1))
			;
	}
	*fresh = true;
	l->used++;
	l->tab[j].pid = pid;
	l->tab[j].start_ns = start_ns;
	return &l->tab[j];
}

int kwd_lineage_write(struct kwd_session *s, const void *data, size_t len)
{
	struct kwd_lineage *l = lineage_of(s);
	char digest[sizeof(KW_SHA256_PREFIX) + 2 * KW_SHA256_LEN];
	struct kw_proc_facts f;
	struct proc_slot *p;
	bool fresh;
	int e;

	e = kw_proc_event_facts(data, len, s->d->boot_to_realtime_ns, &f);
	if (e)
		return e;
	p = l ? find(l, f.pid, f.start_ns, &fresh) : NULL;
	if (p && p->has_digest && !strcmp(f.event, "exec")) {
		static const char hex[] = "0123456789abcdef";
		size_t k = strlen(KW_SHA256_PREFIX);

		memcpy(digest, KW_SHA256_PREFIX, k);
		for (size_t i = 0; i < KW_SHA256_LEN; i++) {
			digest[k++] = hex[p->sha256[i] >> 4];
			digest[k++] = hex[p->sha256[i] & 15];
		}
		digest[k] = '\0';
		f.digest = digest;
		p->has_digest = false;
	}
	kw_buf_reset(&s->log.entry);
	e = kw_proc_facts_entry(&f, &s->log.entry);
	return e ? e : kw_logwriter_append(&s->log, s->log.entry.data, s->log.entry.len);
}

/* A collector-made entry (f->seq taken here), queued for the window. */
static void queue_entry(struct kwd_session *s, struct kwd_lineage *l, const struct kw_proc_facts *f_)
{
	struct kw_proc_facts f = *f_;
	struct kw_buf line = { 0 };
	struct kw_event_hdr qh;
	struct queued *q;
	int e;

	if (kw_hooks_take_note_seq(s->d->hooks, s->slot, &f.seq))
		return;
	e = kw_proc_facts_entry(&f, &line);
	q = e ? NULL : malloc(sizeof(*q) + sizeof(qh) + line.len);
	if (!q) {
		/* its number stays a gap: the trailer counts it */
		kwd_log(s->d, LOG_ERR, "session %s: proc entry %llu not logged", s->id,
			(unsigned long long)f.seq);
		kw_buf_free(&line);
		return;
	}
	memset(&qh, 0, sizeof(qh));
	qh.seq = f.seq;
	qh.kind = KWD_EV_COLLECTOR_PROC;
	qh.decision = KW_PERMIT;
	memcpy(q->rec, &qh, sizeof(qh));
	memcpy(q->rec + sizeof(qh), line.data, line.len);
	q->len = sizeof(qh) + line.len;
	q->next = NULL;
	*l->tail = q;
	l->tail = &q->next;
	kw_buf_free(&line);
}

/* A "seen" entry for the process a decision names: what its header says. */
static void queue_seen(struct kwd_session *s, struct kwd_lineage *l, const struct kw_event_hdr *h)
{
	struct kw_proc_facts f = {
		.ts_us = kwd_now_us(), .event = "seen", .pid = h->pid, .start_ns = h->start_ns,
		.has_cgroup = true, .cgroup = h->cgroup_id, .comm = h->comm,
		.comm_len = strnlen(h->comm, sizeof(h->comm)),
	};

	queue_entry(s, l, &f);
}

void kwd_lineage_known(struct kwd_session *s, const struct kw_proc_facts *f)
{
	struct kwd_lineage *l = lineage_of(s);
	bool fresh;

	if (!l)
		return;
	if (find(l, f->pid, f->start_ns, &fresh) && !fresh)
		return; /* listed already */
	queue_entry(s, l, f);
}

void kwd_lineage_decision(struct kwd_session *s, const void *data, size_t len)
{
	const struct kw_event_hdr *h = data;
	const struct kw_ev_exec *x = data;
	struct kwd_lineage *l = lineage_of(s);
	struct proc_slot *p;
	bool fresh;

	if (!l || len < sizeof(*h) || h->kind >= KWD_EV_COLLECTOR)
		return;
	p = find(l, h->pid, h->start_ns, &fresh);
	if (!p)
		return;
	if (fresh)
		queue_seen(s, l, h);
	/* the file the next exec entry names: the script's pass, not its
	 * interpreter's (KW_EVF_INTERP) */
	if (h->kind == KW_EV_FS_EXEC && len >= sizeof(*x) && h->decision == KW_PERMIT &&
	    !(h->flags & KW_EVF_INTERP)) {
		p->has_digest = x->digest_status == KW_DIGEST_OK;
		if (p->has_digest)
			memcpy(p->sha256, x->sha256, KW_SHA256_LEN);
	}
}

unsigned kwd_lineage_flush(struct kwd_session *s)
{
	struct kwd_lineage *l = s->lineage;
	unsigned n = 0;

	while (l && l->head) {
		struct queued *q = l->head;
		const struct kw_event_hdr *h = (const void *)q->rec;

		l->head = q->next;
		if (!l->head)
			l->tail = &l->head;
		if (kwd_session_push_collector(s, h, q->rec + sizeof(*h), q->len - sizeof(*h)))
			kwd_log(s->d, LOG_ERR, "session %s: proc entry %llu not logged", s->id,
				(unsigned long long)h->seq);
		free(q);
		n++;
	}
	return n;
}
