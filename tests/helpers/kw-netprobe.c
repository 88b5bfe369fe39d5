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
 *   udpconnect HOST PORT         UDP connect(), then send() without an address
 *   rawsend HOST PORT            a UDP datagram built by hand on an IPv4 raw
 *                                socket (IPPROTO_UDP)
 *   ping HOST                    an ICMP echo request on a ping socket
 *                                (SOCK_DGRAM, IPPROTO_ICMP/ICMPV6)
 *   packetsend                   a frame on an AF_PACKET socket, out of lo
 *   clone-into CGROUP HOST PORT  clone3(CLONE_INTO_CGROUP) into the cgroup
 *                                folder CGROUP; the child TCP-connects and
 *                                prints its result; the clone's own errno
 *                                otherwise
 *   clone-into-exec CGROUP CMD.. clone3(CLONE_INTO_CGROUP) into CGROUP; the
 *                                child runs CMD; exits with CMD's status
 *   thread-run fork|exec GATE CMD..
 *                                a second thread waits until the file GATE
 *                                exists (30 s at most), then runs CMD in a
 *                                child it forks (fork) or execs CMD itself (exec:
 *                                an exec by a thread other than the leader);
 *                                exits with CMD's status
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
 *   hold SOCKET TEXT [COUNT]     opens COUNT connections (default 1), sends TEXT
 *                                on each (no newline: half a request), prints
 *                                "connected" (or "incomplete": one never
 *                                connected after 50 tries), then holds them until stdin ends
 *                                (600 s at most); one process for many clients,
 *                                so that hundreds start quickly under emulation
 *   ctlflood SOCKET CLIENTS BYTES SECONDS
 *                                hostile control clients: CLIENTS connections that
 *                                each pipeline up to BYTES of {"op":"status"}
 *                                lines and never read, for SECONDS or until the
 *                                peer closed them all; prints "ok
 *                                clients N busy N disconnected N open N sent N"
 *                                (busy: refused at connect; disconnected: the
 *                                peer closed the connection)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <netinet/icmp6.h>
#include <linux/sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "accept_close.h"
#include "sockaddr_text.h"

