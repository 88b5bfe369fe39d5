/* SPDX-License-Identifier: Apache-2.0 */
/* The collector's throughput, drop threshold and memory.
 *
 *  1. consumer path, synthetic: N net.connect events (1 in 64 pairs swapped,
 *     as two CPUs produce them) through the reorder window, kw_event_to_entry,
 *     the streaming transcript hash and the log file write. One core.
 *  2. real flood (root, built kwitnessd): a tagged process sends UDP
 *     datagrams as fast as it can; decisions per second that reached the
 *     hashed log, and the daemon's CPU time per decision.
 *  3. first drop: a paced generator (one session, default ring buffer) at
 *     rising rates; the lowest rate at which the trailer counts a drop.
 *  4. memory: kwitnessd's VmRSS with 1,000 open sessions.
 *
 *  1b. formatter: kw_event_to_entry + streaming SHA-256 per entry (what the
 *     log writer does per decision), beside the formatter alone and SHA-256
 *     alone over the same bytes, for net.connect and fs.open entries.
 *
 *  3b. multi: 8 sessions at once, each paced at 200 k decisions/s, default
 *     ring buffer: drops and kwitnessd's CPU per million decisions; once at
 *     kwitnessd's default priority, once at nice -10 (on 2 cores, 8 busy
 *     generators otherwise take the collector's CPU).
 *  3d. checkpoints: one session at 200 k decisions/s made in the kernel for
 *     10 s, without checkpoints and with one every second (kwitnessd.conf
 *     checkpoint_interval 0 and 1), twice each, alternating: drops and
 *     kwitnessd's CPU per million decisions with and without.
 *  3c. kmulti: the same 8 x 200 k/s offered in full, by decisions made in
 *     the kernel (bench/producer.bpf.c, kwitness's own recording code run by
 *     BPF_PROG_TEST_RUN in batches every millisecond) instead of processes,
 *     which cannot offer it on 2 cores: drops, the rate achieved, kwitnessd's
 *     CPU per million decisions (in all, and its loop thread's) and the
 *     producer's, and how many gaps were
 *     given up on the kernel's drop marks (kw_lost) and how many after waiting;
 *     how long kwitnessd's loop thread waited for a CPU (schedstat) and the
 *     largest batch the producer made at once. A producer thread that falls
 *     behind catches up by at most 2 ms of decisions a call (a stalled process
 *     makes no decisions; one burst of its whole backlog would fill any ring
 *     buffer). KW_BENCH_RINGBUF=SIZE: another ring buffer size.
 *
 *  3e. kprio: kmulti's 8 x 200 k/s with kwitnessd.conf loop_priority
 *     normal and realtime, alternating (KW_BENCH_ROUNDS rounds, 4;
 *     KW_BENCH_PRIO=NAME: that one only).
 *
 * Usage: bench_collector [synthetic|format|flood|rate|multi|kmulti|checkpoints|sessions|kprio ...]
 * (default: all but kprio)
 * Parts 2-4 need root, cgroup2 and build/kwitnessd; they say why they skip. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "lib/buf.h"
#include "lib/digest.h"
#include "collector/decision.h"
#include "kwitness/abi/event.h"

/* The collector's own consumer units and the CLI's client, linked in. */
#include "collector/logwriter.h"
#include "collector/reorder.h"
#include "collector/transcript.h"
#include "lib/cgroup.h"
#include "cli/client.h"

/* kmulti: the in-kernel producer */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench/producer.skel.h"
#include "producer.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- 1. synthetic consumer path --------------------------------------- */

struct sink {
	struct kw_logwriter log;
	uint64_t n;
	const char *fixed; /* set: append this entry instead of formatting the event */
	size_t fixed_len;
};

static int sink_emit(void *ctx, const void *data, size_t len)
{
	struct sink *s = ctx;

	s->n++;
	if (s->fixed)
		return kw_logwriter_append(&s->log, s->fixed, s->fixed_len);
	return kw_logwriter_event(&s->log, data, len, 1700000000LL * 1000000000LL);
}

static void make_event(struct kw_ev_net *e, uint64_t seq)
{
	memset(e, 0, sizeof(*e));
	e->h.seq = seq;
	e->h.ts_ns = 1000000000ULL + seq * 1000;
	e->h.cgroup_id = 4242;
	e->h.pid = 1000 + (uint32_t)(seq % 7);
	e->h.uid = 1000;
	e->h.kind = KW_EV_NET_CONNECT;
	e->h.rule = (seq % 5) ? 0 : KW_RULE_DEFAULT;
	e->h.decision = (seq % 5) ? KW_PERMIT : KW_DENY;
	e->h.enforced = !(seq % 5);
	memcpy(e->h.comm, "python3", 8);
	e->family = 4;
	e->proto = IPPROTO_TCP;
	e->port = (uint16_t)(443 + seq % 3);
	e->sock_type = SOCK_STREAM;
	e->addr[0] = 10;
	e->addr[3] = (uint8_t)seq;
}

