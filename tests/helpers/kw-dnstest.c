/* SPDX-License-Identifier: Apache-2.0 */
/* kw-dnstest: a small DNS server and client for the egress-by-name tests, the
 * DNS benchmark and the demo. Its wire format is written here from RFC 1035
 * (AAAA: RFC 3596), independently of kwitnessd's parser, so that each checks
 * the other.
 *
 *   serve ZONE PORTFILE [ADDR]
 *        an authoritative server on UDP and TCP on ADDR (default 127.0.0.1), a
 *        free port (the same for both), written to PORTFILE once it listens.
 *        ZONE is read again for every question, so a test can move a name:
 *        lines "NAME A|AAAA|CNAME VALUE TTL" (other lines are ignored). CNAME
 *        chains are followed (8 links); a name the zone does not hold gets
 *        NXDOMAIN. Names in answers are compressed. Runs until killed (an
 *        hour at most).
 *   listen PORTFILE ADDR...
 *        TCP listeners on every ADDR (IPv4 or IPv6), one free port for all,
 *        written to PORTFILE; accepts and closes until killed (an hour at most)
 *   query SERVER PORT NAME [A|AAAA] [udp|tcp]
 *        one question; prints "RCODE ADDR,ADDR" (the A/AAAA records of the
 *        answer, in order), "timeout" (5 s), "wrong-source ADDR PORT" (a UDP
 *        answer from elsewhere than the server asked, which a stub resolver
 *        drops), "bad-answer WHY", or the errno name of a failed connect/send
 *   bench SERVER PORT NAME N [sendto|connect]
 *        N A questions one after the other on one UDP socket, each sent with
 *        sendto() (musl's stub resolver does that) or on a connect()ed socket
 *        (glibc's); prints "MEAN_US P50_US P99_US QUESTIONS_PER_S RCODE" (the
 *        last answer's)
 *   resolve NAME [inet|inet6]
 *        the system's resolver (getaddrinfo: /etc/nsswitch.conf,
 *        /etc/resolv.conf), IPv4 by default; prints the addresses, sorted, or
 *        "error: ..."
 * Exit status: 0 when an answer (any RCODE) or addresses came, 1 otherwise,
 * 2 on bad arguments.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "accept_close.h"
#include "sockaddr_text.h"

#define DNS_HDR 12
#define DNS_NAME_MAX 255 /* wire form, RFC 1035 2.3.4 */
#define DNS_TEXT_MAX 254 /* dotted text, with room for the NUL */
#define TYPE_A 1
#define TYPE_CNAME 5
#define TYPE_AAAA 28
#define CLASS_IN 1
#define RCODE_FORMERR 1
#define RCODE_NXDOMAIN 3
#define RCODE_NOTIMP 4
#define RCODE_REFUSED 5

#define ZONE_MAX 4096      /* records read from a zone file */
#define CHAIN_MAX 8        /* CNAME links followed */
#define UDP_ANSWER_MAX 4096
#define TCP_ANSWER_MAX 16384
#define TCP_QUESTION_MAX 512
#define TCP_CLIENTS 16
#define TCP_CLIENT_MS 5000 /* a TCP client that does not finish its question by then is closed */
#define QUERY_TIMEOUT_MS 5000
#define SERVE_MAX_S 3600
#define LISTEN_MAX 32

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *errno_name(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "EUNKNOWN";
}

static uint16_t sockaddr_port(const struct sockaddr_storage *ss)
{
	return ntohs(ss->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)ss)->sin6_port
					       : ((const struct sockaddr_in *)ss)->sin_port);
}

static void sockaddr_text(const struct sockaddr_storage *ss, char *out, size_t n)
{
	const void *a = ss->ss_family == AF_INET6
				? (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr
				: (const void *)&((const struct sockaddr_in *)ss)->sin_addr;

	if (!inet_ntop(ss->ss_family, a, out, (socklen_t)n))
		snprintf(out, n, "?");
}

static bool sockaddr_same(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family || sockaddr_port(a) != sockaddr_port(b))
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)b)->sin6_addr, 16);
}

