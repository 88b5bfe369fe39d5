/* SPDX-License-Identifier: Apache-2.0 */
/* Verification at an auditor's scale.
 *   - `--log`: a decision log shaped like kwitnessd's (build/tests/kw-loggen),
 *     verified with the streaming check (kw_log_check_fd: canonical lines
 *     compared byte for byte, no tree) against the earlier path measured in
 *     the same run (the whole file read, a jansson tree per line,
 *     re-canonicalised: kw_transcript_from_text), and raw read + SHA-256 of
 *     the same bytes. MB/s per CPU-second of this process (the machine is
 *     shared) and wall-clock; peak RSS of each.
 *   - `--dir`: a state folder of records with small logs, verified by
 *     `kwitness verify --dir` (--jobs 1 and 2) against one `kwitness verify`
 *     process per record, as an auditor had to before. Records/s wall-clock
 *     and per CPU-second of the children.
 * Usage: bench_verify [LOG_DECISIONS [DIR_RECORDS]]   (default 500000 1000)
 * Run from the repository root (it runs build/kwitness and build/tests/kw-loggen). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/digest.h"
#include "jcs/jcs.h"
#include "trace/key.h"
#include "trace/logverify.h"
#include "trace/record.h"
#include "collector/transcript.h"

#define IMAGE "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SANDBOX "spiffe://example.org/agent/7"
#define BUNDLE "network: {}\n"

static char tmp[] = "/tmp/kw-bench-verify.XXXXXX";

static void die(const char *what)
{
	fprintf(stderr, "bench_verify: %s\n", what);
	exit(1);
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double children_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static long peak_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static int run(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A signed record over hash/count, as canonical text. */
static void make_record(struct kw_key *key, const char *hash, uint64_t count, struct kw_buf *out)
{
	struct kw_record_input in = { .sandbox_id = SANDBOX, .image_digest = IMAGE, .bundle = BUNDLE,
				      .bundle_len = strlen(BUNDLE), .transcript_hash = hash,
				      .call_count = count, .enforcement_mode = "enforce",
				      .model_provider = "anthropic", .model_id = "claude-x",
				      .data_class = "internal", .iat = (int64_t)time(NULL) };
	char err[256];
	json_t *rec = kw_record_build(&in, err, sizeof(err));

	if (!rec || kw_record_sign(rec, key, err, sizeof(err)) || jcs_dump(rec, out))
		die(err);
	json_decref(rec);
}

static void read_hash(const char *path, char hash[KW_DIGEST_STR_MAX], uint64_t *count)
{
	FILE *f = fopen(path, "r");

	if (!f || fscanf(f, "%103s %" SCNu64, hash, count) != 2)
		die("cannot read the generator's hash");
	fclose(f);
}

