// SPDX-License-Identifier: Apache-2.0
/* bench_lsm: cost of one open()+close() pair with the BPF-LSM programs
 *   1. before anything is loaded,
 *   (a) floor: an empty lsm/file_open program (bench/floor.bpf.c); then one
 *       that reads one array value first, as kwitness's class gate does;
 *       then empty programs on both hooks where kwitness has a program that
 *       an open()+close() crosses, file_open and file_free_security,
 *   (b) floor: an lsm/file_open program doing only the unavoidable recording
 *       work (session lookup, sequence number, one reserve/submit of a
 *       kw_ev_path-sized event), this process untagged and then in its session,
 *   2. kwitness loaded and attached: first with no session open (no session
 *      governs fs: the class gate closes the hook before any lookup), then
 *      with the sessions of 3. and 4. open, this process untagged (the
 *      cgroup and task lookups, both missing),
 *   3. tagged, policy fs.read "/", record "deny" (path walk + prefix scan, the
 *      permit only counted),
 *   4. tagged, record "all" (the permit also written to the ring buffer,
 *      drained by a second thread).
 * Every configuration runs in every round (kwitness is loaded and unloaded
 * each round, so the floors run alone). Prints the best and median round, the
 * kernel-measured run time of each file_open program (kernel.bpf_stats) and
 * kwitness's against the floors.
 * Needs root and a kernel that runs lsm programs (the VM of scripts/vmtest.sh).
 * Under emulation only the ratios mean anything.
 * Usage: bench_lsm [PATH [ITERATIONS]]   (default /etc/passwd, 5000) */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/cgroup.h"
#include "bpf/hooks.h"
#include "policy/policy.h"
#include "bench/floor.skel.h"

static const char *path = "/etc/passwd";
static long iters = 5000;
static atomic_long consumed;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ns per open+close pair, one run */
static double measure(void)
{
	double t0 = now_ns();
	long i;

	for (i = 0; i < iters; i++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			fprintf(stderr, "bench_lsm: open %s: %s\n", path, strerror(errno));
			exit(1);
		}
		close(fd);
	}
	return (now_ns() - t0) / iters;
}

#define ROUNDS 5

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ns of each round, and the kernel-measured runs and time of the program */
struct series {
	double ns[ROUNDS];
	unsigned long long runs, run_ns;
};

static double best(struct series *s)
{
	qsort(s->ns, ROUNDS, sizeof(s->ns[0]), cmp_double);
	return s->ns[0];
}

static double median(struct series *s)
{
	qsort(s->ns, ROUNDS, sizeof(s->ns[0]), cmp_double);
	return s->ns[ROUNDS / 2];
}

static double per_run(const struct series *s)
{
	return s->runs ? (double)s->run_ns / (double)s->runs : 0;
}

static void prog_stats(int fd, unsigned long long *runs, unsigned long long *ns)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	*runs = *ns = 0;
	memset(&info, 0, sizeof(info));
	if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len)) {
		*runs = info.run_cnt;
		*ns = info.run_time_ns;
	}
}

/* One round of one configuration, with the program fd's accounting. */
static void measure_into(struct series *s, int round, int prog_fd)
{
	unsigned long long r0, n0, r1, n1;

	prog_stats(prog_fd, &r0, &n0);
	s->ns[round] = measure();
	prog_stats(prog_fd, &r1, &n1);
	s->runs += r1 - r0;
	s->run_ns += n1 - n0;
}

/* One round with the floor program prog attached (and also, when not NULL,
 * the program on another hook): its per-run time goes into s. */
static int measure_floor(struct bpf_program *prog, struct bpf_program *also, struct series *s,
			 int round)
{
	struct bpf_link *l = bpf_program__attach_lsm(prog), *l2 = NULL;
	int ret = 0;

	if (!l)
		return -errno;
	if (also && !(l2 = bpf_program__attach_lsm(also)))
		ret = -errno;
	if (!ret)
		measure_into(s, round, bpf_program__fd(prog));
	bpf_link__destroy(l2);
	bpf_link__destroy(l);
	return ret;
}

