/* SPDX-License-Identifier: Apache-2.0 */
/* Log segments: the manifest line's form and what it refuses; a log split
 * here at random line boundaries streams through kw_log_check to the
 * transcript hash of the unsplit lines (SHA-256 of the array, computed
 * here), holding at most the manifest and one segment open at a time; a
 * segment removed, reordered, changed, unlisted, and the manifest removed
 * or out of order, each give their own reason. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <openssl/sha.h>

#include "lib/buf.h"
#include "trace/logsegment.h"
#include "trace/logverify.h"

#define N_LINES 400
#define LOG_NAME "s.jsonl"

static char dir[64];
static uint64_t nseg;

static void hex_of(const unsigned char *md, char out[KW_DIGEST_STR_MAX])
{
	strcpy(out, "sha256:");
	for (int i = 0; i < 32; i++)
		sprintf(out + 7 + 2 * i, "%02x", md[i]);
}

static void put_file(const char *name, const char *data, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* N_LINES canonical lines cut into segments of 1..40 lines; the manifest
 * lists them all but, with leave_tail, the last. The transcript hash of the
 * unsplit lines goes to want. */
static void make_log(bool leave_tail, char want[KW_DIGEST_STR_MAX])
{
	struct kw_buf all = { 0 }, seg = { 0 }, man = { 0 };
	unsigned char md[SHA256_DIGEST_LENGTH];
	uint64_t lines = 0;
	unsigned cut = 0;

	snprintf(dir, sizeof(dir), "/tmp/kw-segtest-XXXXXX");
	assert_non_null(mkdtemp(dir));
	nseg = 0;
	srand(7);
	assert_int_equal(kw_buf_putc(&all, '['), 0);
	for (int i = 0; i < N_LINES; i++) {
		char line[64];
		int n = snprintf(line, sizeof(line), "{\"i\":%d,\"pad\":\"%0*d\"}", i, rand() % 20 + 1, 0);

		assert_int_equal(kw_buf_append(&all, line, (size_t)n), 0);
		assert_int_equal(kw_buf_putc(&all, i + 1 < N_LINES ? ',' : ']'), 0);
		assert_int_equal(kw_buf_append(&seg, line, (size_t)n), 0);
		assert_int_equal(kw_buf_putc(&seg, '\n'), 0);
		lines++;
		if (!cut)
			cut = (unsigned)(rand() % 40) + 1;
		if (--cut == 0 || i + 1 == N_LINES) {
			struct kw_segment s = { .n = ++nseg, .bytes = seg.len, .lines = lines };
			char name[64];

			SHA256((const unsigned char *)seg.data, seg.len, md);
			hex_of(md, s.sha256);
			kw_segment_name(name, sizeof(name), LOG_NAME, s.n);
			put_file(name, seg.data, seg.len);
			if (!(leave_tail && i + 1 == N_LINES)) {
				assert_int_equal(kw_segment_line(&s, &man), 0);
				assert_int_equal(kw_buf_putc(&man, '\n'), 0);
			}
			kw_buf_reset(&seg);
			lines = 0;
		}
	}
	put_file(LOG_NAME KW_SEGMENT_MANIFEST_SUFFIX, man.data, man.len);
	SHA256((const unsigned char *)all.data, all.len, md);
	hex_of(md, want);
	kw_buf_free(&all);
	kw_buf_free(&seg);
	kw_buf_free(&man);
}

static void remove_log(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

struct watch {
	int base, most;
};

static int count_fds(void *ctx, const char *line, size_t len)
{
	struct watch *w = ctx;
	int n = open_fds() - w->base;

	(void)line;
	(void)len;
	if (n > w->most)
		w->most = n;
	return 0;
}

/* Streams the log in dir; returns the check's problem, its hash in got. */
static enum kw_verify_reason check(char got[KW_DIGEST_STR_MAX], uint64_t *lines, struct watch *w)
{
	struct kw_log_check c = { 0 };
	char path[256];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY), fd;
	enum kw_verify_reason r;

	assert_true(dfd >= 0);
	snprintf(path, sizeof(path), "%s/%s", dir, LOG_NAME);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	c.seg_dirfd = dfd;
	c.seg_log = LOG_NAME;
	if (w) {
		w->base = open_fds();
		c.on_entry = count_fds;
		c.entry_ctx = w;
	}
	assert_int_equal(kw_log_check_init(&c), 0);
	assert_int_equal(kw_log_check_fd(&c, fd), 0);
	r = c.problem;
	snprintf(got, KW_DIGEST_STR_MAX, "%s", c.hash);
	if (lines)
		*lines = c.lines;
	kw_log_check_free(&c);
	close(fd);
	close(dfd);
	return r;
}

