// SPDX-License-Identifier: Apache-2.0
/* kw-hooktest: drives the kernel side directly through the hooks API (no
 * daemon). Makes cgroups under the cgroup2 mount, opens sessions with real
 * policies, runs child processes in them, and checks what really happened:
 * errno of the syscalls, the ring buffer's events, the counters.
 * Prints TAP-style lines "ok - ...", "not ok - ...", "skip - ..."; exit 0
 * when nothing failed. Needs root. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tap_result.h"

#include "lib/buf.h"
#include "lib/cgroup.h"
#include "collector/decision.h"
#include "bpf/hooks.h"
#include "policy/policy.h"
#include "bpf/probe.h"

static bool verbose;


/* ---- cgroup helpers ---- */

static char cg2_root[256];

static int find_cgroup2(void)
{
	return kw_cgroup2_mount(cg2_root, sizeof(cg2_root));
}

static uint64_t path_id(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	uint64_t id = 0;

	if (fd >= 0) {
		if (kw_cgroup_id(fd, &id))
			id = 0;
		close(fd);
	}
	return id;
}

static int join_cgroup(const char *cg)
{
	char p[512], pid[32];
	int fd, n;

	snprintf(p, sizeof(p), "%s/cgroup.procs", cg);
	fd = open(p, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = snprintf(pid, sizeof(pid), "%d", getpid());
	if (write(fd, pid, (size_t)n) != n) {
		close(fd);
		return -errno;
	}
	close(fd);
	return 0;
}

/* ---- child actions: each returns an errno (0 success) ---- */

enum action { A_CONNECT_TCP, A_CONNECT6_TCP, A_SENDTO_UDP, A_BIND_UDP, A_SOCKET, A_SYSCTL_WRITE, A_OPEN_DEV,
	      A_MKDIR_JOIN };

struct act {
	enum action a;
	int family, type;   /* A_SOCKET */
	uint16_t port;
	const char *path;   /* sysctl / dev / cgroup child */
	int flags;          /* A_OPEN_DEV: open flags */
};

static int do_action(const struct act *x)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(x->port) };
	int fd, ret = 0;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (x->a == A_CONNECT_TCP && x->path) /* another IPv4 address */
		inet_pton(AF_INET, x->path, &sa.sin_addr);
	switch (x->a) {
	case A_CONNECT_TCP:
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			return errno;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			ret = errno;
		close(fd);
		return ret;
	case A_CONNECT6_TCP: {
		struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(x->port) };

		inet_pton(AF_INET6, x->path, &s6.sin6_addr);
		fd = socket(AF_INET6, SOCK_STREAM, 0);
		if (fd < 0)
			return errno;
		if (connect(fd, (struct sockaddr *)&s6, sizeof(s6)))
			ret = errno;
		close(fd);
		return ret;
	}
	case A_SENDTO_UDP:
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (fd < 0)
			return errno;
		if (sendto(fd, "x", 1, 0, (struct sockaddr *)&sa, sizeof(sa)) != 1)
			ret = errno;
		close(fd);
		return ret;
	case A_BIND_UDP:
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (fd < 0)
			return errno;
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
			ret = errno;
		close(fd);
		return ret;
	case A_SOCKET:
		fd = socket(x->family, x->type, 0);
		if (fd < 0)
			return errno;
		close(fd);
		return 0;
	case A_SYSCTL_WRITE: {
		char buf[64];
		ssize_t n;

		fd = open(x->path, O_RDWR);
		if (fd < 0)
			return errno;
		n = read(fd, buf, sizeof(buf) - 1);
		if (n <= 0) {
			close(fd);
			return n < 0 ? errno : EIO;
		}
		lseek(fd, 0, SEEK_SET);
		if (write(fd, buf, (size_t)n) != n)
			ret = errno;
		close(fd);
		return ret;
	}
	case A_OPEN_DEV:
		fd = open(x->path, x->flags);
		if (fd < 0)
			return errno;
		close(fd);
		return 0;
	case A_MKDIR_JOIN:
		return 0;
	}
	return EINVAL;
}