static __u32 last_prog_id(void)
{
	__u32 id = 0, last = 0;

	while (!bpf_prog_get_next_id(id, &id))
		last = id;
	return last;
}

/* The kwitness file_open program loaded after after_id (names are cut to 15). */
static int find_file_open(__u32 after_id)
{
	__u32 id = after_id;

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    !strncmp(info.name, "kw_lsm_file_open", sizeof(info.name) - 1))
			return fd;
		close(fd);
	}
	return -1;
}

static int join(const char *cg)
{
	char procs[1200], pid[16];
	int fd, ret = 0;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, pid, strlen(pid)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int on_event(void *ctx, void *data, size_t size)
{
	(void)ctx; (void)data; (void)size;
	atomic_fetch_add(&consumed, 1);
	return 0;
}

/* A session with the given record mode on a fresh cgroup, its ring buffer
 * drained by a thread of its own. */
struct bench_session {
	uint32_t slot;
	char cg[1100];
	int cgfd;
	struct ring_buffer *rb;
	pthread_t thr;
	bool thread;
	bool added;
	atomic_int stop;
};

static void *drain_one(void *arg)
{
	struct bench_session *b = arg;

	while (!atomic_load(&b->stop))
		ring_buffer__poll(b->rb, 10);
	ring_buffer__consume(b->rb);
	return NULL;
}

static void session_end(struct kw_hooks *h, struct bench_session *b)
{
	if (b->thread) {
		atomic_store(&b->stop, 1);
		pthread_join(b->thr, NULL);
	}
	ring_buffer__free(b->rb);
	if (b->added) {
		kw_hooks_session_untag(h, b->slot);
		kw_hooks_session_free(h, b->slot);
	}
	if (b->cgfd >= 0)
		close(b->cgfd);
	rmdir(b->cg);
}

static int session_start(struct kw_hooks *h, const char *cg2, uint32_t slot, const char *record,
			 struct bench_session *b)
{
	char bundle[1400], err[256];
	struct kw_policy *pol = NULL;
	struct stat st;
	int rbfd, ret;

	memset(b, 0, sizeof(*b));
	b->slot = slot;
	b->cgfd = -1;
	snprintf(bundle, sizeof(bundle),
		 "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"record\":\"%s\","
		 "\"on_record_failure\":\"allow\",\"fs\":{\"read\":[\"/\"],\"write\":[\"%s\"]}}",
		 record, cg2); /* write: to move between the cgroups */
	ret = kw_policy_parse(bundle, strlen(bundle), &pol, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "bench_lsm: policy: %s\n", err);
		return ret;
	}
	snprintf(b->cg, sizeof(b->cg), "%s/kwitness-bench-%d-%u", cg2, (int)getpid(), slot);
	if (mkdir(b->cg, 0755) && errno != EEXIST) {
		ret = -errno;
		goto out;
	}
	b->cgfd = open(b->cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b->cgfd < 0 || fstat(b->cgfd, &st)) {
		ret = -errno;
		goto out;
	}
	ret = kw_hooks_session_add(h, slot, b->cgfd, st.st_ino, pol, &rbfd, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "bench_lsm: session: %s\n", err);
		goto out;
	}
	b->added = true;
	b->rb = ring_buffer__new(rbfd, on_event, NULL, NULL);
	if (!b->rb) {
		ret = -errno;
		goto out;
	}
	if (pthread_create(&b->thr, NULL, drain_one, b)) {
		ret = -EAGAIN;
		goto out;
	}
	b->thread = true;
out:
	kw_policy_free(pol);
	if (ret)
		session_end(h, b);
	return ret;
}

static int on_floor_event(void *ctx, void *data, size_t size)
{
	(void)ctx; (void)data; (void)size;
	return 0;
}

