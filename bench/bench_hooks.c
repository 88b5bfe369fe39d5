// SPDX-License-Identifier: Apache-2.0
/* bench_hooks: what a hooked operation costs. One run, one process, a tight
 * loop of connect() of a UDP socket to 127.0.0.1 (cgroup/connect4 fires on
 * each; no packet is sent, so the hook is a visible part of the cost), in:
 *   1. no kwitness programs loaded;
 *   control: a 2-instruction program attached to another cgroup;
 *   (a) floor: an empty program ("allow") attached to this process's cgroup;
 *   (b) floor: the unavoidable recording work (bench/floor.bpf.c: session
 *       lookup, sequence number, one reserve/submit of a kw_ev_net-sized
 *       event) attached to this process's cgroup, a thread consuming;
 *   2. programs loaded (attached at the cgroup2 root, so they run for every
 *      task), no session open: no session governs net.connect, the class
 *      gate closes the hook before any lookup;
 *      then a session open on another cgroup, this process untagged;
 *   3. this process tagged, record: all (a thread consumes the ring buffer);
 *   4. this process tagged, record: deny (permits only counted).
 * Every configuration runs once per round, rounds interleaved. Prints CPU
 * ns/op (fastest and median round), the cost added to (1), the kernel's own
 * accounting of each program's run time (kernel.bpf_stats), and kwitness's
 * program as a ratio to floors (a) and (b). Needs root. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/hooks.h"
#include "kwitness/abi/net_match.h"
#include "lib/cgroup.h"
#include "bench/floor.skel.h"
#include "policy/policy.h"
/* kwitnessd's wakeup rule (kwd_wakeup_bytes, KWD_POLL_MS), to measure what it does */
#include "../user/kwitnessd/wakeup.h"

#define ROUNDS 11
/* floor_steps_connect4: floor (b), then kwitness's other work piece by piece */
#define STEPS 12
static const char *const step_name[STEPS] = {
	"floor (b) alone", "+ boot-time stamp", "+ pid/tgid, uid", "+ comm",
	"+ ring buffer query, 1 decision in 16 (wakeups)", "+ LPM rule lookup and port scan",
	"+ the event's fields",
	"same, pid/uid/comm from the task (BTF)",
	"same, coarse clock instead of boot time",
	"same as 7, the rule from a hash, not the trie",
	"same as 7, the ring buffer queried every time",
	"same as 7, monotonic clock instead of boot time",
};
/* the step each is measured against: the last two are variants of step 7 */
static const int step_base[STEPS] = { 0, 0, 1, 2, 3, 4, 5, 6, 7, 7, 7, 7 };
#define OPS_PER_ROUND 100000

static struct sockaddr_in dst;

/* The thread's CPU time (user + kernel): time the machine gives to other
 * processes while this one waits does not count, and connect() never sleeps. */
static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The machine is shared: say how busy it was. */
static void print_loadavg(const char *when)
{
	char buf[128] = "";
	FILE *f = fopen("/proc/loadavg", "r");

	if (f && fgets(buf, sizeof(buf), f))
		printf("  load average %s: %s", when, buf);
	if (f)
		fclose(f);
}

/* What reading the CPU's time stamp counter costs here, the heart of the
 * kernel's clock reads (the boot-time stamp): in a virtual machine it may be
 * several times what it is on bare metal, and it is part of every event. */
static void print_tsc_cost(void)
{
#if defined(__x86_64__)
	const int n = 2000000;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++)
		(void)__builtin_ia32_rdtsc(); /* a volatile instruction: kept */
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("     (this machine: one rdtsc takes %.1f ns in userspace)\n",
	       ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / n);
#endif
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ns per connect() over one round. The socket is made here, in
 * the cgroup the process is in now: cgroup sock_addr programs run for the
 * cgroup a socket was created in. */
static double measure(void)
{
	double t0;
	int k, fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0) {
		perror("socket");
		exit(1);
	}
	for (k = 0; k < 2000; k++) /* warm up */
		connect(fd, (struct sockaddr *)&dst, sizeof(dst));
	t0 = now_ns();
	for (k = 0; k < OPS_PER_ROUND; k++)
		if (connect(fd, (struct sockaddr *)&dst, sizeof(dst))) {
			fprintf(stderr, "connect: %s\n", strerror(errno));
			exit(1);
		}
	t0 = (now_ns() - t0) / OPS_PER_ROUND;
	close(fd);
	return t0;
}

