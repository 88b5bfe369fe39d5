/* SPDX-License-Identifier: Apache-2.0 */
/* The watch thread, see watch.h. It owns the watchers' sockets (non-blocking)
 * and one eventfd that the fan-out writes when a queue fills from empty and
 * the main thread writes when a watcher is handed over. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include "fanout.h"
#include "kwd.h"
#include "session.h"
#include "thread.h"
#include "util.h"
#include "watch.h"

struct kwd_watcher {
	struct kwd_watcher *next;
	int fd;
	struct kwd_peer peer;
	struct kwd_fan_sub *sub;
	struct kw_buf out;
	size_t off;
	bool ending; /* the end line is queued: close once it is sent */
	bool dead;
	bool in_epoll;
};

struct kwd_watchers {
	/* its lock: list and stop; its wake_fd: written by the fan-out too */
	struct kwd_thread t;
	struct kwd_watcher *list;
	unsigned n;
	int epfd;
	struct kwd_fanout *fanout;
};

static void watcher_free(struct kwd_watchers *w, struct kwd_watcher *x)
{
	if (x->sub)
		kwd_fanout_unsubscribe(w->fanout, x->sub);
	if (x->fd >= 0)
		close(x->fd);
	kw_buf_free(&x->out);
	free(x);
}

/* more: entries wait though the socket takes more (the pump yielded to the
 * other watchers): EPOLLOUT, level-triggered, brings it back at once. */
static void watcher_events(struct kwd_watchers *w, struct kwd_watcher *x, bool more)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.ptr = x };

	if (more || x->out.len > x->off)
		ev.events |= EPOLLOUT;
	if (epoll_ctl(w->epfd, x->in_epoll ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, x->fd, &ev) == 0)
		x->in_epoll = true;
	else
		x->dead = true;
}

