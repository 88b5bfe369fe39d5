/* SPDX-License-Identifier: Apache-2.0 */
/* The checkpoints' transparency proofs read back (verify/checkpoint_tlog.c):
 * kwitness verify reads LOG.checkpoints and LOG.checkpoints.tlog-proofs,
 * which anyone with root on the host could have edited. Input: a tlog
 * policy, NUL, the checkpoints file, NUL, the proofs file. Any bytes: no
 * crash, no overread, no leak; a verdict exactly when a proof is present,
 * and the invalid count the failed verdicts reported. Seeds: a real
 * session's first checkpoints and proofs (tests/kernel/
 * test_kwitnessd_checkpoint_tlog.sh), whole, swapped and one missing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verify/checkpoint_tlog.h"

struct seen {
	uint64_t calls, failed;
};

static void each(void *ctx, uint64_t n, bool present, const struct tlog_verdict *v)
{
	struct seen *s = ctx;

	(void)n;
	s->calls++;
	if (present != (v != NULL))
		abort();
	s->failed += present && v->step;
}

/* A memfd holding p[0..n), its /proc path in path. */
static int file_of(const uint8_t *p, size_t n, char path[64])
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n))
		abort();
	snprintf(path, 64, "/proc/self/fd/%d", fd);
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *a = memchr(data, 0, size), *b;
	struct tlog_policy pol;
	struct seen s = { 0 };
	char cpath[64], ppath[64], err[256], why[256];
	uint64_t invalid;
	int cfd, pfd;

	if (!a || !(b = memchr(a + 1, 0, size - (size_t)(a + 1 - data))))
		return 0;
	if (tlog_policy_parse((const char *)data, (size_t)(a - data), &pol, why, sizeof(why)))
		return 0;
	cfd = file_of(a + 1, (size_t)(b - a - 1), cpath);
	pfd = file_of(b + 1, size - (size_t)(b + 1 - data), ppath);
	if (!verify_ckpt_tlog(&pol, cpath, ppath, each, &s, &invalid, err, sizeof(err)) &&
	    invalid != s.failed)
		abort();
	close(cfd);
	close(pfd);
	tlog_policy_free(&pol);
	return 0;
}
