/* SPDX-License-Identifier: Apache-2.0 */
/* The decision fan-out, see fanout.h. One lock guards the subscribers and
 * their queues; the log thread holds it for a copy per subscriber, consumers
 * for one unlink. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fanout.h"
#include "kwd.h"
#include "session.h"

struct kwd_fan_sub {
	struct kwd_fan_sub *next;
	struct kwd_fan_filter filt;
	int wake_fd;
	struct kwd_fan_entry *head, *tail;
	size_t n, bytes;
	uint64_t missed_total;
	uint64_t missed_pending; /* not yet carried by a queued entry */
	bool ended;
};

struct kwd_fanout {
	pthread_mutex_t lock;
	struct kwd_fan_sub *subs;
	atomic_uint n_subs; /* read without the lock: no subscriber, no work */
	size_t mem;
};

struct kwd_fanout *kwd_fanout_new(void)
{
	struct kwd_fanout *f = calloc(1, sizeof(*f));

	if (f && pthread_mutex_init(&f->lock, NULL)) {
		free(f);
		return NULL;
	}
	return f;
}

static void sub_drain(struct kwd_fanout *f, struct kwd_fan_sub *sub)
{
	while (sub->head) {
		struct kwd_fan_entry *e = sub->head;

		sub->head = e->next;
		f->mem -= e->len;
		free(e);
	}
	sub->tail = NULL;
	sub->n = sub->bytes = 0;
}

void kwd_fanout_free(struct kwd_fanout *f)
{
	if (!f)
		return;
	while (f->subs) {
		struct kwd_fan_sub *sub = f->subs;

		f->subs = sub->next;
		sub_drain(f, sub);
		free(sub);
	}
	pthread_mutex_destroy(&f->lock);
	free(f);
}

struct kwd_fan_sub *kwd_fanout_subscribe(struct kwd_fanout *f, const struct kwd_fan_filter *filt,
					 int wake_fd)
{
	struct kwd_fan_sub *sub;

	if (atomic_load(&f->n_subs) >= KWD_FANOUT_SUBS_MAX)
		return NULL;
	sub = calloc(1, sizeof(*sub));
	if (!sub)
		return NULL;
	sub->filt = *filt;
	sub->wake_fd = wake_fd;
	pthread_mutex_lock(&f->lock);
	sub->next = f->subs;
	f->subs = sub;
	atomic_fetch_add(&f->n_subs, 1);
	pthread_mutex_unlock(&f->lock);
	return sub;
}

void kwd_fanout_unsubscribe(struct kwd_fanout *f, struct kwd_fan_sub *sub)
{
	pthread_mutex_lock(&f->lock);
	for (struct kwd_fan_sub **pp = &f->subs; *pp; pp = &(*pp)->next)
		if (*pp == sub) {
			*pp = sub->next;
			atomic_fetch_sub(&f->n_subs, 1);
			break;
		}
	sub_drain(f, sub);
	pthread_mutex_unlock(&f->lock);
	free(sub);
}

static void wake(int fd)
{
	uint64_t one = 1;

	if (fd >= 0)
		(void)!write(fd, &one, sizeof(one));
}

struct kwd_fan_entry *kwd_fanout_pop(struct kwd_fanout *f, struct kwd_fan_sub *sub,
				     uint64_t *missed, bool *ended)
{
	struct kwd_fan_entry *e;

	pthread_mutex_lock(&f->lock);
	e = sub->head;
	*missed = 0;
	if (e) {
		sub->head = e->next;
		if (!sub->head)
			sub->tail = NULL;
		sub->n--;
		sub->bytes -= e->len;
		f->mem -= e->len;
		e->next = NULL;
	} else {
		*missed = sub->missed_pending;
		sub->missed_pending = 0;
	}
	*ended = sub->ended && !sub->head;
	pthread_mutex_unlock(&f->lock);
	return e;
}

void kwd_fanout_counts(struct kwd_fanout *f, struct kwd_fan_sub *sub, uint64_t *queued,
		       uint64_t *missed)
{
	pthread_mutex_lock(&f->lock);
	*queued = sub->n;
	*missed = sub->missed_total;
	pthread_mutex_unlock(&f->lock);
}

/* The value of member key in a canonical flat entry, or NULL. A key is
 * always `{"key":` or `,"key":`; inside a string every quote is escaped, so
 * neither can match there. */
