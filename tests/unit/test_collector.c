/* SPDX-License-Identifier: Apache-2.0 */
/* kwitnessd's consumer pieces without a kernel: the reorder window (sequence
 * order, held events, given-up gaps, gaps the kernel marked dropped, growth,
 * duplicates, late arrivals) and the decision log writer (lines on disk,
 * streaming transcript hash against the known answers in
 * tests/vectors/trace-spec/PROVENANCE, and against coreutils' sha256sum over
 * "[" + the file's lines joined by "," + "]"), and reopening a log a killed
 * collector left (torn last line), and the collector's own entries built in
 * the writer's scratch buffer. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kwitness/abi/event.h"

#include "collector/logwriter.h"
#include "collector/reorder.h"
#include "collector/transcript.h"

#define KA_TRANSCRIPT "sha256:ffce23badc0a325b93ac587374132bbaae4f7798a4d57f84cf135a312f4a6aea"
#define KA_EMPTY "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
/* The README's two decisions, in canonical member order. */
#define C1 "{\"decision\":\"permit\",\"path\":\"/work/src\",\"tool\":\"fs.read\"}"
#define C2 "{\"decision\":\"deny\",\"host\":\"api.example.org\",\"tool\":\"net.connect\"}"

struct seen {
	uint64_t seq[4096];
	size_t n;
};

static int record_seq(void *ctx, const void *data, size_t len)
{
	struct seen *s = ctx;
	uint64_t v;

	assert_int_equal(len, sizeof(v));
	memcpy(&v, data, sizeof(v));
	if (s->n < 4096)
		s->seq[s->n++] = v;
	return 0;
}

static void push(struct kw_reorder *r, uint64_t seq)
{
	assert_int_equal(kw_reorder_push(r, seq, &seq, sizeof(seq)), 0);
}

static void test_in_order_and_swapped(void **state)
{
	struct kw_reorder r;
	struct seen s = { 0 };

	(void)state;
	kw_reorder_init(&r, record_seq, &s);
	push(&r, 0);
	push(&r, 2); /* 1 is on another CPU */
	assert_int_equal(s.n, 1);
	assert_int_equal(r.pending, 1);
	push(&r, 1);
	assert_int_equal(s.n, 3);
	assert_int_equal(r.pending, 0);
	push(&r, 3);
	for (size_t i = 0; i < s.n; i++)
		assert_int_equal(s.seq[i], i);
	assert_int_equal(r.arrived, 4);
	assert_int_equal(r.next, 4);
	kw_reorder_free(&r);
}

static void test_gap_skip_and_flush(void **state)
{
	struct kw_reorder r;
	struct seen s = { 0 };

	(void)state;
	kw_reorder_init(&r, record_seq, &s);
	push(&r, 0);
	push(&r, 3); /* 1 and 2 dropped */
	push(&r, 4);
	push(&r, 7); /* 5 and 6 dropped */
	assert_int_equal(s.n, 1);
	assert_int_equal(kw_reorder_skip(&r), 2); /* gives up 1, 2; emits 3, 4 */
	assert_int_equal(s.n, 3);
	assert_int_equal(s.seq[1], 3);
	assert_int_equal(s.seq[2], 4);
	assert_int_equal(kw_reorder_flush(&r), 2);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.seq[3], 7);
	assert_int_equal(r.next, 8);
	assert_int_equal(kw_reorder_skip(&r), 0); /* nothing held: nothing given up */
	/* A number that arrives after it was given up is still emitted. */
	push(&r, 5);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.seq[4], 5);
	assert_int_equal(r.late, 1);
	assert_int_equal(r.arrived, 5);
	kw_reorder_free(&r);
}

/* The kernel's drop marks, as a set of numbers; asked holds what was asked. */
struct marks {
	uint64_t dropped[8];
	size_t n;
	uint64_t asked[16];
	size_t n_asked;
};

static bool marked_lost(void *ctx, uint64_t seq)
{
	struct marks *m = ctx;

	if (m->n_asked < 16)
		m->asked[m->n_asked++] = seq;
	for (size_t i = 0; i < m->n; i++)
		if (m->dropped[i] == seq)
			return true;
	return false;
}