static void bench_synthetic(uint64_t n, bool format)
{
	char path[] = "/tmp/kwitness-bench-log.XXXXXX";
	struct kw_reorder r;
	struct sink s = { 0 };
	struct kw_ev_net ev[2];
	char hash[KW_DIGEST_STR_MAX];
	uint64_t count;
	double t0, c0, t, c;
	int fd = mkstemp(path);

	if (fd < 0) {
		perror("mkstemp");
		return;
	}
	close(fd);
	unlink(path);
	if (kw_logwriter_open(&s.log, path)) {
		perror("log");
		return;
	}
	kw_reorder_init(&r, sink_emit, &s);
	if (!format) {
		/* A typical entry, formatted once: what is left is the collector's
		 * own work (reorder, hash, buffer, write). */
		struct kw_buf one = { 0 };

		make_event(&ev[0], 1);
		if (kw_event_to_entry(&ev[0], sizeof(ev[0]), 0, &one) == 0) {
			s.fixed = one.data;
			s.fixed_len = one.len;
		}
	}
	t0 = now_s();
	c0 = cpu_s();
	for (uint64_t seq = 0; seq < n; seq += 2) {
		make_event(&ev[0], seq);
		make_event(&ev[1], seq + 1);
		if ((seq / 2) % 64 == 63) {
			/* two CPUs reserved in the other order */
			kw_reorder_push(&r, seq + 1, &ev[1], sizeof(ev[1]));
			kw_reorder_push(&r, seq, &ev[0], sizeof(ev[0]));
		} else {
			kw_reorder_push(&r, seq, &ev[0], sizeof(ev[0]));
			kw_reorder_push(&r, seq + 1, &ev[1], sizeof(ev[1]));
		}
	}
	kw_logwriter_finish(&s.log, hash, &count);
	t = now_s() - t0;
	c = cpu_s() - c0;
	printf("collector consumer path (synthetic, one core%s): %llu decisions in %.3f s wall "
	       "(%.3f s CPU) = %.0f decisions/s wall, %.0f decisions/s per CPU-second; "
	       "%.1f MB log, %.0f ns/decision\n",
	       format ? "" : ", entries pre-formatted: reorder + hash + write only",
	       (unsigned long long)s.n, t, c, (double)s.n / t, (double)s.n / c,
	       (double)s.log.bytes / 1e6, c * 1e9 / (double)s.n);
	if (s.n != n || r.err)
		printf("  ERROR: %llu of %llu emitted, err %d\n", (unsigned long long)s.n,
		       (unsigned long long)n, r.err);
	kw_reorder_free(&r);
	free((void *)s.fixed);
	unlink(path);
}

/* ---- 1b. the formatter and the hash alone ------------------------------ */

static void make_open_event(struct kw_ev_path *e, uint64_t seq)
{
	static const char *const paths[] = { "/etc/passwd", "/usr/lib/x86_64-linux-gnu/libc.so.6",
					     "/home/agent/work/src/main.c", "/tmp/caf\xc3\xa9.txt" };
	const char *p = paths[seq % 4];

	memset(e, 0, sizeof(*e));
	e->h.seq = seq;
	e->h.ts_ns = 1000000000ULL + seq * 1000;
	e->h.cgroup_id = 4242;
	e->h.pid = 1000 + (uint32_t)(seq % 7);
	e->h.uid = 1000;
	e->h.kind = KW_EV_FS_OPEN;
	e->h.rule = (seq % 5) ? KW_RULE_PATH(1, 2) : KW_RULE_DEFAULT;
	e->h.decision = (seq % 5) ? KW_PERMIT : KW_DENY;
	e->h.enforced = !(seq % 5);
	memcpy(e->h.comm, "python3", 8);
	e->access = KW_ACC_READ;
	e->path_len = (uint32_t)strlen(p);
	memcpy(e->path, p, e->path_len);
}

/* kw_event_to_entry (the collector's own formatter) + the streaming
 * transcript SHA-256 (kw_transcript_append), as the log writer does per
 * decision; beside it, in the same run, the
 * formatter alone and SHA-256 alone over the same lines. Best of 5 runs,
 * this thread's CPU time. */