static char cg2[256];

static int join(const char *cg)
{
	char p[600];
	FILE *f;

	snprintf(p, sizeof(p), "%s/cgroup.procs", cg);
	f = fopen(p, "w");
	if (!f)
		return -1;
	fprintf(f, "%d", getpid());
	return fclose(f);
}

static atomic_ullong consumed;

struct consumer_arg {
	struct ring_buffer *rb;
	atomic_int stop;
};

static atomic_ullong floor_consumed;

static int on_event(void *ctx, void *data, size_t size)
{
	(void)data; (void)size;
	(*(atomic_ullong *)ctx)++;
	return 0;
}

static void *consumer(void *arg)
{
	struct consumer_arg *c = arg;

	while (!c->stop)
		if (ring_buffer__poll(c->rb, KWD_POLL_MS) == 0)
			ring_buffer__consume(c->rb); /* the programs may not have woken it */
	ring_buffer__consume(c->rb);
	return NULL;
}

static int add_session(struct kw_hooks *h, uint32_t slot, const char *cg, const char *policy,
		       struct kw_policy **pol, int *cgfd, int *rbfd)
{
	char err[256];
	struct stat st;
	int ret;

	ret = kw_policy_parse(policy, strlen(policy), pol, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "policy: %s\n", err);
		return ret;
	}
	*cgfd = open(cg, O_RDONLY | O_DIRECTORY);
	if (*cgfd < 0 || fstat(*cgfd, &st))
		return -errno;
	ret = kw_hooks_session_add(h, slot, *cgfd, st.st_ino, *pol, rbfd, err, sizeof(err));
	if (ret)
		fprintf(stderr, "session_add: %s\n", err);
	return ret;
}

struct result {
	double ns[ROUNDS];
};

/* Control: "return 1" as a cgroup/connect4 program, attached to another
 * cgroup. Whatever this costs an untagged process is the kernel's price of
 * any cgroup connect hook on the host, not kwitness's. */
static int attach_trivial_connect4(const char *cg, int *prog_fd, int *cg_fd)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_CGROUP_INET4_CONNECT);

	*prog_fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, "kw_trivial", "GPL", insns, 2, &o);
	if (*prog_fd < 0)
		return -1;
	*cg_fd = open(cg, O_RDONLY | O_DIRECTORY);
	if (*cg_fd < 0 || bpf_prog_attach(*prog_fd, *cg_fd, BPF_CGROUP_INET4_CONNECT,
					  BPF_F_ALLOW_MULTI)) {
		close(*prog_fd);
		if (*cg_fd >= 0)
			close(*cg_fd);
		return -1;
	}
	return 0;
}

/* The floors (bench/floor.bpf.c), loaded once; attached only while measured,
 * so the other configurations never run with them. */
struct floors {
	struct floor_bpf *skel;
	int rb_fd;
	struct ring_buffer *rb;
	char cg_a[512], cg_b[512];
	int cgfd_a, cgfd_b;
};

static void floors_close(struct floors *fl)
{
	ring_buffer__free(fl->rb);
	if (fl->rb_fd >= 0)
		close(fl->rb_fd);
	if (fl->cgfd_a >= 0)
		close(fl->cgfd_a);
	if (fl->cgfd_b >= 0)
		close(fl->cgfd_b);
	floor_bpf__destroy(fl->skel);
}