/* Sends what it can; false when the socket is gone. */
static bool watcher_send(struct kwd_watcher *x)
{
	while (x->off < x->out.len) {
		ssize_t n = send(x->fd, x->out.data + x->off, x->out.len - x->off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK;
		x->off += (size_t)n;
	}
	kw_buf_reset(&x->out);
	x->off = 0;
	return true;
}

static int put_missed(struct kw_buf *b, uint64_t missed, uint64_t total)
{
	char line[96];

	snprintf(line, sizeof(line), "{\"" KW_F_MISSED "\":%" PRIu64 ",\"" KW_F_MISSED_TOTAL
		 "\":%" PRIu64 "}\n", missed, total);
	return kw_buf_puts(b, line);
}

/* One stream line: the entry as logged, its session and seq (keys sorted,
 * so the line is canonical too). */
static int put_entry(struct kw_buf *b, const struct kwd_fan_entry *e)
{
	char tail[96];

	if (e->seq == KWD_FAN_NO_SEQ)
		snprintf(tail, sizeof(tail), ",\"" KW_F_SESSION "\":\"%s\"}\n", e->session);
	else
		snprintf(tail, sizeof(tail), ",\"" KW_F_SEQ "\":%" PRIu64 ",\"" KW_F_SESSION
			 "\":\"%s\"}\n", e->seq, e->session);
	if (kw_buf_puts(b, "{\"" KW_F_ENTRY "\":") || kw_buf_append(b, e->line, e->len))
		return -ENOMEM;
	return kw_buf_puts(b, tail);
}

/* Moves queued entries into the socket while it takes them. A watcher whose
 * socket is full stops taking entries: its queue fills and counts misses. */
static void watcher_pump(struct kwd_watchers *w, struct kwd_watcher *x)
{
	int rounds = 0;
	bool more = false;

	for (;;) {
		struct kwd_fan_entry *e = NULL;
		uint64_t missed = 0, queued, total;
		bool ended = false;
		int err = 0;

		if (!watcher_send(x)) {
			x->dead = true;
			return;
		}
		if (x->out.len > x->off || x->ending)
			break;
		while (!err && x->out.len < KWD_WATCH_OUT_MAX &&
		       (e = kwd_fanout_pop(w->fanout, x->sub, &missed, &ended))) {
			kwd_fanout_counts(w->fanout, x->sub, &queued, &total);
			if (e->missed_before)
				err = put_missed(&x->out, e->missed_before, total);
			err = err ?: put_entry(&x->out, e);
			free(e);
			if (ended)
				break;
		}
		if (!e || ended) {
			kwd_fanout_counts(w->fanout, x->sub, &queued, &total);
			if (missed)
				err = err ?: put_missed(&x->out, missed, total);
			if (ended) {
				char line[64];

				snprintf(line, sizeof(line), "{\"" KW_F_END "\":true,\"" KW_F_MISSED_TOTAL
					 "\":%" PRIu64 "}\n", total);
				err = err ?: kw_buf_puts(&x->out, line);
				x->ending = true;
			}
		}
		if (err) {
			x->dead = true;
			return;
		}
		if (!x->out.len)
			break;
		/* a watcher that keeps up does not keep the others waiting */
		if (++rounds == 8) {
			more = true;
			if (!watcher_send(x))
				x->dead = true;
			break;
		}
	}
	if (x->dead)
		return;
	if (x->ending && x->out.len == x->off)
		x->dead = true;
	else
		watcher_events(w, x, more);
}

/* The client said something or hung up: a watcher only listens. */
static void watcher_input(struct kwd_watcher *x)
{
	char buf[512];
	ssize_t n = recv(x->fd, buf, sizeof(buf), MSG_DONTWAIT);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
		x->dead = true;
}

static void reap(struct kwd_watchers *w)
{
	pthread_mutex_lock(&w->t.lock);
	for (struct kwd_watcher **pp = &w->list; *pp;) {
		struct kwd_watcher *x = *pp;

		if (!x->dead) {
			pp = &x->next;
			continue;
		}
		*pp = x->next;
		w->n--;
		pthread_mutex_unlock(&w->t.lock);
		watcher_free(w, x);
		pthread_mutex_lock(&w->t.lock);
	}
	pthread_mutex_unlock(&w->t.lock);
}

static void *watch_main(void *arg)
{
	struct kwd_watchers *w = arg;

	for (;;) {
		struct epoll_event evs[32];
		int n = epoll_wait(w->epfd, evs, 32, -1);
		bool woken = false;

		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n; i++) {
			struct kwd_watcher *x = evs[i].data.ptr;

			if (!x) {
				uint64_t v;

				(void)!read(w->t.wake_fd, &v, sizeof(v));
				woken = true;
				continue;
			}
			if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
				watcher_input(x);
			if (!x->dead && (evs[i].events & EPOLLOUT))
				watcher_pump(w, x);
		}
		if (kwd_thread_stopping(&w->t))
			break;
		/* a queue filled from empty, or a watcher arrived: the list only
		 * grows under the lock, and only this thread shrinks it */
		if (woken) {
			struct kwd_watcher *head;

			pthread_mutex_lock(&w->t.lock);
			head = w->list; /* the main thread only adds before it */
			pthread_mutex_unlock(&w->t.lock);
			for (struct kwd_watcher *x = head; x; x = x->next)
				if (!x->dead)
					watcher_pump(w, x);
		}
		reap(w);
	}
	return NULL;
}

int kwd_watch_start(struct kwd *d, char *err, size_t errlen)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	struct kwd_watchers *w = calloc(1, sizeof(*w));
	int e;

	d->fanout = kwd_fanout_new();
	if (!w || !d->fanout) {
		free(w);
		snprintf(err, errlen, "watch: out of memory");
		return -ENOMEM;
	}
	w->fanout = d->fanout;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	e = kwd_thread_init(&w->t, KWD_THREAD_EVENTFD);
	if (!e && (w->epfd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->t.wake_fd, &ev) < 0))
		e = -errno;
	if (e)
		snprintf(err, errlen, "watch: %s", strerror(-e));
	else
		e = kwd_thread_start(&w->t, d, "kwd-watch", 0, watch_main, w, err, errlen);
	if (!e) {
		d->watchers = w;
		return 0;
	}
	if (w->epfd >= 0)
		close(w->epfd);
	kwd_thread_destroy(&w->t);
	free(w);
	return e;
}