static void test_skip_lost(void **state)
{
	struct kw_reorder r;
	struct seen s = { 0 };
	struct marks m = { .dropped = { 1, 2, 5 }, .n = 3 };

	(void)state;
	kw_reorder_init(&r, record_seq, &s);
	/* nothing held: nothing asked, nothing given up */
	assert_int_equal(kw_reorder_skip_lost(&r, marked_lost, &m), 0);
	assert_int_equal(m.n_asked, 0);
	push(&r, 0);
	push(&r, 3); /* 1, 2 dropped */
	push(&r, 4);
	push(&r, 7); /* 5 dropped, 6 in flight */
	push(&r, 8);
	assert_int_equal(s.n, 1);
	/* gives up 1, 2 and 5 on their marks, emits 3 and 4, stops at 6 */
	assert_int_equal(kw_reorder_skip_lost(&r, marked_lost, &m), 3);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.seq[1], 3);
	assert_int_equal(s.seq[2], 4);
	assert_int_equal(r.next, 6);
	assert_int_equal(r.pending, 2);
	/* asked about each missing number in turn, never about a held one */
	assert_int_equal(m.n_asked, 4);
	assert_int_equal(m.asked[0], 1);
	assert_int_equal(m.asked[1], 2);
	assert_int_equal(m.asked[2], 5);
	assert_int_equal(m.asked[3], 6);
	/* 6 arrives: 7 and 8 follow it, in order */
	push(&r, 6);
	assert_int_equal(s.n, 6);
	for (size_t i = 3; i < 6; i++)
		assert_int_equal(s.seq[i], i + 3);
	assert_int_equal(r.pending, 0);
	assert_int_equal(r.late, 0);
	kw_reorder_free(&r);
}

static void test_growth_duplicates_and_limit(void **state)
{
	struct kw_reorder r;
	struct seen s = { 0 };
	uint64_t v = 0;

	(void)state;
	kw_reorder_init(&r, record_seq, &s);
	/* 1000 events in reverse: the window grows past its first 64 slots. */
	for (uint64_t q = 1000; q > 0; q--)
		push(&r, q);
	assert_int_equal(r.pending, 1000);
	assert_true(r.cap >= 1001);
	push(&r, 1000); /* duplicate of a held event: ignored */
	assert_int_equal(r.duplicates, 1);
	push(&r, 0);
	assert_int_equal(s.n, 1001);
	for (size_t i = 0; i < s.n; i++)
		assert_int_equal(s.seq[i], i);
	/* Further ahead than the largest window: the caller must give up gaps. */
	v = r.next + KW_REORDER_MAX + 5;
	assert_int_equal(kw_reorder_push(&r, v, &v, sizeof(v)), -ENOSPC);
	assert_int_equal(r.pending, 0);
	push(&r, r.next + 2); /* held, then given up by the jump */
	assert_int_equal(kw_reorder_jump(&r, v), KW_REORDER_MAX + 5 - 1);
	assert_int_equal(s.seq[s.n - 1], v - KW_REORDER_MAX - 3);
	push(&r, v);
	assert_int_equal(s.seq[s.n - 1], v);
	assert_int_equal(r.next, v + 1);
	kw_reorder_free(&r);
}

static void finish_log(struct kw_logwriter *log, const char *path, char hash[KW_DIGEST_STR_MAX],
		       uint64_t *count, struct kw_buf *file)
{
	assert_int_equal(kw_logwriter_finish(log, hash, count), 0);
	assert_int_equal(kw_read_file(path, 1 << 20, file), 0);
}

