/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness against auditd on the same operation: a loop of UDP connect() to
 * 127.0.0.1:9, measured three ways in one run, phases alternating each round:
 *   untouched:  audit disabled, no kwitness;
 *   auditd:     an audit rule on connect() for this executable
 *               (auditctl -a always,exit -S connect -F exe=...), auditd running,
 *               the backlog limit Debian's packaged rules set (-b 8192);
 *   kwitness:   in a session of a private kwitnessd, record: all.
 * Each phase runs in a child forked for it (audit gives a task its audit
 * context at fork). Prints the loop's ns per connect() (wall and the
 * process's own CPU time), what each adds to the untouched loop, the daemon's
 * CPU time per recorded connect() (auditd; kwitnessd), and the ratio.
 *
 * Needs root, auditctl and auditd (scripts/deps.sh installs auditd; this
 * installs nothing), build/kwitnessd. It leaves no audit rule behind and puts
 * back what it found: the audit enabled flag, the backlog limit, and auditd
 * running or not.
 * Usage: bench_vs_auditd [ROUNDS [OPS]]   (default 5, 100000) */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kwd_daemon.h"

static long ops = 100000;
static char self[4096], key[64];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

struct loop_result {
	double wall_ns, cpu_ns; /* per connect() */
	long failed;
};

/* A child (in cgroup cg when set) runs the loop; its figures come back
 * through a pipe. */
static int run_loop(const char *cg, struct loop_result *r)
{
	int pfd[2], st;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9) };
		struct loop_result out = { 0 };
		struct timespec c0, c1;
		double t0;
		int fd;

		close(pfd[0]);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (cg && kw_cgroup_join(cg, getpid()))
			_exit(1);
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (fd < 0)
			_exit(1);
		for (long i = 0; i < 2000; i++) /* warm up */
			connect(fd, (struct sockaddr *)&a, sizeof(a));
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
		t0 = now_s();
		for (long i = 0; i < ops; i++)
			if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
				out.failed++;
		out.wall_ns = (now_s() - t0) * 1e9 / (double)ops;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
		out.cpu_ns = ((double)(c1.tv_sec - c0.tv_sec) * 1e9 +
			      (double)(c1.tv_nsec - c0.tv_nsec)) / (double)ops;
		if (write(pfd[1], &out, sizeof(out)) != (ssize_t)sizeof(out))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		return -1;
	}
	st = read(pfd[0], r, sizeof(*r)) == (ssize_t)sizeof(*r) ? 0 : -1;
	close(pfd[0]);
	{
		int ws;

		waitpid(pid, &ws, 0);
		if (!WIFEXITED(ws) || WEXITSTATUS(ws))
			st = -1;
	}
	return st;
}

/* ---- audit ---------------------------------------------------------- */

static int sh(const char *cmd)
{
	int st = system(cmd);

	return st == 0 ? 0 : -1;
}

/* A number from auditctl -s ("enabled 0", "backlog_limit 64"), -1 unknown. */
static int audit_status(const char *what)
{
	char line[128], fmt[64];
	int v = -1;
	FILE *p = popen("auditctl -s 2>/dev/null", "r");

	if (!p)
		return -1;
	snprintf(fmt, sizeof(fmt), "%s %%d", what);
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, fmt, &v) == 1)
			break;
	pclose(p);
	return v;
}

/* The kernel's audit "enabled" flag (0, 1, or 2 = locked), -1 unknown. */
static int audit_enabled(void)
{
	return audit_status("enabled");
}

/* The running auditd's pid, from the kernel's own record ("pid N"), or 0. */
static pid_t auditd_pid(void)
{
	char line[128];
	int v = 0;
	FILE *p = popen("auditctl -s 2>/dev/null", "r");

	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "pid %d", &v) == 1)
			break;
	pclose(p);
	return v > 0 && kill(v, 0) == 0 ? v : 0;
}

static char rule_args[4400];

static int rule_add(void)
{
	char cmd[4600];

	snprintf(cmd, sizeof(cmd), "auditctl -a %s >/dev/null", rule_args);
	return sh(cmd);
}

