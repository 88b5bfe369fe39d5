// SPDX-License-Identifier: Apache-2.0
/* bench_exec: cost of one exec (fork + execve + wait) of /bin/true and of a
 * 50 MB copy of it (its bytes, then zeros: it still runs), for
 *   1. no programs loaded (the baseline, measured first and last),
 *   2. tagged, exec.allow ["/"], the exec program that does not hash,
 *   3. loaded with the hashing program, this process untagged,
 *   4. tagged, the hashing program: bpf_ima_file_hash reads the whole file
 *      on every exec (no IMA policy: nothing is cached, docs/lsm.md).
 * Every decision is recorded (record "all", drained by a thread).
 * Needs root and a kernel that runs lsm programs (the VM of scripts/vmtest.sh).
 * Under emulation only the ratios mean anything, and hashing is far slower
 * than on a real CPU. Usage: bench_exec [ROUNDS]   (default 5) */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "lib/cgroup.h"
#include "bpf/hooks.h"
#include "policy/policy.h"

#define BIG_BYTES (50L << 20)

struct target {
	const char *label;
	char path[128];
	long iters;
	long long bytes;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ns of the fastest of t->iters fork + execve + wait of t (the fastest: a
 * loaded, emulated host adds noise, never speed); -1 when an exec failed */
static double measure(const struct target *t)
{
	char *argv[] = { "true", NULL }, *envp[] = { NULL };
	double best = -1, t0, d;
	int status;
	long i;

	for (i = 0; i < t->iters; i++) {
		pid_t pid;

		t0 = now_ns();
		pid = fork();
		if (pid < 0)
			return -1;
		if (pid == 0) {
			execve(t->path, argv, envp);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			return -1;
		d = now_ns() - t0;
		if (best < 0 || d < best)
			best = d;
	}
	return best;
}

static void keep_min(double *best, double v)
{
	if (*best == 0 || (v > 0 && v < *best))
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

/* t's file: a copy of src padded with zeros to bytes (0: src as it is) */
static int make_target(struct target *t, const char *src, long long bytes)
{
	char buf[65536];
	int in, out;
	ssize_t n;
	long long done = 0;

	in = open(src, O_RDONLY | O_CLOEXEC);
	out = open(t->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (in < 0 || out < 0)
		goto fail;
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)n) != n)
			goto fail;
		done += n;
	}
	if (n < 0)
		goto fail;
	if (bytes > done && ftruncate(out, bytes))
		goto fail;
	t->bytes = bytes > done ? bytes : done;
	close(in);
	close(out);
	return 0;
fail:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return -1;
}

static atomic_long consumed;
static atomic_int stop;

static int on_event(void *ctx, void *data, size_t size)
{
	(void)ctx; (void)data; (void)size;
	atomic_fetch_add(&consumed, 1);
	return 0;
}

static void *drain(void *arg)
{
	struct ring_buffer *rb = arg;

	while (!atomic_load(&stop))
		ring_buffer__poll(rb, 10);
	ring_buffer__consume(rb);
	return NULL;
}

/* Loads the programs (hashing or not), tags a fresh cgroup with exec.allow
 * ["/"], and measures each target there (and untagged when untagged is set),
 * best of rounds. 1 when the kernel cannot, 0 done, <0 failed. */
static int run_config(const char *cg2, bool digest, int rounds, struct target *tg, size_t nt,
		      double *tagged, double *untagged)
{
	struct kw_hooks_opts opts = { .ringbuf_size = 1u << 22, .no_exec_digest = !digest };
	const char *bundle = "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"record\":\"all\","
			     "\"exec\":{\"allow\":[\"/\"]}}";
	uint32_t need = KW_CLASS_EXEC | (digest ? KW_CLASS_EXEC_DIGEST : 0);
	struct kw_policy *pol = NULL;
	struct ring_buffer *rb = NULL;
	struct kw_hooks *h = NULL;
	char err[256], cg[1100];
	pthread_t thr;
	bool thread = false, added = false;
	struct stat st;
	int cgfd = -1, rbfd, ret, r;
	size_t i;

	ret = kw_hooks_open(&opts, &h, err, sizeof(err));
	if (ret) {
		printf("bench_exec: skipped: loading the BPF object failed: %s\n", err);
		return 1;
	}
	if ((kw_hooks_available(h) & need) != need) {
		printf("bench_exec: skipped: %s\n",
		       kw_hooks_unavailable_reason(h, need & ~kw_hooks_available(h)));
		kw_hooks_close(h);
		return 1;
	}
	ret = kw_policy_parse(bundle, strlen(bundle), &pol, err, sizeof(err));
	if (ret)
		goto out;
	snprintf(cg, sizeof(cg), "%s/kwitness-bench-exec-%d", cg2, (int)getpid());
	if (mkdir(cg, 0755) && errno != EEXIST) {
		ret = -errno;
		goto out;
	}
	cgfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0 || fstat(cgfd, &st)) {
		ret = -errno;
		goto out;
	}
	ret = kw_hooks_session_add(h, 1, cgfd, st.st_ino, pol, &rbfd, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "bench_exec: session: %s\n", err);
		goto out;
	}
	added = true;
	rb = ring_buffer__new(rbfd, on_event, NULL, NULL);
	atomic_store(&stop, 0);
	if (!rb || pthread_create(&thr, NULL, drain, rb)) {
		ret = -EAGAIN;
		goto out;
	}
	thread = true;
	for (r = 0; r < rounds && !ret; r++) {
		for (i = 0; i < nt && !ret && untagged; i++)
			keep_min(&untagged[i], measure(&tg[i]));
		ret = join(cg);
		for (i = 0; i < nt && !ret; i++)
			keep_min(&tagged[i], measure(&tg[i]));
		if (!ret)
			ret = join(cg2);
	}