/* The floors' one session: this cgroup -> slot 0, its own ring buffer. */
static int floor_session(struct floor_bpf *fl, const char *cg, int *rb_fd, struct ring_buffer **rb)
{
	struct stat st;
	__u32 slot = 0;
	__u64 cgid;

	if (mkdir(cg, 0755) && errno != EEXIST)
		return -errno;
	if (stat(cg, &st))
		return -errno;
	cgid = st.st_ino;
	*rb_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "floor_rb", 0, 0, 1u << 22, NULL);
	if (*rb_fd < 0)
		return -errno;
	if (bpf_map__update_elem(fl->maps.floor_cgroups, &cgid, sizeof(cgid), &slot, sizeof(slot),
				 BPF_ANY) ||
	    bpf_map__update_elem(fl->maps.floor_ringbufs, &slot, sizeof(slot), rb_fd,
				 sizeof(*rb_fd), BPF_ANY))
		return -errno;
	*rb = ring_buffer__new(*rb_fd, on_floor_event, NULL, NULL);
	return *rb ? 0 : -errno;
}

static atomic_int floor_stop;

static void *drain_floor(void *arg)
{
	struct ring_buffer *rb = arg;

	while (!atomic_load(&floor_stop))
		if (ring_buffer__poll(rb, 10) == 0)
			ring_buffer__consume(rb); /* the floor never wakes it */
	ring_buffer__consume(rb);
	return NULL;
}