static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void bench_format_kind(const char *what, bool open_ev, uint64_t n)
{
	struct kw_buf line = { 0 }, all = { 0 };
	double best_fh = 1e9, best_f = 1e9, best_h = 1e9;
	char hash[KW_DIGEST_STR_MAX];
	/* events made beforehand, so only the formatting is timed */
	enum { POOL = 1024 };
	struct kw_ev_path *pe = calloc(POOL, sizeof(*pe));
	struct kw_ev_net *ne = calloc(POOL, sizeof(*ne));

	if (!pe || !ne) {
		free(pe);
		free(ne);
		return;
	}
	for (uint64_t k = 0; k < POOL; k++) {
		make_open_event(&pe[k], k);
		make_event(&ne[k], k);
	}

	for (int run = 0; run < 5; run++) {
		struct kw_transcript tr;
		double t;

		/* formatter + hash */
		if (kw_transcript_init(&tr))
			break;
		t = thread_cpu_s();
		for (uint64_t seq = 0; seq < n; seq++) {
			kw_buf_reset(&line);
			if (open_ev)
				kw_event_to_entry(&pe[seq % POOL], sizeof(*pe), 0, &line);
			else
				kw_event_to_entry(&ne[seq % POOL], sizeof(*ne), 0, &line);
			kw_transcript_append(&tr, line.data, line.len);
		}
		t = thread_cpu_s() - t;
		kw_transcript_final(&tr, hash, NULL);
		if (t < best_fh)
			best_fh = t;

		/* formatter alone, into one buffer (kept for the hash-alone run) */
		kw_buf_reset(&all);
		t = thread_cpu_s();
		for (uint64_t seq = 0; seq < n; seq++) {
			if (open_ev)
				kw_event_to_entry(&pe[seq % POOL], sizeof(*pe), 0, &all);
			else
				kw_event_to_entry(&ne[seq % POOL], sizeof(*ne), 0, &all);
			kw_buf_putc(&all, '\n');
		}
		t = thread_cpu_s() - t;
		if (t < best_f)
			best_f = t;

		/* SHA-256 alone over the same bytes */
		t = thread_cpu_s();
		kw_digest_buf(KW_SHA256, all.data, all.len, hash);
		t = thread_cpu_s() - t;
		if (t < best_h)
			best_h = t;
	}
	printf("collector formatter (kw_event_to_entry) + SHA-256, %s: %.2f M entries/s per "
	       "CPU-second (%.0f ns/entry, %.0f bytes/entry); formatter alone %.2f M/s (%.0f ns); "
	       "SHA-256 alone %.0f MB/s (%.0f ns/entry); aim >= 3 M/s: %s\n",
	       what, (double)n / best_fh / 1e6, best_fh * 1e9 / (double)n,
	       (double)all.len / (double)n, (double)n / best_f / 1e6, best_f * 1e9 / (double)n,
	       (double)all.len / best_h / 1e6, best_h * 1e9 / (double)n,
	       (double)n / best_fh >= 3e6 ? "met" : "NOT met");
	kw_buf_free(&line);
	kw_buf_free(&all);
	free(pe);
	free(ne);
}

static void bench_format(void)
{
	bench_format_kind("net.connect", false, 1000000);
	bench_format_kind("fs.open", true, 1000000);
}

/* ---- a private kwitnessd for parts 2-4 -------------------------------- */

#include "kwd_daemon.h"

/* kwitnessd's main thread alone: its loop, which reads the ring buffers. */
/* Seconds thread tid of pid spent runnable but waiting for a CPU
 * (/proc/.../schedstat's second field): the stalls that are the scheduler's. */
static double thread_wait_s(pid_t pid, pid_t tid)
{
	char path[80];
	unsigned long long run = 0, wait = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &run, &wait) != 2)
		wait = 0;
	fclose(f);
	return (double)wait / 1e9;
}

/* The thread of pid named name (comm), or 0. */
static pid_t thread_named(pid_t pid, const char *name)
{
	char path[80], comm[32];
	struct dirent *e;
	pid_t found = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	while (dir && !found && (e = readdir(dir))) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/comm", (int)pid, e->d_name);
		f = fopen(path, "re");
		if (f && fgets(comm, sizeof(comm), f) && !strncmp(comm, name, strlen(name)) &&
		    comm[strlen(name)] == '\n')
			found = (pid_t)atoi(e->d_name);
		if (f)
			fclose(f);
	}
	if (dir)
		closedir(dir);
	return found;
}

static double load_1m(void)
{
	double l = 0;
	FILE *f = fopen("/proc/loadavg", "re");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = 0;
		fclose(f);
	}
	return l;
}

static double main_thread_cpu_s(pid_t pid)
{
	char path[80];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)pid);
	return stat_cpu_s(path);
}