static int floors_open(struct floors *fl, size_t ringbuf_size)
{
	struct stat st;
	__u64 cgid;
	__u32 slot = 0;

	fl->rb_fd = fl->cgfd_a = fl->cgfd_b = -1;
	fl->rb = NULL;
	fl->skel = floor_bpf__open();
	if (!fl->skel)
		return -1;
	/* the lsm programs are bench_lsm's */
	bpf_program__set_autoload(fl->skel->progs.floor_empty_file_open, false);
	bpf_program__set_autoload(fl->skel->progs.floor_record_file_open, false);
	bpf_program__set_autoload(fl->skel->progs.floor_gate_file_open, false);
	bpf_program__set_autoload(fl->skel->progs.floor_empty_file_free, false);
	if (floor_bpf__load(fl->skel))
		goto fail;
	fl->rb_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "floor_rb", 0, 0, ringbuf_size, NULL);
	fl->cgfd_a = open(fl->cg_a, O_RDONLY | O_DIRECTORY);
	fl->cgfd_b = open(fl->cg_b, O_RDONLY | O_DIRECTORY);
	if (fl->rb_fd < 0 || fl->cgfd_a < 0 || fl->cgfd_b < 0 || fstat(fl->cgfd_b, &st))
		goto fail;
	cgid = st.st_ino;
	if (bpf_map__update_elem(fl->skel->maps.floor_cgroups, &cgid, sizeof(cgid), &slot,
				 sizeof(slot), BPF_ANY) ||
	    bpf_map__update_elem(fl->skel->maps.floor_ringbufs, &slot, sizeof(slot), &fl->rb_fd,
				 sizeof(fl->rb_fd), BPF_ANY))
		goto fail;
	{
		/* the breakdown's one rule: 127.0.0.1/32, the receiver's port */
		struct kw_net_key key = { .prefixlen = KW_NET_KEY_FIXED_BITS + 32, .slot = 0,
					  .op = KW_NET_CONNECT, .family = 4 };
		struct kw_net_rules rules = { .count = 1 };
		uint32_t a = dst.sin_addr.s_addr;

		memcpy(key.addr, &a, 4);
		rules.r[0] = (struct kw_net_port_rule){ .port_lo = ntohs(dst.sin_port),
							.port_hi = ntohs(dst.sin_port),
							.rule = 0, .prefixlen = 32, .allow = 1 };
		if (bpf_map__update_elem(fl->skel->maps.floor_net_rules, &key, sizeof(key), &rules,
					 sizeof(rules), BPF_ANY) ||
		    bpf_map__update_elem(fl->skel->maps.floor_net_exact, &key, sizeof(key), &rules,
					 sizeof(rules), BPF_ANY))
			goto fail;
	}
	fl->rb = ring_buffer__new(fl->rb_fd, on_event, &floor_consumed, NULL);
	if (!fl->rb)
		goto fail;
	return 0;
fail:
	floors_close(fl);
	fl->skel = NULL;
	return -1;
}

/* Every loaded program called name (other kwitness instances may run too:
 * ours is the one whose run count moves while we measure). */
#define MAX_PROGS 32
struct progs {
	int n;
	int fd[MAX_PROGS];
};

static void find_progs(const char *name, __u32 after_id, struct progs *p)
{
	__u32 id = after_id;

	p->n = 0;
	while (p->n < MAX_PROGS && !bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, name))
			p->fd[p->n++] = fd;
		else
			close(fd);
	}
}

static void close_progs(struct progs *p)
{
	while (p->n)
		close(p->fd[--p->n]);
}

/* Kernel's own accounting (kernel.bpf_stats) of each program in p. */
static void prog_stats(const struct progs *p, unsigned long long *cnt, unsigned long long *ns)
{
	int i;

	for (i = 0; i < p->n; i++) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		memset(&info, 0, sizeof(info));
		cnt[i] = ns[i] = 0;
		if (!bpf_obj_get_info_by_fd(p->fd[i], &info, &len)) {
			cnt[i] = info.run_cnt;
			ns[i] = info.run_time_ns;
		}
	}
}

/* Adds the runs and time of the program that ran most between two snapshots. */
static void add_busiest(const struct progs *p, const unsigned long long *c0,
			const unsigned long long *n0, const unsigned long long *c1,
			const unsigned long long *n1, unsigned long long *runs,
			unsigned long long *ns)
{
	unsigned long long best = 0, best_ns = 0;
	int i;

	for (i = 0; i < p->n; i++)
		if (c1[i] - c0[i] > best) {
			best = c1[i] - c0[i];
			best_ns = n1[i] - n0[i];
		}
	*runs += best;
	*ns += best_ns;
}

/* Runs of one program and its kernel-measured time, added to *runs, *ns. */
static void one_prog_stats(int fd, unsigned long long *runs, unsigned long long *ns)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
		*runs += info.run_cnt;
		*ns += info.run_time_ns;
	}
}