static void bench_log(struct kw_key *key, const char *bundle_hash, unsigned long decisions)
{
	char cmd[1024], log[300], hashf[300], hash[KW_DIGEST_STR_MAX], other[KW_DIGEST_STR_MAX];
	struct kw_buf text = { 0 }, whole = { 0 };
	struct kw_verify_opts o = { .trusted = key, .now = (int64_t)time(NULL), .skew = 60,
				    .call_count = -1, .bundle = BUNDLE, .bundle_len = strlen(BUNDLE),
				    .image_digest = IMAGE };
	struct kw_verify_result res;
	struct kw_log_check lc = { 0 };
	struct kw_digest d;
	double mb, c0, w0, c_new, w_new, c_old, w_old, c_sha, w_sha;
	uint64_t count, n;
	long rss0, rss_new, rss_old;
	struct stat st;
	char *buf;
	int fd;
	ssize_t r;

	snprintf(log, sizeof(log), "%s/log.jsonl", tmp);
	snprintf(hashf, sizeof(hashf), "%s/log.hash", tmp);
	snprintf(cmd, sizeof(cmd), "build/tests/kw-loggen --decisions %lu --bundle-hash %s --hash-out %s > %s",
		 decisions, bundle_hash, hashf, log);
	if (run(cmd))
		die("build/tests/kw-loggen failed (run from the repository root after make)");
	read_hash(hashf, hash, &count);
	make_record(key, hash, count, &text);
	if (stat(log, &st))
		die("stat");
	mb = (double)st.st_size / 1e6;
	rss0 = peak_rss_kb();

	/* Streaming: the check as kwitness verify --log runs it. */
	c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	w0 = clock_s(CLOCK_MONOTONIC);
	fd = open(log, O_RDONLY);
	if (fd < 0 || kw_log_check_init(&lc) || kw_log_check_fd(&lc, fd))
		die("log check");
	close(fd);
	o.log = &lc;
	if (kw_record_verify(text.data, text.len, &o, &res))
		die(res.message);
	c_new = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	w_new = clock_s(CLOCK_MONOTONIC) - w0;
	kw_log_check_free(&lc);
	rss_new = peak_rss_kb();
	o.log = NULL;

	/* Baseline: read and SHA-256 only. */
	buf = malloc(1 << 20);
	c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	w0 = clock_s(CLOCK_MONOTONIC);
	fd = open(log, O_RDONLY);
	if (!buf || fd < 0 || kw_digest_init(&d, KW_SHA256))
		die("sha");
	while ((r = read(fd, buf, 1 << 20)) > 0)
		kw_digest_update(&d, buf, (size_t)r);
	kw_digest_final(&d, other);
	close(fd);
	c_sha = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	w_sha = clock_s(CLOCK_MONOTONIC) - w0;
	free(buf);

	/* The earlier path: the whole log in memory, a tree per line. */
	c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	w0 = clock_s(CLOCK_MONOTONIC);
	if (kw_read_file(log, (size_t)1 << 31, &whole) ||
	    kw_transcript_from_text(whole.data, whole.len, other, &n, cmd, sizeof(cmd)))
		die("old path");
	o.transcript_hash = other;
	o.call_count = (int64_t)n;
	if (kw_record_verify(text.data, text.len, &o, &res))
		die(res.message);
	c_old = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	w_old = clock_s(CLOCK_MONOTONIC) - w0;
	kw_buf_free(&whole);
	rss_old = peak_rss_kb();

	printf("--log: %.1f MB, %" PRIu64 " entries (entries shaped like kwitnessd's)\n", mb, count);
	printf("  streaming check (kw_log_check_fd + record)     %7.1f MB/s per CPU-s  %7.1f MB/s wall  peak RSS %ld kB\n",
	       mb / c_new, mb / w_new, rss_new);
	printf("  earlier path: read all, tree per line          %7.1f MB/s per CPU-s  %7.1f MB/s wall  peak RSS %ld kB\n",
	       mb / c_old, mb / w_old, rss_old);
	printf("  baseline: read + SHA-256 of the same bytes     %7.1f MB/s per CPU-s  %7.1f MB/s wall\n",
	       mb / c_sha, mb / w_sha);
	printf("  (process peak RSS before: %ld kB)\n", rss0);
	kw_buf_free(&text);
	unlink(log);
	unlink(hashf);
}

/* A small complete log for session id, written to path; its hash. */
static void small_log(const char *path, const char *id, const char *bundle_hash, int decisions,
		      char hash[KW_DIGEST_STR_MAX], uint64_t *count)
{
	struct kw_buf line = { 0 }, all = { 0 };
	struct kw_transcript t;
	struct jcs_obj o;
	int e;

	if (kw_transcript_init(&t))
		die("transcript");
	for (int i = -1; i <= decisions; i++) {
		kw_buf_reset(&line);
		e = jcs_obj_begin(&o, &line);
		if (i < 0) {
			e = e ?: jcs_obj_str(&o, "bundle_hash", bundle_hash);
			e = e ?: jcs_obj_str(&o, "image_digest", IMAGE);
			e = e ?: jcs_obj_str(&o, "mode", "enforce");
			e = e ?: jcs_obj_str(&o, "sandbox_id", SANDBOX);
			e = e ?: jcs_obj_str(&o, "session", id);
			e = e ?: jcs_obj_str(&o, "tool", "kwitness.open");
		} else if (i < decisions) {
			e = e ?: jcs_obj_str(&o, "cgroup", "23471");
			e = e ?: jcs_obj_str(&o, "comm", "kw-netprobe");
			e = e ?: jcs_obj_str(&o, "decision", "permit");
			e = e ?: jcs_obj_bool(&o, "enforced", false);
			e = e ?: jcs_obj_str(&o, "host", "10.1.2.3");
			e = e ?: jcs_obj_int(&o, "pid", 31533);
			e = e ?: jcs_obj_int(&o, "port", 443);
			e = e ?: jcs_obj_str(&o, "proto", "tcp");
			e = e ?: jcs_obj_str(&o, "rule", "net.connect[0]");
			e = e ?: jcs_obj_int(&o, "seq", i);
			e = e ?: jcs_obj_str(&o, "tool", "net.connect");
			e = e ?: jcs_obj_int(&o, "ts", 1795952651050116LL + i);
			e = e ?: jcs_obj_int(&o, "uid", 0);
		} else {
			e = e ?: jcs_obj_bool(&o, "complete", true);
			e = e ?: jcs_obj_int(&o, "decisions", decisions);
			e = e ?: jcs_obj_int(&o, "denials", 0);
			e = e ?: jcs_obj_int(&o, "dropped", 0);
			e = e ?: jcs_obj_int(&o, "next_seq", decisions);
			e = e ?: jcs_obj_int(&o, "seq_gaps", 0);
			e = e ?: jcs_obj_str(&o, "session", id);
			e = e ?: jcs_obj_str(&o, "tool", "kwitness.close");
		}
		e = e ?: jcs_obj_end(&o);
		e = e ?: kw_transcript_append(&t, line.data, line.len);
		e = e ?: kw_buf_append(&all, line.data, line.len);
		e = e ?: kw_buf_putc(&all, '\n');
		if (e)
			die("log");
	}
	if (kw_transcript_final(&t, hash, count) || kw_write_file_atomic(path, all.data, all.len, 0644))
		die("write log");
	kw_buf_free(&line);
	kw_buf_free(&all);
}