/* Runs the actions in a child moved into cg; fills errs[]. */
static int run_in(const char *cg, const struct act *acts, int n, int *errs)
{
	int pfd[2], status, i;
	pid_t pid;

	if (pipe(pfd))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(pfd[0]);
		if (join_cgroup(cg))
			_exit(3);
		for (i = 0; i < n; i++) {
			int e = do_action(&acts[i]);

			if (write(pfd[1], &e, sizeof(e)) != sizeof(e))
				_exit(4);
		}
		_exit(0);
	}
	close(pfd[1]);
	for (i = 0; i < n; i++)
		if (read(pfd[0], &errs[i], sizeof(errs[i])) != sizeof(errs[i]))
			errs[i] = -1;
	close(pfd[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

/* ---- events ---- */

#define MAX_EVENTS 64
struct collected {
	int n;
	unsigned char ev[MAX_EVENTS][sizeof(struct kw_ev_path)];
	size_t size[MAX_EVENTS];
};

static int on_event(void *ctx, void *data, size_t size)
{
	struct collected *c = ctx;

	if (c->n < MAX_EVENTS && size <= sizeof(c->ev[0])) {
		memcpy(c->ev[c->n], data, size);
		c->size[c->n] = size;
		c->n++;
	}
	return 0;
}

static int64_t boot_to_realtime(void)
{
	struct timespec rt, bt;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	return ((int64_t)rt.tv_sec - bt.tv_sec) * 1000000000LL + (rt.tv_nsec - bt.tv_nsec);
}

static void drain(int rbfd, struct collected *c)
{
	struct ring_buffer *rb = ring_buffer__new(rbfd, on_event, c, NULL);

	memset(c, 0, sizeof(*c));
	if (!rb)
		return;
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	if (verbose) {
		int i;

		for (i = 0; i < c->n; i++) {
			struct kw_buf b = { 0 };

			if (kw_event_to_entry(c->ev[i], c->size[i], boot_to_realtime(), &b) == 0)
				printf("# %s\n", b.data);
			kw_buf_free(&b);
		}
	}
}

static const struct kw_event_hdr *hdr(const struct collected *c, int i)
{
	return (const struct kw_event_hdr *)c->ev[i];
}

/* ---- scenarios ---- */

struct session {
	char cg[512];
	int cgfd;
	uint64_t id;
	int rbfd;
	uint32_t slot;
	struct kw_policy *pol;
};

static int session_start(struct kw_hooks *h, struct session *s, uint32_t slot, const char *name,
			 const char *policy)
{
	char err[256];
	int ret;

	memset(s, 0, sizeof(*s));
	s->slot = slot;
	s->cgfd = -1;
	snprintf(s->cg, sizeof(s->cg), "%s/kwhooktest-%d-%s", cg2_root, getpid(), name);
	if (mkdir(s->cg, 0755) && errno != EEXIST) {
		result(false, "%s: mkdir %s: %s", name, s->cg, strerror(errno));
		return -1;
	}
	s->cgfd = open(s->cg, O_RDONLY | O_DIRECTORY);
	s->id = path_id(s->cg);
	ret = kw_policy_parse(policy, strlen(policy), &s->pol, err, sizeof(err));
	if (ret) {
		result(false, "%s: policy refused: %s", name, err);
		return -1;
	}
	ret = kw_hooks_session_add(h, slot, s->cgfd, s->id, s->pol, &s->rbfd, err, sizeof(err));
	result(ret == 0, "%s: session_add (%s)", name, ret ? err : "ok");
	return ret ? -1 : 0;
}

static void session_end(struct kw_hooks *h, struct session *s)
{
	kw_hooks_session_untag(h, s->slot);
	kw_hooks_session_free(h, s->slot);
	kw_policy_free(s->pol);
	if (s->cgfd >= 0)
		close(s->cgfd);
	rmdir(s->cg);
}

static int listener(uint16_t *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len))
		return -1;
	*port = ntohs(sa.sin_port);
	return fd;
}

/* The header's pid, uid and comm are the acting process's: a child that names
 * itself, drops to uid/gid 65534 and connects; its own getpid, uid and name are
 * what the event must carry. */