/* Writes PORT to PATH through a temporary file, so a reader sees all or nothing. */
static int portfile_write(const char *path, unsigned port)
{
	char tmp[4096];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -1;
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%u\n", port);
	if (fclose(f) || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* ---- names on the wire ---- */

/* Dotted text to wire labels; its length, or -1 for a name that is not one
 * (an empty or over-long label, over 255 bytes). "." is the root. */
static int name_encode(const char *text, uint8_t *out)
{
	size_t n = 0, len = strlen(text);
	const char *p = text;

	if (len && text[len - 1] == '.')
		len--;
	while (len) {
		const char *dot = memchr(p, '.', len);
		size_t l = dot ? (size_t)(dot - p) : len;

		if (l == 0 || l > 63 || n + 1 + l + 1 > DNS_NAME_MAX)
			return -1;
		out[n++] = (uint8_t)l;
		memcpy(out + n, p, l);
		n += l;
		p += l;
		len -= l;
		if (dot) {
			p++;
			len--;
			if (!len)
				return -1; /* "a..": an empty last label */
		}
	}
	out[n++] = 0;
	return (int)n;
}

/* Reads the name at *off in MSG (compression pointers followed, each to an
 * earlier offset, so a loop cannot form) into TEXT (dotted, no final dot;
 * "" for the root); advances *off past it in the message. -1 on a malformed
 * name. */
static int name_read(const uint8_t *msg, size_t len, size_t *off, char *text)
{
	size_t p = *off, t = 0, wire = 0, limit = *off;
	bool jumped = false;

	for (;;) {
		uint8_t l;

		if (p >= len)
			return -1;
		l = msg[p];
		if ((l & 0xC0) == 0xC0) {
			size_t to;

			if (p + 1 >= len)
				return -1;
			to = (size_t)(l & 0x3F) << 8 | msg[p + 1];
			if (to >= limit)
				return -1;
			if (!jumped)
				*off = p + 2;
			jumped = true;
			limit = to;
			p = to;
			continue;
		}
		if (l & 0xC0)
			return -1; /* the reserved label types */
		if (l == 0) {
			if (!jumped)
				*off = p + 1;
			text[t] = 0;
			return 0;
		}
		wire += 1u + l;
		if (wire + 1 > DNS_NAME_MAX || p + 1 + l > len || t + l + 1 >= DNS_TEXT_MAX)
			return -1;
		if (t)
			text[t++] = '.';
		for (size_t i = 0; i < l; i++) {
			uint8_t c = msg[p + 1 + i];

			text[t++] = c > 0x20 && c < 0x7F && c != '.' ? (char)c : '?';
		}
		p += 1u + l;
	}
}

/* ---- the zone ---- */

struct zone_rr {
	char name[DNS_TEXT_MAX];
	uint16_t type;
	uint32_t ttl;
	uint8_t rdata[16];    /* A, AAAA */
	char target[DNS_TEXT_MAX]; /* CNAME */
};

struct zone {
	struct zone_rr *rr;
	size_t n;
};

static void name_lower(char *s)
{
	for (; *s; s++)
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s - 'A' + 'a');
}

static void name_strip_dot(char *s)
{
	size_t n = strlen(s);

	if (n > 1 && s[n - 1] == '.')
		s[n - 1] = 0;
}

/* Reads the zone file; a line that is not a record is skipped. */
static int zone_load(const char *path, struct zone *z)
{
	char line[1024];
	FILE *f = fopen(path, "re");

	z->n = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && z->n < ZONE_MAX) {
		char name[DNS_TEXT_MAX], type[8], value[DNS_TEXT_MAX];
		unsigned long ttl;
		struct zone_rr *r = &z->rr[z->n];
		uint8_t wire[DNS_NAME_MAX];

		if (sscanf(line, "%253s %7s %253s %lu", name, type, value, &ttl) != 4 ||
		    ttl > 0x7FFFFFFF)
			continue;
		name_strip_dot(name);
		name_strip_dot(value);
		if (name_encode(name, wire) < 0)
			continue;
		memset(r, 0, sizeof(*r));
		snprintf(r->name, sizeof(r->name), "%s", name);
		name_lower(r->name);
		r->ttl = (uint32_t)ttl;
		if (!strcasecmp(type, "A") && inet_pton(AF_INET, value, r->rdata) == 1)
			r->type = TYPE_A;
		else if (!strcasecmp(type, "AAAA") && inet_pton(AF_INET6, value, r->rdata) == 1)
			r->type = TYPE_AAAA;
		else if (!strcasecmp(type, "CNAME") && name_encode(value, wire) > 0) {
			r->type = TYPE_CNAME;
			snprintf(r->target, sizeof(r->target), "%s", value);
			name_lower(r->target);
		} else
			continue;
		z->n++;
	}
	fclose(f);
	return 0;
}

/* ---- answers ---- */

/* A message being built, with the names written so far (for compression). */
struct msg_out {
	uint8_t *buf;
	size_t len, cap;
	bool full;
	struct {
		char name[DNS_TEXT_MAX];
		uint16_t off;
	} names[64];
	size_t n_names;
};