static int result(int err)
{
	if (!err) {
		puts("ok");
		return 0;
	}
	puts(strerrorname_np(err) ? strerrorname_np(err) : "EUNKNOWN");
	return 1;
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

	for (int i = 0; i < argc && i < 31 && n < 62; i++) {
		static const char *const hosts[] = { "127.0.0.1", "::1" };
		char port[16];

		snprintf(port, sizeof(port), "%s", argv[i]);
		for (int h = 0; h < 2; h++) {
			struct sockaddr_storage ss;
			socklen_t len;
			int one = 1, fd;

			if (sockaddr_parse(hosts[h], port, &ss, &len)) {
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
	accept_and_close(fds, n, 600);
	return 0;
}

static int net_op(const char *op, const char *host, const char *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, e = 0;

	if (sockaddr_parse(host, port, &ss, &len)) {
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

/* The ways around connect/send: connected UDP, raw, ping and packet sockets.
 * Each reports the first errno (socket, connect or send) or ok when the
 * datagram left. */
static int escape_op(const char *op, const char *host, const char *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, e = 0;

	if (sockaddr_parse(host, port, &ss, &len)) {
		fprintf(stderr, "kw-netprobe: bad address %s %s\n", host, port);
		return 2;
	}
	if (!strcmp(op, "udpconnect")) {
		fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return result(errno);
		if (connect(fd, (struct sockaddr *)&ss, len) < 0 || send(fd, "k", 1, 0) < 0)
			e = errno;
	} else if (!strcmp(op, "rawsend")) {
		struct { uint16_t sport, dport, len, sum; char data[1]; } udp = {
			htons(9), ((struct sockaddr_in *)&ss)->sin_port, htons(9), 0, { 'k' }
		};

		if (ss.ss_family != AF_INET)
			return 2;
		fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_UDP);
		if (fd < 0)
			return result(errno);
		((struct sockaddr_in *)&ss)->sin_port = 0;
		if (sendto(fd, &udp, 9, 0, (struct sockaddr *)&ss, len) < 0)
			e = errno;
	} else { /* ping */
		struct icmphdr echo = { .type = ICMP_ECHO };
		struct icmp6_hdr echo6 = { .icmp6_type = ICMP6_ECHO_REQUEST };
		int v6 = ss.ss_family == AF_INET6;

		fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC,
			    v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP);
		if (fd < 0)
			return result(errno);
		if (sendto(fd, v6 ? (void *)&echo6 : (void *)&echo,
			   v6 ? sizeof(echo6) : sizeof(echo), 0, (struct sockaddr *)&ss, len) < 0)
			e = errno;
	}
	close(fd);
	return result(e);
}

static int packet_send(void)
{
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP),
				  .sll_halen = ETH_ALEN };
	int fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_IP)), e = 0;

	if (fd < 0)
		return result(errno);
	to.sll_ifindex = (int)if_nametoindex("lo");
	if (sendto(fd, "k", 1, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		e = errno;
	close(fd);
	return result(e);
}

static int clone_into(const char *cgroup, const char *host, const char *port)
{
	struct clone_args ca = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD };
	int cfd = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC), status;
	long pid;

	if (cfd < 0)
		return result(errno);
	ca.cgroup = (uint64_t)cfd;
	fflush(stdout);
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0)
		return result(errno);
	if (pid == 0)
		_exit((status = net_op("connect", host, port), fflush(stdout), status));
	close(cfd);
	while (waitpid((pid_t)pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* Runs argv in a child (child_pid 0: fork; else the child clone3 made) and
 * returns its exit status. */
static int run_child(long child_pid, char **argv)
{
	int status;

	if (child_pid < 0)
		return result(errno);
	if (child_pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid((pid_t)child_pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int clone_into_exec(const char *cgroup, char **argv)
{
	struct clone_args ca = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD };
	int cfd = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (cfd < 0)
		return result(errno);
	ca.cgroup = (uint64_t)cfd;
	fflush(stdout);
	return run_child(syscall(SYS_clone3, &ca, sizeof(ca)), argv);
}

struct thread_run {
	const char *gate;
	char **argv;
	int exec;
};

static void *thread_run_body(void *arg)
{
	struct thread_run *r = arg;
	int i;

	for (i = 0; i < 3000 && access(r->gate, F_OK); i++)
		usleep(10000);
	fflush(stdout);
	if (r->exec) {
		execvp(r->argv[0], r->argv);
		_exit(127);
	}
	_exit(run_child(fork(), r->argv));
}

static int thread_run(const char *mode, const char *gate, char **argv)
{
	struct thread_run r = { gate, argv, !strcmp(mode, "exec") };
	pthread_t t;

	if ((!r.exec && strcmp(mode, "fork")) || pthread_create(&t, NULL, thread_run_body, &r))
		return 2;
	pthread_join(t, NULL);
	return 2; /* the thread ends the process */
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
	if ((!sock_op && strcmp(argv[0], "sendto")) || sockaddr_parse(argv[1], argv[2], &ss, &len)) {
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

static int do_ctlflood(const char *path, int n, long long bytes, int seconds)
{
	static const char req[] = "{\"op\":\"status\"}\n";
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char chunk[64 * (sizeof(req) - 1)];
	struct pollfd *p;
	long long *sent, total = 0;
	int busy = 0, gone = 0, open_n = 0;
	int64_t end;

	if (n <= 0 || n > 4096 || bytes <= 0 || seconds <= 0 || strlen(path) >= sizeof(a.sun_path))
		return 2;
	memcpy(a.sun_path, path, strlen(path) + 1);
	for (size_t i = 0; i < sizeof(chunk); i += sizeof(req) - 1)
		memcpy(chunk + i, req, sizeof(req) - 1);
	p = calloc((size_t)n, sizeof(*p));
	sent = calloc((size_t)n, sizeof(*sent));
	if (!p || !sent)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	for (int i = 0; i < n; i++) {
		p[i].fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (p[i].fd < 0 || connect(p[i].fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
			perror("kw-netprobe: ctlflood connect");
			return 1;
		}
		fcntl(p[i].fd, F_SETFL, O_NONBLOCK);
	}
	/* Until SECONDS pass or the peer has closed every connection. */
	end = now_us() + seconds * 1000000LL;
	while (now_us() < end && gone < n) {
		for (int i = 0; i < n; i++)
			p[i].events = p[i].fd < 0 ? 0 : POLLRDHUP | (sent[i] < bytes ? POLLOUT : 0);
		if (poll(p, (nfds_t)n, 100) < 0)
			break;
		for (int i = 0; i < n; i++) {
			ssize_t w;

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			if (p[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
				char head[64] = "";

				/* A busy line comes before the close. */
				if (recv(p[i].fd, head, sizeof(head) - 1, MSG_DONTWAIT) > 0 &&
				    strstr(head, "\"error\":\"busy\""))
					busy++;
				else
					gone++;
				close(p[i].fd);
				p[i].fd = -1;
				continue;
			}
			w = send(p[i].fd, chunk, sizeof(chunk), MSG_NOSIGNAL | MSG_DONTWAIT);
			if (w > 0) {
				sent[i] += w;
				total += w;
			} else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
				gone++;
				close(p[i].fd);
				p[i].fd = -1;
			}
		}
	}
	for (int i = 0; i < n; i++)
		if (p[i].fd >= 0) {
			open_n++;
			close(p[i].fd);
		}
	printf("ok clients %d busy %d disconnected %d open %d sent %lld\n", n, busy, gone, open_n,
	       total);
	free(p);
	free(sent);
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

static int do_hold(const char *path, const char *text, int count)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct pollfd p = { .fd = 0, .events = POLLIN };
	int *fds, i, rc = 0;

	if (strlen(path) >= sizeof(a.sun_path) || count < 1 || count > 4096)
		return 2;
	fds = calloc((size_t)count, sizeof(*fds));
	if (!fds)
		return 2;
	memcpy(a.sun_path, path, strlen(path) + 1);
	/* A connection the peer refused (closed) after connect still counts:
	 * the point is the peer's accept path, not this client's send. A
	 * connect that fails is tried again (50 times, 0.1 s apart) and what is
	 * already held stays held: one failure must not release the rest. */
	for (i = 0; i < count; i++) {
		int tries = 0;

		for (;;) {
			fds[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (fds[i] >= 0 && connect(fds[i], (struct sockaddr *)&a, sizeof(a)) == 0)
				break;
			fprintf(stderr, "connection %d: %s\n", i + 1, strerror(errno));
			if (fds[i] >= 0)
				close(fds[i]);
			fds[i] = -1;
			if (++tries == 50)
				break;
			usleep(100000);
		}
		if (fds[i] < 0) {
			rc = 1;
			count = i; /* the ones held */
			break;
		}
		(void)send(fds[i], text, strlen(text), MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	printf("%s\n", rc ? "incomplete" : "connected");
	fflush(stdout);
	poll(&p, 1, 600000);
	for (i = 0; i < count; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	return rc;
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
	if ((!strcmp(argv[1], "udpconnect") || !strcmp(argv[1], "rawsend")) && argc == 4)
		return escape_op(argv[1], argv[2], argv[3]);
	if (!strcmp(argv[1], "ping") && argc == 3)
		return escape_op(argv[1], argv[2], "0");
	if (!strcmp(argv[1], "packetsend") && argc == 2)
		return packet_send();
	if (!strcmp(argv[1], "clone-into") && argc == 5)
		return clone_into(argv[2], argv[3], argv[4]);
	if (!strcmp(argv[1], "clone-into-exec") && argc >= 4)
		return clone_into_exec(argv[2], argv + 3);
	if (!strcmp(argv[1], "thread-run") && argc >= 5)
		return thread_run(argv[2], argv[3], argv + 4);
	if (!strcmp(argv[1], "open") && argc == 4)
		return do_open(argv[2], argv[3]);
	if (!strcmp(argv[1], "sysctl") && (argc == 3 || argc == 4))
		return do_sysctl(argv[2], argc == 4 ? argv[3] : NULL);
	if (!strcmp(argv[1], "ctl") && argc == 3)
		return do_ctl(argv[2]);
	if (!strcmp(argv[1], "hold") && (argc == 4 || argc == 5))
		return do_hold(argv[2], argv[3], argc == 5 ? atoi(argv[4]) : 1);
	if (!strcmp(argv[1], "flood"))
		return do_flood(argc - 2, argv + 2);
	if (!strcmp(argv[1], "ctlflood") && argc == 6)
		return do_ctlflood(argv[2], atoi(argv[3]), atoll(argv[4]), atoi(argv[5]));
usage:
	fprintf(stderr, "usage: kw-netprobe listen PORT.. | connect|sendto|bind HOST PORT |\n"
			"       socket FAMILY TYPE | udpconnect|rawsend HOST PORT | ping HOST |\n"
			"       packetsend | clone-into CGROUP HOST PORT | clone-into-exec CGROUP CMD.. |\n"
			"       thread-run fork|exec GATE CMD.. | open PATH r|w|rw |\n"
			"       sysctl NAME [VALUE|-] | flood sendto|socket HOST PORT COUNT [RATE] |\n"
			"       ctl SOCKET | hold SOCKET TEXT [COUNT] | ctlflood SOCKET CLIENTS BYTES SECONDS\n");
	return 2;
}
