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

#include "kwitness/jcs.h"
#include "kwitnessd.h"

/* A client that does not read its replies is dropped past this. */
#define KWD_MAX_PENDING_OUT (64u * 1024 * 1024)

json_t *kwd_error(const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Messages quote client input; keep them printable ASCII so the reply
	 * is always valid, single-line JSON. */
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '?';
	return json_pack("{s:b, s:s, s:s}", "ok", 0, "error", code, "message", msg);
}

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
	old = umask(0117);
	e = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (e < 0 || listen(fd, 128) < 0) {
		e = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return e;
	}
	if (chmod(path, 0660) < 0 ||
	    (d->cfg.have_group && chown(path, (uid_t)-1, d->cfg.group) < 0)) {
		e = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		return e;
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

/* Supplementary groups come from /proc/<pid>/status ("Groups:"). */
bool kwd_pid_in_group(pid_t pid, gid_t group, gid_t primary)
{
	char path[64], line[4096];
	bool found = false;
	FILE *f;

	if (primary == group)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *p, *end;

		if (strncmp(line, "Groups:", 7))
			continue;
		for (p = line + 7;; p = end) {
			unsigned long g = strtoul(p, &end, 10);

			if (end == p)
				break;
			if ((gid_t)g == group)
				found = true;
		}
		break;
	}
	fclose(f);
	return found;
}

static bool peer_allowed(struct kwd *d, int fd, struct kwd_peer *peer)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return false;
	peer->uid = cred.uid;
	peer->gid = cred.gid;
	peer->pid = cred.pid;
	if (cred.uid == 0)
		return true;
	if (!d->cfg.have_group)
		return false;
	return kwd_pid_in_group(cred.pid, d->cfg.group, cred.gid);
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

static void client_kill(struct kwd_client *c)
{
	if (c->dead)
		return;
	c->dead = true;
	epoll_ctl(c->d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
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
		free(c);
	}
}

static void client_update_events(struct kwd_client *c)
{
	struct epoll_event ev = { .data.ptr = &c->w };

	ev.events = (c->close_after_write ? 0 : EPOLLIN) |
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
		kw_buf_reset(&c->out);
		c->out_off = 0;
		if (c->close_after_write && !c->awaiting) {
			client_kill(c);
			return;
		}
	}
	client_update_events(c);
}

