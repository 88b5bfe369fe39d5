/* SPDX-License-Identifier: Apache-2.0 */
/* The control socket: JSON lines over a Unix stream socket. Every client is
 * non-blocking and served from the main epoll loop, so a slow or hostile
 * client never stalls ring buffer consumption. The peer is checked with
 * SO_PEERCRED: root, or a member of the configured group. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "client/protocol.h"
#include "control.h"
#include "harden.h"
#include "kwd.h"
#include "session.h"
#include "util.h"
#include "watch.h"


static int mkdir_parents(const char *path)
{
	char tmp[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *p;

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	p = strrchr(tmp, '/');
	if (!p || p == tmp)
		return 0;
	*p = '\0';
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int kwd_control_listen(struct kwd *d, char *err, size_t errlen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	const char *path = d->cfg.socket_path;
	struct epoll_event ev = { .events = EPOLLIN };
	mode_t old;
	int fd, e;

	if (strlen(path) >= sizeof(a.sun_path)) {
		snprintf(err, errlen, "socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	memcpy(a.sun_path, path, strlen(path) + 1);
	e = mkdir_parents(path);
	if (e) {
		snprintf(err, errlen, "cannot create the folder of %s: %s", path, strerror(-e));
		return e;
	}
	{
		char dir[sizeof(a.sun_path)];
		char *slash;

		memcpy(dir, path, strlen(path) + 1);
		slash = strrchr(dir, '/');
		if (!slash)
			snprintf(dir, sizeof(dir), ".");
		else
			slash[slash == dir] = '\0';
		e = kwd_check_dir("socket folder", dir, err, errlen);
		if (e)
			return e;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return e;
	}
	/* A socket file left by a collector that died is replaced; one that
	 * still answers belongs to a running collector. */
	if (access(path, F_OK) == 0) {
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof(a)) == 0) {
			close(probe);
			close(fd);
			snprintf(err, errlen, "%s: another kwitnessd is listening there", path);
			return -EADDRINUSE;
		}
		if (probe >= 0)
			close(probe);
		unlink(path);
	}
	/* bind creates the node 0660 (the umask); the group is set through a
	 * handle on that very node, not by path. */
	old = umask(0117);
	e = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (e < 0 || listen(fd, 128) < 0) {
		e = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return e;
	}
	if (d->cfg.have_group) {
		int node = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;

		e = 0;
		if (node < 0 || fstat(node, &st) < 0)
			e = -errno;
		else if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
			e = -EPERM;
		else if (fchownat(node, "", (uid_t)-1, d->cfg.group, AT_EMPTY_PATH) < 0)
			e = -errno;
		if (node >= 0)
			close(node);
		if (e) {
			snprintf(err, errlen, "%s: setting its group: %s", path, strerror(-e));
			close(fd);
			unlink(path);
			return e;
		}
	}
	d->listen_fd = fd;
	d->listen_w.kind = KWD_W_LISTEN;
	ev.data.ptr = &d->listen_w;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		e = -errno;
		snprintf(err, errlen, "epoll: %s", strerror(errno));
		return e;
	}
	return 0;
}