static void test_manifest_line(void **state)
{
	static const char sha[] = "sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
	struct kw_segment s = { .n = 3, .bytes = 4090, .lines = 17 }, back;
	struct kw_buf line = { 0 };
	const char *bad[] = {
		"{\"bytes\":1,\"lines\":1,\"n\":1,\"sha256\":\"%s\"}",
		"{\"bytes\":1,\"lines\":1,\"n\":0,\"sha256\":\"%s\",\"type\":\"kwitness.segment\"}",
		"{\"bytes\":-1,\"lines\":1,\"n\":1,\"sha256\":\"%s\",\"type\":\"kwitness.segment\"}",
		"{\"bytes\":1, \"lines\":1,\"n\":1,\"sha256\":\"%s\",\"type\":\"kwitness.segment\"}",
		"{\"lines\":1,\"bytes\":1,\"n\":1,\"sha256\":\"%s\",\"type\":\"kwitness.segment\"}",
		"{\"bytes\":1,\"lines\":1,\"n\":1,\"sha256\":\"%s\",\"type\":\"kwitness.segment\",\"x\":1}",
		"{\"bytes\":1,\"lines\":1,\"n\":1,\"sha256\":\"%sA\",\"type\":\"kwitness.segment\"}",
		"{\"bytes\":1,\"lines\":1,\"n\":1,\"sha256\":\"%s\",\"type\":\"kwitness.checkpoint\"}",
		"{\"bytes\":1.5,\"lines\":1,\"n\":1,\"sha256\":\"%s\",\"type\":\"kwitness.segment\"}",
		"[\"%s\"]",
	};
	char text[600];

	(void)state;
	strcpy(s.sha256, sha);
	assert_int_equal(kw_segment_line(&s, &line), 0);
	snprintf(text, sizeof(text), "{\"bytes\":4090,\"lines\":17,\"n\":3,\"sha256\":\"%s\","
		 "\"type\":\"kwitness.segment\"}", sha);
	assert_string_equal(line.data, text);
	assert_int_equal(kw_segment_read(line.data, line.len, &back), 0);
	assert_int_equal(back.n, 3);
	assert_int_equal(back.bytes, 4090);
	assert_int_equal(back.lines, 17);
	assert_string_equal(back.sha256, sha);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), bad[i], sha);
		assert_int_equal(kw_segment_read(text, strlen(text), &back), -EINVAL);
	}
	memset(text, ' ', sizeof(text));
	assert_int_equal(kw_segment_read(text, sizeof(text), &back), -EINVAL);
	assert_int_equal(kw_segment_name(text, sizeof(text), "a/b.jsonl", 1), 0);
	assert_string_equal(text, "a/b.jsonl");
	assert_int_equal(kw_segment_name(text, sizeof(text), "a/b.jsonl", 12), 0);
	assert_string_equal(text, "a/b.jsonl.12");
	assert_int_equal(kw_segment_name(text, 5, "a/b.jsonl", 12), -ENAMETOOLONG);
	kw_buf_free(&line);
}

static void test_streams_across(void **state)
{
	char want[KW_DIGEST_STR_MAX], got[KW_DIGEST_STR_MAX];
	struct watch w = { 0 };
	uint64_t lines;

	(void)state;
	make_log(false, want);
	assert_true(nseg >= 15);
	assert_int_equal(check(got, &lines, &w), KW_VERIFY_OK);
	assert_string_equal(got, want);
	assert_int_equal(lines, N_LINES);
	/* the manifest and one segment at a time, however many segments */
	assert_true(w.most <= 2);
	remove_log();
	/* a session still writing: its last segment is not listed yet */
	make_log(true, want);
	assert_int_equal(check(got, &lines, NULL), KW_VERIFY_OK);
	assert_string_equal(got, want);
	assert_int_equal(lines, N_LINES);
	remove_log();
}

static void sh(const char *fmt, ...)
{
	char cmd[512], inner[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(inner, sizeof(inner), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "cd %s && %s", dir, inner);
	assert_int_equal(system(cmd), 0);
}

static void test_reasons(void **state)
{
	char want[KW_DIGEST_STR_MAX], got[KW_DIGEST_STR_MAX];
	static const struct {
		const char *how;
		enum kw_verify_reason r;
	} cases[] = {
		{ "rm " LOG_NAME ".3", KW_VERIFY_SEGMENT_MISSING },
		{ "mv " LOG_NAME ".2 x && mv " LOG_NAME ".3 " LOG_NAME ".2 && mv x " LOG_NAME ".3",
		  KW_VERIFY_SEGMENT_REORDERED },
		{ "sed -i '1s/\"i\":/\"j\":/' " LOG_NAME ".4", KW_VERIFY_SEGMENT_MISMATCH },
		{ "printf '{\"i\":9999}\\n' >>" LOG_NAME ".5", KW_VERIFY_SEGMENT_MISMATCH },
		{ "rm " LOG_NAME ".segments", KW_VERIFY_SEGMENT_MANIFEST_MISSING },
		{ "sed -i '2{h;d};3G' " LOG_NAME ".segments", KW_VERIFY_SEGMENT_MANIFEST_MALFORMED },
		{ "sed -i '2s/\"bytes\":/\"bytes\": /' " LOG_NAME ".segments",
		  KW_VERIFY_SEGMENT_MANIFEST_MALFORMED },
		{ "sed -i '$d' " LOG_NAME ".segments && n=$(wc -l <" LOG_NAME ".segments) && rm " LOG_NAME
		  ".$n && sed -i '$d' " LOG_NAME ".segments", KW_VERIFY_SEGMENT_UNLISTED },
		/* a torn last manifest line (a power loss) lists nothing: its segment is the tail */
		{ "truncate -s -9 " LOG_NAME ".segments", KW_VERIFY_OK },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		make_log(false, want);
		sh("%s", cases[i].how);
		if (check(got, NULL, NULL) != cases[i].r)
			fail_msg("%s: reason %d, want %d", cases[i].how, (int)check(got, NULL, NULL),
				 (int)cases[i].r);
		if (cases[i].r == KW_VERIFY_OK)
			assert_string_equal(got, want);
		remove_log();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manifest_line),
		cmocka_unit_test(test_streams_across),
		cmocka_unit_test(test_reasons),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