static void loadavg(const char *when)
{
	char buf[128] = "";
	FILE *f = fopen("/proc/loadavg", "r");

	if (f && fgets(buf, sizeof(buf), f))
		printf("  load average %s: %s", when, buf);
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	struct kw_hooks_opts opts = { .ringbuf_size = 1u << 22, .pin_dir = NULL };
	struct kw_hooks *h_probe = NULL;
	struct series base = { 0 }, fa = { 0 }, fb_un = { 0 }, fb_tag = { 0 };
	struct series fgate = { 0 }, fa2 = { 0 };
	struct series nofs = { 0 }, untagged = { 0 }, t_deny = { 0 }, t_all = { 0 };
	struct kw_session c1 = { 0 }, c2 = { 0 };
	unsigned long long unrec = 0, events = 0, dropped = 0;
	struct bench_session s_deny, s_all;
	struct ring_buffer *frb = NULL;
	struct floor_bpf *fl = NULL;
	char err[256], cg2[1024], fcg[1200];
	int ret = 0, round, stats_fd, frb_fd = -1;
	pthread_t fthr;

	if (argc > 1)
		path = argv[1];
	if (argc > 2)
		iters = atol(argv[2]);
	if (iters <= 0)
		iters = 5000;
	if (kw_cgroup2_mount(cg2, sizeof(cg2))) {
		printf("bench_lsm: skipped: no cgroup2 mount\n");
		return 0;
	}
	/* can kwitness's lsm programs run here at all? */
	ret = kw_hooks_open(&opts, &h_probe, err, sizeof(err));
	if (ret) {
		printf("bench_lsm: skipped: loading the BPF object failed: %s\n", err);
		return 0;
	}
	if (!(kw_hooks_available(h_probe) & KW_CLASS_FS)) {
		printf("bench_lsm: skipped: fs class unavailable: %s\n",
		       kw_hooks_unavailable_reason(h_probe, KW_CLASS_FS));
		kw_hooks_close(h_probe);
		return 0;
	}
	kw_hooks_close(h_probe);

	fl = floor_bpf__open();
	if (fl) {
		bpf_program__set_autoload(fl->progs.floor_empty_connect4, false);
		bpf_program__set_autoload(fl->progs.floor_record_connect4, false);
	}
	snprintf(fcg, sizeof(fcg), "%s/kwitness-bench-%d-floor", cg2, (int)getpid());
	if (!fl || floor_bpf__load(fl) || floor_session(fl, fcg, &frb_fd, &frb)) {
		fprintf(stderr, "bench_lsm: loading the floor programs failed\n");
		return 1;
	}
	if (pthread_create(&fthr, NULL, drain_floor, frb))
		return 1;
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	loadavg("at the start");

	/* interleaved rounds, so the emulator's noise hits every configuration */
	for (round = 0; round < ROUNDS && !ret; round++) {
		struct bpf_link *l;
		struct kw_hooks *h = NULL;
		int kfd;
		__u32 last;

		ret = join(cg2);
		if (ret)
			break;
		measure_into(&base, round, -1);

		/* (a); (a) with file_free_security's too; a closed gate */
		ret = measure_floor(fl->progs.floor_empty_file_open, NULL, &fa, round);
		if (!ret)
			ret = measure_floor(fl->progs.floor_empty_file_open,
					    fl->progs.floor_empty_file_free, &fa2, round);
		if (!ret)
			ret = measure_floor(fl->progs.floor_gate_file_open, NULL, &fgate, round);
		if (ret)
			break;

		l = bpf_program__attach_lsm(fl->progs.floor_record_file_open);
		if (!l) {
			ret = -errno;
			break;
		}
		measure_into(&fb_un, round, bpf_program__fd(fl->progs.floor_record_file_open));
		ret = join(fcg);
		if (!ret)
			measure_into(&fb_tag, round,
				     bpf_program__fd(fl->progs.floor_record_file_open));
		if (!ret)
			ret = join(cg2);
		bpf_link__destroy(l);
		if (ret)
			break;

		last = last_prog_id();
		ret = kw_hooks_open(&opts, &h, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "bench_lsm: %s\n", err);
			break;
		}
		kfd = find_file_open(last);
		measure_into(&nofs, round, kfd);
		ret = session_start(h, cg2, 1, "deny", &s_deny);
		if (!ret) {
			ret = session_start(h, cg2, 2, "all", &s_all);
			if (ret)
				session_end(h, &s_deny);
		}
		if (ret) {
			kw_hooks_close(h);
			if (kfd >= 0)
				close(kfd);
			break;
		}
		measure_into(&untagged, round, kfd);
		ret = join(s_deny.cg);
		if (!ret)
			measure_into(&t_deny, round, kfd);
		if (!ret)
			ret = join(s_all.cg);
		if (!ret)
			measure_into(&t_all, round, kfd);
		if (!ret)
			ret = join(cg2);
		kw_hooks_session_counters(h, 1, &c1);
		kw_hooks_session_counters(h, 2, &c2);
		unrec += c1.unrecorded;
		events += c2.next_seq;
		dropped += c2.dropped;
		session_end(h, &s_deny);
		session_end(h, &s_all);
		kw_hooks_close(h);
		if (kfd >= 0)
			close(kfd);
	}
	loadavg("at the end");
	atomic_store(&floor_stop, 1);
	pthread_join(fthr, NULL);
	ring_buffer__free(frb);
	close(frb_fd);
	floor_bpf__destroy(fl);
	rmdir(fcg);
	if (stats_fd >= 0)
		close(stats_fd);
	if (ret) {
		fprintf(stderr, "bench_lsm: failed: %s\n", strerror(-ret));
		return 1;
	}
	{
		double b = median(&base), m_fa = median(&fa), m_fbu = median(&fb_un);
		double m_fbt = median(&fb_tag), m_un = median(&untagged), m_d = median(&t_deny);
		double m_nofs = median(&nofs), m_fg = median(&fgate), m_fa2 = median(&fa2);
		double m_a = median(&t_all);

		printf("bench_lsm: open+close of %s, %ld iterations, %d interleaved rounds "
		       "(best, median; ratio of the median to 1.)\n", path, iters, ROUNDS);
		printf("  1. no programs           %7.0f %7.0f ns   1.00x\n", best(&base), b);
		printf("  (a) floor: empty         %7.0f %7.0f ns   %.2fx   program %.0f ns/run\n",
		       best(&fa), m_fa, m_fa / b, per_run(&fa));
		printf("  (a) + a closed gate      %7.0f %7.0f ns   %.2fx   program %.0f ns/run\n",
		       best(&fgate), m_fg, m_fg / b, per_run(&fgate));
		printf("  (a) on both hooks        %7.0f %7.0f ns   %.2fx   file_open program %.0f ns/run\n",
		       best(&fa2), m_fa2, m_fa2 / b, per_run(&fa2));
		printf("  (b) floor, untagged      %7.0f %7.0f ns   %.2fx   program %.0f ns/run\n",
		       best(&fb_un), m_fbu, m_fbu / b, per_run(&fb_un));
		printf("  (b) floor, in a session  %7.0f %7.0f ns   %.2fx   program %.0f ns/run\n",
		       best(&fb_tag), m_fbt, m_fbt / b, per_run(&fb_tag));
		printf("  2. loaded, no fs session %7.0f %7.0f ns   %.2fx   program %.0f ns/run\n",
		       best(&nofs), m_nofs, m_nofs / b, per_run(&nofs));
		printf("  2. loaded, untagged      %7.0f %7.0f ns   %.2fx   program %.0f ns/run\n",
		       best(&untagged), m_un, m_un / b, per_run(&untagged));
		printf("  3. tagged, record deny   %7.0f %7.0f ns   %.2fx   program %.0f ns/run "
		       "(unrecorded permits %llu)\n", best(&t_deny), m_d, m_d / b, per_run(&t_deny),
		       unrec);
		printf("  4. tagged, record all    %7.0f %7.0f ns   %.2fx   program %.0f ns/run "
		       "(events %llu, consumed %ld, dropped %llu)\n", best(&t_all), m_a, m_a / b,
		       per_run(&t_all), events, atomic_load(&consumed), dropped);
		printf("  against the floors (open+close, median):\n");
		printf("     no fs session / (a):       %.2fx (aim <= 1.10x: %s)\n", m_nofs / m_fa,
		       m_nofs <= 1.10 * m_fa ? "met" : "NOT met");
		printf("     no fs session / (a) on both hooks: %.2fx (aim <= 1.10x: %s)\n",
		       m_nofs / m_fa2, m_nofs <= 1.10 * m_fa2 ? "met" : "NOT met");
		printf("     untagged / (a):            %.2fx (aim <= 1.10x: %s)\n", m_un / m_fa,
		       m_un <= 1.10 * m_fa ? "met" : "NOT met");
		printf("     record deny / (b) tagged:  %.2fx   record all / (b) tagged: %.2fx "
		       "(aim <= 1.5x: %s)\n", m_d / m_fbt, m_a / m_fbt,
		       m_a <= 1.5 * m_fbt && m_d <= 1.5 * m_fbt ? "met" : "NOT met");
		printf("     program run time: (a) + a closed gate %.2fx (a); no fs session %.2fx (a), "
		       "%.2fx (a) + a closed gate\n", per_run(&fa) > 0 ? per_run(&fgate) / per_run(&fa) : 0,
		       per_run(&fa) > 0 ? per_run(&nofs) / per_run(&fa) : 0,
		       per_run(&fgate) > 0 ? per_run(&nofs) / per_run(&fgate) : 0);
		printf("     program run time: no fs session %.2fx (a), untagged %.2fx (a); record deny "
		       "%.2fx, record all %.2fx (b) in a session\n",
		       per_run(&fa) > 0 ? per_run(&nofs) / per_run(&fa) : 0,
		       per_run(&fa) > 0 ? per_run(&untagged) /
		       per_run(&fa) : 0, per_run(&fb_tag) > 0 ? per_run(&t_deny) / per_run(&fb_tag) :
		       0, per_run(&fb_tag) > 0 ? per_run(&t_all) / per_run(&fb_tag) : 0);
	}
	return 0;
}
