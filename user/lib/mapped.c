/* SPDX-License-Identifier: Apache-2.0 */
/* Input files mapped instead of copied, see mapped.h. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/mapped.h"

int kw_mapped_fd(int fd, size_t max, struct kw_mapped *m)
{
	struct stat st;
	void *p;

	memset(m, 0, sizeof(*m));
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		if ((unsigned long long)st.st_size > max)
			return -EFBIG;
		/* Private: what this process sees never changes under it by a
		 * write through this mapping; populated: one call faults it all. */
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
		if (p != MAP_FAILED) {
			m->map = p;
			m->map_len = (size_t)st.st_size;
			m->data = p;
			m->len = m->map_len;
			return 0;
		}
	}
	/* Not a mappable file (an empty size: a pipe, or a /proc file). */
	int e = kw_read_fd(fd, max, &m->buf);

	m->data = m->buf.data ? m->buf.data : "";
	m->len = m->buf.len;
	return e;
}

int kw_mapped_open(const char *path, size_t max, struct kw_mapped *m)
{
	int fd, e;

	memset(m, 0, sizeof(*m));
	if (!strcmp(path, "-"))
		return kw_mapped_fd(STDIN_FILENO, max, m);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = kw_mapped_fd(fd, max, m);
	close(fd);
	return e;
}

void kw_mapped_free(struct kw_mapped *m)
{
	if (m->map)
		munmap(m->map, m->map_len);
	kw_buf_free(&m->buf);
	memset(m, 0, sizeof(*m));
}

/* The guarded range of this thread, and where to go back to. */
static _Thread_local sigjmp_buf *guard_jump;
static _Thread_local const char *guard_lo, *guard_hi;

static void on_sigbus(int sig, siginfo_t *si, void *uctx)
{
	const char *a = si->si_addr;

	(void)uctx;
	if (guard_jump && a >= guard_lo && a < guard_hi)
		siglongjmp(*guard_jump, 1);
	/* Not ours: the default action, on the faulting instruction again. */
	signal(sig, SIG_DFL);
}

int kw_mapped_guard(const struct kw_mapped *m, int (*fn)(void *ctx), void *ctx)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER },
			 old;
	sigjmp_buf jump;
	volatile int ret;

	if (!m->map)
		return fn(ctx);
	if (sigaction(SIGBUS, &sa, &old) < 0)
		return -errno;
	guard_lo = m->map;
	guard_hi = guard_lo + m->map_len;
	if (sigsetjmp(jump, 1) == 0) {
		guard_jump = &jump;
		ret = fn(ctx);
	} else {
		ret = -ESTALE;
	}
	guard_jump = NULL;
	sigaction(SIGBUS, &old, NULL);
	return ret;
}