static bool out_put(struct msg_out *m, const void *p, size_t n)
{
	if (m->full || m->len + n > m->cap) {
		m->full = true;
		return false;
	}
	memcpy(m->buf + m->len, p, n);
	m->len += n;
	return true;
}

static bool out_u16(struct msg_out *m, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	return out_put(m, b, 2);
}

static bool out_u32(struct msg_out *m, uint32_t v)
{
	return out_u16(m, (uint16_t)(v >> 16)) && out_u16(m, (uint16_t)v);
}

/* Writes NAME (lowercase text): a pointer to where it was written before
 * (RFC 1035 4.1.4, whole names only), else its labels. */
static bool out_name(struct msg_out *m, const char *name)
{
	uint8_t wire[DNS_NAME_MAX];
	int n;

	for (size_t i = 0; i < m->n_names; i++)
		if (!strcasecmp(m->names[i].name, name))
			return out_u16(m, (uint16_t)(0xC000 | m->names[i].off));
	n = name_encode(name, wire);
	if (n < 0)
		return false;
	if (m->len < 0x3FFF && m->n_names < sizeof(m->names) / sizeof(m->names[0])) {
		snprintf(m->names[m->n_names].name, DNS_TEXT_MAX, "%s", name);
		m->names[m->n_names++].off = (uint16_t)m->len;
	}
	return out_put(m, wire, (size_t)n);
}

/* One resource record; false when it did not fit (the message is then cut
 * back to the record before). */
static bool out_rr(struct msg_out *m, const struct zone_rr *r)
{
	size_t start = m->len, n_names = m->n_names;
	bool ok = out_name(m, r->name) && out_u16(m, r->type) && out_u16(m, CLASS_IN) &&
		  out_u32(m, r->ttl);

	if (ok && r->type == TYPE_CNAME) {
		size_t rdlen_at = m->len;

		ok = out_u16(m, 0) && out_name(m, r->target);
		if (ok) {
			size_t rdlen = m->len - rdlen_at - 2;

			m->buf[rdlen_at] = (uint8_t)(rdlen >> 8);
			m->buf[rdlen_at + 1] = (uint8_t)rdlen;
		}
	} else if (ok) {
		uint16_t rdlen = r->type == TYPE_A ? 4 : 16;

		ok = out_u16(m, rdlen) && out_put(m, r->rdata, rdlen);
	}
	if (!ok) {
		m->len = start;
		m->n_names = n_names;
	}
	return ok;
}

/* The answer to the question Q (QLEN bytes) from the zone at ZONE_PATH, into
 * OUT (CAP bytes); its length, or 0 to drop the question (not even a header). */
static size_t answer_build(const uint8_t *q, size_t qlen, const char *zone_path, struct zone *z,
			   uint8_t *out, size_t cap)
{
	struct msg_out m = { .buf = out, .cap = cap };
	char qname[DNS_TEXT_MAX], cur[DNS_TEXT_MAX];
	size_t off = DNS_HDR, n_an = 0;
	uint16_t qtype = 0, qclass = 0, flags, rcode = 0;
	bool known = false, question = false;

	if (qlen < DNS_HDR || (q[2] & 0x80))
		return 0; /* too short, or itself an answer */
	flags = (uint16_t)(0x8000 | (q[2] & 0x79) << 8); /* QR, the opcode and RD echoed */
	flags |= 0x0400;				/* AA */
	if (((q[2] >> 3) & 0xF) != 0)
		rcode = RCODE_NOTIMP;
	else if (q[4] != 0 || q[5] != 1 || name_read(q, qlen, &off, qname) || off + 4 > qlen)
		rcode = RCODE_FORMERR;
	else {
		qtype = (uint16_t)(q[off] << 8 | q[off + 1]);
		qclass = (uint16_t)(q[off + 2] << 8 | q[off + 3]);
		off += 4;
		question = true;
		if (qclass != CLASS_IN)
			rcode = RCODE_REFUSED;
	}
	out_put(&m, q, 2); /* the ID */
	out_u16(&m, 0);	   /* flags, below */
	out_u16(&m, question ? 1 : 0);
	out_u16(&m, 0);
	out_u16(&m, 0);
	out_u16(&m, 0);
	if (question) {
		/* the question as asked; its name for compression, lowercase */
		out_put(&m, q + DNS_HDR, off - DNS_HDR);
		snprintf(m.names[0].name, DNS_TEXT_MAX, "%s", qname);
		name_lower(m.names[0].name);
		m.names[0].off = DNS_HDR;
		m.n_names = 1;
	}
	if (question && !rcode) {
		if (zone_load(zone_path, z))
			rcode = 2; /* SERVFAIL: no zone to answer from */
		snprintf(cur, sizeof(cur), "%s", qname);
		name_lower(cur);
		for (int link = 0; !rcode && link <= CHAIN_MAX; link++) {
			const struct zone_rr *cname = NULL;
			bool step = false;

			for (size_t i = 0; i < z->n; i++) {
				if (strcmp(z->rr[i].name, cur))
					continue;
				step = true;
				if (z->rr[i].type == TYPE_CNAME && !cname)
					cname = &z->rr[i];
			}
			known |= step;
			if (cname && qtype != TYPE_CNAME) {
				if (out_rr(&m, cname))
					n_an++;
				snprintf(cur, sizeof(cur), "%s", cname->target);
				continue;
			}
			for (size_t i = 0; i < z->n; i++)
				if (!strcmp(z->rr[i].name, cur) && z->rr[i].type == qtype &&
				    out_rr(&m, &z->rr[i]))
					n_an++;
			break;
		}
		if (!rcode && !known)
			rcode = RCODE_NXDOMAIN;
	}
	if (m.full)
		flags |= 0x0200; /* TC: the records that fit */
	flags |= rcode;
	out[2] = (uint8_t)(flags >> 8);
	out[3] = (uint8_t)flags;
	out[6] = (uint8_t)(n_an >> 8);
	out[7] = (uint8_t)n_an;
	return m.len;
}

