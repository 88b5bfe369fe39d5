// SPDX-License-Identifier: Apache-2.0
/* bench_lsm: cost of one open()+close() pair with the BPF-LSM programs
 *   1. before anything is loaded,
 *   2. loaded and attached, this process untagged (one hash lookup per hook),
 *   3. tagged, policy fs.read "/", record "deny" (path walk + prefix scan, the
 *      permit only counted),
 *   4. tagged, record "all" (the permit also written to the ring buffer,
 *      drained by a second thread).
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

#include <bpf/libbpf.h>

#include "kwitness/cgroup.h"
#include "kwitness/hooks.h"
#include "kwitness/policy.h"

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

static void keep_min(double *best, double v)
{
	if (*best == 0 || v < *best)
		*best = v;
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

int main(int argc, char **argv)
{
	struct kw_hooks_opts opts = { .ringbuf_size = 1u << 22, .pin_dir = NULL };
	double base = 0, untagged = 0, t_deny = 0, t_all = 0;
	struct kw_session c1 = { 0 }, c2 = { 0 };
	struct bench_session s_deny, s_all;
	struct kw_hooks *h = NULL;
	char err[256], cg2[1024];
	int ret, round, rounds = 9;

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

	for (round = 0; round < rounds; round++)
		keep_min(&base, measure());
	ret = kw_hooks_open(&opts, &h, err, sizeof(err));
	if (ret) {
		printf("bench_lsm: skipped: loading the BPF object failed: %s\n", err);
		return 0;
	}
	if (!(kw_hooks_available(h) & KW_CLASS_FS)) {
		printf("bench_lsm: skipped: fs class unavailable: %s\n",
		       kw_hooks_unavailable_reason(h, KW_CLASS_FS));
		kw_hooks_close(h);
		return 0;
	}
	ret = session_start(h, cg2, 1, "deny", &s_deny);
	if (!ret) {
		ret = session_start(h, cg2, 2, "all", &s_all);
		if (ret)
			session_end(h, &s_deny);
	}
	if (ret) {
		kw_hooks_close(h);
		fprintf(stderr, "bench_lsm: %s\n", strerror(-ret));
		return 1;
	}
	/* interleaved rounds, so the emulator's noise hits every configuration */
	for (round = 0; round < rounds && !ret; round++) {
		ret = join(cg2);
		if (!ret)
			keep_min(&untagged, measure());
		if (!ret)
			ret = join(s_deny.cg);
		if (!ret)
			keep_min(&t_deny, measure());
		if (!ret)
			ret = join(s_all.cg);
		if (!ret)
			keep_min(&t_all, measure());
		if (!ret)
			ret = join(cg2);
	}
	kw_hooks_session_counters(h, 1, &c1);
	kw_hooks_session_counters(h, 2, &c2);
	session_end(h, &s_deny);
	session_end(h, &s_all);
	kw_hooks_close(h);
	if (ret) {
		fprintf(stderr, "bench_lsm: moving between cgroups failed: %s\n", strerror(-ret));
		return 1;
	}
	printf("bench_lsm: open+close of %s, %ld iterations, best of %d rounds\n", path, iters,
	       rounds);
	printf("  no programs          %7.0f ns   1.00x\n", base);
	printf("  loaded, untagged     %7.0f ns   %.2fx\n", untagged, untagged / base);
	printf("  tagged, record deny  %7.0f ns   %.2fx   (unrecorded permits %llu)\n", t_deny,
	       t_deny / base, (unsigned long long)c1.unrecorded);
	printf("  tagged, record all   %7.0f ns   %.2fx   (events %llu, consumed %ld, dropped %llu)\n",
	       t_all, t_all / base, (unsigned long long)c2.next_seq, atomic_load(&consumed),
	       (unsigned long long)c2.dropped);
	return 0;
}