/* A "Name: N kB" line of /proc/PID/status. */
static long status_kb(pid_t pid, const char *name)
{
	char path[64], line[256], fmt[64];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	snprintf(fmt, sizeof(fmt), "%s: %%ld kB", name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static long vmrss_kb(pid_t pid)
{
	return status_kb(pid, "VmRSS");
}

/* nproc children in the cgroup sending count datagrams in all, at rate per
 * second in all (0: flat out). */
static double flood_in_cgroup_n(const char *cg, long count, long rate, int nproc)
{
	double t0 = now_s();
	pid_t pids[8];
	int st;

	for (int p = 0; p < nproc && p < 8; p++) {
		pids[p] = fork();
		if (pids[p] == 0) {
			struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9) };
			long mine = count / nproc, r = rate / nproc;
			double start;
			int fd;

			a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			if (kw_cgroup_join(cg, getpid()))
				_exit(1);
			fd = socket(AF_INET, SOCK_DGRAM, 0);
			start = now_s();
			for (long i = 0; i < mine; i++) {
				if (r)
					while (now_s() < start + (double)i / (double)r)
						;
				if (sendto(fd, "k", 1, 0, (struct sockaddr *)&a, sizeof(a)) < 0)
					(void)0;
			}
			_exit(0);
		}
	}
	for (int p = 0; p < nproc && p < 8; p++)
		if (pids[p] > 0)
			waitpid(pids[p], &st, 0);
	return now_s() - t0;
}

/* A child in the cgroup sending count datagrams at rate per second (0: flat out). */
static double flood_in_cgroup(const char *cg, long count, long rate)
{
	double t0 = now_s();
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9) };
		int fd;
		double start;

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (kw_cgroup_join(cg, getpid()))
			_exit(1);
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		start = now_s();
		for (long i = 0; i < count; i++) {
			if (rate)
				while (now_s() < start + (double)i / (double)rate)
					;
			if (sendto(fd, "k", 1, 0, (struct sockaddr *)&a, sizeof(a)) < 0)
				(void)0;
		}
		_exit(0);
	}
	waitpid(pid, &st, 0);
	return now_s() - t0;
}

static void bench_flood(long n)
{
	struct daemon d = { 0 };
	json_t *reply;
	char *id;
	double t, cpu0, cpu;

	if (daemon_start(&d, "16M", "collector real flood"))
		goto out;
	id = session_open_on(&d, d.cg);
	if (!id)
		goto out;
	cpu0 = proc_cpu_s(d.pid);
	t = flood_in_cgroup(d.cg, n, 0);
	reply = session_close_id(&d, id);
	cpu = proc_cpu_s(d.pid) - cpu0;
	{
		long long dec = json_integer_value(json_object_get(reply, "decisions"));
		long long drop = json_integer_value(json_object_get(reply, "dropped"));

		printf("collector real flood (16 MiB ring buffer): %ld sendto in %.3f s from a tagged "
		       "process = %.0f decisions/s offered; %lld logged, %lld dropped; kwitnessd CPU "
		       "%.2f s = %.0f decisions per CPU-second\n",
		       n, t, (double)n / t, dec, drop, cpu, cpu > 0 ? (double)dec / cpu : 0.0);
	}
	json_decref(reply);
	free(id);
out:
	daemon_stop(&d);
}

static void bench_rate(void)
{
	static const long rates[] = { 25000, 50000, 100000, 200000, 300000, 400000, 0 };
	struct daemon d = { 0 };
	long first = -1;

	if (daemon_start(&d, "256K", "collector first drop"))
		goto out;
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		long rate = rates[i], count = rate ? rate / 2 : 200000;
		char *id = session_open_on(&d, d.cg);
		json_t *reply;
		double t;
		long long dropped;

		if (!id)
			break;
		t = flood_in_cgroup(d.cg, count, rate);
		reply = session_close_id(&d, id);
		dropped = json_integer_value(json_object_get(reply, "dropped"));
		printf("collector paced flood (256 KiB ring buffer, one session): target %s%ld/s, "
		       "achieved %.0f/s, %lld of %ld dropped\n",
		       rate ? "" : "unpaced ", rate, (double)count / t, dropped, count);
		if (dropped && first < 0)
			first = rate ? rate : (long)((double)count / t);
		json_decref(reply);
		free(id);
	}
	{
		/* Both cores generating: the most this machine can offer one
		 * session (the collector then competes for a core). */
		char *id = session_open_on(&d, d.cg);

		if (id) {
			long count = 400000;
			double t = flood_in_cgroup_n(d.cg, count, 0, 2);
			json_t *reply = session_close_id(&d, id);
			long long dropped = json_integer_value(json_object_get(reply, "dropped"));

			printf("collector unpaced flood from 2 processes (256 KiB ring buffer, one "
			       "session): %.0f/s offered, %lld of %ld dropped\n",
			       (double)count / t, dropped, count);
			if (dropped && first < 0)
				first = (long)((double)count / t);
			json_decref(reply);
			free(id);
		}
	}
	if (first < 0)
		printf("collector first drop: none up to the fastest rate this machine generates\n");
	else
		printf("collector first drop: at %ld decisions/s per session\n", first);
