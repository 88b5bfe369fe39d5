/* SPDX-License-Identifier: Apache-2.0 */
/* kw_buf growth, bounded whole-file reads (files, stdin, pipes) and atomic
 * file replacement. */
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/buf.h"

static void test_buf_and_files(void **state)
{
	(void)state;
	struct kw_buf b = {0};
	assert_int_equal(kw_buf_append(&b, "", 0), 0);
	assert_non_null(b.data);
	assert_string_equal(b.data, "");
	for (int i = 0; i < 1000; i++)
		assert_int_equal(kw_buf_puts(&b, "abc"), 0);
	assert_int_equal(b.len, 3000);
	assert_int_equal(kw_buf_putc(&b, '!'), 0);
	assert_int_equal(b.data[3000], '!');
	assert_int_equal(b.data[3001], '\0');
	assert_int_equal(kw_buf_reserve(&b, SIZE_MAX), -ENOMEM);
	assert_int_equal(b.len, 3001);
	kw_buf_reset(&b);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.data, "");

	char dir[] = "/tmp/kw-buf-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[128];
	snprintf(path, sizeof(path), "%s/file.json", dir);
	assert_int_equal(kw_write_file_atomic(path, "hello world", 11, 0640), 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	assert_int_equal(kw_read_file(path, 11, &b), 0);
	assert_int_equal(b.len, 11);
	assert_string_equal(b.data, "hello world");
	kw_buf_reset(&b);
	assert_int_equal(kw_read_file(path, 10, &b), -EFBIG);
	assert_int_equal(b.len, 0);
	/* Replaced whole, not appended. */
	assert_int_equal(kw_write_file_atomic(path, "new", 3, 0600), 0);
	assert_int_equal(kw_read_file(path, 100, &b), 0);
	assert_string_equal(b.data, "new");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* A large file crosses the read chunks; max is exact. */
	char *big = malloc(200000);
	memset(big, 'x', 200000);
	assert_int_equal(kw_write_file_atomic(path, big, 200000, 0600), 0);
	kw_buf_reset(&b);
	assert_int_equal(kw_read_file(path, 200000, &b), 0);
	assert_int_equal(b.len, 200000);
	assert_memory_equal(b.data, big, 200000);
	kw_buf_reset(&b);
	/* A pipe has no size up front: the bound is found while reading. */
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "%s/fifo", dir);
	assert_int_equal(kw_read_file(cmd, 10, &b), -ENOENT);
	free(big);
	/* No temporary file is left behind. */
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	assert_int_equal(n, 1);
	assert_int_equal(kw_write_file_atomic("/nonexistent-dir/x", "a", 1, 0600), -ENOENT);
	/* Without the fsyncs: the same file, whole, with its mode; then synced. */
	assert_int_equal(kw_write_file_replace(path, "replaced", 8, 0640), 0);
	assert_int_equal(kw_read_file(path, 100, &b), 0);
	assert_string_equal(b.data, "replaced");
	kw_buf_reset(&b);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	assert_int_equal(kw_sync_file(path), 0);
	assert_int_equal(kw_sync_file("/nonexistent-dir/x"), -ENOENT);
	{
		char link[160];

		snprintf(link, sizeof(link), "%s/link", dir);
		assert_int_equal(symlink(path, link), 0);
		assert_int_equal(kw_sync_file(link), -ELOOP);
		unlink(link);
	}
	d = opendir(dir);
	n = 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	assert_int_equal(n, 1);
	unlink(path);
	rmdir(dir);
	kw_buf_free(&b);
}

/* "-" reads standard input, with the same bound: a pipe has no size up
 * front, so the bound is found while reading. */
static void test_read_stdin_pipe(void **state)
{
	(void)state;
	int saved = dup(STDIN_FILENO);
	assert_true(saved >= 0);
	for (int round = 0; round < 2; round++) {
		int fds[2];
		assert_int_equal(pipe(fds), 0);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(fds[0]);
			char block[4096];
			memset(block, 'p', sizeof(block));
			for (int i = 0; i < 50; i++) /* 204800 bytes */
				if (write(fds[1], block, sizeof(block)) != (ssize_t)sizeof(block))
					_exit(1);
			_exit(0);
		}
		close(fds[1]);
		assert_int_equal(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
		close(fds[0]);
		struct kw_buf b = {0};
		if (round == 0) {
			assert_int_equal(kw_read_file("-", 204800, &b), 0);
			assert_int_equal(b.len, 204800);
			assert_int_equal(b.data[204799], 'p');
			assert_int_equal(b.data[204800], '\0');
		} else {
			assert_int_equal(kw_read_file("-", 100000, &b), -EFBIG);
			assert_int_equal(b.len, 0);
		}
		kw_buf_free(&b);
		/* Drain so the writer never blocks, then reap it. */
		char sink[4096];
		while (read(STDIN_FILENO, sink, sizeof(sink)) > 0)
			;
		int status;
		assert_int_equal(waitpid(pid, &status, 0), pid);
	}
	assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
	close(saved);
}

/* Appending to a buffer that already holds data keeps it; reading a
 * directory fails cleanly. */
static void test_read_appends(void **state)
{
	(void)state;
	char path[] = "/tmp/kw-buf-app-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "world", 5), 5);
	close(fd);
	struct kw_buf b = {0};
	assert_int_equal(kw_buf_puts(&b, "hello "), 0);
	assert_int_equal(kw_read_file(path, 5, &b), 0);
	assert_string_equal(b.data, "hello world");
	/* On failure the earlier contents stay. */
	assert_int_equal(kw_read_file(path, 4, &b), -EFBIG);
	assert_string_equal(b.data, "hello world");
	assert_int_equal(kw_read_file("/", 100, &b), -EISDIR);
	assert_string_equal(b.data, "hello world");
	unlink(path);
	kw_buf_free(&b);
	kw_buf_free(&b); /* twice is harmless */
}

/* An array grown item by item keeps its items, doubles from first, and a
 * size that would overflow leaves it as it was. */
static void test_array_grow(void **state)
{
	uint32_t *a = NULL, *p;
	size_t n = 0, cap = 0, caps[8], ncaps = 0;

	(void)state;
	for (uint32_t i = 0; i < 1000; i++) {
		if (n == cap) {
			p = kw_array_grow(a, &cap, sizeof(*a), 16);
			assert_non_null(p);
			a = p;
			caps[ncaps++] = cap;
		}
		a[n++] = i * 7;
	}
	assert_int_equal(ncaps, 7);
	assert_int_equal(caps[0], 16);
	assert_int_equal(caps[6], 1024);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(a[i], i * 7);
	cap = SIZE_MAX / 2 + 1;
	assert_null(kw_array_grow(a, &cap, 1, 16));
	assert_int_equal(cap, SIZE_MAX / 2 + 1);
	cap = 1024;
	assert_null(kw_array_grow(a, &cap, SIZE_MAX / 1024, 16));
	assert_int_equal(cap, 1024);
	assert_int_equal(a[999], 999 * 7); /* still a's */
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_and_files),
		cmocka_unit_test(test_read_stdin_pipe),
		cmocka_unit_test(test_read_appends),
		cmocka_unit_test(test_array_grow),
	};
	return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}
