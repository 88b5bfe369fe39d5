/* SPDX-License-Identifier: Apache-2.0 */
/* A private kwitnessd for the benchmarks that measure the whole path: its
 * own state dir, socket and key, no pinned programs, a record: all policy
 * allowing UDP connect/send to 127.0.0.1:9, and the calls to open and close
 * sessions on it. Included by each benchmark that needs it (static). */
#ifndef KWITNESS_BENCH_KWD_DAEMON_H
#define KWITNESS_BENCH_KWD_DAEMON_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/cgroup.h"
#include "cli/client.h"

struct daemon {
	pid_t pid;
	char dir[64];
	char sock[128];
	char cg[4096];
	char policy[160];
};

/* the folder of the running benchmark (build/bench): kwitnessd is in .. */
static char exe_dir[4096];

static int daemon_start(struct daemon *d, const char *ringbuf, const char *why_skip)
{
	char kwd[4200], key[200], state[200], cmd[4600], mnt[4000];
	const char *tmp;
	int st;

	if (geteuid() != 0) {
		printf("%s: skipped (needs root)\n", why_skip);
		return -1;
	}
	snprintf(kwd, sizeof(kwd), "%s/../kwitnessd", exe_dir);
	if (access(kwd, X_OK)) {
		printf("%s: skipped (%s not built)\n", why_skip, kwd);
		return -1;
	}
	if (kw_cgroup2_mount(mnt, sizeof(mnt))) {
		printf("%s: skipped (no cgroup2 mount)\n", why_skip);
		return -1;
	}
	/* $TMPDIR: a tmpfs there takes the disk out of the measurement. Only
	 * plain path bytes: the folder goes to "rm -rf" through a shell. */
	tmp = getenv("TMPDIR");
	if (tmp && (tmp[0] != '/' || tmp[strspn(tmp, "abcdefghijklmnopqrstuvwxyz"
						"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-")])) {
		printf("%s: TMPDIR is not a plain absolute path: /tmp instead\n", why_skip);
		tmp = NULL;
	}
	if (!tmp)
		tmp = "/tmp";
	if (snprintf(d->dir, sizeof(d->dir), "%s/kwitness-bench.XXXXXX", tmp) >= (int)sizeof(d->dir) ||
	    !mkdtemp(d->dir)) {
		printf("%s: skipped (no private folder under %s)\n", why_skip, tmp);
		d->dir[0] = '\0';
		return -1;
	}
	snprintf(d->sock, sizeof(d->sock), "%s/sock", d->dir);
	snprintf(key, sizeof(key), "%s/key.pem", d->dir);
	snprintf(state, sizeof(state), "%s/state", d->dir);
	snprintf(d->cg, sizeof(d->cg), "%s/kwitness-bench-%d", mnt, (int)getpid());
	snprintf(d->policy, sizeof(d->policy), "%s/policy.json", d->dir);
	mkdir(d->cg, 0755);
	snprintf(cmd, sizeof(cmd), "%s/../kwitness keygen --out %s >/dev/null", exe_dir, key);
	if (system(cmd) != 0) {
		printf("%s: skipped (kwitness keygen failed)\n", why_skip);
		return -1;
	}
	{
		FILE *f = fopen(d->policy, "w");

		if (!f)
			return -1;
		fprintf(f, "{\"kwitness_policy\":1,\"mode\":\"enforce\",\"record\":\"all\","
			   "\"on_record_failure\":\"allow\",\"net\":{\"send\":[\"127.0.0.1/32:9\"],"
			   "\"connect\":[\"127.0.0.1/32:9\"]}}");
		fclose(f);
	}
	d->pid = fork();
	if (d->pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execl(kwd, "kwitnessd", "--foreground", "--state-dir", state, "--socket", d->sock,
		      "--key", key, "--pin-dir", "none", "--config",
		      getenv("KW_BENCH_KWD_CONFIG") ? getenv("KW_BENCH_KWD_CONFIG") : "/dev/null",
		      "--ringbuf-size", ringbuf, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 100; i++) {
		struct stat sb;

		if (stat(d->sock, &sb) == 0)
			return 0;
		if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
			printf("%s: skipped (kwitnessd did not start: BPF programs?)\n", why_skip);
			d->pid = 0;
			return -1;
		}
		usleep(100000);
	}
	printf("%s: skipped (no control socket)\n", why_skip);
	return -1;
}

static void daemon_stop(struct daemon *d)
{
	char cmd[300];
	int st;

	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
		waitpid(d->pid, &st, 0);
	}
	kw_cgroup_remove(d->cg);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", d->dir);
	if (d->dir[0] && system(cmd))
		(void)0;
}

/* CPU seconds (user + system) from a /proc stat file. */
static double stat_cpu_s(const char *path)
{
	char buf[2048], *p;
	unsigned long long ut = 0, stt = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	p = strrchr(buf, ')');
	/* fields after ")": state(3) ... utime(14) stime(15) */
	if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &stt) == 2)
		return (double)(ut + stt) / (double)sysconf(_SC_CLK_TCK);
	return 0;
}

/* The whole process. */
static double proc_cpu_s(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return stat_cpu_s(path);
}

static char *session_open_on(struct daemon *d, const char *cg)
{
	const struct kw_open_options o = {
		.sandbox_id = "spiffe://bench.kwitness.local/s",
		.policy = d->policy,
		.image_digest = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	json_t *req = kw_session_open_request(cg, &o);
	json_t *reply = NULL;
	char err[256], *id = NULL;

	if (req && kw_client_call(d->sock, req, &reply, err, sizeof(err)) == 0 &&
	    kw_client_reply_ok("bench", reply))
		id = strdup(json_string_value(json_object_get(reply, "session")));
	json_decref(req);
	json_decref(reply);
	return id;
}

/* Closes; returns the reply (decisions, dropped). */
static json_t *session_close_id(struct daemon *d, const char *id)
{
	json_t *req = json_pack("{s:s, s:s}", "op", "close", "session", id), *reply = NULL;
	char err[256];

	if (kw_client_call(d->sock, req, &reply, err, sizeof(err)))
		fprintf(stderr, "close: %s\n", err);
	json_decref(req);
	return reply;
}

#endif