out:
	daemon_stop(&d);
}

/* Closes n sessions, adding up the decisions their closes report logged and
 * dropped. */
static void close_counting(struct daemon *d, char **id, int n, long long *dec, long long *drop)
{
	for (int i = 0; i < n; i++) {
		json_t *reply = session_close_id(d, id[i]);

		*dec += json_integer_value(json_object_get(reply, "decisions"));
		*drop += json_integer_value(json_object_get(reply, "dropped"));
		json_decref(reply);
	}
}

/* Sums the open sessions' gaps_marked and gaps_unmarked (status). */
static void gap_counts(struct daemon *d, long long *marked, long long *unmarked)
{
	json_t *req = json_pack("{s:s}", "op", "list"), *reply = NULL, *s;
	char err[256];
	size_t i;

	*marked = *unmarked = 0;
	if (!kw_client_call(d->sock, req, &reply, err, sizeof(err)))
		json_array_foreach(json_object_get(reply, "sessions"), i, s) {
			*marked += json_integer_value(json_object_get(s, "gaps_marked"));
			*unmarked += json_integer_value(json_object_get(s, "gaps_unmarked"));
		}
	json_decref(req);
	json_decref(reply);
}

/* nsess sessions at once, each a process paced at rate decisions/s for
 * count decisions, default ring buffer: drops, the rate each achieved (a
 * 2-core machine cannot offer 8 x 200 k/s: the achieved rate is printed),
 * and kwitnessd's CPU time per million decisions. */
static void bench_multi(int nsess, long rate, long count, int nice)
{
	struct daemon d = { 0 };
	char cg[16][4200];
	char *id[16] = { 0 };
	pid_t pids[16];
	long long dec = 0, drop = 0;
	double t0, t, cpu0, cpu;
	int st, opened = 0;

	if (nsess > 16)
		nsess = 16;
	if (daemon_start(&d, "256K", "collector 8 sessions"))
		goto out;
	for (int i = 0; i < nsess; i++) {
		snprintf(cg[i], sizeof(cg[i]), "%s/m%d", d.cg, i);
		if (mkdir(cg[i], 0755) && errno != EEXIST)
			goto out;
		id[i] = session_open_on(&d, cg[i]);
		if (!id[i])
			goto out;
		opened++;
	}
	if (nice)
		setpriority(PRIO_PROCESS, (id_t)d.pid, nice);
	cpu0 = proc_cpu_s(d.pid);
	t0 = now_s();
	for (int i = 0; i < nsess; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9) };
			double start;
			int fd;

			a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			if (kw_cgroup_join(cg[i], getpid()))
				_exit(1);
			fd = socket(AF_INET, SOCK_DGRAM, 0);
			start = now_s();
			for (long k = 0; k < count; k++) {
				while (now_s() < start + (double)k / (double)rate)
					;
				if (sendto(fd, "k", 1, 0, (struct sockaddr *)&a, sizeof(a)) < 0)
					(void)0;
			}
			_exit(0);
		}
	}
	for (int i = 0; i < nsess; i++)
		if (pids[i] > 0)
			waitpid(pids[i], &st, 0);
	t = now_s() - t0;
	close_counting(&d, id, nsess, &dec, &drop);
	cpu = proc_cpu_s(d.pid) - cpu0;
	printf("collector %d sessions at once (256 KiB ring buffer each, kwitnessd nice %d), each "
	       "paced at %ld/s: achieved %.0f/s per session (%.0f/s in all); %lld logged, %lld dropped; kwitnessd "
	       "CPU %.2f s = %.2f CPU-seconds per million decisions\n",
	       nsess, nice, rate, (double)count / t, (double)count * nsess / t, dec, drop, cpu,
	       dec ? cpu * 1e6 / (double)dec : 0.0);
out:
	for (int i = 0; i < nsess; i++) {
		free(id[i]);
		if (i < opened)
			rmdir(cg[i]);
	}
	daemon_stop(&d);
}