static void rule_del(void)
{
	char cmd[4600];

	/* every copy: a rule must not outlive the benchmark */
	snprintf(cmd, sizeof(cmd), "while auditctl -d %s >/dev/null 2>&1; do :; done", rule_args);
	if (sh(cmd))
		(void)0;
}

/* Starts auditd (it daemonizes) and waits until the kernel names it. */
static pid_t auditd_start(void)
{
	if (sh("auditd >/dev/null 2>&1"))
		return 0;
	for (int i = 0; i < 50; i++) {
		pid_t p = auditd_pid();

		if (p)
			return p;
		usleep(100000);
	}
	return 0;
}

static void auditd_stop(pid_t p)
{
	int i;

	if (p <= 0)
		return;
	kill(p, SIGTERM);
	for (i = 0; i < 50 && kill(p, 0) == 0; i++)
		usleep(100000);
}

int main(int argc, char **argv)
{
	double un_w[32], un_c[32], au_w[32], au_c[32], kw_w[32], kw_c[32], au_d[32], kw_d[32];
	int rounds = argc > 1 ? atoi(argv[1]) : 5, en0, bl0, failures = 0;
	char cmd[96];
	pid_t ad0, ad = 0;
	bool started_auditd = false;
	ssize_t n;

	if (argc > 2)
		ops = atol(argv[2]);
	if (rounds < 1 || rounds > 32)
		rounds = 5;
	if (ops < 1000)
		ops = 100000;
	if (geteuid() != 0) {
		printf("bench_vs_auditd: skipped (needs root)\n");
		return 0;
	}
	if (sh("command -v auditctl >/dev/null 2>&1 && command -v auditd >/dev/null 2>&1")) {
		printf("bench_vs_auditd: skipped (auditctl/auditd not installed: scripts/deps.sh "
		       "installs auditd)\n");
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	snprintf(exe_dir, sizeof(exe_dir), "%s", self);
	*strrchr(exe_dir, '/') = '\0';
	snprintf(key, sizeof(key), "kwbench-%d", (int)getpid());
	snprintf(rule_args, sizeof(rule_args),
		 "always,exit -F arch=b64 -S connect -F exe=%s -k %s", self, key);
	en0 = audit_enabled();
	bl0 = audit_status("backlog_limit");
	ad0 = auditd_pid();
	if (en0 < 0) {
		printf("bench_vs_auditd: skipped (auditctl -s failed: no audit in this kernel?)\n");
		return 0;
	}
	if (en0 == 2) {
		printf("bench_vs_auditd: skipped (audit configuration is locked, enabled 2)\n");
		return 0;
	}
	printf("bench_vs_auditd: UDP connect() to 127.0.0.1:9, %ld ops per phase, %d rounds, "
	       "phases alternating (found: audit enabled %d, auditd %s)\n", ops, rounds, en0,
	       ad0 ? "running" : "not running");
	{
		char buf[128] = "";
		FILE *f = fopen("/proc/loadavg", "r");

		if (f && fgets(buf, sizeof(buf), f))
			printf("  load average at the start: %s", buf);
		if (f)
			fclose(f);
	}

	for (int r = 0; r < rounds && !failures; r++) {
		struct loop_result lr;
		struct daemon d = { 0 };
		char *id;
		double c0;

		/* untouched: audit off (unless it was on and stays on: then said above) */
		if (!ad0 && en0 == 0 && sh("auditctl -e 0 >/dev/null"))
			failures++;
		if (run_loop(NULL, &lr)) {
			failures++;
			break;
		}
		un_w[r] = lr.wall_ns;
		un_c[r] = lr.cpu_ns;

		/* auditd + a rule */
		if (!ad0) {
			ad = auditd_start();
			started_auditd = ad > 0;
		} else {
			ad = ad0;
		}
		/* the backlog Debian's packaged rules set (-b 8192), not the kernel's 64 */
		if (!ad || sh("auditctl -e 1 >/dev/null") || sh("auditctl -b 8192 >/dev/null") ||
		    rule_add()) {
			printf("bench_vs_auditd: could not start auditd or add the rule\n");
			failures++;
		} else {
			c0 = proc_cpu_s(ad);
			if (run_loop(NULL, &lr))
				failures++;
			au_d[r] = (proc_cpu_s(ad) - c0) * 1e9 / (double)ops;
			au_w[r] = lr.wall_ns;
			au_c[r] = lr.cpu_ns;
		}
		rule_del();
		snprintf(cmd, sizeof(cmd), "auditctl -b %d >/dev/null", bl0);
		if (bl0 > 0 && sh(cmd))
			failures++;
		if (started_auditd) {
			auditd_stop(ad);
			started_auditd = false;
		}
		if (en0 != 1 && sh("auditctl -e 0 >/dev/null"))
			failures++;
		if (failures)
			break;

		/* kwitness: a private kwitnessd, one session, record: all */
		if (daemon_start(&d, "256K", "bench_vs_auditd kwitness phase")) {
			daemon_stop(&d);
			failures++;
			break;
		}
		id = session_open_on(&d, d.cg);
		if (!id) {
			daemon_stop(&d);
			failures++;
			break;
		}
		c0 = proc_cpu_s(d.pid);
		if (run_loop(d.cg, &lr))
			failures++;
		{
			json_t *reply = session_close_id(&d, id);
			long long dec = json_integer_value(json_object_get(reply, "decisions"));

			kw_d[r] = (proc_cpu_s(d.pid) - c0) * 1e9 / (double)ops;
			if (dec < ops)
				printf("  round %d: kwitness recorded %lld of %ld+ connects\n", r, dec,
				       ops);
			json_decref(reply);
		}
		free(id);
		daemon_stop(&d);
		kw_w[r] = lr.wall_ns;
		kw_c[r] = lr.cpu_ns;
		printf("  round %d: untouched %.0f ns, auditd %.0f ns, kwitness %.0f ns (wall)\n", r,
		       un_w[r], au_w[r], kw_w[r]);
		fflush(stdout);
	}
	/* put back what was found */
	rule_del();
	if (started_auditd)
		auditd_stop(ad);
	snprintf(cmd, sizeof(cmd), "auditctl -b %d >/dev/null", bl0);
	if (bl0 > 0 && audit_status("backlog_limit") != bl0 && sh(cmd))
		printf("bench_vs_auditd: WARNING: could not restore the backlog limit %d\n", bl0);
	if (audit_enabled() != en0) {
		snprintf(cmd, sizeof(cmd), "auditctl -e %d >/dev/null", en0);
		if (sh(cmd))
			printf("bench_vs_auditd: WARNING: could not restore audit enabled %d\n", en0);
	}
	if (failures) {
		printf("bench_vs_auditd: failed\n");
		return 1;
	}
	{
		double uw = median(un_w, rounds), uc = median(un_c, rounds);
		double aw = median(au_w, rounds), ac = median(au_c, rounds);
		double kw = median(kw_w, rounds), kc = median(kw_c, rounds);
		double ad_ = median(au_d, rounds), kd = median(kw_d, rounds);

		printf("  median of %d rounds, ns per connect():   wall  (added)   own CPU (added)  "
		       "daemon CPU\n", rounds);
		printf("  untouched                          %7.0f            %7.0f\n", uw, uc);
		printf("  auditd (rule on connect, exe)      %7.0f (%+6.0f)  %7.0f (%+6.0f)  %6.0f "
		       "(auditd)\n", aw, aw - uw, ac, ac - uc, ad_);
		printf("  kwitness session, record: all      %7.0f (%+6.0f)  %7.0f (%+6.0f)  %6.0f "
		       "(kwitnessd)\n", kw, kw - uw, kc, kc - uc, kd);
		printf("  auditd's added cost / kwitness's: %.1fx wall, %.1fx own CPU\n",
		       kw - uw > 0 ? (aw - uw) / (kw - uw) : 0, kc - uc > 0 ? (ac - uc) / (kc - uc) : 0);
	}
	return 0;
}