static void client_send(struct kwd_client *c, json_t *reply)
{
	char *text;

	if (c->dead) {
		json_decref(reply);
		return;
	}
	/* A reply that could not be built (a string that is not UTF-8) still
	 * gets an answer. */
	if (!reply)
		reply = kwd_error("internal", "the reply could not be encoded");
	if (!reply) {
		client_kill(c);
		return;
	}
	text = json_dumps(reply, JSON_COMPACT);
	json_decref(reply);
	if (!text || c->out.len - c->out_off > KWD_MAX_PENDING_OUT ||
	    kw_buf_puts(&c->out, text) || kw_buf_putc(&c->out, '\n')) {
		free(text);
		client_kill(c);
		return;
	}
	free(text);
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

/* Returns the reply; NULL with *deferred set when it comes later (close). */
static json_t *handle_request(struct kwd_client *c, const char *line, size_t len, bool *deferred)
{
	struct jcs_error jerr;
	json_t *req, *reply;
	const char *op;

	req = jcs_parse(line, len, &jerr);
	if (!req)
		return kwd_error("malformed_json", "line %zu column %zu: %s", jerr.line,
				 jerr.column, jerr.message);
	if (!json_is_object(req)) {
		json_decref(req);
		return kwd_error("malformed_request", "a request is a JSON object");
	}
	op = json_string_value(json_object_get(req, "op"));
	if (!op)
		reply = kwd_error("missing_field", "op: a string is required");
	else if (!strcmp(op, "open"))
		reply = kwd_session_open(c->d, req, &c->peer);
	else if (!strcmp(op, "close")) {
		reply = kwd_session_close_req(c->d, req, c->id, &c->peer);
		if (!reply) {
			c->awaiting++; /* the reply comes when the session is drained */
			*deferred = true;
		}
	}
	else if (!strcmp(op, "status"))
		reply = kwd_status(c->d, false, &c->peer);
	else if (!strcmp(op, "list"))
		reply = kwd_status(c->d, true, &c->peer);
	else if (!strcmp(op, "ping"))
		reply = json_pack("{s:b}", "ok", 1);
	else
		reply = kwd_error("unknown_op", "unknown op '%.64s' (open, close, status, list, ping)", op);
	json_decref(req);
	return reply;
}

static void answer(struct kwd_client *c, const char *line, size_t len)
{
	bool deferred = false;
	json_t *reply = handle_request(c, line, len, &deferred);

	if (!deferred)
		client_send(c, reply);
}

/* Handles every complete line in the input buffer. */
static void client_process(struct kwd_client *c, bool eof)
{
	size_t start = 0;

	while (!c->dead && !c->close_after_write) {
		char *nl = memchr(c->in.data + start, '\n', c->in.len - start);
		size_t len;

		if (!nl) {
			if (c->in.len - start > KWD_MAX_MESSAGE) {
				client_send(c, kwd_error("message_too_large",
							 "a message is at most %u bytes",
							 KWD_MAX_MESSAGE));
				c->close_after_write = true;
				break;
			}
			if (eof && c->in.len > start) {
				/* A last line without its newline still counts. */
				len = c->in.len - start;
				answer(c, c->in.data + start, len);
				start = c->in.len;
			}
			break;
		}
		len = (size_t)(nl - (c->in.data + start));
		if (len > KWD_MAX_MESSAGE) {
			client_send(c, kwd_error("message_too_large", "a message is at most %u bytes",
						 KWD_MAX_MESSAGE));
			c->close_after_write = true;
			break;
		}
		if (len && c->in.data[start + len - 1] == '\r')
			len--;
		if (len)
			answer(c, c->in.data + start, len);
		start = (size_t)(nl - c->in.data) + 1;
	}
	if (c->dead)
		return;
	if (start) {
		memmove(c->in.data, c->in.data + start, c->in.len - start);
		c->in.len -= start;
	}
	if (eof || c->close_after_write) {
		c->close_after_write = true;
		/* Nothing left to say, unless a close reply is still coming. */
		if (c->out.len == c->out_off && !c->awaiting)
			client_kill(c);
		else
			client_update_events(c);
	}
}

void kwd_client_event(struct kwd_client *c, uint32_t events)
{
	bool eof = false;

	if (c->dead)
		return;
	if (events & EPOLLOUT)
		client_flush(c);
	if (c->dead)
		return;
	if (events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP | EPOLLERR)) {
		/* Bounded per wakeup, so one client cannot monopolise the loop. */
		for (int rounds = 0; rounds < 16; rounds++) {
			ssize_t n;

			if (kw_buf_reserve(&c->in, 65536)) {
				client_kill(c);
				return;
			}
			n = recv(c->fd, c->in.data + c->in.len, 65536, MSG_DONTWAIT);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				if (errno != EAGAIN && errno != EWOULDBLOCK)
					eof = true;
				break;
			}
			if (n == 0) {
				eof = true;
				break;
			}
			c->in.len += (size_t)n;
			if (c->in.len > KWD_MAX_MESSAGE + 65536)
				break;
		}
		client_process(c, eof);
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
			static const char busy[] = "{\"ok\":false,\"error\":\"busy\","
						   "\"message\":\"too many control connections\"}\n";

			if (send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				(void)0;
			close(fd);
			continue;
		}
		if (!peer_allowed(d, fd, &peer)) {
			refuse(fd, "permission_denied", "root or the kwitness group only");
			kwd_log(d, LOG_NOTICE, "refused a control client (uid %d)", (int)peer.uid);
			continue;
		}
		/* A sandboxed process, root or not, must not steer the witness
		 * (close its own session, open one over another). */
		in = kwd_session_of_pid(d, peer.pid);
		if (in) {
			refuse(fd, "forbidden_from_session",
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