/* The id of the map named name that process pid holds an fd of, or 0. */
static __u32 held_map_id(pid_t pid, const char *name)
{
	char dir[64], path[320], line[128];
	struct dirent *de;
	__u32 found = 0;
	DIR *dd;

	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", (int)pid);
	dd = opendir(dir);
	if (!dd)
		return 0;
	while (!found && (de = readdir(dd))) {
		unsigned int id = 0;
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "map_id: %u", &id) == 1)
				break;
		fclose(f);
		if (id) {
			struct bpf_map_info info = { 0 };
			__u32 len = sizeof(info);
			int fd = bpf_map_get_fd_by_id(id);

			if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) &&
			    !strcmp(info.name, name))
				found = id;
			if (fd >= 0)
				close(fd);
		}
	}
	closedir(dd);
	return found;
}

/* 3c: nsess sessions of a kwitnessd of its own, each offered rate decisions/s
 * for count decisions, made in the kernel by bench/producer.bpf.c in batches
 * of rate/1000 every millisecond (batches catch up when the producer falls
 * behind). */
static void bench_multi_kernel(int nsess, long rate, long count, int nice)
{
	struct daemon d = { 0 };
	struct producer_bpf *p = NULL;
	struct bench_produce_arg arg[16];
	char cg[16][4200], pkt[64];
	char *id[16] = { 0 };
	long long dec = 0, drop = 0, marked = 0, unmarked = 0;
	long done[16] = { 0 }, batch = rate / 1000, burst = 0;
	double t0, t, cpu0, cpu, pcpu0, pcpu, loop0, loop, wait0, wait, iowait0, iowait;
	pid_t io_tid;
	/* kwitnessd's maps the producer records through (the first three), and
	 * the one that gives each session's slot */
	const char *const names[] = { "kw_sessions", "kw_ringbufs", "kw_lost", "kw_cgroups" };
	int fd[4] = { -1, -1, -1, -1 };
	int opened = 0, nslot = 0, e;

	if (nsess > 16)
		nsess = 16;
	/* KW_BENCH_RINGBUF: another ring buffer size (kwitnessd.conf's syntax) */
	const char *ring = getenv("KW_BENCH_RINGBUF") ? getenv("KW_BENCH_RINGBUF") : "256K";

	if (daemon_start(&d, ring, "collector 8 sessions, in-kernel decisions"))
		goto out;
	for (int i = 0; i < nsess; i++) {
		struct stat st;

		snprintf(cg[i], sizeof(cg[i]), "%s/k%d", d.cg, i);
		if (mkdir(cg[i], 0755) && errno != EEXIST)
			goto out;
		id[i] = session_open_on(&d, cg[i]);
		if (!id[i] || stat(cg[i], &st))
			goto out;
		opened++;
		arg[i].cgroup_id = st.st_ino;
	}
	for (int i = 0; i < 4; i++) {
		__u32 mid = held_map_id(d.pid, names[i]);

		fd[i] = mid ? bpf_map_get_fd_by_id(mid) : -1;
		if (fd[i] < 0) {
			printf("collector 8 sessions, in-kernel decisions: skipped (kwitnessd's %s "
			       "not found)\n", names[i]);
			goto out;
		}
	}
	/* each session's slot, as the programs find it: its cgroup's entry */
	for (int i = 0; i < nsess; i++) {
		arg[i].pad = 0;
		if (!bpf_map_lookup_elem(fd[3], &arg[i].cgroup_id, &arg[i].slot))
			nslot++;
	}
	p = producer_bpf__open();
	if (!p || nslot != nsess || bpf_map__reuse_fd(p->maps.kw_sessions, fd[0]) ||
	    bpf_map__reuse_fd(p->maps.kw_ringbufs, fd[1]) ||
	    bpf_map__reuse_fd(p->maps.kw_lost, fd[2])) {
		printf("collector 8 sessions, in-kernel decisions: skipped (producer setup)\n");
		goto out;
	}
	{
		struct bpf_map *m;

		bpf_object__for_each_map(m, p->obj)
			if (m != p->maps.kw_sessions && m != p->maps.kw_ringbufs &&
			    m != p->maps.kw_lost)
				bpf_map__set_autocreate(m, false);
	}
	e = producer_bpf__load(p);
	if (e) {
		printf("collector 8 sessions, in-kernel decisions: skipped (loading the producer: "
		       "%s)\n", strerror(-e));
		goto out;
	}
	if (nice)
		setpriority(PRIO_PROCESS, (id_t)d.pid, nice);
	cpu0 = proc_cpu_s(d.pid);
	loop0 = main_thread_cpu_s(d.pid);
	wait0 = thread_wait_s(d.pid, d.pid);
	io_tid = thread_named(d.pid, "kwd-io");
	iowait0 = io_tid ? thread_wait_s(d.pid, io_tid) : 0;
	pcpu0 = thread_cpu_s();
	t0 = now_s();
	for (;;) {
		double el = now_s() - t0;
		long due = (long)(el * (double)rate) + batch;
		int left = 0;

		if (due > count)
			due = count;
		for (int i = 0; i < nsess; i++) {
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt));

			if (done[i] >= count)
				continue;
			left = 1;
			if (due <= done[i])
				continue;
			memset(pkt, 0, sizeof(pkt));
			memcpy(pkt, &arg[i], sizeof(arg[i]));
			/* A producer that was not running makes no decisions: what it
			 * missed is not made up in one burst (at most 2 ms' worth a
			 * call), so a stall of the bench's own thread is not counted as
			 * the collector's. The rate achieved is printed. */
			long upto = due - done[i] > 2 * batch ? done[i] + 2 * batch : due;

			o.repeat = (int)(upto - done[i]);
			if (upto - done[i] > burst)
				burst = upto - done[i];
			if (bpf_prog_test_run_opts(bpf_program__fd(p->progs.bench_produce), &o)) {
				printf("collector 8 sessions, in-kernel decisions: BPF_PROG_TEST_RUN: "
				       "%s\n", strerror(errno));
				goto close;
			}
			done[i] = upto;
		}
		if (!left)
			break;
		usleep(1000);
	}
