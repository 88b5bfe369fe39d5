/* SPDX-License-Identifier: Apache-2.0 */
/* The resolver's sockets and replies to its clients (dns_state.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bpf/resolver_guard.h"
#include "dns_state.h"
#include "kwd.h"

uint64_t dns_boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void dns_peer_text(const struct sockaddr_storage *ss, char out[64])
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

void dns_resolver_addr(const struct kw_dns_resolver *r, struct sockaddr_storage *ss,
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

int dns_watch(struct kwd_dns *dns, struct dns_sock *k)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &k->w };

	k->w.kind = KWD_W_DNS;
	k->w.ptr = k;
	k->dns = dns;
	return epoll_ctl(dns->env.d->epfd, EPOLL_CTL_ADD, k->fd, &ev) ? -errno : 0;
}

void dns_unwatch(struct kwd_dns *dns, struct dns_sock *k)
{
	if (k->fd < 0)
		return;
	epoll_ctl(dns->env.d->epfd, EPOLL_CTL_DEL, k->fd, NULL);
	/* a listener's or an upstream socket's port: no longer guarded */
	if (k->kind != SK_CONN)
		kw_resolver_guard_release(dns->env.d->hooks, k->fd);
	close(k->fd);
	k->fd = -1;
}

/* A socket on the loopback, port chosen by the kernel. */
int dns_open_sock(int family, int type, uint16_t *port)
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

/* A socket for one try of one question, connected to r: the kernel binds it
 * to a port of the ephemeral range picked at random (RFC 6056) and gives it
 * only datagrams from r's address and port. Its port is guarded before a
 * question goes out on it: no session task can send to it. */
int dns_open_upstream(struct kwd_dns *dns, const struct kw_dns_resolver *r)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, e;

	dns_resolver_addr(r, &ss, &len);
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&ss, len) < 0)
		e = -errno;
	else
		e = kw_resolver_guard_upstream(dns->env.d->hooks, fd);
	if (e) {
		close(fd);
		return e;
	}
	return fd;
}

void dns_pending_free(struct kwd_dns *dns, struct pending *p)
{
	if (p->used)
		dns_unwatch(dns, &p->up);
	free(p->msg);
	memset(p, 0, sizeof(*p));
	p->up.fd = -1;
}

void dns_send_reply(struct kwd_dns *dns, const struct pending *p, uint8_t *msg, size_t len)
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
		struct dns_conn *c = &dns->conn[p->client_sock];
		uint8_t hdr[2] = { (uint8_t)(len >> 8), (uint8_t)len };
		struct iovec iov[2] = { { hdr, 2 }, { msg, len } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

		if (c->k.fd < 0 || c->conn_gen != p->conn_gen)
			return; /* the connection went away */
		if (sendmsg(c->k.fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)(len + 2))
			dns_unwatch(dns, &c->k); /* a client that does not read its answer */
	}
}