static void test_log_known_answer(void **state)
{
	char path[] = "/tmp/kwitness-test-log.XXXXXX";
	char hash[KW_DIGEST_STR_MAX], rehash[KW_DIGEST_STR_MAX], err[128];
	struct kw_buf file = { 0 };
	struct kw_logwriter log, other;
	uint64_t count = 0, recount = 0;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	assert_int_equal(kw_logwriter_open(&log, path), 0);
	assert_int_equal(kw_logwriter_open(&other, path), -EEXIST); /* never overwrites */
	assert_int_equal(kw_logwriter_append(&log, C1, strlen(C1)), 0);
	assert_int_equal(kw_logwriter_append(&log, C2, strlen(C2)), 0);
	finish_log(&log, path, hash, &count, &file);
	assert_string_equal(hash, KA_TRANSCRIPT);
	assert_int_equal(count, 2);
	assert_string_equal(file.data, C1 "\n" C2 "\n");
	/* The verifier's path: re-read the file as JSON Lines. */
	assert_int_equal(kw_transcript_from_text(file.data, file.len, rehash, &recount, err,
						 sizeof(err)), 0);
	assert_string_equal(rehash, KA_TRANSCRIPT);
	assert_int_equal(recount, 2);
	kw_buf_free(&file);
	unlink(path);

	/* No entries: the transcript of [] */
	assert_int_equal(kw_logwriter_open(&log, path), 0);
	finish_log(&log, path, hash, &count, &file);
	assert_string_equal(hash, KA_EMPTY);
	assert_int_equal(count, 0);
	assert_int_equal(file.len, 0);
	kw_buf_free(&file);
	unlink(path);
}

/* The transcript hash of a log file as coreutils computes it, independently
 * of the code under test: sha256sum of "[" + lines joined by "," + "]". */
static void transcript_by_sha256sum(const char *path, char out[KW_DIGEST_STR_MAX])
{
	char cmd[512], hex[80] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "{ printf '['; head -c -1 '%s' | tr '\\n' ','; printf ']'; } | sha256sum", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(hex, sizeof(hex), p));
	assert_int_equal(pclose(p), 0);
	assert_true(strlen(hex) > 64 && hex[64] == ' ');
	snprintf(out, KW_DIGEST_STR_MAX, "sha256:%.64s", hex);
}

static int count_line(void *ctx, const char *line, size_t len)
{
	(void)line;
	(void)len;
	++*(int *)ctx;
	return 0;
}

/* A collector killed mid-write left a torn last line: reopening cuts it, the
 * streaming hash is rebuilt from the whole lines, and what is appended after
 * gives the same known answer as a log written in one go. */
static void test_log_reopen(void **state)
{
	char path[] = "/tmp/kwitness-test-log.XXXXXX", link[64];
	char hash[KW_DIGEST_STR_MAX], why[256];
	const char *torn = C1 "\n{\"decision\":\"de";
	struct kw_buf file = { 0 };
	struct kw_logwriter log;
	uint64_t count = 0;
	int fd = mkstemp(path), lines = 0;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, torn, strlen(torn)), (ssize_t)strlen(torn));
	close(fd);
	assert_int_equal(kw_logwriter_reopen(&log, path, count_line, &lines, why, sizeof(why)), 0);
	assert_int_equal(lines, 1);
	assert_int_equal(log.entries, 1);
	assert_int_equal(log.bytes, strlen(C1) + 1);
	assert_int_equal(kw_logwriter_append(&log, C2, strlen(C2)), 0);
	finish_log(&log, path, hash, &count, &file);
	assert_string_equal(hash, KA_TRANSCRIPT);
	assert_int_equal(count, 2);
	assert_string_equal(file.data, C1 "\n" C2 "\n");
	kw_buf_free(&file);

	/* never through a symlink */
	snprintf(link, sizeof(link), "%s.lnk", path);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(kw_logwriter_reopen(&log, link, NULL, NULL, why, sizeof(why)), -ELOOP);
	assert_int_equal(log.fd, -1);
	unlink(link);
	unlink(path);
}

/* A log in two files (segments): the finished one streamed in (its bytes
 * into a digest too), the one being written reopened with its torn line
 * cut: appending gives the transcript of the unsplit log; a finished file
 * that ends inside a line is refused. */