out:
	if (thread) {
		atomic_store(&stop, 1);
		pthread_join(thr, NULL);
	}
	ring_buffer__free(rb);
	if (added) {
		kw_hooks_session_untag(h, 1);
		kw_hooks_session_free(h, 1);
	}
	if (cgfd >= 0)
		close(cgfd);
	rmdir(cg);
	kw_policy_free(pol);
	kw_hooks_close(h);
	return ret;
}

int main(int argc, char **argv)
{
	struct target tg[2] = {
		{ .label = "/bin/true", .iters = 20 },
		{ .label = "50 MB copy", .iters = 3 },
	};
	double base[2] = { 0 }, plain[2] = { 0 }, untagged[2] = { 0 }, hashed[2] = { 0 };
	char cg2[1024], dir[] = "/tmp/kwitness-bench-exec.XXXXXX";
	int rounds = argc > 1 ? atoi(argv[1]) : 5, r, ret;
	size_t i;

	if (rounds <= 0)
		rounds = 5;
	if (kw_cgroup2_mount(cg2, sizeof(cg2))) {
		printf("bench_exec: skipped: no cgroup2 mount\n");
		return 0;
	}
	if (!mkdtemp(dir)) {
		perror("bench_exec: mkdtemp");
		return 1;
	}
	/* copies in a folder of our own, named "true" (busybox runs the applet
	 * its name says) */
	snprintf(tg[0].path, sizeof(tg[0].path), "%s/true", dir);
	mkdir(strcat(strcpy(tg[1].path, dir), "/big"), 0755);
	strcat(tg[1].path, "/true");
	if (make_target(&tg[0], "/bin/true", 0) || make_target(&tg[1], "/bin/true", BIG_BYTES)) {
		perror("bench_exec: copying /bin/true");
		return 1;
	}
	for (r = 0; r < rounds; r++)
		for (i = 0; i < 2; i++)
			keep_min(&base[i], measure(&tg[i]));
	ret = run_config(cg2, false, rounds, tg, 2, plain, NULL);
	if (!ret)
		ret = run_config(cg2, true, rounds, tg, 2, hashed, untagged);
	/* the baseline again: the host's speed may have moved */
	for (r = 0; r < rounds && !ret; r++)
		for (i = 0; i < 2; i++)
			keep_min(&base[i], measure(&tg[i]));
	unlink(tg[0].path);
	unlink(tg[1].path);
	*strrchr(tg[1].path, '/') = '\0';
	rmdir(tg[1].path);
	rmdir(dir);
	if (ret > 0)
		return 0;
	if (ret < 0 || base[0] <= 0 || base[1] <= 0) {
		fprintf(stderr, "bench_exec: failed: %s\n", ret ? strerror(-ret) : "an exec failed");
		return 1;
	}
	printf("bench_exec: fork+execve+wait, the fastest exec of %d rounds (events consumed %ld)\n",
	       rounds, atomic_load(&consumed));
	for (i = 0; i < 2; i++) {
		printf("  %s (%lld bytes, %ld execs a round)\n", tg[i].label, tg[i].bytes,
		       tg[i].iters);
		printf("    no programs               %10.0f ns   1.00x\n", base[i]);
		printf("    tagged, no digest         %10.0f ns   %.2fx\n", plain[i], plain[i] / base[i]);
		printf("    hashing loaded, untagged  %10.0f ns   %.2fx\n", untagged[i],
		       untagged[i] / base[i]);
		printf("    tagged, digest            %10.0f ns   %.2fx\n", hashed[i],
		       hashed[i] / base[i]);
	}
	return 0;
}