/* ---- serve ---- */

struct tcp_client {
	int fd;
	int64_t deadline;
	size_t have;
	uint8_t buf[2 + TCP_QUESTION_MAX];
};

static void tcp_client_answer(struct tcp_client *c, const char *zone_path, struct zone *z)
{
	static uint8_t out[2 + TCP_ANSWER_MAX];
	size_t qlen = (size_t)c->buf[0] << 8 | c->buf[1];
	size_t n = answer_build(c->buf + 2, qlen, zone_path, z, out + 2, TCP_ANSWER_MAX);
	struct timeval tv = { .tv_sec = 1 };

	if (n) {
		out[0] = (uint8_t)(n >> 8);
		out[1] = (uint8_t)n;
		/* an answer is small: a blocking send, bounded by the timeout */
		fcntl(c->fd, F_SETFL, 0);
		setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		(void)!send(c->fd, out, n + 2, MSG_NOSIGNAL);
	}
}

/* Reads what a TCP client sent; true when it is done (answered or dropped). */
static bool tcp_client_read(struct tcp_client *c, const char *zone_path, struct zone *z)
{
	size_t want = c->have < 2 ? 2 : 2 + ((size_t)c->buf[0] << 8 | c->buf[1]);
	ssize_t r;

	if (want > sizeof(c->buf))
		return true; /* a question longer than any this server answers */
	r = recv(c->fd, c->buf + c->have, want - c->have, MSG_DONTWAIT);
	if (r < 0)
		return errno != EAGAIN && errno != EINTR;
	if (r == 0)
		return true;
	c->have += (size_t)r;
	if (c->have == 2) /* the length is known now: the question may be there too */
		return tcp_client_read(c, zone_path, z);
	if (c->have < 2 || c->have < 2 + ((size_t)c->buf[0] << 8 | c->buf[1]))
		return false;
	tcp_client_answer(c, zone_path, z);
	return true;
}