static void test_log_resume_parts(void **state)
{
	char first[] = "/tmp/kwitness-test-log.XXXXXX", last[] = "/tmp/kwitness-test-log.XXXXXX";
	char hash[KW_DIGEST_STR_MAX], got[KW_DIGEST_STR_MAX], want[KW_DIGEST_STR_MAX], why[256];
	const char *torn = "{\"decision\":\"de", *what = "";
	struct kw_buf file = { 0 };
	struct kw_logwriter log;
	struct kw_digest dg;
	uint64_t count = 0, bytes = 0;
	int fd1 = mkstemp(first), fd2 = mkstemp(last), lines = 0;

	(void)state;
	assert_true(fd1 >= 0 && fd2 >= 0);
	assert_int_equal(write(fd1, C1 "\n", strlen(C1) + 1), (ssize_t)strlen(C1) + 1);
	assert_int_equal(write(fd2, torn, strlen(torn)), (ssize_t)strlen(torn));
	assert_int_equal(lseek(fd1, 0, SEEK_SET), 0);
	assert_int_equal(kw_logwriter_resume_begin(&log), 0);
	assert_int_equal(kw_digest_init(&dg, KW_SHA256), 0);
	assert_int_equal(kw_logwriter_resume_part(&log, fd1, count_line, &lines, &dg, &bytes, &what), 0);
	assert_int_equal(kw_digest_final(&dg, got), 0);
	assert_int_equal(kw_digest_buf(KW_SHA256, C1 "\n", strlen(C1) + 1, want), 0);
	assert_string_equal(got, want);
	assert_int_equal(bytes, strlen(C1) + 1);
	assert_int_equal(lines, 1);
	assert_int_equal(kw_logwriter_resume_last(&log, last, count_line, &lines, why, sizeof(why)), 0);
	assert_int_equal(lines, 1);
	assert_int_equal(log.entries, 1);
	assert_int_equal(log.bytes, strlen(C1) + 1);
	assert_int_equal(kw_logwriter_append(&log, C2, strlen(C2)), 0);
	finish_log(&log, last, hash, &count, &file);
	assert_string_equal(hash, KA_TRANSCRIPT);
	assert_int_equal(count, 2);
	assert_string_equal(file.data, C2 "\n");
	kw_buf_free(&file);

	/* a finished segment ends at a line's end */
	assert_int_equal(write(fd1, torn, strlen(torn)), (ssize_t)strlen(torn));
	assert_int_equal(lseek(fd1, 0, SEEK_SET), 0);
	assert_int_equal(kw_logwriter_resume_begin(&log), 0);
	assert_int_equal(kw_logwriter_resume_part(&log, fd1, NULL, NULL, NULL, &bytes, &what), -EINVAL);
	assert_string_equal(what, "it ends inside a line");
	assert_int_equal(bytes, strlen(C1) + 1 + strlen(torn));
	kw_logwriter_abort(&log);
	close(fd1);
	close(fd2);
	unlink(first);
	unlink(last);
}

static void fill_event(struct kw_ev_net *e, uint64_t seq)
{
	memset(e, 0, sizeof(*e));
	e->h.seq = seq;
	e->h.ts_ns = 5000000000ULL + seq;
	e->h.cgroup_id = 77;
	e->h.pid = 4242;
	e->h.kind = KW_EV_NET_CONNECT;
	e->h.rule = KW_RULE_DEFAULT;
	e->h.decision = KW_DENY;
	e->h.enforced = 1;
	memcpy(e->h.comm, "curl", 5);
	e->family = 4;
	e->proto = 6;
	e->port = 443;
	e->addr[0] = 10;
	e->addr[3] = 1;
}

static void test_log_events_large(void **state)
{
	char path[] = "/tmp/kwitness-test-log.XXXXXX";
	char hash[KW_DIGEST_STR_MAX], rehash[KW_DIGEST_STR_MAX];
	struct kw_buf file = { 0 };
	struct kw_logwriter log;
	struct kw_ev_net e;
	uint64_t count = 0, lines = 0;
	int fd = mkstemp(path);
	const uint64_t n = 5000; /* several flushes of KW_LOGWRITER_FLUSH_BYTES */

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	assert_int_equal(kw_logwriter_open(&log, path), 0);
	for (uint64_t i = 0; i < n; i++) {
		fill_event(&e, i);
		assert_int_equal(kw_logwriter_event(&log, &e, sizeof(e), 0), 0);
	}
	/* An undecodable record is refused, not written. */
	assert_int_equal(kw_logwriter_event(&log, &e, 8, 0), -EINVAL);
	finish_log(&log, path, hash, &count, &file);
	assert_int_equal(count, n);
	for (size_t i = 0; i < file.len; i++)
		lines += file.data[i] == '\n';
	assert_int_equal(lines, n);
	assert_non_null(strstr(file.data, "\"host\":\"10.0.0.1\""));
	transcript_by_sha256sum(path, rehash);
	assert_string_equal(rehash, hash);
	kw_buf_free(&file);
	unlink(path);
}