static json_t *check_quota(struct kwd_watchers *w, uid_t uid)
{
	unsigned mine = 0;

	for (struct kwd_watcher *x = w->list; x; x = x->next)
		mine += x->peer.uid == uid;
	if (w->n >= KWD_WATCHERS_MAX)
		return kwd_error(KW_ERR_BUSY, "%u watchers already", KWD_WATCHERS_MAX);
	if (uid != 0 && mine >= KWD_WATCHERS_PER_USER)
		return kwd_error(KW_ERR_BUSY, "%u watchers of this user already", KWD_WATCHERS_PER_USER);
	return NULL;
}

/* The filter for a request: the session named must be one the peer may see
 * and not yet past its close entry. */
static json_t *watch_filter(struct kwd *d, const struct kw_request *req,
			    const struct kwd_peer *peer, struct kwd_fan_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->peer = *peer;
	f->denials = req->denials_only;
	f->queue_max = d->cfg.exports.watch_queue ?: KWD_WATCH_QUEUE_DEFAULT;
	if (!req->session)
		return NULL;
	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
		struct kwd_session *s = d->slots[i];

		if (!s || strcmp(s->id, req->session))
			continue;
		if (!kwd_authz_session(peer, s->owner))
			return kwd_error(KW_ERR_FORBIDDEN_SESSION, "session %s belongs to another user",
					 s->id);
		if (s->state == KWD_S_FINISHING)
			return kwd_error(KW_ERR_SESSION_CLOSING, "session %s is closed", s->id);
		snprintf(f->session, sizeof(f->session), "%s", s->id);
		return NULL;
	}
	return kwd_error(KW_ERR_UNKNOWN_SESSION, "no open session '%.64s'", req->session);
}

json_t *kwd_watch_request(struct kwd *d, const struct kw_request *req, const struct kwd_peer *peer,
			  int fd, const char *pending, size_t pending_len)
{
	struct kwd_watchers *w = d->watchers;
	struct kwd_fan_filter filt;
	struct kwd_watcher *x;
	json_t *refusal;

	if (!w)
		return kwd_error(KW_ERR_INTERNAL, "no watch thread");
	refusal = watch_filter(d, req, peer, &filt);
	if (refusal)
		return refusal;
	pthread_mutex_lock(&w->t.lock);
	refusal = check_quota(w, peer->uid);
	pthread_mutex_unlock(&w->t.lock);
	if (refusal)
		return refusal;
	x = calloc(1, sizeof(*x));
	if (!x || kw_buf_append(&x->out, pending, pending_len) ||
	    kw_buf_puts(&x->out, "{\"" KW_F_OK "\":true}\n")) {
		if (x)
			kw_buf_free(&x->out);
		free(x);
		return kwd_error(KW_ERR_INTERNAL, "out of memory");
	}
	x->sub = kwd_fanout_subscribe(d->fanout, &filt, w->t.wake_fd);
	if (!x->sub) {
		kw_buf_free(&x->out);
		free(x);
		return kwd_error(KW_ERR_BUSY, "too many subscribers");
	}
	x->fd = fd;
	x->peer = *peer;
	pthread_mutex_lock(&w->t.lock);
	x->next = w->list;
	w->list = x;
	w->n++;
	pthread_mutex_unlock(&w->t.lock);
	kwd_thread_wake(&w->t);
	kwd_log(d, LOG_INFO, "watch: uid %d follows %s%s", (int)peer->uid,
		filt.session[0] ? filt.session : "every session it may see",
		filt.denials ? " (denials)" : "");
	return NULL;
}

void kwd_watch_stop(struct kwd *d)
{
	struct kwd_watchers *w = d->watchers;

	if (w) {
		kwd_thread_stop(&w->t);
		while (w->list) {
			struct kwd_watcher *x = w->list;

			w->list = x->next;
			watcher_free(w, x);
		}
		close(w->epfd);
		kwd_thread_destroy(&w->t);
		free(w);
		d->watchers = NULL;
	}
	kwd_fanout_free(d->fanout);
	d->fanout = NULL;
}