static int do_serve(const char *zone_path, const char *portfile, const char *addr)
{
	static struct zone_rr rrs[ZONE_MAX];
	static struct tcp_client clients[TCP_CLIENTS];
	static uint8_t q[UDP_ANSWER_MAX], out[UDP_ANSWER_MAX];
	struct zone z = { .rr = rrs };
	struct sockaddr_storage ss;
	socklen_t len;
	int udp, tcp, one = 1;
	int64_t end = now_ms() + SERVE_MAX_S * 1000LL;

	if (sockaddr_parse(addr, "0", &ss, &len)) {
		fprintf(stderr, "kw-dnstest: bad address %s\n", addr);
		return 2;
	}
	for (int i = 0; i < TCP_CLIENTS; i++)
		clients[i].fd = -1;
	for (int attempt = 0;; attempt++) {
		udp = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		tcp = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (udp < 0 || tcp < 0 || bind(udp, (struct sockaddr *)&ss, len)) {
			fprintf(stderr, "kw-dnstest: serve on %s: %s\n", addr, strerror(errno));
			return 1;
		}
		/* the UDP port the kernel chose, for TCP too */
		struct sockaddr_storage got;
		socklen_t gl = sizeof(got);

		getsockname(udp, (struct sockaddr *)&got, &gl);
		setsockopt(tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(tcp, (struct sockaddr *)&got, gl) == 0 && listen(tcp, 64) == 0)
			break;
		if (errno != EADDRINUSE || attempt == 50) {
			fprintf(stderr, "kw-dnstest: serve on %s (TCP): %s\n", addr, strerror(errno));
			return 1;
		}
		close(udp);
		close(tcp);
	}
	{
		struct sockaddr_storage got;
		socklen_t gl = sizeof(got);

		getsockname(udp, (struct sockaddr *)&got, &gl);
		if (portfile_write(portfile, sockaddr_port(&got))) {
			fprintf(stderr, "kw-dnstest: cannot write %s\n", portfile);
			return 1;
		}
	}
	while (now_ms() < end) {
		struct pollfd fds[2 + TCP_CLIENTS];
		int slot_of[2 + TCP_CLIENTS];
		nfds_t n = 0;
		int64_t t = now_ms();

		fds[n].fd = udp;
		fds[n++].events = POLLIN;
		fds[n].fd = tcp;
		fds[n++].events = POLLIN;
		for (int i = 0; i < TCP_CLIENTS; i++) {
			if (clients[i].fd < 0)
				continue;
			if (t > clients[i].deadline) {
				close(clients[i].fd);
				clients[i].fd = -1;
				continue;
			}
			slot_of[n] = i;
			fds[n].fd = clients[i].fd;
			fds[n++].events = POLLIN;
		}
		if (poll(fds, n, 500) <= 0)
			continue;
		if (fds[0].revents & POLLIN) {
			/* a burst of datagrams, a bounded number per round */
			for (int k = 0; k < 64; k++) {
				struct sockaddr_storage peer;
				socklen_t pl = sizeof(peer);
				ssize_t r = recvfrom(udp, q, sizeof(q), MSG_DONTWAIT,
						     (struct sockaddr *)&peer, &pl);
				size_t a;

				if (r < 0)
					break;
				a = answer_build(q, (size_t)r, zone_path, &z, out, sizeof(out));
				if (a)
					sendto(udp, out, a, MSG_DONTWAIT, (struct sockaddr *)&peer, pl);
			}
		}
		if (fds[1].revents & POLLIN) {
			int c = accept4(tcp, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
			int i;

			for (i = 0; c >= 0 && i < TCP_CLIENTS && clients[i].fd >= 0; i++)
				;
			if (c >= 0 && i == TCP_CLIENTS)
				close(c); /* too many at once */
			else if (c >= 0) {
				clients[i].fd = c;
				clients[i].have = 0;
				clients[i].deadline = now_ms() + TCP_CLIENT_MS;
			}
		}
		for (nfds_t k = 2; k < n; k++) {
			struct tcp_client *c = &clients[slot_of[k]];

			if (fds[k].revents && tcp_client_read(c, zone_path, &z)) {
				close(c->fd);
				c->fd = -1;
			}
		}
	}
	return 0;
}

/* ---- listen ---- */

static int do_listen(const char *portfile, int argc, char **argv)
{
	struct pollfd fds[LISTEN_MAX];
	unsigned port = 0;
	int n = 0, one = 1;

	if (argc < 1 || argc > LISTEN_MAX) {
		fprintf(stderr, "kw-dnstest: listen takes 1 to %d addresses\n", LISTEN_MAX);
		return 2;
	}
	for (int attempt = 0; n < argc; attempt++) {
		struct sockaddr_storage ss;
		socklen_t len;
		char ps[8];
		int fd;

		snprintf(ps, sizeof(ps), "%u", port);
		if (sockaddr_parse(argv[n], ps, &ss, &len)) {
			fprintf(stderr, "kw-dnstest: bad address %s\n", argv[n]);
			return 2;
		}
		fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			fprintf(stderr, "kw-dnstest: listen on %s: %s\n", argv[n], strerror(errno));
			return 1;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ss.ss_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 64)) {
			int e = errno;

			close(fd);
			if (e != EADDRINUSE || attempt >= 50) {
				fprintf(stderr, "kw-dnstest: listen on %s: %s\n", argv[n],
					strerror(e));
				return 1;
			}
			/* the port is taken on this address: start again on a new one */
			while (n > 0)
				close(fds[--n].fd);
			port = 0;
			continue;
		}
		if (n == 0) {
			struct sockaddr_storage got;
			socklen_t gl = sizeof(got);

			getsockname(fd, (struct sockaddr *)&got, &gl);
			port = sockaddr_port(&got);
		}
		fds[n].fd = fd;
		fds[n++].events = POLLIN;
	}
	if (portfile_write(portfile, port)) {
		fprintf(stderr, "kw-dnstest: cannot write %s\n", portfile);
		return 1;
	}
	accept_and_close(fds, n, SERVE_MAX_S);
	return 0;
}