/* The collector's own entries, built in the log's scratch buffer: the
 * README's two decisions give the known answer; an entry whose building
 * failed is not appended. */
static void test_log_own_entries(void **state)
{
	char path[] = "/tmp/kwitness-test-log.XXXXXX";
	char hash[KW_DIGEST_STR_MAX];
	struct kw_buf file = { 0 };
	struct kw_logwriter log;
	struct jcs_obj o;
	uint64_t count = 0;
	int fd = mkstemp(path), e;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	assert_int_equal(kw_logwriter_open(&log, path), 0);
	e = kw_logwriter_entry_begin(&log, &o);
	e = e ?: jcs_obj_str(&o, "decision", "permit");
	e = e ?: jcs_obj_str(&o, "path", "/work/src");
	e = e ?: jcs_obj_str(&o, "tool", "fs.read");
	assert_int_equal(kw_logwriter_entry_end(&log, &o, e), 0);
	/* a failure while building: nothing appended, the error returned */
	e = kw_logwriter_entry_begin(&log, &o);
	e = e ?: jcs_obj_str(&o, "decision", "permit");
	assert_int_equal(kw_logwriter_entry_end(&log, &o, e ?: -ENOMEM), -ENOMEM);
	assert_int_equal(log.entries, 1);
	/* the next entry starts on an empty scratch buffer again */
	e = kw_logwriter_entry_begin(&log, &o);
	e = e ?: jcs_obj_str(&o, "decision", "deny");
	e = e ?: jcs_obj_str(&o, "host", "api.example.org");
	e = e ?: jcs_obj_str(&o, "tool", "net.connect");
	assert_int_equal(kw_logwriter_entry_end(&log, &o, e), 0);
	finish_log(&log, path, hash, &count, &file);
	assert_string_equal(hash, KA_TRANSCRIPT);
	assert_int_equal(count, 2);
	assert_string_equal(file.data, C1 "\n" C2 "\n");
	kw_buf_free(&file);
	unlink(path);
}

/* The transcript gathers entries before hashing them: entries of every size
 * around its stage (up to more than a whole stage, and exactly filling it)
 * give the hash sha256sum computes. */
static void test_log_entry_sizes(void **state)
{
	static const size_t sizes[] = { 1, 2, 4094, 4095, 4096, 4097, 9000, 3, 4093, 1, 200 };
	char path[] = "/tmp/kwitness-test-log.XXXXXX";
	char hash[KW_DIGEST_STR_MAX], rehash[KW_DIGEST_STR_MAX];
	struct kw_buf file = { 0 };
	struct kw_logwriter log;
	uint64_t count = 0;
	char *entry = malloc(9001);
	int fd = mkstemp(path);

	(void)state;
	assert_non_null(entry);
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	assert_int_equal(kw_logwriter_open(&log, path), 0);
	for (size_t k = 0; k < 40; k++) {
		size_t n = sizes[k % (sizeof(sizes) / sizeof(sizes[0]))];

		memset(entry, 'a' + (int)(k % 26), n);
		assert_int_equal(kw_logwriter_append(&log, entry, n), 0);
	}
	finish_log(&log, path, hash, &count, &file);
	assert_int_equal(count, 40);
	transcript_by_sha256sum(path, rehash);
	assert_string_equal(rehash, hash);
	kw_buf_free(&file);
	free(entry);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order_and_swapped),
		cmocka_unit_test(test_gap_skip_and_flush),
		cmocka_unit_test(test_skip_lost),
		cmocka_unit_test(test_growth_duplicates_and_limit),
		cmocka_unit_test(test_log_known_answer),
		cmocka_unit_test(test_log_reopen),
		cmocka_unit_test(test_log_resume_parts),
		cmocka_unit_test(test_log_events_large),
		cmocka_unit_test(test_log_own_entries),
		cmocka_unit_test(test_log_entry_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
