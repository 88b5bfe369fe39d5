/* SPDX-License-Identifier: Apache-2.0 */
/* kw-netprobe: one operation per run for the kernel tests and the demo.
 * Prints "ok" or the errno name ("EPERM") and exits 0 or 1 accordingly.
 *
 *   listen PORT [PORT..]         TCP servers on 127.0.0.1 (and ::1 when it exists);
 *                                prints "ok" once listening, accepts until killed
 *                                (or 600 s pass). PORT 0 picks a free port (the
 *                                same on ::1); then "ok" is followed by the ports
 *   connect HOST PORT            TCP connect
 *   sendto HOST PORT             one UDP datagram
 *   bind HOST PORT               bind a TCP socket
 *   socket FAMILY TYPE           inet|inet6|unix|packet|netlink, stream|dgram|raw
 *   open PATH r|w|rw             open a file (device nodes: cgroup/dev)
 *   sysctl NAME [VALUE|-]        read /proc/sys/NAME, or write VALUE ('-': the
 *                                value just read, a harmless write)
 *   flood sendto|socket HOST PORT COUNT [RATE]
 *                                COUNT operations (RATE per second, 0: as fast as
 *                                possible); prints "ok attempts N succeeded N
 *                                eperm N other N elapsed_us N"
 *   ctl SOCKET                   sends stdin to a Unix stream socket (kwitnessd's
 *                                control socket), half-closes, prints every byte
 *                                received until the peer closes (10 s at most)
 *   hold SOCKET TEXT             connects, sends TEXT (no newline: half a
 *                                request), prints "connected", then holds the
 *                                connection until stdin ends (600 s at most)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int result(int err)
{
	if (!err) {
		puts("ok");
		return 0;
	}
	puts(strerrorname_np(err) ? strerrorname_np(err) : "EUNKNOWN");
	return 1;
}

static int parse_addr(const char *host, const char *port, struct sockaddr_storage *ss,
		      socklen_t *len)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	char *end;
	long p = strtol(port, &end, 10);

	if (*end || p < 0 || p > 65535)
		return -1;
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)p);
		*len = sizeof(*a4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)p);
		*len = sizeof(*a6);
		return 0;
	}
	return -1;
}

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int do_listen(int argc, char **argv)
{
	struct pollfd fds[64];
	int ports[32];
	int n = 0;
	int64_t end = now_us() + 600 * 1000000LL;

	for (int i = 0; i < argc && i < 31 && n < 62; i++) {
		static const char *const hosts[] = { "127.0.0.1", "::1" };
		char port[16];

		snprintf(port, sizeof(port), "%s", argv[i]);
		for (int h = 0; h < 2; h++) {
			struct sockaddr_storage ss;
			socklen_t len;
			int one = 1, fd;

			if (parse_addr(hosts[h], port, &ss, &len)) {
				fprintf(stderr, "kw-netprobe: bad port %s\n", argv[i]);
				return 2;
			}
			fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (fd < 0) {
				if (h == 1)
					continue; /* no IPv6 */
				return result(errno);
			}
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (h == 1)
				setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
			if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 64) < 0) {
				int e = errno;

				close(fd);
				if (h == 1)
					continue;
				return result(e);
			}
			if (h == 0) {
				/* the port the kernel chose, for ::1 and for the caller */
				struct sockaddr_in got;
				socklen_t gl = sizeof(got);

				if (getsockname(fd, (struct sockaddr *)&got, &gl) == 0) {
					ports[i] = ntohs(got.sin_port);
					snprintf(port, sizeof(port), "%d", ports[i]);
				}
			}
			fds[n].fd = fd;
			fds[n].events = POLLIN;
			n++;
		}
	}
	printf("ok");
	for (int i = 0; i < argc && i < 31; i++)
		if (!strcmp(argv[i], "0"))
			printf(" %d", ports[i]);
	printf("\n");
	fflush(stdout);
	while (now_us() < end) {
		if (poll(fds, (nfds_t)n, 1000) <= 0)
			continue;
		for (int i = 0; i < n; i++) {
			if (fds[i].revents & POLLIN) {
				int c = accept(fds[i].fd, NULL, NULL);

				if (c >= 0)
					close(c);
			}
		}
	}
	return 0;
}

static int net_op(const char *op, const char *host, const char *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, e = 0;

	if (parse_addr(host, port, &ss, &len)) {
		fprintf(stderr, "kw-netprobe: bad address %s %s\n", host, port);
		return 2;
	}
	fd = socket(ss.ss_family, (strcmp(op, "sendto") ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return result(errno);
	if (!strcmp(op, "connect")) {
		if (connect(fd, (struct sockaddr *)&ss, len) < 0)
			e = errno;
	} else if (!strcmp(op, "sendto")) {
		if (sendto(fd, "k", 1, 0, (struct sockaddr *)&ss, len) < 0)
			e = errno;
	} else {
		int one = 1;

		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&ss, len) < 0)
			e = errno;
	}
	close(fd);
	return result(e);
}

static int parse_family(const char *s)
{
	if (!strcmp(s, "inet")) return AF_INET;
	if (!strcmp(s, "inet6")) return AF_INET6;
	if (!strcmp(s, "unix")) return AF_UNIX;
	if (!strcmp(s, "packet")) return AF_PACKET;
	if (!strcmp(s, "netlink")) return AF_NETLINK;
	return -1;
}

static int parse_type(const char *s)
{
	if (!strcmp(s, "stream")) return SOCK_STREAM;
	if (!strcmp(s, "dgram")) return SOCK_DGRAM;
	if (!strcmp(s, "raw")) return SOCK_RAW;
	return -1;
}

