/* SPDX-License-Identifier: Apache-2.0 */
/* The shared log writer's append rate (kwitness tlog serve --append-token):
 * SUBMITTERS threads each POST /add record after record, each waiting for
 * its proof, against the baseline of the same run: one submitter at a time
 * (what a writer that commits each append alone can do at best). Prints
 * appends/s and each submitter's slowest answer.
 * The records are 1.5 kB, shaped like signed records, each with its own
 * subject and its transparency URL; the writer checks the URL, not the
 * signature (that is the verifier's job), so the signature is a stand-in.
 * Usage: bench_tlog_serve [APPENDS [SUBMITTERS [KWITNESS]]]
 *        (default 2000 32 build/kwitness) */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "trace/key.h"
#include "tlog/http.h"
#include "tlog/log.h"
#include "tlog/record_url.h"

#define ORIGIN "bench.example/log"
#define TOKEN "bench-token-bench-token-bench"

static char tmp[] = "/tmp/kw-bench-tlog-serve.XXXXXX";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, int e)
{
	fprintf(stderr, "bench_tlog_serve: %s: %s\n", what, strerror(e < 0 ? -e : e));
	exit(1);
}

/* Record i, canonical, with its URL under ORIGIN. */
static void make_record(long i, struct kw_buf *out)
{
	char subject[80], pad[1201], url[TLOG_RECORD_URL_MAX];
	json_t *r;

	snprintf(subject, sizeof(subject), "spiffe://bench.example/agent-%ld", i);
	memset(pad, 'x', 1200);
	pad[1200] = '\0';
	r = json_pack("{s:s, s:i, s:s, s:{s:s, s:i}, s:s}", "subject", subject, "iat", 1796000000 + i,
		      "kwitness_version", "bench", "tool_transcript", "hash", pad, "call_count", i,
		      "policy", "bench");
	if (!r || tlog_record_url(ORIGIN, r, url))
		die("record", EINVAL);
	json_object_set_new(r, "transparency", json_string(url));
	json_object_set_new(r, "signature", json_string("stand-in"));
	if (jcs_dump(r, out))
		die("record", ENOMEM);
	json_decref(r);
}

struct submitter {
	pthread_t t;
	struct http_url url;
	struct kw_buf *records;
	long from, to;
	double slowest;
	long failed;
};

static void *submit(void *arg)
{
	struct submitter *s = arg;
	struct kw_buf resp = { 0 };

	for (long i = s->from; i < s->to; i++) {
		double t0 = now_s(), t;
		int status = http_post_auth(&s->url, "/add", "Bearer " TOKEN, s->records[i].data,
					    s->records[i].len, 1 << 16, &resp);

		t = now_s() - t0;
		if (status != 200) {
			if (!s->failed)
				fprintf(stderr, "bench_tlog_serve: append %ld: %d %.200s\n", i, status,
					resp.data ? resp.data : "");
			s->failed++;
		}
		if (t > s->slowest)
			s->slowest = t;
	}
	kw_buf_free(&resp);
	return NULL;
}

/* n appends from k submitters at once: appends/s, the slowest answer. */
static void run(const struct http_url *url, struct kw_buf *records, long first, long n, int k)
{
	struct submitter *s = calloc((size_t)k, sizeof(*s));
	double t0, t, slowest = 0;
	long failed = 0;

	if (!s)
		die("memory", ENOMEM);
	t0 = now_s();
	for (int i = 0; i < k; i++) {
		s[i].url = *url;
		s[i].records = records;
		s[i].from = first + n * i / k;
		s[i].to = first + n * (i + 1) / k;
		if (pthread_create(&s[i].t, NULL, submit, &s[i]))
			die("thread", EAGAIN);
	}
	for (int i = 0; i < k; i++) {
		pthread_join(s[i].t, NULL);
		failed += s[i].failed;
		if (s[i].slowest > slowest)
			slowest = s[i].slowest;
	}
	t = now_s() - t0;
	printf("%2d submitter%s: %6ld appends in %6.2f s: %7.0f appends/s, slowest answer %.3f s%s\n",
	       k, k == 1 ? " " : "s", n, t, (double)n / t, slowest, failed ? " (FAILURES)" : "");
	free(s);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000;
	int k = argc > 2 ? atoi(argv[2]) : 32;
	const char *kw = argc > 3 ? argv[3] : "build/kwitness";
	struct kw_key *key;
	struct tlog_key lk;
	struct kw_buf *records;
	struct http_url url;
	char dir[128], keypath[160], tokpath[160], listen_line[256] = "";
	int out[2], e;
	long single = n / 10 < 100 ? n / 10 : 100;
	pid_t pid;
	FILE *f;

	if (n < 20 || k < 1 || k > 256)
		die("arguments", EINVAL);
	signal(SIGPIPE, SIG_IGN);
	if (!mkdtemp(tmp))
		die("mkdtemp", errno);
	snprintf(dir, sizeof(dir), "%s/log", tmp);
	snprintf(keypath, sizeof(keypath), "%s/log.pem", tmp);
	snprintf(tokpath, sizeof(tokpath), "%s/token", tmp);
	if ((e = kw_key_generate(keypath, &key)) ||
	    (e = tlog_key_from(ORIGIN, TLOG_SIG_ED25519, key, &lk)) || (e = tlog_log_create(dir, &lk)))
		die("log", e);
	if ((e = kw_write_file_atomic(tokpath, TOKEN "\n", strlen(TOKEN) + 1, 0600)))
		die("token", e);
	records = calloc((size_t)(n + single), sizeof(*records));
	if (!records)
		die("memory", ENOMEM);
	for (long i = 0; i < n + single; i++)
		make_record(i, &records[i]);

	if (pipe(out))
		die("pipe", errno);
	pid = fork();
	if (pid == 0) {
		dup2(out[1], STDOUT_FILENO);
		close(out[0]);
		execl(kw, kw, "tlog", "serve", dir, "--listen", "127.0.0.1:0", "--append-token", tokpath,
		      "--key", keypath, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	f = fdopen(out[0], "r");
	if (!f || !fgets(listen_line, sizeof(listen_line), f) ||
	    strncmp(listen_line, "listening on ", 13))
		die("kwitness tlog serve did not start", EIO);
	listen_line[strcspn(listen_line, "\n")] = '\0';
	if (http_url_parse(listen_line + 13, &url))
		die("its address", EINVAL);
	printf("bench_tlog_serve: %s tlog serve, %ld appends of %zu-byte records\n", kw, n,
	       records[0].len);
	/* Baseline first: one submitter, one append at a time. */
	run(&url, records, 0, single, 1);
	run(&url, records, single, n, k);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	{
		char cmd[200];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
		if (system(cmd))
			fprintf(stderr, "bench_tlog_serve: could not remove %s\n", tmp);
	}
	return 0;
}