static const char *member(const char *line, size_t len, const char *key)
{
	char pat[40];
	size_t n = (size_t)snprintf(pat, sizeof(pat), ",\"%s\":", key);
	const char *p;

	if (n >= sizeof(pat))
		return NULL;
	if (len > n && line[0] == '{' && !memcmp(line + 1, pat + 1, n - 1))
		return line + n;
	p = memmem(line, len, pat, n);
	return p ? p + n : NULL;
}

static bool member_is(const char *line, size_t len, const char *key, const char *want)
{
	const char *v = member(line, len, key);
	size_t n = strlen(want);

	return v && (size_t)(line + len - v) >= n && !memcmp(v, want, n);
}

static uint64_t member_seq(const char *line, size_t len)
{
	const char *v = member(line, len, "seq");
	uint64_t seq = 0;
	int digits = 0;

	if (!v)
		return KWD_FAN_NO_SEQ;
	for (; v < line + len && *v >= '0' && *v <= '9' && digits < 16; v++, digits++)
		seq = seq * 10 + (uint64_t)(*v - '0');
	return digits ? seq : KWD_FAN_NO_SEQ;
}

static bool wants(const struct kwd_fan_sub *sub, const char *session, uid_t owner, bool deny,
		  bool last)
{
	if (sub->ended)
		return false;
	if (sub->filt.session[0] && strcmp(sub->filt.session, session))
		return false;
	if (!kwd_authz_session(&sub->filt.peer, owner))
		return false;
	/* a one-session watcher hears of its session's close even with --denials */
	return !sub->filt.denials || deny || (last && sub->filt.session[0]);
}

/* Queues a copy for sub, or counts it missed; the close entry of a
 * one-session subscriber is queued past the bounds (it ends the stream). */
static void offer(struct kwd_fanout *f, struct kwd_fan_sub *sub, const struct kwd_fan_entry *proto,
		  const char *line)
{
	bool must = proto->last && sub->filt.session[0];
	struct kwd_fan_entry *e = NULL;

	if (must || (sub->n < sub->filt.queue_max &&
		     sub->bytes + proto->len <= KWD_FANOUT_QUEUE_BYTES &&
		     f->mem + proto->len <= KWD_FANOUT_MEM_MAX))
		e = malloc(sizeof(*e) + proto->len + 1);
	if (must)
		sub->ended = true;
	if (!e) {
		sub->missed_total++;
		sub->missed_pending++;
		return;
	}
	memcpy(e, proto, sizeof(*e));
	memcpy(e->line, line, proto->len);
	e->line[proto->len] = '\0';
	e->missed_before = sub->missed_pending;
	sub->missed_pending = 0;
	if (sub->tail)
		sub->tail->next = e;
	else
		sub->head = e;
	sub->tail = e;
	sub->n++;
	sub->bytes += e->len;
	f->mem += e->len;
	if (sub->n == 1)
		wake(sub->wake_fd);
}

void kwd_fanout_publish(struct kwd_fanout *f, const char *session, uid_t owner, const char *line,
			size_t len)
{
	struct kwd_fan_entry proto = { .len = len };

	if (!f || !atomic_load(&f->n_subs))
		return;
	proto.seq = member_seq(line, len);
	proto.deny = member_is(line, len, "decision", "\"deny\"");
	proto.decision = proto.seq != KWD_FAN_NO_SEQ && !member_is(line, len, "tool", "\"proc\"");
	proto.last = member_is(line, len, "tool", "\"kwitness.close\"");
	snprintf(proto.session, sizeof(proto.session), "%s", session);
	pthread_mutex_lock(&f->lock);
	for (struct kwd_fan_sub *sub = f->subs; sub; sub = sub->next) {
		bool was_ended = sub->ended;

		if (wants(sub, session, owner, proto.deny, proto.last))
			offer(f, sub, &proto, line);
		if (sub->ended && !was_ended && !sub->n)
			wake(sub->wake_fd); /* ended with nothing queued: say so */
	}
	pthread_mutex_unlock(&f->lock);
}

static void session_tap(void *ctx, const char *line, size_t len)
{
	struct kwd_session *s = ctx;

	kwd_fanout_publish(s->d->fanout, s->id, s->owner, line, len);
}

void kwd_fanout_tap(struct kwd_session *s)
{
	s->log.tap = session_tap;
	s->log.tap_ctx = s;
}
