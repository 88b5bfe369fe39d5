/* SPDX-License-Identifier: Apache-2.0 */
/* kw-threadstop TID [MAX_S]: holds one thread of another process, and only
 * that thread, stopped until stdin ends (or MAX_S seconds, 60 by default,
 * pass), then lets it go. PTRACE_SEIZE and PTRACE_INTERRUPT put the thread
 * in a ptrace-stop, which stops no other thread of its process (SIGSTOP
 * would stop them all). Tests use it to stall kwitnessd's loop (the thread
 * whose TID is the PID) while its other threads keep running.
 *
 * Prints "stopped TID" once the thread is held and "released TID" after.
 * Exit 0; 2 on bad usage or an error; 3 when ptrace is refused (EPERM:
 * no CAP_SYS_PTRACE, Yama's ptrace_scope), said on stderr. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Waits for the interrupt's stop (PTRACE_EVENT_STOP). A signal stop that
 * comes first is handed back to the thread and the interrupt asked again.
 * 0 when held. */
static int wait_held(pid_t tid)
{
	for (;;) {
		int st, sig;

		if (waitpid(tid, &st, __WALL) < 0) {
			fprintf(stderr, "kw-threadstop: waitpid %d: %s\n", (int)tid, strerror(errno));
			return -1;
		}
		if (!WIFSTOPPED(st)) {
			fprintf(stderr, "kw-threadstop: thread %d ended\n", (int)tid);
			return -1;
		}
		if ((st >> 16) == PTRACE_EVENT_STOP)
			return 0;
		sig = WSTOPSIG(st);
		if (ptrace(PTRACE_CONT, tid, NULL, (void *)(long)sig) < 0 ||
		    ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0) {
			fprintf(stderr, "kw-threadstop: thread %d: %s\n", (int)tid, strerror(errno));
			return -1;
		}
	}
}

/* Until stdin ends (EOF or an error) or max_s seconds passed. */
static void hold(long max_s)
{
	struct timespec start, now;
	char buf[64];

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct pollfd p = { .fd = 0, .events = POLLIN };
		long left_ms;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left_ms = max_s * 1000 - ((now.tv_sec - start.tv_sec) * 1000 +
					  (now.tv_nsec - start.tv_nsec) / 1000000);
		if (left_ms <= 0) {
			fprintf(stderr, "kw-threadstop: %ld s passed: letting go\n", max_s);
			return;
		}
		if (poll(&p, 1, (int)left_ms) < 0 && errno != EINTR)
			return;
		if (p.revents && read(0, buf, sizeof(buf)) <= 0)
			return;
	}
}

int main(int argc, char **argv)
{
	char *end;
	long tid = argc >= 2 ? strtol(argv[1], &end, 10) : 0;
	long max_s = argc >= 3 ? strtol(argv[2], NULL, 10) : 60;

	if (argc < 2 || argc > 3 || tid <= 0 || *end || max_s <= 0) {
		fprintf(stderr, "usage: kw-threadstop TID [MAX_S]\n");
		return 2;
	}
	if (ptrace(PTRACE_SEIZE, (pid_t)tid, NULL, NULL) < 0) {
		int e = errno;

		fprintf(stderr, "kw-threadstop: PTRACE_SEIZE %ld: %s\n", tid, strerror(e));
		return e == EPERM ? 3 : 2;
	}
	if (ptrace(PTRACE_INTERRUPT, (pid_t)tid, NULL, NULL) < 0) {
		fprintf(stderr, "kw-threadstop: PTRACE_INTERRUPT %ld: %s\n", tid, strerror(errno));
		return 2;
	}
	if (wait_held((pid_t)tid))
		return 2;
	printf("stopped %ld\n", tid);
	fflush(stdout);
	hold(max_s);
	if (ptrace(PTRACE_DETACH, (pid_t)tid, NULL, NULL) < 0) {
		fprintf(stderr, "kw-threadstop: PTRACE_DETACH %ld: %s\n", tid, strerror(errno));
		return 2;
	}
	printf("released %ld\n", tid);
	return 0;
}