static void scenario_identity(struct kw_hooks *h, uint16_t denied)
{
	static const char name[] = "kw-ident-9q";
	struct act act = { .a = A_CONNECT_TCP, .port = denied };
	const struct kw_event_hdr *e;
	struct collected c;
	struct session s;
	int pfd[2], err = -1, status;
	pid_t pid;

	if (session_start(h, &s, 13, "identity",
			  "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":[]}}"))
		return;
	if (pipe(pfd)) {
		result(false, "identity: pipe: %s", strerror(errno));
		session_end(h, &s);
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		if (join_cgroup(s.cg) || prctl(PR_SET_NAME, name, 0, 0, 0) ||
		    setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(3);
		err = do_action(&act);
		_exit(write(pfd[1], &err, sizeof(err)) == sizeof(err) ? 0 : 4);
	}
	close(pfd[1]);
	if (pid < 0 || read(pfd[0], &err, sizeof(err)) != sizeof(err))
		err = -1;
	close(pfd[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	drain(s.rbfd, &c);
	result(err == EPERM && c.n == 1, "identity: the connect is refused and recorded "
	       "(errno %d, events %d)", err, c.n);
	if (c.n == 1) {
		e = hdr(&c, 0);
		result(e->pid == (uint32_t)pid, "identity: pid is the process's (%u, forked %d)",
		       e->pid, (int)pid);
		result(e->uid == 65534, "identity: uid is the one it switched to (%u)", e->uid);
		result(strncmp(e->comm, name, sizeof(e->comm)) == 0,
		       "identity: comm is the name it gave itself (%.16s)", e->comm);
	}
	session_end(h, &s);
}

static void scenario_connect(struct kw_hooks *h, uint16_t allowed, uint16_t denied)
{
	struct kw_session cnt;
	struct collected c;
	struct session s;
	char policy[512];
	struct act acts[3] = {
		{ .a = A_CONNECT_TCP, .port = allowed },
		{ .a = A_CONNECT_TCP, .port = denied },
		{ .a = A_CONNECT_TCP, .port = allowed },
	};
	int errs[3] = { -1, -1, -1 };

	snprintf(policy, sizeof(policy),
		 "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":"
		 "[\"127.0.0.1/32:%u\",\"!127.0.0.0/8:%u\"]}}", allowed, denied);
	if (session_start(h, &s, 3, "connect", policy))
		return;
	run_in(s.cg, acts, 3, errs);
	result(errs[0] == 0, "connect: allowed port %u connects (errno %d)", allowed, errs[0]);
	result(errs[1] == EPERM, "connect: denied port %u fails with EPERM (errno %d)", denied,
	       errs[1]);
	result(errs[2] == 0, "connect: allowed port again (errno %d)", errs[2]);
	drain(s.rbfd, &c);
	result(c.n == 3, "connect: 3 events in the ring buffer (got %d)", c.n);
	if (c.n == 3) {
		const struct kw_ev_net *e0 = (const void *)c.ev[0], *e1 = (const void *)c.ev[1];
		bool seq_ok = true;
		int i;

		for (i = 0; i < 3; i++)
			seq_ok &= hdr(&c, i)->seq == (uint64_t)i && hdr(&c, i)->slot == s.slot &&
				  hdr(&c, i)->cgroup_id == s.id;
		result(seq_ok, "connect: seq 0,1,2, slot and cgroup id in the headers");
		result(e0->h.kind == KW_EV_NET_CONNECT && e0->h.decision == KW_PERMIT &&
			       e0->h.rule == 0 && e0->port == allowed && e0->family == 4 &&
			       e0->proto == IPPROTO_TCP && e0->addr[0] == 127 && !e0->h.enforced,
		       "connect: permit event, rule 0, port, proto tcp, 127.0.0.1");
		result(e1->h.decision == KW_DENY && e1->h.rule == 1 && e1->h.enforced &&
			       e1->port == denied,
		       "connect: deny event, rule 1 (the ! rule), enforced");
	}
	kw_hooks_session_counters(h, s.slot, &cnt);
	result(cnt.next_seq == 3 && cnt.denials == 1 && cnt.dropped == 0 && cnt.unrecorded == 0,
	       "connect: counters next_seq=3 denials=1 dropped=0 (got %llu %llu %llu)",
	       (unsigned long long)cnt.next_seq, (unsigned long long)cnt.denials,
	       (unsigned long long)cnt.dropped);

	/* a port no rule names: default deny */
	acts[0].port = (uint16_t)(allowed == 65535 ? 1 : allowed + 1);
	run_in(s.cg, acts, 1, errs);
	drain(s.rbfd, &c);
	result(errs[0] == EPERM && c.n == 1 && hdr(&c, 0)->rule == KW_RULE_DEFAULT &&
		       hdr(&c, 0)->seq == 3,
	       "connect: unlisted port denied by the default rule, seq 3");

	/* Another address: the /32's entry is not its longest prefix, the /8's is */
	{
		struct act other[2] = {
			{ .a = A_CONNECT_TCP, .port = denied, .path = "127.0.0.2" },
			{ .a = A_CONNECT_TCP, .port = allowed, .path = "127.0.0.2" },
		};

		errs[0] = errs[1] = -1;
		run_in(s.cg, other, 2, errs);
		drain(s.rbfd, &c);
		result(errs[0] == EPERM && errs[1] == EPERM && c.n == 2 && hdr(&c, 0)->rule == 1 &&
			       hdr(&c, 1)->rule == KW_RULE_DEFAULT,
		       "connect: 127.0.0.2 is decided by the /8 (rule 1, then the default: the "
		       "/32 allow is 127.0.0.1's) (errno %d %d, events %d)", errs[0], errs[1], c.n);
	}

	/* descendants: one that existed before tagging is covered by the walk,
	 * one made afterwards by tp_btf/cgroup_mkdir */
	{
		char sub[600];

		snprintf(sub, sizeof(sub), "%s/child", s.cg);
		mkdir(sub, 0755);
		acts[0].port = denied;
		errs[0] = -1;
		run_in(sub, acts, 1, errs);
		drain(s.rbfd, &c);
		result(errs[0] == EPERM && c.n == 1 && hdr(&c, 0)->cgroup_id == path_id(sub),
		       "connect: a child cgroup made after tagging belongs to the session "
		       "(errno %d, events %d)", errs[0], c.n);
		rmdir(sub);
	}

	/* untagged: nothing decided, nothing recorded */
	kw_hooks_session_untag(h, s.slot);
	acts[0].port = denied;
	errs[0] = -1;
	run_in(s.cg, acts, 1, errs);
	drain(s.rbfd, &c);
	result(errs[0] == ECONNREFUSED || errs[0] == 0,
	       "connect: after untag the denied port is not refused by kwitness (errno %d)",
	       errs[0]);
	result(c.n == 0, "connect: after untag no event (got %d)", c.n);
	session_end(h, &s);
}

/* connect6: an IPv4-mapped destination is evaluated as IPv4; ::1 by the v6 rules */
static void scenario_v6(struct kw_hooks *h, uint16_t allowed)
{
	struct collected c;
	struct session s;
	char policy[512];
	struct act acts[3] = {
		{ .a = A_CONNECT6_TCP, .port = allowed, .path = "::ffff:127.0.0.1" },
		{ .a = A_CONNECT6_TCP, .port = allowed, .path = "::1" },
		{ .a = A_CONNECT6_TCP, .port = allowed, .path = "::ffff:127.0.0.2" },
	};
	int errs[3] = { -1, -1, -1 };

	snprintf(policy, sizeof(policy),
		 "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":"
		 "[\"127.0.0.1/32:%u\",\"!::ffff:127.0.0.2/128:*\"]}}", allowed);
	if (session_start(h, &s, 9, "v6", policy))
		return;
	run_in(s.cg, acts, 3, errs);
	drain(s.rbfd, &c);
	result(errs[0] == 0, "v6: ::ffff:127.0.0.1 permitted by the IPv4 rule (errno %d)", errs[0]);
	result(errs[1] == EPERM, "v6: ::1 denied, no IPv6 rule (errno %d)", errs[1]);
	result(errs[2] == EPERM, "v6: ::ffff:127.0.0.2 denied by the mapped deny rule (errno %d)",
	       errs[2]);
	if (c.n == 3) {
		const struct kw_ev_net *e0 = (const void *)c.ev[0], *e1 = (const void *)c.ev[1];
		const struct kw_ev_net *e2 = (const void *)c.ev[2];

		result(e0->family == 4 && e0->addr[0] == 127 && e0->h.rule == 0 &&
			       e1->family == 6 && e1->addr[15] == 1 && e1->h.rule == KW_RULE_DEFAULT &&
			       e2->family == 4 && e2->addr[3] == 2 && e2->h.rule == 1,
		       "v6: events carry family 4 for mapped, 6 for ::1, and the deciding rules");
	} else {
		result(false, "v6: 3 events (got %d)", c.n);
	}
	session_end(h, &s);
}

static void scenario_pretagged_child(struct kw_hooks *h, uint16_t denied)
{
	struct session s;
	struct collected c;
	char sub[600], sub2[700], cg[512];
	struct act a = { .a = A_CONNECT_TCP, .port = denied };
	int err = -1;

	/* the descendants exist before the session starts */
	snprintf(cg, sizeof(cg), "%s/kwhooktest-%d-pre", cg2_root, getpid());
	snprintf(sub, sizeof(sub), "%s/a", cg);
	snprintf(sub2, sizeof(sub2), "%s/b", sub);
	mkdir(cg, 0755);
	mkdir(sub, 0755);
	mkdir(sub2, 0755);
	if (session_start(h, &s, 4, "pre",
			  "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":[]}}"))
		goto out;
	run_in(sub2, &a, 1, &err);
	drain(s.rbfd, &c);
	result(err == EPERM && c.n == 1 && hdr(&c, 0)->rule == KW_RULE_DEFAULT,
	       "pre: a grandchild cgroup that existed before tagging is governed "
	       "(errno %d, events %d)", err, c.n);
	session_end(h, &s);
out:
	rmdir(sub2);
	rmdir(sub);
	rmdir(cg);
}

static void scenario_advisory(struct kw_hooks *h, uint16_t allowed, uint16_t denied)
{
	struct kw_session cnt;
	struct collected c;
	struct session s;
	char policy[512];
	struct act acts[2] = {
		{ .a = A_CONNECT_TCP, .port = allowed },
		{ .a = A_CONNECT_TCP, .port = denied },
	};
	int errs[2] = { -1, -1 };

	snprintf(policy, sizeof(policy),
		 "{\"kwitness_policy\":1,\"mode\":\"advisory\",\"net\":{\"connect\":"
		 "[\"127.0.0.1/32:%u\"]}}", allowed);
	if (session_start(h, &s, 5, "advisory", policy))
		return;
	run_in(s.cg, acts, 2, errs);
	result(errs[1] == ECONNREFUSED,
	       "advisory: the denied connect proceeds (ECONNREFUSED from the kernel, errno %d)",
	       errs[1]);
	drain(s.rbfd, &c);
	result(c.n == 2 && hdr(&c, 1)->decision == KW_DENY && hdr(&c, 1)->enforced == 0,
	       "advisory: the deny is recorded with enforced=0");
	kw_hooks_session_counters(h, s.slot, &cnt);
	result(cnt.denials == 1, "advisory: denials=1 (got %llu)",
	       (unsigned long long)cnt.denials);
	session_end(h, &s);
}

static void scenario_record_deny(struct kw_hooks *h, uint16_t allowed, uint16_t denied)
{
	struct kw_session cnt;
	struct collected c;
	struct session s;
	char policy[512];
	struct act acts[3] = {
		{ .a = A_CONNECT_TCP, .port = allowed },
		{ .a = A_CONNECT_TCP, .port = denied },
		{ .a = A_CONNECT_TCP, .port = allowed },
	};
	int errs[3];

	snprintf(policy, sizeof(policy),
		 "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"record\":\"deny\",\"net\":"
		 "{\"connect\":[\"127.0.0.1/32:%u\"]}}", allowed);
	if (session_start(h, &s, 6, "record-deny", policy))
		return;
	run_in(s.cg, acts, 3, errs);
	drain(s.rbfd, &c);
	kw_hooks_session_counters(h, s.slot, &cnt);
	result(errs[0] == 0 && errs[1] == EPERM && errs[2] == 0,
	       "record-deny: enforcement unchanged");
	result(c.n == 1 && hdr(&c, 0)->seq == 0 && hdr(&c, 0)->decision == KW_DENY,
	       "record-deny: only the deny is recorded, with seq 0 (events %d)", c.n);
	result(cnt.unrecorded == 2 && cnt.next_seq == 1,
	       "record-deny: unrecorded=2 next_seq=1 (got %llu %llu)",
	       (unsigned long long)cnt.unrecorded, (unsigned long long)cnt.next_seq);
	session_end(h, &s);
}

static void scenario_drop(struct kw_hooks *h, uint16_t allowed)
{
	struct kw_session cnt;
	struct session s;
	char policy[512];
	struct act acts[1000];
	int errs[1000], i, eperm = 0, ok = 0;

	/* a 64 KiB ring buffer holds about 680 net events: the rest are dropped,
	 * and with on_record_failure deny refused */
	snprintf(policy, sizeof(policy),
		 "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"on_record_failure\":\"deny\","
		 "\"net\":{\"send\":[\"127.0.0.1/32:%u\"]}}", allowed);
	for (i = 0; i < 1000; i++)
		acts[i] = (struct act){ .a = A_SENDTO_UDP, .port = allowed };
	if (session_start(h, &s, 7, "drop", policy))
		return;
	run_in(s.cg, acts, 1000, errs);
	for (i = 0; i < 1000; i++) {
		eperm += errs[i] == EPERM;
		ok += errs[i] == 0;
	}
	kw_hooks_session_counters(h, s.slot, &cnt);
	/* every attempt is numbered; a dropped one leaves a gap */
	result(cnt.dropped > 0 && cnt.dropped == (uint64_t)eperm && cnt.next_seq == 1000 &&
		       (uint64_t)ok + cnt.dropped == 1000,
	       "drop: full ring buffer -> dropped=%llu, each refused (EPERM %d), "
	       "next_seq %llu = 1000, recorded %d + dropped = 1000",
	       (unsigned long long)cnt.dropped, eperm, (unsigned long long)cnt.next_seq, ok);
	session_end(h, &s);
}

/* dev: the most specific rule decides: exact, then (major, *), then (*, *) */
static void scenario_dev(struct kw_hooks *h)
{
	struct collected c;
	struct session s;
	struct act acts[4] = {
		{ .a = A_OPEN_DEV, .path = "/dev/null", .flags = O_RDWR },
		{ .a = A_OPEN_DEV, .path = "/dev/zero", .flags = O_RDONLY },
		{ .a = A_OPEN_DEV, .path = "/dev/zero", .flags = O_RDWR },
		{ .a = A_OPEN_DEV, .path = "/dev/full", .flags = O_WRONLY },
	};
	int errs[4] = { -1, -1, -1, -1 };

	if (session_start(h, &s, 11, "dev",
			  "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"dev\":{\"allow\":"
			  "[\"c 1:3 rw\",\"c 1:* r\",\"c *:* w\"]}}"))
		return;
	run_in(s.cg, acts, 4, errs);
	drain(s.rbfd, &c);
	result(errs[0] == 0, "dev: /dev/null rw by the exact rule (errno %d)", errs[0]);
	result(errs[1] == 0, "dev: /dev/zero r by c 1:* (errno %d)", errs[1]);
	result(errs[2] == EPERM, "dev: /dev/zero rw denied: c 1:* decides and lacks w (errno %d)",
	       errs[2]);
	result(errs[3] == EPERM, "dev: /dev/full w denied: c 1:* is more specific than c *:* "
	       "(errno %d)", errs[3]);
	result(c.n == 4 && hdr(&c, 0)->rule == 0 && hdr(&c, 1)->rule == 1 &&
		       hdr(&c, 2)->rule == 1 && hdr(&c, 3)->rule == 1,
	       "dev: 4 events naming rules 0, 1, 1, 1 (events %d)", c.n);
	session_end(h, &s);
}

/* on_record_failure allow: a full ring buffer drops the record, not the send */
static void scenario_drop_allow(struct kw_hooks *h, uint16_t allowed)
{
	struct kw_session cnt;
	struct session s;
	char policy[512];
	static struct act acts[1000];
	static int errs[1000];
	int i, ok = 0;

	snprintf(policy, sizeof(policy),
		 "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"on_record_failure\":\"allow\","
		 "\"net\":{\"send\":[\"127.0.0.1/32:%u\"]}}", allowed);
	for (i = 0; i < 1000; i++)
		acts[i] = (struct act){ .a = A_SENDTO_UDP, .port = allowed };
	if (session_start(h, &s, 12, "drop-allow", policy))
		return;
	run_in(s.cg, acts, 1000, errs);
	for (i = 0; i < 1000; i++)
		ok += errs[i] == 0;
	kw_hooks_session_counters(h, s.slot, &cnt);
	result(ok == 1000 && cnt.dropped > 0 && cnt.next_seq == 1000,
	       "drop-allow: all 1000 sends proceed, each numbered (next_seq %llu), dropped %llu",
	       (unsigned long long)cnt.next_seq, (unsigned long long)cnt.dropped);
	session_end(h, &s);
}

static void scenario_other_hooks(struct kw_hooks *h, uint16_t allowed)
{
	struct collected c;
	struct session s;
	char policy[1024];
	struct stat st;
	struct act acts[7];
	int errs[7], i;

	memset(acts, 0, sizeof(acts));
	snprintf(policy, sizeof(policy),
		 "{\"kwitness_policy\":1,\"mode\":\"enforce\","
		 "\"net\":{\"send\":[\"127.0.0.1/32:%u\"],\"bind\":[\"127.0.0.1/32:0\"],"
		 "\"socket\":[\"inet:stream|dgram\",\"unix\"]},"
		 "\"dev\":{\"allow\":[\"c 1:3 rw\"]},\"sysctl\":{\"write\":false}}", allowed);
	if (session_start(h, &s, 8, "hooks", policy))
		return;
	acts[0] = (struct act){ .a = A_SENDTO_UDP, .port = allowed };
	acts[1] = (struct act){ .a = A_SENDTO_UDP, .port = (uint16_t)(allowed ^ 1) };
	acts[2] = (struct act){ .a = A_BIND_UDP, .port = 0 };
	acts[3] = (struct act){ .a = A_SOCKET, .family = AF_INET6, .type = SOCK_STREAM };
	acts[4] = (struct act){ .a = A_SYSCTL_WRITE, .path = "/proc/sys/kernel/hostname" };
	acts[5] = (struct act){ .a = A_OPEN_DEV, .path = "/dev/null", .flags = O_RDONLY };
	acts[6] = (struct act){ .a = A_OPEN_DEV, .path = "/dev/zero", .flags = O_RDONLY };
	for (i = 0; i < 7; i++)
		errs[i] = -1;
	run_in(s.cg, acts, 7, errs);
	drain(s.rbfd, &c);
	/* the order of events: socket() events come first for socket-using actions */
	result(errs[0] == 0, "hooks: sendto allowed port (errno %d)", errs[0]);
	result(errs[1] == EPERM, "hooks: sendto other port EPERM (errno %d)", errs[1]);
	result(errs[2] == 0, "hooks: bind 127.0.0.1:0 allowed (errno %d)", errs[2]);
	result(errs[3] == EPERM, "hooks: socket(AF_INET6) EPERM (errno %d)", errs[3]);
	result(errs[4] == EPERM, "hooks: sysctl write EPERM (errno %d)", errs[4]);
	result(errs[5] == 0, "hooks: open /dev/null (c 1:3) allowed (errno %d)", errs[5]);
	result(errs[6] == EPERM, "hooks: open /dev/zero (c 1:5) EPERM (errno %d)", errs[6]);
	{
		int kinds[7] = { 0 };
		bool seq_ok = true;

		for (i = 0; i < c.n; i++) {
			uint16_t k = hdr(&c, i)->kind;

			if (k < 7)
				kinds[k]++;
			seq_ok &= hdr(&c, i)->seq == (uint64_t)i;
		}
		/* 3 inet sockets + 1 inet6 (denied); 2 sends; 1 bind; 1 sysctl write
		 * (the read is not recorded); 2 device opens */
		result(kinds[KW_EV_NET_SOCKET] == 4 && kinds[KW_EV_NET_SEND] == 2 &&
			       kinds[KW_EV_NET_BIND] == 1 && kinds[KW_EV_SYSCTL] == 1 &&
			       kinds[KW_EV_DEV] == 2 && c.n == 10 && seq_ok,
		       "hooks: events socket=%d send=%d bind=%d sysctl=%d dev=%d (total %d), seq "
		       "in order", kinds[KW_EV_NET_SOCKET], kinds[KW_EV_NET_SEND],
		       kinds[KW_EV_NET_BIND], kinds[KW_EV_SYSCTL], kinds[KW_EV_DEV], c.n);
	}
	for (i = 0; i < c.n; i++) {
		if (hdr(&c, i)->kind == KW_EV_SYSCTL) {
			const struct kw_ev_sysctl *e = (const void *)c.ev[i];

			result(!strcmp(e->name, "kernel/hostname") && e->h.decision == KW_DENY,
			       "hooks: sysctl event names kernel/hostname");
		}
	}
	(void)st;
	session_end(h, &s);
}

/* A cgroup v1 hierarchy's mount point, or "" (cgroup2-only host). */
static void find_cgroup1(char *out, size_t len)
{
	if (kw_cgroup_mount("cgroup", out, len))
		out[0] = '\0';
}

/* Cgroup ids are per hierarchy, so a v1 cgroup can carry the id of a tagged
 * v2 one. Pretend one does: a v1 cgroup's id in the membership map must
 * neither pass membership to its v1 children nor be removed by its rmdir. */
static void check_v1_ignored(int mfd)
{
	char v1[256], parent[400], child[500];
	uint64_t pid_, cid;
	__u32 slot = 10, got = 0;
	int child_added, kept;

	char named[64] = "";

	find_cgroup1(v1, sizeof(v1));
	if (!v1[0]) {
		/* A cgroup2-only host: a named v1 hierarchy (no controllers) of
		 * our own, mounted for this check only. */
		char opts[64];

		snprintf(named, sizeof(named), "/tmp/kwhooktest-v1-XXXXXX");
		snprintf(opts, sizeof(opts), "none,name=kwhooktest%d", getpid());
		if (!mkdtemp(named) || mount("cgroup", named, "cgroup", 0, opts)) {
			result(false, "v1: no cgroup v1 hierarchy mounted, and mounting one failed: %s",
			       strerror(errno));
			if (named[0])
				rmdir(named);
			return;
		}
		snprintf(v1, sizeof(v1), "%s", named);
	}
	snprintf(parent, sizeof(parent), "%s/kwhooktest-%d-v1", v1, getpid());
	snprintf(child, sizeof(child), "%s/child", parent);
	if (mkdir(parent, 0755)) {
		result(false, "v1: cannot make %s: %s", parent, strerror(errno));
		goto out;
	}
	pid_ = path_id(parent);
	bpf_map_update_elem(mfd, &pid_, &slot, BPF_ANY);
	mkdir(child, 0755);
	cid = path_id(child);
	child_added = bpf_map_lookup_elem(mfd, &cid, &got) == 0 && got == slot;
	rmdir(child);
	rmdir(parent);
	kept = bpf_map_lookup_elem(mfd, &pid_, &got) == 0;
	bpf_map_delete_elem(mfd, &pid_);
	result(!child_added && kept, "v1: cgroup v1 mkdir/rmdir under %s leave the membership map "
	       "alone (child added: %d, parent kept: %d)", v1, child_added, kept);
out:
	if (named[0]) {
		umount(named);
		rmdir(named);
	}
}

/* Maps pinned under pin_dir (bpffs mounted when it is not) outlive the loader.
 * Links do not: a loader that died with a session open leaves its membership
 * and rules in the pinned maps, and the next one must not trip over them. */
/* The class gate in the pinned kw_governed; -1 when it cannot be read. */
static long long pinned_gate(const char *dir, uint32_t set)
{
	char path[512];
	uint32_t zero = 0, g = 0;
	int fd, ret;

	snprintf(path, sizeof(path), "%s/kw_governed", dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	ret = set != UINT32_MAX ? bpf_map_update_elem(fd, &zero, &set, BPF_ANY) :
				  bpf_map_lookup_elem(fd, &zero, &g);
	close(fd);
	return ret ? -1 : (long long)g;
}

static void scenario_pin(uint16_t allowed, uint16_t denied)
{
	struct kw_hooks_opts opts = { .ringbuf_size = 4096 * 4 };
	static const char *const maps[] = { "kw_sessions", "kw_cgroups", "kw_ringbufs",
					    "kw_net_rules", "kw_dev_rules", "kw_governed" };
	uint32_t classes1 = 0;
	long long gate;
	char dir[256], path[512], err[256], pol1[256], pol2[256];
	struct kw_hooks *h;
	struct session s;
	bool all = true;
	size_t i;
	int ret;

	snprintf(dir, sizeof(dir), "/sys/fs/bpf/kwhooktest-%d", getpid());
	opts.pin_dir = dir;
	ret = kw_hooks_open(&opts, &h, err, sizeof(err));
	result(ret == 0, "pin: kw_hooks_open with pin_dir %s (%s)", dir, ret ? err : "ok");
	if (ret)
		return;
	/* a session whose /8 rule allows the denied port, never freed */
	snprintf(pol1, sizeof(pol1),
		 "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":"
		 "[\"127.0.0.1/32:%u\",\"127.0.0.0/8:%u\"]}}", allowed, denied);
	if (session_start(h, &s, 10, "pin", pol1) == 0) {
		classes1 = s.pol->classes;
		kw_policy_free(s.pol);
	}
	kw_hooks_close(h);
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, maps[i]);
		all &= access(path, F_OK) == 0;
	}
	result(all, "pin: the maps stay pinned after close");
	gate = pinned_gate(dir, UINT32_MAX);
	result(classes1 && gate == classes1, "pin: the class gate is the pinned session's "
	       "classes (gate %#llx, policy %#x)", gate, classes1);
	/* as a pin folder an older build left, whose programs never wrote a gate */
	pinned_gate(dir, 0);

	ret = kw_hooks_open(&opts, &h, err, sizeof(err));
	result(ret == 0, "pin: reopening reuses the pinned maps (%s)", ret ? err : "ok");
	if (!ret) {
		gate = pinned_gate(dir, UINT32_MAX);
		result(gate == classes1, "pin: reopening remakes the gate from the pinned "
		       "session (gate %#llx)", gate);
	}
	if (!ret) {
		struct act a = { .a = A_CONNECT_TCP, .port = denied };
		char perr[256];
		int e = -1, cgfd = s.cgfd;

		snprintf(pol2, sizeof(pol2),
			 "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":"
			 "[\"127.0.0.1/32:%u\"]}}", allowed);
		ret = kw_policy_parse(pol2, strlen(pol2), &s.pol, perr, sizeof(perr));
		if (!ret)
			ret = kw_hooks_session_add(h, 10, cgfd, s.id, s.pol, &s.rbfd, perr,
						   sizeof(perr));
		result(ret == 0, "pin: the same cgroup and slot open again over the left-overs (%s)",
		       ret ? perr : "ok");
		if (!ret) {
			char sub[600];
			__u32 slot = 0;
			uint64_t sub_id;
			int mfd, found, gone;

			run_in(s.cg, &a, 1, &e);
			result(e == EPERM, "pin: the earlier session's rules are gone (errno %d)", e);
			/* the membership map itself: cgroup_mkdir adds, cgroup_rmdir removes */
			snprintf(path, sizeof(path), "%s/kw_cgroups", dir);
			snprintf(sub, sizeof(sub), "%s/tracked", s.cg);
			mfd = bpf_obj_get(path);
			mkdir(sub, 0755);
			sub_id = path_id(sub);
			found = mfd >= 0 && bpf_map_lookup_elem(mfd, &sub_id, &slot) == 0 && slot == 10;
			rmdir(sub);
			gone = mfd >= 0 && bpf_map_lookup_elem(mfd, &sub_id, &slot) != 0 && errno == ENOENT;
			result(found && gone, "pin: kw_cgroups gains a new child cgroup (slot %u) and "
			       "loses it at rmdir", slot);
			if (mfd >= 0)
				check_v1_ignored(mfd);
			if (mfd >= 0)
				close(mfd);
		}
		session_end(h, &s);
		gate = pinned_gate(dir, UINT32_MAX);
		result(gate == 0, "pin: the gate is lowered once no session is left (gate %#llx)",
		       gate);
		kw_hooks_close(h);
	} else {
		close(s.cgfd);
		rmdir(s.cg);
	}
	{
		DIR *d = opendir(dir);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
		}
		if (d)
			closedir(d);
		rmdir(dir);
	}
}

/* The classes whose kind of program `kwitness probe` sees load, attach
 * and fire here. */
static uint32_t probed_classes(void)
{
	struct kw_probe_result pr[KW_PROBE_NCLASSES];
	uint32_t want = 0;

	if (kw_probe_all(pr))
		return 0;
#define PROBED_(id, bit, name, kernel, probe) \
	if (pr[KW_PROBE_##probe].available)  \
		want |= KW_CLASS_##id;
	KW_CLASS_TABLE(PROBED_)
#undef PROBED_
	return want;
}

#ifdef KW_HOOKTEST_REFUSE
/* Built over build/refuse's object, whose kw_lsm_path_chmod every verifier
 * refuses: the loader leaves out fs alone, naming the program and the
 * kernel's reason, both when it only loads (kwitness probe) and when it
 * attaches (kwitnessd); every other class works, a session of one of them
 * enforces, and one that governs fs is refused. */
static void refuse_check(uint16_t allowed, uint16_t denied)
{
	const uint32_t gone = KW_CLASS_FS;
	struct kw_hooks_opts opts = { .ringbuf_size = 4096 * 16 };
	uint32_t want = probed_classes() & ~gone;
	struct kw_policy pol = { 0 };
	struct kw_hooks *h;
	const char *why;
	char err[256];
	int pass, rb = -1, ret;

	for (pass = 0; pass < 2; pass++) {
		const char *how = pass ? "attached" : "loaded only (kwitness probe)";

		opts.load_only = !pass;
		ret = kw_hooks_open(&opts, &h, err, sizeof(err));
		result(ret == 0, "refuse, %s: kw_hooks_open succeeds (%s)", how, ret ? err : "ok");
		if (ret)
			continue;
		why = kw_hooks_unavailable_reason(h, gone);
		result(!(kw_hooks_available(h) & gone) && why && strstr(why, "kw_lsm_path_chmod") &&
		       strstr(why, "invalid read from stack"),
		       "refuse, %s: fs is unavailable, the reason names the program and the verifier's words (%s)",
		       how, why ? why : "no reason");
		result(kw_hooks_available(h) == want,
		       "refuse, %s: every other class the probe sees works is available (0x%x, want 0x%x)",
		       how, kw_hooks_available(h), want);
		if (pass) {
			int fd = open(cg2_root, O_RDONLY | O_DIRECTORY);

			pol.classes = KW_CLASS_NET_CONNECT | KW_CLASS_FS;
			ret = fd < 0 ? -errno : kw_hooks_session_add(h, 0, fd, 1, &pol, &rb, err, sizeof(err));
			result(ret == -EOPNOTSUPP && strstr(err, "kw_lsm_path_chmod"),
			       "refuse: a session governing fs is refused, naming why (%s)", err);
			if (fd >= 0)
				close(fd);
			scenario_connect(h, allowed, denied);
		}
		kw_hooks_close(h);
	}
}
#endif

int main(int argc, char **argv)
{
	struct kw_hooks_opts opts = { .ringbuf_size = 4096 * 16 };
	struct kw_hooks *h;
	uint16_t allowed, denied;
	char err[256];
	int lfd, lfd2, ret;

	verbose = argc > 1 && !strcmp(argv[1], "-v");
	if (geteuid() != 0) {
		printf("skip - not root\n");
		return 0;
	}
	if (find_cgroup2()) {
		printf("skip - no cgroup2 mount in /proc/self/mountinfo\n");
		return 0;
	}
	lfd = listener(&allowed);
	/* a port with nothing listening: bind and close a listener */
	lfd2 = listener(&denied);
	close(lfd2);
	if (lfd < 0) {
		result(false, "listener: %s", strerror(errno));
		return 1;
	}
#ifdef KW_HOOKTEST_REFUSE
	refuse_check(allowed, denied);
	close(lfd);
	return tap_failures ? 1 : 0;
#endif
	ret = kw_hooks_open(&opts, &h, err, sizeof(err));
	if (ret) {
		result(false, "kw_hooks_open: %s", err);
		close(lfd);
		return 1;
	}
	{
		/* The loader offers exactly the classes whose kind of program
		 * `kwitness probe` sees load, attach and fire here. */
		uint32_t want = probed_classes();

		result(want && kw_hooks_available(h) == want,
		       "kw_hooks_open: classes available 0x%x, kwitness probe says 0x%x",
		       kw_hooks_available(h), want);
	}
	{
		json_t *progs = kw_hooks_programs(h);

		result(progs && json_array_size(progs) >= 11, "programs listed with tags (%zu)",
		       progs ? json_array_size(progs) : 0);
		json_decref(progs);
	}
	scenario_connect(h, allowed, denied);
	scenario_identity(h, denied);
	scenario_pretagged_child(h, denied);
	scenario_v6(h, allowed);
	scenario_advisory(h, allowed, denied);
	scenario_record_deny(h, allowed, denied);
	scenario_drop(h, allowed);
	scenario_drop_allow(h, allowed);
	scenario_other_hooks(h, allowed);
	scenario_dev(h);
	close(lfd);
	kw_hooks_close(h);
	scenario_pin(allowed, denied);
	return tap_failures ? 1 : 0;
}