/* ---- query ---- */

static const char *rcode_name(unsigned rcode)
{
	static const char *const names[] = { "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
					     "NOTIMP",	"REFUSED" };
	static char num[12];

	if (rcode < sizeof(names) / sizeof(names[0]))
		return names[rcode];
	snprintf(num, sizeof(num), "%u", rcode);
	return num;
}

static int question_build(const char *name, uint16_t id, uint16_t qtype, uint8_t *out)
{
	int n;

	memset(out, 0, DNS_HDR);
	out[0] = (uint8_t)(id >> 8);
	out[1] = (uint8_t)id;
	out[2] = 0x01; /* RD */
	out[5] = 1;    /* QDCOUNT */
	n = name_encode(name, out + DNS_HDR);
	if (n < 0)
		return -1;
	out[DNS_HDR + n] = (uint8_t)(qtype >> 8);
	out[DNS_HDR + n + 1] = (uint8_t)qtype;
	out[DNS_HDR + n + 2] = 0;
	out[DNS_HDR + n + 3] = CLASS_IN;
	return DNS_HDR + n + 4;
}

/* Waits for FD to be readable; false on a timeout. */
static bool wait_readable(int fd, int64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - now_ms();
		int r;

		if (left <= 0)
			return false;
		r = poll(&p, 1, (int)left);
		if (r > 0)
			return true;
		if (r == 0 || errno != EINTR)
			return false;
	}
}

/* Reads exactly N bytes from a stream before DEADLINE; 0, -1 on an error or
 * an early close (errno 0), -2 on a timeout. */
static int read_full(int fd, uint8_t *buf, size_t n, int64_t deadline)
{
	size_t have = 0;

	while (have < n) {
		ssize_t r;

		if (!wait_readable(fd, deadline))
			return -2;
		r = recv(fd, buf + have, n - have, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = 0;
			return -1;
		}
		have += (size_t)r;
	}
	return 0;
}

/* Prints the answer MSG to question ID: "RCODE ADDR,ADDR" or "bad-answer WHY". */
static int answer_print(const uint8_t *msg, size_t len, uint16_t id)
{
	char name[DNS_TEXT_MAX], addrs[8192] = "";
	size_t off = DNS_HDR, used = 0;
	unsigned qd, an;

	if (len < DNS_HDR)
		return printf("bad-answer short\n"), 1;
	if ((uint16_t)(msg[0] << 8 | msg[1]) != id)
		return printf("bad-answer id\n"), 1;
	if (!(msg[2] & 0x80))
		return printf("bad-answer not-a-response\n"), 1;
	qd = (unsigned)(msg[4] << 8 | msg[5]);
	an = (unsigned)(msg[6] << 8 | msg[7]);
	for (unsigned i = 0; i < qd; i++) {
		if (name_read(msg, len, &off, name) || off + 4 > len)
			return printf("bad-answer question\n"), 1;
		off += 4;
	}
	for (unsigned i = 0; i < an; i++) {
		uint16_t type, rdlen;
		char a[INET6_ADDRSTRLEN];

		if (name_read(msg, len, &off, name) || off + 10 > len)
			return printf("bad-answer record %u\n", i), 1;
		type = (uint16_t)(msg[off] << 8 | msg[off + 1]);
		rdlen = (uint16_t)(msg[off + 8] << 8 | msg[off + 9]);
		off += 10;
		if (off + rdlen > len)
			return printf("bad-answer rdata %u\n", i), 1;
		if ((type == TYPE_A && rdlen == 4) || (type == TYPE_AAAA && rdlen == 16)) {
			inet_ntop(type == TYPE_A ? AF_INET : AF_INET6, msg + off, a, sizeof(a));
			used += (size_t)snprintf(addrs + used, sizeof(addrs) - used, "%s%s",
						 used ? "," : "", a);
			if (used >= sizeof(addrs))
				return printf("bad-answer too-many-addresses\n"), 1;
		}
		off += rdlen;
	}
	printf("%s %s\n", rcode_name(msg[3] & 0xF), addrs);
	return 0;
}