/* One error line, then the connection is closed. */
static void refuse(int fd, const char *code, const char *message)
{
	json_t *e = kwd_error(code, "%s", message);
	char *text = e ? json_dumps(e, JSON_COMPACT) : NULL;

	if (text && send(fd, text, strlen(text), MSG_NOSIGNAL | MSG_DONTWAIT) >= 0)
		(void)!send(fd, "\n", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	free(text);
	json_decref(e);
	close(fd);
}

/* Keeps d->client_mem equal to the bytes every client's buffers hold. */
static void client_account(struct kwd_client *c)
{
	size_t now = c->in.cap + c->out.cap;

	c->d->client_mem = c->d->client_mem - c->mem + now;
	c->mem = now;
}

static void client_kill(struct kwd_client *c)
{
	if (c->dead)
		return;
	c->dead = true;
	if (c->backlog) {
		c->backlog = false;
		c->d->n_backlog--;
	}
	if (c->fd >= 0) {
		epoll_ctl(c->d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
	}
	c->fd = -1;
	/* Its memory goes back now, not at the reap. */
	kw_buf_free(&c->in);
	kw_buf_free(&c->out);
	c->out_off = 0;
	client_account(c);
}

/* Drops a client that went over a bound, with a notice. */
static void client_drop(struct kwd_client *c, const char *what, size_t bound)
{
	kwd_log(c->d, LOG_NOTICE, "control client %llu (uid %d): %s over %zu bytes: disconnected",
		(unsigned long long)c->id, (int)c->peer.uid, what, bound);
	client_kill(c);
}

/* After a buffer grew: false (and the client is gone) when a bound is
 * crossed. queued: the reply bytes that were waiting before this reply (one
 * reply of any size is always taken; it is the pile-up that is bounded). */
static bool client_within_bounds(struct kwd_client *c, size_t queued)
{
	client_account(c);
	if (queued > KWD_CLIENT_OUT_MAX) {
		client_drop(c, "unread replies", KWD_CLIENT_OUT_MAX);
		return false;
	}
	if (c->d->client_mem > KWD_CLIENTS_MEM_MAX) {
		client_drop(c, "all control clients' buffers", KWD_CLIENTS_MEM_MAX);
		return false;
	}
	return true;
}

void kwd_clients_reap(struct kwd *d)
{
	struct kwd_client **pp = &d->clients;

	while (*pp) {
		struct kwd_client *c = *pp;

		if (!c->dead) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		d->n_clients--;
		kw_buf_free(&c->in);
		kw_buf_free(&c->out);
		client_account(c);
		free(c);
	}
}

static void client_update_events(struct kwd_client *c)
{
	struct epoll_event ev = { .data.ptr = &c->w };

	/* A client with requests still queued is not read until they are
	 * answered: its input stays at most one chunk past a line. */
	ev.events = (c->close_after_write || c->backlog ? 0 : EPOLLIN) |
		    (c->out.len > c->out_off ? EPOLLOUT : 0);
	epoll_ctl(c->d->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void client_flush(struct kwd_client *c)
{
	while (c->out_off < c->out.len) {
		ssize_t n = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			client_kill(c);
			return;
		}
		c->out_off += (size_t)n;
	}
	if (c->out_off == c->out.len) {
		/* A buffer that grew for a large reply is given back. */
		if (c->out.cap > KWD_CLIENT_KEEP)
			kw_buf_free(&c->out);
		else
			kw_buf_reset(&c->out);
		c->out_off = 0;
		client_account(c);
		if (c->close_after_write && !c->awaiting) {
			client_kill(c);
			return;
		}
	}
	client_update_events(c);
}

static void client_send(struct kwd_client *c, json_t *reply)
{
	size_t queued;
	char *text;

	if (c->dead) {
		json_decref(reply);
		return;
	}
	/* A reply that could not be built (a string that is not UTF-8) still
	 * gets an answer. */
	if (!reply)
		reply = kwd_error(KW_ERR_INTERNAL, "the reply could not be encoded");
	if (!reply) {
		client_kill(c);
		return;
	}
	text = json_dumps(reply, JSON_COMPACT);
	json_decref(reply);
	/* Sent bytes are cut from the front once they are half the buffer, so
	 * a client that reads slowly but steadily does not grow it. */
	if (c->out_off && c->out_off >= c->out.len / 2) {
		memmove(c->out.data, c->out.data + c->out_off, c->out.len - c->out_off);
		c->out.len -= c->out_off;
		c->out_off = 0;
	}
	queued = c->out.len - c->out_off;
	if (!text || kw_buf_puts(&c->out, text) || kw_buf_putc(&c->out, '\n')) {
		free(text);
		client_kill(c);
		return;
	}
	free(text);
	if (!client_within_bounds(c, queued))
		return;
	client_flush(c);
}

void kwd_reply_to(struct kwd *d, uint64_t client_id, json_t *reply)
{
	for (struct kwd_client *c = d->clients; c; c = c->next)
		if (c->id == client_id && !c->dead) {
			if (c->awaiting)
				c->awaiting--;
			client_send(c, reply);
			if (!c->dead && c->close_after_write && !c->awaiting &&
			    c->out.len == c->out_off)
				client_kill(c);
			return;
		}
	json_decref(reply);
}

/* A watch: the connection goes to the watch thread (watch.c) with the
 * replies not yet sent; NULL once it went, else the refusal. */
static json_t *client_watch(struct kwd_client *c, const struct kw_request *req)
{
	size_t n = c->out.len - c->out_off;
	json_t *refusal = kwd_watch_request(c->d, req, &c->peer, c->fd,
					    n ? c->out.data + c->out_off : "", n);

	if (refusal)
		return refusal;
	epoll_ctl(c->d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	c->fd = -1;
	c->close_after_write = true;
	c->awaiting = 0;
	c->out_off = c->out.len;
	client_kill(c);
	return NULL;
}

/* Returns the reply; NULL with *deferred set when it comes later (close,
 * watch). */
static json_t *handle_request(struct kwd_client *c, const char *line, size_t len, bool *deferred)
{
	struct kw_request_error rerr;
	struct kw_request req;
	json_t *reply = NULL;

	if (kw_request_parse(line, len, &req, &rerr))
		return kwd_error(rerr.code, "%s", rerr.message);
	switch (req.op) {
	case KW_REQ_OPEN:
		reply = kwd_session_open(c->d, &req, &c->peer);
		break;
	case KW_REQ_CLOSE:
		reply = kwd_session_close_req(c->d, &req, c->id, &c->peer);
		if (!reply) {
			c->awaiting++; /* the reply comes when the session is drained */
			*deferred = true;
		}
		break;
	case KW_REQ_STATUS:
		reply = kwd_status(c->d, false, &c->peer);
		break;
	case KW_REQ_LIST:
		reply = kwd_status(c->d, true, &c->peer);
		break;
	case KW_REQ_PING:
		reply = json_pack("{s:b}", KW_F_OK, 1);
		break;
	case KW_REQ_WATCH:
		reply = client_watch(c, &req);
		*deferred = !reply;
		break;
	}
	kw_request_free(&req);
	return reply;
}

static void answer(struct kwd_client *c, const char *line, size_t len)
{
	bool deferred = false;
	json_t *reply = handle_request(c, line, len, &deferred);

	if (!deferred)
		client_send(c, reply);
}

/* Answers complete lines of the input buffer: up to KWD_REQUESTS_PER_CLIENT
 * per loop turn, and KWD_REQUESTS_PER_TURN for all clients together. With
 * more waiting the client is backlogged (served on a later turn, not read
 * meanwhile), so clients never hold the loop away from the ring buffers. */
static void client_process(struct kwd_client *c)
{
	size_t start = 0;
	unsigned answered = 0;
	bool more = false;

	c->d->rr_last = c->id;

	while (!c->dead && !c->close_after_write) {
		char *nl = memchr(c->in.data + start, '\n', c->in.len - start);
		size_t len;

		if (!nl) {
			if (c->in.len - start > KW_PROTO_MAX_REQUEST) {
				client_send(c, kwd_error(KW_ERR_MESSAGE_TOO_LARGE,
							 "a message is at most %u bytes",
							 KW_PROTO_MAX_REQUEST));
				c->close_after_write = true;
				break;
			}
			if (c->eof && c->in.len > start) {
				/* A last line without its newline still counts. */
				len = c->in.len - start;
				answer(c, c->in.data + start, len);
				start = c->in.len;
			}
			break;
		}
		if (answered == KWD_REQUESTS_PER_CLIENT || !c->d->turn_budget) {
			more = true;
			break;
		}
		len = (size_t)(nl - (c->in.data + start));
		if (len > KW_PROTO_MAX_REQUEST) {
			client_send(c, kwd_error(KW_ERR_MESSAGE_TOO_LARGE, "a message is at most %u bytes",
						 KW_PROTO_MAX_REQUEST));
			c->close_after_write = true;
			break;
		}
		if (len && c->in.data[start + len - 1] == '\r')
			len--;
		if (len) {
			answer(c, c->in.data + start, len);
			answered++;
			c->d->turn_budget--;
		}
		start = (size_t)(nl - c->in.data) + 1;
	}
	if (c->dead)
		return;
	if (start) {
		memmove(c->in.data, c->in.data + start, c->in.len - start);
		c->in.len -= start;
	}
	if (!c->in.len && c->in.cap > KWD_CLIENT_KEEP) {
		kw_buf_free(&c->in);
		client_account(c);
	}
	if (more != c->backlog) {
		c->backlog = more;
		if (more)
			c->d->n_backlog++;
		else
			c->d->n_backlog--;
	}
	if (!more && (c->eof || c->close_after_write)) {
		c->close_after_write = true;
		/* Nothing left to say, unless a close reply is still coming. */
		if (c->out.len == c->out_off && !c->awaiting) {
			client_kill(c);
			return;
		}
	}
	client_update_events(c);
}

void kwd_client_event(struct kwd_client *c, uint32_t events)
{
	ssize_t n;

	if (c->dead)
		return;
	if (events & EPOLLOUT)
		client_flush(c);
	if (c->dead || c->backlog || c->close_after_write ||
	    !(events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP | EPOLLERR)))
		return;
	/* One chunk per wakeup: the loop stays fair between clients. */
	if (kw_buf_reserve(&c->in, KWD_RECV_CHUNK)) {
		client_kill(c);
		return;
	}
	if (!client_within_bounds(c, 0))
		return;
	n = recv(c->fd, c->in.data + c->in.len, KWD_RECV_CHUNK, MSG_DONTWAIT);
	if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n <= 0)
		c->eof = true;
	else
		c->in.len += (size_t)n;
	client_process(c);
}

void kwd_clients_backlog(struct kwd *d)
{
	struct kwd_client *first = d->clients, *c;

	/* Round robin: the list runs from the newest client to the oldest;
	 * start after the one served last, wrap around once. */
	for (c = d->clients; c; c = c->next)
		if (c->id < d->rr_last) {
			first = c;
			break;
		}
	for (int pass = 0; pass < 2; pass++)
		for (c = pass ? d->clients : first; c && (pass == 0 || c != first); c = c->next) {
			if (!d->n_backlog || !d->turn_budget)
				return;
			if (c->backlog && !c->dead)
				client_process(c);
		}
}

void kwd_control_pause(struct kwd *d, bool pause)
{
	struct epoll_event ev = { .events = pause ? 0 : EPOLLIN, .data.ptr = &d->listen_w };

	if (d->listen_fd < 0 || d->accept_paused == pause)
		return;
	if (epoll_ctl(d->epfd, EPOLL_CTL_MOD, d->listen_fd, &ev) == 0)
		d->accept_paused = pause;
}

/* A non-root uid past its connections, or past what non-root uids leave
 * to root. */
static bool over_client_quota(const struct kwd *d, uid_t uid)
{
	unsigned mine = 0, nonroot = 0;

	if (uid == 0)
		return false;
	for (const struct kwd_client *c = d->clients; c; c = c->next) {
		if (c->dead || c->peer.uid == 0)
			continue;
		nonroot++;
		mine += c->peer.uid == uid;
	}
	return mine >= KWD_CLIENTS_PER_USER ||
	       nonroot >= KWD_MAX_CLIENTS - KWD_CLIENTS_ROOT_RESERVED;
}

void kwd_control_accept(struct kwd *d)
{
	for (;;) {
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
		struct kwd_peer peer = { .uid = (uid_t)-1 };
		struct kwd_session *in;
		struct kwd_client *c;
		int fd = accept4(d->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				/* Out of descriptors: stop listening until the next
				 * tick instead of spinning on a readable socket. */
				kwd_log(d, LOG_WARNING, "accept: %s", strerror(errno));
				kwd_control_pause(d, true);
			}
			return;
		}
		if (d->n_clients >= KWD_MAX_CLIENTS) {
			refuse(fd, KW_ERR_BUSY, "too many control connections");
			continue;
		}
		if (!kwd_authz_connect(&d->cfg, fd, &peer)) {
			refuse(fd, KW_ERR_PERMISSION_DENIED, "root or the kwitness group only");
			kwd_log(d, LOG_NOTICE, "refused a control client (uid %d)", (int)peer.uid);
			continue;
		}
		if (over_client_quota(d, peer.uid)) {
			refuse(fd, KW_ERR_BUSY, "too many control connections from this user");
			continue;
		}
		/* A sandboxed process, root or not, must not steer the witness
		 * (close its own session, open one over another). */
		in = kwd_session_of_pid(d, peer.pid);
		if (in) {
			refuse(fd, KW_ERR_FORBIDDEN_FROM_SESSION,
			       "a process inside a session cannot use the control socket");
			kwd_log(d, LOG_NOTICE, "refused a control client inside session %s (pid %d)",
				in->id, (int)peer.pid);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->w.kind = KWD_W_CLIENT;
		c->w.ptr = c;
		c->d = d;
		c->fd = fd;
		c->peer = peer;
		c->id = ++d->next_client_id;
		ev.data.ptr = &c->w;
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			free(c);
			continue;
		}
		c->next = d->clients;
		d->clients = c;
		d->n_clients++;
	}
}

void kwd_control_shutdown(struct kwd *d)
{
	for (struct kwd_client *c = d->clients; c; c = c->next) {
		if (c->dead)
			continue;
		/* Best effort: replies already queued (close records) go out. */
		for (int tries = 0; tries < 100 && !c->dead && c->out.len > c->out_off; tries++) {
			struct pollfd p = { .fd = c->fd, .events = POLLOUT };

			if (poll(&p, 1, 20) > 0)
				client_flush(c);
		}
		client_kill(c);
	}
	kwd_clients_reap(d);
	if (d->listen_fd >= 0) {
		close(d->listen_fd);
		d->listen_fd = -1;
		unlink(d->cfg.socket_path);
	}
}