static int do_socket(const char *fam, const char *type)
{
	int f = parse_family(fam), t = parse_type(type), fd;

	if (f < 0 || t < 0) {
		fprintf(stderr, "kw-netprobe: socket inet|inet6|unix|packet|netlink stream|dgram|raw\n");
		return 2;
	}
	fd = socket(f, t | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return result(errno);
	close(fd);
	return result(0);
}

static int do_open(const char *path, const char *mode)
{
	int flags = !strcmp(mode, "w") ? O_WRONLY : !strcmp(mode, "rw") ? O_RDWR : O_RDONLY;
	int fd = open(path, flags | O_CLOEXEC);

	if (fd < 0)
		return result(errno);
	close(fd);
	return result(0);
}

static int do_sysctl(const char *name, const char *value)
{
	char path[512], cur[4096];
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "/proc/sys/%s", name) >= (int)sizeof(path))
		return 2;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return result(errno);
	n = read(fd, cur, sizeof(cur) - 1);
	close(fd);
	if (n < 0)
		return result(errno);
	cur[n] = '\0';
	if (!value)
		return result(0);
	if (strcmp(value, "-"))
		snprintf(cur, sizeof(cur), "%s\n", value);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return result(errno);
	n = write(fd, cur, strlen(cur));
	{
		int e = n < 0 ? errno : 0;

		close(fd);
		return result(e);
	}
}

static int do_flood(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	long long count, rate = 0, ok = 0, eperm = 0, other = 0;
	int fd = -1;
	bool sock_op;
	int64_t start, t;

	if (argc < 4) {
		fprintf(stderr, "kw-netprobe: flood sendto|socket HOST PORT COUNT [RATE]\n");
		return 2;
	}
	sock_op = !strcmp(argv[0], "socket");
	if ((!sock_op && strcmp(argv[0], "sendto")) || parse_addr(argv[1], argv[2], &ss, &len)) {
		fprintf(stderr, "kw-netprobe: flood sendto|socket HOST PORT COUNT [RATE]\n");
		return 2;
	}
	count = atoll(argv[3]);
	if (argc > 4)
		rate = atoll(argv[4]);
	if (count <= 0 || count > 100000000LL || rate < 0)
		return 2;
	if (!sock_op) {
		fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return result(errno);
	}
	start = now_us();
	for (long long i = 0; i < count; i++) {
		int e = 0;

		if (rate) {
			/* Paced: operation i is due at start + i / rate. */
			int64_t due = start + (int64_t)(i * 1000000LL / rate);

			while ((t = now_us()) < due)
				;
		}
		if (sock_op) {
			int s = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

			if (s < 0)
				e = errno;
			else
				close(s);
		} else if (sendto(fd, "k", 1, 0, (struct sockaddr *)&ss, len) < 0) {
			e = errno;
		}
		if (!e)
			ok++;
		else if (e == EPERM)
			eperm++;
		else
			other++;
	}
	t = now_us();
	if (fd >= 0)
		close(fd);
	printf("ok attempts %lld succeeded %lld eperm %lld other %lld elapsed_us %lld\n", count, ok,
	       eperm, other, (long long)(t - start));
	return 0;
}

static int do_ctl(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char buf[65536];
	ssize_t n;
	int fd;

	if (strlen(path) >= sizeof(a.sun_path))
		return 2;
	memcpy(a.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return result(errno);
	/* Send everything; the peer may close early (an oversized message). */
	while ((n = read(0, buf, sizeof(buf))) > 0) {
		if (send(fd, buf, (size_t)n, MSG_NOSIGNAL) < 0)
			break;
	}
	shutdown(fd, SHUT_WR);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 10000) <= 0)
			break;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			break;
		fwrite(buf, 1, (size_t)n, stdout);
	}
	close(fd);
	return 0;
}

static int do_hold(const char *path, const char *text)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct pollfd p = { .fd = 0, .events = POLLIN };
	int fd;

	if (strlen(path) >= sizeof(a.sun_path))
		return 2;
	memcpy(a.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    send(fd, text, strlen(text), MSG_NOSIGNAL) < 0)
		return result(errno);
	printf("connected\n");
	fflush(stdout);
	poll(&p, 1, 600000);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2)
		goto usage;
	if (!strcmp(argv[1], "listen") && argc >= 3)
		return do_listen(argc - 2, argv + 2);
	if ((!strcmp(argv[1], "connect") || !strcmp(argv[1], "sendto") ||
	     !strcmp(argv[1], "bind")) && argc == 4)
		return net_op(argv[1], argv[2], argv[3]);
	if (!strcmp(argv[1], "socket") && argc == 4)
		return do_socket(argv[2], argv[3]);
	if (!strcmp(argv[1], "open") && argc == 4)
		return do_open(argv[2], argv[3]);
	if (!strcmp(argv[1], "sysctl") && (argc == 3 || argc == 4))
		return do_sysctl(argv[2], argc == 4 ? argv[3] : NULL);
	if (!strcmp(argv[1], "ctl") && argc == 3)
		return do_ctl(argv[2]);
	if (!strcmp(argv[1], "hold") && argc == 4)
		return do_hold(argv[2], argv[3]);
	if (!strcmp(argv[1], "flood"))
		return do_flood(argc - 2, argv + 2);
usage:
	fprintf(stderr, "usage: kw-netprobe listen PORT.. | connect|sendto|bind HOST PORT |\n"
			"       socket FAMILY TYPE | open PATH r|w|rw | sysctl NAME [VALUE|-] |\n"
			"       flood sendto|socket HOST PORT COUNT [RATE] | ctl SOCKET |\n"
			"       hold SOCKET TEXT\n");
	return 2;
}