static void bench_dir(struct kw_key *key, const char *key_path, const char *bundle_hash, int records)
{
	char path[400], cmd[1200], hash[KW_DIGEST_STR_MAX], id[33];
	struct kw_buf text = { 0 };
	double w0, c0, w, c;
	uint64_t count;
	int per_process = records < 300 ? records : 300;

	snprintf(path, sizeof(path), "%s/state", tmp);
	if (mkdir(path, 0755))
		die("mkdir");
	for (const char *sub = "records\0logs\0policies\0"; *sub; sub += strlen(sub) + 1) {
		snprintf(path, sizeof(path), "%s/state/%s", tmp, sub);
		if (mkdir(path, 0755) && errno != EEXIST)
			die("mkdir");
	}
	snprintf(path, sizeof(path), "%s/state/policies/%s", tmp, bundle_hash + 7);
	kw_write_file_atomic(path, BUNDLE, strlen(BUNDLE), 0644);
	for (int i = 0; i < records; i++) {
		snprintf(id, sizeof(id), "%032x", i);
		snprintf(path, sizeof(path), "%s/state/logs/%s.jsonl", tmp, id);
		small_log(path, id, bundle_hash, 20, hash, &count);
		kw_buf_reset(&text);
		make_record(key, hash, count, &text);
		snprintf(path, sizeof(path), "%s/state/records/%s.json", tmp, id);
		kw_write_file_atomic(path, text.data, text.len, 0644);
	}
	kw_buf_free(&text);
	printf("--dir: %d records, each with a log of 22 entries\n", records);
	for (int jobs = 1; jobs <= 2; jobs++) {
		snprintf(cmd, sizeof(cmd), "build/kwitness verify --key %s --dir %s/state --jobs %d > /dev/null",
			 key_path, tmp, jobs);
		c0 = children_cpu();
		w0 = clock_s(CLOCK_MONOTONIC);
		if (run(cmd))
			die("kwitness verify --dir failed");
		w = clock_s(CLOCK_MONOTONIC) - w0;
		c = children_cpu() - c0;
		printf("  kwitness verify --dir --jobs %d                 %7.0f records/s wall  %7.0f per CPU-s\n",
		       jobs, records / w, records / c);
	}
	c0 = children_cpu();
	w0 = clock_s(CLOCK_MONOTONIC);
	for (int i = 0; i < per_process; i++) {
		snprintf(id, sizeof(id), "%032x", i);
		snprintf(cmd, sizeof(cmd),
			 "build/kwitness verify --key %s --log %s/state/logs/%s.jsonl --policy %s/state/policies/%s "
			 "%s/state/records/%s.json > /dev/null",
			 key_path, tmp, id, tmp, bundle_hash + 7, tmp, id);
		if (run(cmd))
			die("kwitness verify failed");
	}
	w = clock_s(CLOCK_MONOTONIC) - w0;
	c = children_cpu() - c0;
	printf("  baseline: one kwitness verify per record       %7.0f records/s wall  %7.0f per CPU-s  (%d records)\n",
	       per_process / w, per_process / c, per_process);
}

int main(int argc, char **argv)
{
	unsigned long decisions = argc > 1 ? strtoul(argv[1], NULL, 10) : 500000;
	int records = argc > 2 ? atoi(argv[2]) : 1000;
	char key_path[300], bundle_hash[KW_DIGEST_STR_MAX], cmd[400];
	struct kw_key *key = NULL;

	if (access("build/kwitness", X_OK) || access("build/tests/kw-loggen", X_OK))
		die("run from the repository root after make (build/kwitness, build/tests/kw-loggen)");
	if (!mkdtemp(tmp))
		die("mkdtemp");
	snprintf(key_path, sizeof(key_path), "%s/k.pem", tmp);
	if (kw_key_generate(key_path, &key))
		die("key");
	if (kw_digest_buf(KW_SHA256, BUNDLE, strlen(BUNDLE), bundle_hash))
		die("digest");
	if (decisions)
		bench_log(key, bundle_hash, decisions);
	if (records > 0)
		bench_dir(key, key_path, bundle_hash, records);
	kw_key_free(key);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	run(cmd);
	return 0;
}