close:
	t = now_s() - t0;
	pcpu = thread_cpu_s() - pcpu0;
	usleep(100000); /* the last gaps are given up */
	loop = main_thread_cpu_s(d.pid) - loop0; /* before the closes' fsyncs */
	wait = thread_wait_s(d.pid, d.pid) - wait0;
	iowait = io_tid ? thread_wait_s(d.pid, io_tid) - iowait0 : -1;
	gap_counts(&d, &marked, &unmarked);
	close_counting(&d, id, nsess, &dec, &drop);
	cpu = proc_cpu_s(d.pid) - cpu0;
	printf("collector %d sessions at once, decisions made in the kernel (%s ring buffer "
	       "each, kwitnessd nice %d), each offered %ld/s: achieved %.0f/s per session (%.0f/s "
	       "in all); %lld decisions, %lld logged, %lld dropped; kwitnessd CPU %.2f s = %.2f "
	       "CPU-seconds per million logged, its loop thread (reads the ring buffers) %.2f; "
	       "producer %.2f CPU-seconds per million made; "
	       "gaps given up on the kernel's drop marks %lld, without (after waiting) %lld; "
	       "loop thread runnable but waiting for a CPU %.3f s, I/O thread %.3f s; largest producer batch %.1f ms "
	       "of one session's decisions; load %.2f\n",
	       nsess, ring, nice, rate, (double)count / t, (double)count * nsess / t,
	       (long long)count * nsess, dec, drop, cpu, dec ? cpu * 1e6 / (double)dec : 0.0,
	       dec ? loop * 1e6 / (double)dec : 0.0, pcpu * 1e6 / ((double)count * nsess), marked,
	       unmarked, wait, iowait, (double)burst * 1000.0 / (double)rate, load_1m());
out:
	producer_bpf__destroy(p);
	for (int i = 0; i < 4; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	for (int i = 0; i < nsess; i++) {
		free(id[i]);
		if (i < opened)
			rmdir(cg[i]);
	}
	daemon_stop(&d);
}

static void bench_sessions(int n)
{
	struct daemon d = { 0 };
	char **ids = calloc((size_t)n, sizeof(*ids));
	long rss0, rss, anon0, anon;
	double t0, topen, tclose;
	int opened = 0;

	if (!ids || daemon_start(&d, "256K", "collector memory with 1,000 sessions"))
		goto out;
	usleep(200000);
	rss0 = vmrss_kb(d.pid);
	anon0 = status_kb(d.pid, "RssAnon");
	t0 = now_s();
	for (int i = 0; i < n; i++) {
		char cg[4200];

		snprintf(cg, sizeof(cg), "%s/s%d", d.cg, i);
		mkdir(cg, 0755);
		ids[i] = session_open_on(&d, cg);
		if (!ids[i])
			break;
		opened++;
	}
	topen = now_s() - t0;
	rss = vmrss_kb(d.pid);
	anon = status_kb(d.pid, "RssAnon");
	printf("kwitnessd memory: VmRSS %ld kB idle, %ld kB with %d open sessions (%.1f kB per "
	       "session, most of it the mapped 256 KiB ring buffers, which the kernel maps "
	       "twice); RssAnon (the daemon's own heap) %ld kB -> %ld kB (%.1f kB per session); "
	       "opening took %.2f s (%.2f ms each)\n",
	       rss0, rss, opened, opened ? (double)(rss - rss0) / opened : 0.0, anon0, anon,
	       opened ? (double)(anon - anon0) / opened : 0.0, topen,
	       opened ? topen * 1000 / opened : 0.0);
	t0 = now_s();
	for (int i = 0; i < opened; i++) {
		json_decref(session_close_id(&d, ids[i]));
		free(ids[i]);
	}
	tclose = now_s() - t0;
	printf("kwitnessd closing %d sessions (trailer, fsync, sign, verify, write): %.2f s "
	       "(%.2f ms each)\n", opened, tclose, opened ? tclose * 1000 / opened : 0.0);
	for (int i = 0; i < n; i++) {
		char cg[4200];

		snprintf(cg, sizeof(cg), "%s/s%d", d.cg, i);
		rmdir(cg);
	}
out:
	free(ids);
	daemon_stop(&d);
}