/* One floor: its program attached to its cgroup, this process in it. */
static double measure_floor(struct bpf_program *prog, int cgfd, const char *cg,
			    const char *back, unsigned long long *runs, unsigned long long *ns)
{
	unsigned long long r0 = 0, n0 = 0, r1 = 0, n1 = 0;
	struct bpf_link *l = bpf_program__attach_cgroup(prog, cgfd);
	double t;

	if (!l || join(cg)) {
		fprintf(stderr, "bench_hooks: attaching a floor program failed\n");
		exit(1);
	}
	usleep(100000);
	one_prog_stats(bpf_program__fd(prog), &r0, &n0);
	t = measure();
	one_prog_stats(bpf_program__fd(prog), &r1, &n1);
	*runs += r1 - r0;
	*ns += n1 - n0;
	join(back);
	bpf_link__destroy(l);
	return t;
}

/* The fastest round (the machine is shared: other load only adds) and the median. */
static void summarize(struct result *r, double *min, double *med)
{
	qsort(r->ns, ROUNDS, sizeof(r->ns[0]), cmp_double);
	*min = r->ns[0];
	*med = r->ns[ROUNDS / 2];
}

int main(void)
{
	/* As kwitnessd runs it: the programs wake the consumer only once
	 * 1/KWD_WAKEUP_FRACTION of the ring buffer waits, and the consumer
	 * thread also consumes every KWD_POLL_MS. */
	struct kw_hooks_opts opts = { .ringbuf_size = 16u << 20,
				      .wakeup_bytes = kwd_wakeup_bytes(16u << 20) };
	char tagged[512], tagged2[512], other[512], home[1024] = "", err[256], line[600];
	char pol_all[512], pol_deny[512];
	struct result r1, r1b, r2n, r2, r3, r4, ra, rb_;
	struct floors fl;
	double mina, meda, minb, medb;
	unsigned long long fruns[2] = { 0 }, fns[2] = { 0 }, fconsumed;
	pthread_t fthr;
	struct consumer_arg fcons, kcons;
	unsigned long long sruns[STEPS] = { 0 }, sns[STEPS] = { 0 };
	__u32 max_id_before = 0;
	struct result d3, d4, da, db;
	double min1b, med1b;
	bool have_control = true;
	unsigned long long recorded = 0, dropped = 0, unrecorded = 0;
	unsigned long long runs[4] = { 0 }, run_ns[4] = { 0 };
	int stats_fd;
	double min1, med1, min2n, med2n, min2, med2, min3, med3, min4, med4;
	socklen_t len = sizeof(dst);
	int rx, round;
	FILE *f;

	if (geteuid() != 0 || kw_cgroup2_mount(cg2, sizeof(cg2))) {
		printf("bench_hooks: skipped (needs root and a cgroup2 mount)\n");
		return 0;
	}
	/* remember where we started, to go back */
	f = fopen("/proc/self/cgroup", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(home, sizeof(home), "%s%s", cg2, line + 3);
		}
	if (f)
		fclose(f);

	/* connect() target; nothing is sent */
	rx = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (rx < 0 || bind(rx, (struct sockaddr *)&dst, sizeof(dst)) ||
	    getsockname(rx, (struct sockaddr *)&dst, &len)) {
		perror("receiver");
		return 1;
	}

	snprintf(tagged, sizeof(tagged), "%s/kwbench-%d-tagged", cg2, getpid());
	snprintf(tagged2, sizeof(tagged2), "%s/kwbench-%d-tagged2", cg2, getpid());
	snprintf(other, sizeof(other), "%s/kwbench-%d-other", cg2, getpid());
	snprintf(fl.cg_a, sizeof(fl.cg_a), "%s/kwbench-%d-floor-a", cg2, getpid());
	snprintf(fl.cg_b, sizeof(fl.cg_b), "%s/kwbench-%d-floor-b", cg2, getpid());
	mkdir(tagged, 0755);
	mkdir(tagged2, 0755);
	mkdir(other, 0755);
	mkdir(fl.cg_a, 0755);
	mkdir(fl.cg_b, 0755);
	if (join(other)) {
		perror("join");
		return 1;
	}
	snprintf(pol_all, sizeof(pol_all),
		 "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":"
		 "[\"127.0.0.1/32:%u\"]}}", ntohs(dst.sin_port));
	snprintf(pol_deny, sizeof(pol_deny),
		 "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"record\":\"deny\",\"net\":"
		 "{\"connect\":[\"127.0.0.1/32:%u\"]}}", ntohs(dst.sin_port));

	if (floors_open(&fl, opts.ringbuf_size)) {
		fprintf(stderr, "bench_hooks: loading the floor programs failed\n");
		return 1;
	}
	fcons.rb = fl.rb;
	fcons.stop = 0;
	pthread_create(&fthr, NULL, consumer, &fcons);
	/* per-program run time from the kernel (kernel.bpf_stats_enabled) */
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	printf("bench_hooks: UDP connect() to 127.0.0.1:%u, %d interleaved rounds x %d ops\n",
	       ntohs(dst.sin_port), ROUNDS, OPS_PER_ROUND);
	printf("  tagged sessions as kwitnessd runs them: %zu KiB ring buffer, consumer woken at "
	       "%zu KiB waiting (ring buffer / %d), else it consumes every %d ms\n",
	       opts.ringbuf_size >> 10, opts.wakeup_bytes >> 10, KWD_WAKEUP_FRACTION, KWD_POLL_MS);
	print_loadavg("at the start");
	{
		/* programs someone else attached at the cgroup2 root run in every
		 * configuration here, "no programs" included */
		__u32 ids[64], cnt = 64, flags = 0;
		int rfd = open(cg2, O_RDONLY | O_DIRECTORY);

		if (rfd >= 0 && !bpf_prog_query(rfd, BPF_CGROUP_INET4_CONNECT, 0, &flags, ids,
						 &cnt) && cnt)
			printf("  NOTE: %u connect4 program(s) already attached at the cgroup2 root run "
			       "in every configuration below (1. included)\n", cnt);
		if (rfd >= 0)
			close(rfd);
	}
	/* the configurations alternate inside each round, so drift in the
	 * machine's load hits all of them alike */
	for (round = 0; round < ROUNDS; round++) {
		struct kw_policy *pa = NULL, *pd = NULL;
		struct kw_session cnt;
		struct ring_buffer *rb;
		struct kw_hooks *h;
		unsigned long long c0[MAX_PROGS], n0[MAX_PROGS], c1[MAX_PROGS], n1[MAX_PROGS];
		int cga, cgd, rba, rbd;
		struct progs pr;
		pthread_t thr;

		/* let deferred work of the previous round's unload settle */
		usleep(300000);
		r1.ns[round] = measure();
		{
			int tp, tc;

			if (attach_trivial_connect4(tagged, &tp, &tc) == 0) {
				usleep(100000);
				r1b.ns[round] = measure();
				bpf_prog_detach2(tp, tc, BPF_CGROUP_INET4_CONNECT);
				close(tp);
				close(tc);
			} else {
				have_control = false;
				r1b.ns[round] = 0;
			}
		}

		ra.ns[round] = measure_floor(fl.skel->progs.floor_empty_connect4, fl.cgfd_a, fl.cg_a,
					     other, &fruns[0], &fns[0]);
		rb_.ns[round] = measure_floor(fl.skel->progs.floor_record_connect4, fl.cgfd_b,
					      fl.cg_b, other, &fruns[1], &fns[1]);
		for (int st = 0; st < STEPS; st++) {
			fl.skel->bss->floor_steps = (__u32)st;
			measure_floor(fl.skel->progs.floor_steps_connect4, fl.cgfd_b, fl.cg_b, other,
				      &sruns[st], &sns[st]);
		}

		{
			__u32 id = 0;

			max_id_before = 0;
			while (!bpf_prog_get_next_id(id, &id))
				max_id_before = id;
		}
		if (kw_hooks_open(&opts, &h, err, sizeof(err))) {
			fprintf(stderr, "kw_hooks_open: %s\n", err);
			return 1;
		}
		/* and that of loading (JIT, text patching, RCU) */
		usleep(300000);
		/* only the instance loaded just now: others may be attached too */
		find_progs("kw_connect4", max_id_before, &pr);
		prog_stats(&pr, c0, n0);
		r2n.ns[round] = measure();
		prog_stats(&pr, c1, n1);
		add_busiest(&pr, c0, n0, c1, n1, &runs[0], &run_ns[0]);
		if (add_session(h, 1, tagged, pol_all, &pa, &cga, &rba) ||
		    add_session(h, 2, tagged2, pol_deny, &pd, &cgd, &rbd))
			return 1;
		usleep(100000);
		prog_stats(&pr, c0, n0);
		r2.ns[round] = measure();
		prog_stats(&pr, c1, n1);
		add_busiest(&pr, c0, n0, c1, n1, &runs[1], &run_ns[1]);

		rb = ring_buffer__new(rba, on_event, &consumed, NULL);
		kcons.rb = rb;
		kcons.stop = 0;
		pthread_create(&thr, NULL, consumer, &kcons);
		if (join(tagged)) {
			perror("join tagged");
			return 1;
		}
		prog_stats(&pr, c0, n0);
		r3.ns[round] = measure();
		prog_stats(&pr, c1, n1);
		add_busiest(&pr, c0, n0, c1, n1, &runs[2], &run_ns[2]);
		join(tagged2);
		prog_stats(&pr, c0, n0);
		r4.ns[round] = measure();
		prog_stats(&pr, c1, n1);
		add_busiest(&pr, c0, n0, c1, n1, &runs[3], &run_ns[3]);
		join(other);
		close_progs(&pr);
		kcons.stop = 1;
		pthread_join(thr, NULL);
		ring_buffer__free(rb);

		d3.ns[round] = r3.ns[round] - r1.ns[round];
		d4.ns[round] = r4.ns[round] - r1.ns[round];
		da.ns[round] = ra.ns[round] - r1.ns[round];
		db.ns[round] = rb_.ns[round] - r1.ns[round];
		kw_hooks_session_counters(h, 1, &cnt);
		recorded += cnt.next_seq;
		dropped += cnt.dropped;
		kw_hooks_session_counters(h, 2, &cnt);
		unrecorded += cnt.unrecorded;
		kw_hooks_close(h);
		kw_policy_free(pa);
		kw_policy_free(pd);
		close(cga);
		close(cgd);
	}
	print_loadavg("at the end");
	summarize(&r1, &min1, &med1);
	summarize(&r1b, &min1b, &med1b);
	summarize(&r2n, &min2n, &med2n);
	summarize(&r2, &min2, &med2);
	summarize(&r3, &min3, &med3);
	summarize(&r4, &min4, &med4);
	summarize(&ra, &mina, &meda);
	summarize(&rb_, &minb, &medb);
	fcons.stop = 1;
	pthread_join(fthr, NULL);
	{
		__u32 slot = 0;
		struct { __u64 next_seq, dropped; } fs = { 0, 0 };

		bpf_map__lookup_elem(fl.skel->maps.floor_sessions, &slot, sizeof(slot), &fs,
				     sizeof(fs), 0);
		fconsumed = floor_consumed;
		printf("  floor (b): %llu recorded, %llu consumed, %llu dropped\n",
		       (unsigned long long)fs.next_seq, fconsumed, (unsigned long long)fs.dropped);
	}
	floors_close(&fl);
	printf("                                           fastest   (delta)     median   (delta)\n");
	printf("  1. no programs loaded:                 %7.1f ns            %7.1f ns\n", min1,
	       med1);
	if (have_control)
		printf("  control: a 2-instruction connect4 program attached elsewhere (the "
		       "kernel's cost of any cgroup connect hook):\n"
		       "                                         %7.1f ns (%+6.1f)  %7.1f ns (%+6.1f)\n",
		       min1b, min1b - min1, med1b, med1b - med1);
	printf("  (a) floor: empty program on this cgroup: %7.1f ns (%+6.1f)  %7.1f ns (%+6.1f)\n",
	       mina, mina - min1, meda, meda - med1);
	printf("  (b) floor: lookup+seq+reserve/submit:  %7.1f ns (%+6.1f)  %7.1f ns (%+6.1f)\n",
	       minb, minb - min1, medb, medb - med1);
	printf("  2. loaded, no session (gate closed):   %7.1f ns (%+6.1f)  %7.1f ns (%+6.1f)\n",
	       min2n, min2n - min1, med2n, med2n - med1);
	printf("  2. loaded (at the root), untagged:     %7.1f ns (%+6.1f)  %7.1f ns (%+6.1f)\n",
	       min2, min2 - min1, med2, med2 - med1);
	printf("  3. tagged, record: all:                %7.1f ns (%+6.1f)  %7.1f ns (%+6.1f)\n",
	       min3, min3 - min1, med3, med3 - med1);
	printf("  4. tagged, record: deny:               %7.1f ns (%+6.1f)  %7.1f ns (%+6.1f)\n",
	       min4, min4 - min1, med4, med4 - med1);
	printf("  record: all: %llu recorded, %llu consumed, %llu dropped; record: deny: %llu "
	       "unrecorded\n", recorded, (unsigned long long)consumed, dropped, unrecorded);
	if (stats_fd >= 0) {
		printf("  kernel-measured cgroup/connect4 program (kernel.bpf_stats):\n");
		printf("     no session:   %llu runs, %.1f ns per run (the class gate alone)\n",
		       runs[0], runs[0] ? (double)run_ns[0] / (double)runs[0] : 0.0);
		printf("     untagged: %llu runs, %.1f ns per run (two hash lookups, cgroup and task, "
		       "both missing)\n", runs[1],
		       runs[1] ? (double)run_ns[1] / (double)runs[1] : 0.0);
		printf("     record: all:  %llu runs, %.1f ns per run\n", runs[2],
		       runs[2] ? (double)run_ns[2] / (double)runs[2] : 0.0);
		printf("     record: deny: %llu runs, %.1f ns per run\n", runs[3],
		       runs[3] ? (double)run_ns[3] / (double)runs[3] : 0.0);
		printf("     (a) empty:    %llu runs, %.1f ns per run\n", fruns[0],
		       fruns[0] ? (double)fns[0] / (double)fruns[0] : 0.0);
		printf("     (b) recording floor: %llu runs, %.1f ns per run\n", fruns[1],
		       fruns[1] ? (double)fns[1] / (double)fruns[1] : 0.0);
		printf("  what each piece of kwitness's recording adds to floor (b) "
		       "(bench/floor.bpf.c floor_steps_connect4, ns per run, cumulative):\n");
		for (int st = 0; st < STEPS; st++) {
			double v = sruns[st] ? (double)sns[st] / (double)sruns[st] : 0.0;
			int b = step_base[st];
			double prev = sruns[b] ? (double)sns[b] / (double)sruns[b] : v;

			printf("     %-40s %6.1f  (%+.1f)\n", step_name[st], v, v - prev);
			if (st == 1)
				print_tsc_cost();
		}
		close(stats_fd);
	}
	{
		/* the program's own time (kernel.bpf_stats) and the cost it adds to
		 * connect() over no programs, each against the floors' */
		double pa = fruns[0] ? (double)fns[0] / (double)fruns[0] : 0;
		double pb = fruns[1] ? (double)fns[1] / (double)fruns[1] : 0;
		double pall = runs[2] ? (double)run_ns[2] / (double)runs[2] : 0;
		double pdeny = runs[3] ? (double)run_ns[3] / (double)runs[3] : 0;

		double x, a3, a4, aa, ab;

		summarize(&d3, &x, &a3);
		summarize(&d4, &x, &a4);
		summarize(&da, &x, &aa);
		summarize(&db, &x, &ab);
		printf("  added to connect() over 1. (median of the per-round differences): "
		       "(a) %+.1f ns, (b) %+.1f ns, record: all %+.1f ns, record: deny %+.1f ns\n",
		       aa, ab, a3, a4);
		printf("  kwitness tagged against the floors, ratio to (a) / to (b):\n");
		printf("     record: all:  program run time %.2fx / %.2fx; added cost %.2fx / %.2fx\n",
		       pa > 0 ? pall / pa : 0, pb > 0 ? pall / pb : 0, aa > 0 ? a3 / aa : 0,
		       ab > 0 ? a3 / ab : 0);
		printf("     record: deny: program run time %.2fx / %.2fx; added cost %.2fx / %.2fx\n",
		       pa > 0 ? pdeny / pa : 0, pb > 0 ? pdeny / pb : 0, aa > 0 ? a4 / aa : 0,
		       ab > 0 ? a4 / ab : 0);
		printf("aim: tagged within 1.5x floor (b) (program run time): record: all %s, "
		       "record: deny %s\n", pb > 0 && pall <= 1.5 * pb ? "met" : "NOT met",
		       pb > 0 && pdeny <= 1.5 * pb ? "met" : "NOT met");
	}
	printf("aims (fastest): untagged < +25 ns: %s; tagged (record: all) < +300 ns: %s\n",
	       min2 - min1 < 25 ? "met" : "NOT met", min3 - min1 < 300 ? "met" : "NOT met");
	if (have_control)
		printf("untagged beyond the kernel's own hook cost (2 - control): %+.1f ns "
		       "(fastest), %+.1f ns (median)\n", min2 - min1b, med2 - med1b);

	if (home[0])
		join(home);
	rmdir(tagged);
	rmdir(tagged2);
	rmdir(other);
	rmdir(fl.cg_a);
	rmdir(fl.cg_b);
	return 0;
}
