// SPDX-License-Identifier: Apache-2.0
/* The "open" proc entries (docs/decision-log.md, "proc"): the processes the
 * kernel found in the session's cgroups as it tagged them (the task
 * iterator, kw_hooks_existing), with what /proc says of their programs.
 *
 * /proc/PID is the sandbox's: each file is opened under the process's own
 * /proc directory (so a pid reused meanwhile cannot be read for it: its
 * start time is checked against the kernel's), no link is followed, every
 * read is bounded. Reading another process's cmdline takes its memory lock,
 * which a hostile process can hold (a userfaultfd or FUSE mapping under its
 * argv): the reads run in a thread the open waits for at most
 * OPEN_READ_MS; what it has not read by then is written with the kernel's
 * facts only, and while such a thread is stuck no other is started. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpf/hooks.h"
#include "collector/proc_entry.h"
#include "collector/proc_stat.h"
#include "lib/digest.h"
#include "kwd.h"
#include "lineage.h"
#include "session.h"
#include "thread.h"
#include "util.h"

#define OPEN_READ_MS 500
/* Bytes of /proc/PID/cmdline hashed at most: past it a cut argv has no
 * argv_sha256 (the kernel bounds a new program's arguments and environment
 * together by a quarter of the stack limit, at most 6 MiB). */
#define CMDLINE_HASH_MAX (8u << 20)

struct proc_read {
	bool same;               /* /proc/PID is the process the kernel found */
	char exe[KW_PATH_MAX];
	size_t exe_len;
	bool exe_cut;
	char argv[KW_ARGV_MAX];
	size_t argv_len, argv_full;
	bool has_sha;
	char sha[KW_DIGEST_STR_MAX];
};

struct open_read {
	const struct kw_iter_proc *procs; /* n, a copy */
	struct proc_read *out;            /* n */
	size_t n;
	atomic_size_t done;               /* out[0..done) are read */
	atomic_int refs;                  /* the opener and the thread */
};

static atomic_bool reader_stuck;

static void open_read_put(struct open_read *r)
{
	if (atomic_fetch_sub(&r->refs, 1) == 1) {
		free((void *)r->procs);
		free(r->out);
		free(r);
	}
}

/* The start time /proc/PID/stat gives (clock ticks since boot) is the
 * kernel's start_boottime cut to ticks. */
static bool same_start(int dir, uint64_t start_ns)
{
	char buf[1024];
	unsigned long long ticks;
	long hz = sysconf(_SC_CLK_TCK);
	int fd = openat(dir, "stat", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));

	if (fd >= 0)
		close(fd);
	if (n <= 0 || hz <= 0 || kw_proc_stat_starttime(buf, (size_t)n, &ticks))
		return false;
	return ticks == start_ns / (1000000000ull / (unsigned long long)hz);
}

/* The whole cmdline's hash with its last NUL left out (the form of argv:
 * arguments separated, not ended, by NUL); the first KW_ARGV_MAX bytes kept. */