static int do_query(int argc, char **argv)
{
	const char *server = argv[0], *port = argv[1], *name = argv[2];
	const char *type = argc > 3 ? argv[3] : "A", *proto = argc > 4 ? argv[4] : "udp";
	static uint8_t q[DNS_HDR + DNS_NAME_MAX + 4], resp[65536];
	struct sockaddr_storage ss;
	socklen_t len;
	uint16_t id, qtype;
	bool tcp;
	int fd, qlen;
	int64_t deadline = now_ms() + QUERY_TIMEOUT_MS;

	if (!strcasecmp(type, "A"))
		qtype = TYPE_A;
	else if (!strcasecmp(type, "AAAA"))
		qtype = TYPE_AAAA;
	else {
		fprintf(stderr, "kw-dnstest: query type must be A or AAAA, not %s\n", type);
		return 2;
	}
	if (strcmp(proto, "udp") && strcmp(proto, "tcp")) {
		fprintf(stderr, "kw-dnstest: query protocol must be udp or tcp, not %s\n", proto);
		return 2;
	}
	tcp = !strcmp(proto, "tcp");
	if (sockaddr_parse(server, port, &ss, &len)) {
		fprintf(stderr, "kw-dnstest: bad server %s %s\n", server, port);
		return 2;
	}
	if (getrandom(&id, sizeof(id), 0) != sizeof(id))
		id = (uint16_t)getpid();
	qlen = question_build(name, id, qtype, q);
	if (qlen < 0) {
		fprintf(stderr, "kw-dnstest: bad name %s\n", name);
		return 2;
	}
	fd = socket(ss.ss_family, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return puts(errno_name(errno)), 1;
	if (tcp) {
		uint8_t framed[2 + sizeof(q)];
		uint8_t hdr[2];
		size_t n;
		int r;

		if (connect(fd, (struct sockaddr *)&ss, len))
			return puts(errno_name(errno)), 1;
		framed[0] = (uint8_t)(qlen >> 8);
		framed[1] = (uint8_t)qlen;
		memcpy(framed + 2, q, (size_t)qlen);
		if (send(fd, framed, (size_t)qlen + 2, MSG_NOSIGNAL) != qlen + 2)
			return puts(errno_name(errno)), 1;
		r = read_full(fd, hdr, 2, deadline);
		n = (size_t)hdr[0] << 8 | hdr[1];
		if (!r)
			r = read_full(fd, resp, n, deadline);
		if (r == -2)
			return puts("timeout"), 1;
		if (r)
			return puts(errno ? errno_name(errno) : "closed"), 1;
		close(fd);
		return answer_print(resp, n, id);
	}
	if (sendto(fd, q, (size_t)qlen, 0, (struct sockaddr *)&ss, len) != qlen)
		return puts(errno_name(errno)), 1;
	for (;;) {
		struct sockaddr_storage src;
		socklen_t sl = sizeof(src);
		ssize_t r;

		if (!wait_readable(fd, deadline))
			return puts("timeout"), 1;
		r = recvfrom(fd, resp, sizeof(resp), MSG_DONTWAIT, (struct sockaddr *)&src, &sl);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return puts(errno_name(errno)), 1;
		}
		close(fd);
		/* a stub resolver's check: the answer comes from the server asked */
		if (!sockaddr_same(&src, &ss)) {
			char a[INET6_ADDRSTRLEN];

			sockaddr_text(&src, a, sizeof(a));
			printf("wrong-source %s %u\n", a, sockaddr_port(&src));
			return 1;
		}
		return answer_print(resp, (size_t)r, id);
	}
}