/* 3d: kmulti's one session at 200 k/s, checkpoints off and every second. */
static void bench_checkpoints(void)
{
	static const char *const conf[] = { "checkpoint_interval = 0\n",
					    "checkpoint_interval = 1\n" };
	char path[] = "/tmp/kw-bench-ckpt-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		return;
	for (int round = 0; round < 4; round++) {
		const char *c = conf[round % 2];

		if (ftruncate(fd, 0) || pwrite(fd, c, strlen(c), 0) != (ssize_t)strlen(c))
			break;
		setenv("KW_BENCH_KWD_CONFIG", path, 1);
		printf("checkpoints %s:\n", round % 2 ? "every second" : "off");
		fflush(stdout);
		bench_multi_kernel(1, 200000, 2000000, 0);
	}
	unsetenv("KW_BENCH_KWD_CONFIG");
	close(fd);
	unlink(path);
}

/* 3e: kmulti's 8 x 200 k/s with kwitnessd.conf loop_priority normal and
 * realtime, alternating; KW_BENCH_ROUNDS rounds (default 4);
 * KW_BENCH_PRIO=NAME: that one only. */
static void bench_loop_priority(void)
{
	static const char *const all[] = { "normal", "realtime" };
	const char *r = getenv("KW_BENCH_ROUNDS"), *one = getenv("KW_BENCH_PRIO");
	const char *const *prio = one ? &one : all;
	int rounds = r ? atoi(r) : 4, n_prio = one ? 1 : 2;
	char path[] = "/tmp/kw-bench-prio-XXXXXX", conf[64];
	int fd = mkstemp(path);

	if (fd < 0)
		return;
	for (int round = 0; round < rounds * n_prio; round++) {
		int n = snprintf(conf, sizeof(conf), "loop_priority = %.32s\n", prio[round % n_prio]);

		if (ftruncate(fd, 0) || pwrite(fd, conf, (size_t)n, 0) != n)
			break;
		setenv("KW_BENCH_KWD_CONFIG", path, 1);
		printf("loop_priority %s:\n", prio[round % n_prio]);
		fflush(stdout);
		bench_multi_kernel(8, 200000, 400000, 0);
	}
	unsetenv("KW_BENCH_KWD_CONFIG");
	close(fd);
	unlink(path);
}

int main(int argc, char **argv)
{
	bool all = argc < 2;
	ssize_t n = readlink("/proc/self/exe", exe_dir, sizeof(exe_dir) - 1);

	if (n > 0) {
		exe_dir[n] = '\0';
		*strrchr(exe_dir, '/') = '\0';
	}
	signal(SIGPIPE, SIG_IGN);
	for (int i = all ? 0 : 1; i < (all ? 1 : argc); i++) {
		const char *part = all ? NULL : argv[i];

		if (!part || !strcmp(part, "synthetic")) {
			bench_synthetic(2000000, true);
			bench_synthetic(2000000, false);
		}
		if (!part || !strcmp(part, "format"))
			bench_format();
		if (!part || !strcmp(part, "flood"))
			bench_flood(1000000);
		if (!part || !strcmp(part, "rate"))
			bench_rate();
		if (!part || !strcmp(part, "multi"))
		{
			/* as started, and as a host would run it (above the sandboxes) */
			bench_multi(8, 200000, 200000, 0);
			bench_multi(8, 200000, 200000, -10);
		}
		if (!part || !strcmp(part, "kmulti")) {
			bench_multi_kernel(8, 200000, 400000, 0);
			bench_multi_kernel(8, 200000, 400000, -10);
			/* where it keeps up */
			bench_multi_kernel(8, 100000, 200000, -10);
		}
		if (!part || !strcmp(part, "checkpoints"))
			bench_checkpoints();
		if (part && !strcmp(part, "kprio"))
			bench_loop_priority();
		if (!part || !strcmp(part, "sessions"))
			bench_sessions(1000);
	}
	return 0;
}