static void read_cmdline(int dir, struct proc_read *r)
{
	int fd = openat(dir, "cmdline", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct kw_digest d = { 0 };
	char buf[4096], pending = 0;
	bool has_pending = false, ok, whole;
	size_t total = 0;
	ssize_t n = -1;

	if (fd < 0)
		return;
	ok = !kw_digest_init(&d, KW_SHA256);
	while (total <= CMDLINE_HASH_MAX && (n = read(fd, buf, sizeof(buf))) > 0) {
		if (total < KW_ARGV_MAX) {
			size_t k = (size_t)n < KW_ARGV_MAX - total ? (size_t)n : KW_ARGV_MAX - total;

			memcpy(r->argv + total, buf, k);
			r->argv_len = total + k;
		}
		/* one byte held back: the last, a NUL, is not hashed */
		if (ok && has_pending)
			ok = !kw_digest_update(&d, &pending, 1);
		if (ok && n > 1)
			ok = !kw_digest_update(&d, buf, (size_t)n - 1);
		pending = buf[n - 1];
		has_pending = true;
		total += (size_t)n;
	}
	close(fd);
	whole = n == 0 && total <= CMDLINE_HASH_MAX;
	r->argv_full = total;
	if (ok && whole && total > KW_ARGV_MAX) {
		if (pending)
			ok = !kw_digest_update(&d, &pending, 1);
		r->has_sha = ok && !kw_digest_final(&d, r->sha);
	} else if (!ok || total <= KW_ARGV_MAX || !whole) {
		kw_digest_free(&d);
	}
	if (total <= KW_ARGV_MAX && r->argv_len && !r->argv[r->argv_len - 1])
		r->argv_full = --r->argv_len; /* whole: the last NUL says nothing */
}

static void read_one(const struct kw_iter_proc *p, struct proc_read *r)
{
	char path[32];
	ssize_t n;
	int dir;

	snprintf(path, sizeof(path), "/proc/%u", p->pid);
	dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return; /* gone */
	r->same = same_start(dir, p->start_ns);
	if (r->same) {
		n = readlinkat(dir, "exe", r->exe, sizeof(r->exe));
		if (n > 0) {
			r->exe_cut = (size_t)n == sizeof(r->exe);
			r->exe_len = r->exe_cut ? sizeof(r->exe) - 1 : (size_t)n;
		}
		read_cmdline(dir, r);
		r->same = same_start(dir, p->start_ns); /* still: not a reused pid */
	}
	close(dir);
}

static void *reader(void *arg)
{
	struct open_read *r = arg;

	for (size_t i = 0; i < r->n; i++) {
		read_one(&r->procs[i], &r->out[i]);
		atomic_store(&r->done, i + 1);
	}
	atomic_store(&reader_stuck, false);
	open_read_put(r);
	return NULL;
}

/* Starts the reads; NULL when none can run (then kernel facts only). */
static struct open_read *start_reads(const struct kw_iter_proc *procs, size_t n)
{
	struct open_read *r;
	struct timespec until;
	pthread_t t;

	if (atomic_load(&reader_stuck) || !(r = calloc(1, sizeof(*r))))
		return NULL;
	r->procs = malloc(n * sizeof(*procs));
	r->out = calloc(n, sizeof(*r->out));
	r->n = n;
	atomic_init(&r->refs, 2);
	if (!r->procs || !r->out || (memcpy((void *)r->procs, procs, n * sizeof(*procs)),
				     kwd_thread_create(&t, NULL, "kwd-open-read", 0, reader, r))) {
		atomic_store(&r->refs, 1);
		open_read_put(r);
		return NULL;
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += OPEN_READ_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	if (pthread_timedjoin_np(t, NULL, &until)) {
		atomic_store(&reader_stuck, true);
		pthread_detach(t);
	}
	return r;
}

void kwd_lineage_open(struct kwd_session *s)
{
	const struct kw_iter_proc *procs;
	size_t n = kw_hooks_existing(s->d->hooks, s->slot, &procs), done;
	struct open_read *r = n ? start_reads(procs, n) : NULL;

	done = r ? atomic_load(&r->done) : 0;
	for (size_t i = 0; i < n; i++) {
		const struct kw_iter_proc *p = &procs[i];
		const struct proc_read *pr = i < done && r->out[i].same ? &r->out[i] : NULL;
		struct kw_proc_facts f = {
			.ts_us = kwd_now_us(), .event = "open", .pid = p->pid,
			.start_ns = p->start_ns, .has_parent = true, .ppid = p->ppid,
			.parent_start_ns = p->parent_start_ns, .has_ids = true, .uid = p->uid,
			.gid = p->gid, .has_cgroup = true, .cgroup = p->cgroup_id, .comm = p->comm,
			.comm_len = strnlen(p->comm, sizeof(p->comm)),
		};

		if (pr && pr->exe_len) {
			f.exe = pr->exe;
			f.exe_len = pr->exe_len;
			f.exe_truncated = pr->exe_cut;
		}
		if (pr && pr->argv_len) {
			f.argv = pr->argv;
			f.argv_len = pr->argv_len;
			f.argv_full = pr->argv_full;
			f.argv_sha256 = pr->has_sha ? pr->sha : NULL;
		}
		kwd_lineage_known(s, &f);
	}
	if (r)
		open_read_put(r);
}