/* ---- bench ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int do_bench(int argc, char **argv)
{
	static uint8_t q[DNS_HDR + DNS_NAME_MAX + 4], resp[4096];
	struct sockaddr_storage ss;
	socklen_t len;
	char *end;
	long n;
	double *t, start, total, sum = 0;
	int fd, qlen, rcode = -1;
	bool connected = argc > 4 && !strcmp(argv[4], "connect");

	if (argc > 4 && !connected && strcmp(argv[4], "sendto")) {
		fprintf(stderr, "kw-dnstest: bench mode must be sendto or connect, not %s\n", argv[4]);
		return 2;
	}
	errno = 0;
	n = strtol(argv[3], &end, 10);
	if (errno || *end || n < 1 || n > 10000000) {
		fprintf(stderr, "kw-dnstest: bench count must be 1 to 10000000\n");
		return 2;
	}
	if (sockaddr_parse(argv[0], argv[1], &ss, &len)) {
		fprintf(stderr, "kw-dnstest: bad server %s %s\n", argv[0], argv[1]);
		return 2;
	}
	qlen = question_build(argv[2], 0, TYPE_A, q);
	if (qlen < 0) {
		fprintf(stderr, "kw-dnstest: bad name %s\n", argv[2]);
		return 2;
	}
	t = calloc((size_t)n, sizeof(*t));
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (!t || fd < 0 || (connected && connect(fd, (struct sockaddr *)&ss, len))) {
		printf("%s\n", errno_name(errno));
		return 1;
	}
	start = now_s();
	for (long i = 0; i < n; i++) {
		uint16_t id = (uint16_t)i;
		double t0 = now_s();
		ssize_t r;

		q[0] = (uint8_t)(id >> 8);
		q[1] = (uint8_t)id;
		if ((connected ? send(fd, q, (size_t)qlen, 0)
			       : sendto(fd, q, (size_t)qlen, 0, (struct sockaddr *)&ss, len)) != qlen) {
			printf("%s\n", errno_name(errno));
			return 1;
		}
		do {
			if (!wait_readable(fd, now_ms() + QUERY_TIMEOUT_MS)) {
				printf("timeout after %ld questions\n", i);
				return 1;
			}
			/* a late answer to an earlier question is not this one's */
			r = recv(fd, resp, sizeof(resp), 0);
		} while (r >= 0 && (r < DNS_HDR || (uint16_t)(resp[0] << 8 | resp[1]) != id));
		if (r < 0) {
			printf("%s\n", errno_name(errno));
			return 1;
		}
		t[i] = now_s() - t0;
		sum += t[i];
		rcode = resp[3] & 0xF;
	}
	total = now_s() - start;
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	printf("%.1f %.1f %.1f %.0f %s\n", sum / (double)n * 1e6, t[n / 2] * 1e6,
	       t[(size_t)((double)n * 0.99)] * 1e6, (double)n / total, rcode_name((unsigned)rcode));
	free(t);
	close(fd);
	return 0;
}

/* ---- resolve ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int do_resolve(int argc, char **argv)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	char text[64][INET6_ADDRSTRLEN], *sorted[64];
	size_t n = 0;
	int e;

	hints.ai_family = AF_INET;
	if (argc > 1 && !strcmp(argv[1], "inet6"))
		hints.ai_family = AF_INET6;
	else if (argc > 1 && strcmp(argv[1], "inet")) {
		fprintf(stderr, "kw-dnstest: resolve family must be inet or inet6, not %s\n",
			argv[1]);
		return 2;
	}
	e = getaddrinfo(argv[0], NULL, &hints, &res);
	if (e) {
		printf("error: %s\n", gai_strerror(e));
		return 1;
	}
	for (ai = res; ai && n < 64; ai = ai->ai_next) {
		sockaddr_text((const struct sockaddr_storage *)ai->ai_addr, text[n], sizeof(text[n]));
		sorted[n] = text[n];
		/* once each (one per socket type on some resolvers) */
		bool seen = false;

		for (size_t i = 0; i < n; i++)
			seen |= !strcmp(sorted[i], text[n]);
		if (!seen)
			n++;
	}
	freeaddrinfo(res);
	qsort(sorted, n, sizeof(sorted[0]), cmp_str);
	for (size_t i = 0; i < n; i++)
		printf("%s%s", i ? "," : "", sorted[i]);
	printf("\n");
	return 0;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: kw-dnstest serve ZONE PORTFILE [ADDR]\n"
		"       kw-dnstest listen PORTFILE ADDR...\n"
		"       kw-dnstest query SERVER PORT NAME [A|AAAA] [udp|tcp]\n"
		"       kw-dnstest bench SERVER PORT NAME N [sendto|connect]\n"
		"       kw-dnstest resolve NAME [inet|inet6]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		usage();
		return 0;
	}
	if (!strcmp(cmd, "serve") && (argc == 4 || argc == 5))
		return do_serve(argv[2], argv[3], argc == 5 ? argv[4] : "127.0.0.1");
	if (!strcmp(cmd, "listen") && argc >= 4)
		return do_listen(argv[2], argc - 3, argv + 3);
	if (!strcmp(cmd, "query") && argc >= 5 && argc <= 7)
		return do_query(argc - 2, argv + 2);
	if (!strcmp(cmd, "bench") && (argc == 6 || argc == 7))
		return do_bench(argc - 2, argv + 2);
	if (!strcmp(cmd, "resolve") && (argc == 3 || argc == 4))
		return do_resolve(argc - 2, argv + 2);
	return usage();
}
