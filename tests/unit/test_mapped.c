/* SPDX-License-Identifier: Apache-2.0 */
/* Input files mapped instead of copied (lib/mapped.h): the bytes, the bound,
 * the fallback for what cannot be mapped, and a file cut short while mapped
 * (SIGBUS) turned into an error. */
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

#include "lib/mapped.h"

static char path[] = "/tmp/kw-test-mapped.XXXXXX";

static int make_file(size_t n)
{
	int fd = mkstemp(path);
	char chunk[4096];

	assert_true(fd >= 0);
	for (size_t i = 0; i < sizeof(chunk); i++)
		chunk[i] = (char)('a' + i % 26);
	for (size_t done = 0; done < n;) {
		size_t k = n - done < sizeof(chunk) ? n - done : sizeof(chunk);

		assert_int_equal(write(fd, chunk, k), (ssize_t)k);
		done += k;
	}
	return fd;
}

static void test_mapped_file(void **state)
{
	struct kw_mapped m;
	int fd = make_file(3 * 4096 + 5);

	(void)state;
	assert_int_equal(kw_mapped_open(path, 1 << 20, &m), 0);
	assert_non_null(m.map);
	assert_int_equal(m.len, 3 * 4096 + 5);
	assert_int_equal(m.data[0], 'a');
	assert_int_equal(m.data[m.len - 1], (char)('a' + (4096 * 3 + 4) % 4096 % 26));
	kw_mapped_free(&m);
	/* the bound holds for a mapped file as for a read one */
	assert_int_equal(kw_mapped_open(path, 4096, &m), -EFBIG);
	kw_mapped_free(&m);
	/* an empty file: nothing to map, zero bytes */
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(kw_mapped_open(path, 4096, &m), 0);
	assert_null(m.map);
	assert_int_equal(m.len, 0);
	kw_mapped_free(&m);
	close(fd);
	unlink(path);
	strcpy(path, "/tmp/kw-test-mapped.XXXXXX");
}

static void test_mapped_pipe(void **state)
{
	struct kw_mapped m;
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "{\"a\":1}", 7), 7);
	close(p[1]);
	assert_int_equal(kw_mapped_fd(p[0], 100, &m), 0);
	assert_null(m.map);
	assert_int_equal(m.len, 7);
	assert_memory_equal(m.data, "{\"a\":1}", 7);
	kw_mapped_free(&m);
	close(p[0]);
}

struct reader {
	const struct kw_mapped *m;
	int fd;
	unsigned sum;
};

/* Cuts the file short under the mapping, then reads its last page. */
static int read_after_cut(void *ctx)
{
	struct reader *r = ctx;
	volatile const char *last = r->m->data + r->m->len - 1;

	assert_int_equal(ftruncate(r->fd, 0), 0);
	r->sum += (unsigned char)*last;
	return 0;
}

static int read_all(void *ctx)
{
	struct reader *r = ctx;

	for (size_t i = 0; i < r->m->len; i++)
		r->sum += (unsigned char)r->m->data[i];
	return 7;
}

static void test_mapped_cut_short(void **state)
{
	struct kw_mapped m;
	int fd = make_file(8 * 4096);
	struct reader r = { &m, fd, 0 };

	(void)state;
	assert_int_equal(kw_mapped_open(path, 1 << 20, &m), 0);
	assert_non_null(m.map);
	/* an untouched file: fn's own result */
	assert_int_equal(kw_mapped_guard(&m, read_all, &r), 7);
	assert_true(r.sum > 0);
	/* cut short while read: an error, not a crash */
	assert_int_equal(kw_mapped_guard(&m, read_after_cut, &r), -ESTALE);
	kw_mapped_free(&m);
	close(fd);
	unlink(path);
	strcpy(path, "/tmp/kw-test-mapped.XXXXXX");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mapped_file),
		cmocka_unit_test(test_mapped_pipe),
		cmocka_unit_test(test_mapped_cut_short),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
