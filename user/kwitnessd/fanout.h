/* SPDX-License-Identifier: Apache-2.0 */
/* fanout.c: every entry a session's log takes, handed as written (its
 * canonical bytes, with the session id and its seq) to subscribers: `watch`
 * clients (watch.c) and the OTLP exporter (otlp.c). Each subscriber has a
 * bounded queue; an entry that does not fit is counted as missed for that
 * subscriber and logging goes on: the log thread only copies into queues
 * and never waits for a subscriber. Subscribers are consumed on threads of
 * their own (no network I/O on the log thread). */
#ifndef KWITNESSD_FANOUT_H
#define KWITNESSD_FANOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "authz.h"

/* One subscriber's queue: bytes at most (entries: its filter's queue_max). */
#define KWD_FANOUT_QUEUE_BYTES ((size_t)32 * 1024 * 1024)
/* All subscribers' queues together. */
#define KWD_FANOUT_MEM_MAX ((size_t)128 * 1024 * 1024)
/* Subscribers at once (watch clients and exporters). */
#define KWD_FANOUT_SUBS_MAX 64

#define KWD_FAN_NO_SEQ UINT64_MAX

/* One entry as the log took it. */
struct kwd_fan_entry {
	struct kwd_fan_entry *next;
	uint64_t seq;          /* KWD_FAN_NO_SEQ: the collector's own entry (open, close, resume) */
	uint64_t missed_before; /* entries this subscriber missed just before this one */
	bool deny;
	bool decision;         /* a kernel decision (numbered, not a proc entry) */
	bool last;             /* the session's close entry */
	char session[33];
	size_t len;
	char line[];           /* the canonical bytes, NUL-terminated */
};

/* What a subscriber takes. */
struct kwd_fan_filter {
	struct kwd_peer peer;  /* sees only sessions kwd_authz_session allows */
	char session[33];      /* "": every session peer may see */
	bool denials;          /* deny decisions only */
	unsigned queue_max;    /* entries its queue holds at most */
};

struct kwd_fanout;
struct kwd_fan_sub;
struct kwd_session;

struct kwd_fanout *kwd_fanout_new(void);
void kwd_fanout_free(struct kwd_fanout *f);

/* A new subscriber; wake_fd (an eventfd the caller owns) is written when
 * its queue goes from empty to not empty, or it ends. NULL when
 * KWD_FANOUT_SUBS_MAX are subscribed or out of memory. */
struct kwd_fan_sub *kwd_fanout_subscribe(struct kwd_fanout *f, const struct kwd_fan_filter *filt,
					 int wake_fd);
/* Any thread: takes the subscriber out and frees what it still queues. */
void kwd_fanout_unsubscribe(struct kwd_fanout *f, struct kwd_fan_sub *sub);
/* The consumer's thread: the oldest queued entry (the caller frees it), or
 * NULL. *missed: entries missed with none queued after them (0 otherwise),
 * taken once; *ended: the subscriber's one session closed and its close
 * entry was taken. */
struct kwd_fan_entry *kwd_fanout_pop(struct kwd_fanout *f, struct kwd_fan_sub *sub,
				     uint64_t *missed, bool *ended);
/* Counters of one subscriber: entries queued, missed in total. */
void kwd_fanout_counts(struct kwd_fanout *f, struct kwd_fan_sub *sub, uint64_t *queued,
		       uint64_t *missed);

/* The log thread: one entry of session (owned by owner) as it goes into the
 * log (line: its canonical bytes, no newline). Never blocks on a consumer. */
void kwd_fanout_publish(struct kwd_fanout *f, const char *session, uid_t owner, const char *line,
			size_t len);
/* Makes the session's log hand its entries to d's fan-out (after its log is
 * opened or reopened; a no-op without subscribers). */
void kwd_fanout_tap(struct kwd_session *s);

#endif
