/* SPDX-License-Identifier: Apache-2.0 */
/* Growable byte buffer, bounded whole-file reads and atomic file writes. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"

void *kw_array_grow(void *items, size_t *cap, size_t size, size_t first)
{
	size_t n = *cap ? *cap * 2 : first;
	void *p;

	if (n < *cap || !size || n > SIZE_MAX / size)
		return NULL;
	p = realloc(items, n * size);
	if (p)
		*cap = n;
	return p;
}

int kw_buf_reserve(struct kw_buf *b, size_t extra)
{
	/* +1 keeps room for the terminating NUL. */
	if (extra > SIZE_MAX - b->len - 1)
		return -ENOMEM;
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need) {
		if (cap > SIZE_MAX / 2) {
			cap = need;
			break;
		}
		cap *= 2;
	}
	char *p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int kw_buf_append(struct kw_buf *b, const void *p, size_t n)
{
	int rc = kw_buf_reserve(b, n);
	if (rc)
		return rc;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int kw_buf_puts(struct kw_buf *b, const char *s)
{
	return kw_buf_append(b, s, strlen(s));
}

int kw_buf_putc(struct kw_buf *b, char c)
{
	return kw_buf_append(b, &c, 1);
}

void kw_buf_reset(struct kw_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void kw_buf_free(struct kw_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int kw_read_fd(int fd, size_t max, struct kw_buf *out)
{
	size_t start = out->len;
	int rc;
	for (;;) {
		rc = kw_buf_reserve(out, 65536);
		if (rc)
			goto fail;
		size_t room = out->cap - out->len - 1;
		/* Read one byte past max so an oversized file is noticed. */
		size_t want = out->len - start + room > max + 1 ? max + 1 - (out->len - start) : room;
		ssize_t n = read(fd, out->data + out->len, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			goto fail;
		}
		if (n == 0)
			break;
		out->len += (size_t)n;
		if (out->len - start > max) {
			rc = -EFBIG;
			goto fail;
		}
	}
	if (kw_buf_reserve(out, 0))
		return -ENOMEM;
	out->data[out->len] = '\0';
	return 0;
fail:
	out->len = start;
	if (out->data)
		out->data[start] = '\0';
	return rc;
}

int kw_read_file(const char *path, size_t max, struct kw_buf *out)
{
	if (!strcmp(path, "-"))
		return kw_read_fd(STDIN_FILENO, max, out);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (unsigned long long)st.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	int rc = kw_read_fd(fd, max, out);
	close(fd);
	return rc;
}

int kw_read_regular_file(const char *path, size_t max, struct kw_buf *out)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	int rc;
	if (fstat(fd, &st) < 0)
		rc = -errno;
	else if (!S_ISREG(st.st_mode))
		rc = -EINVAL;
	else if ((unsigned long long)st.st_size > max)
		rc = -EFBIG;
	else
		rc = kw_read_fd(fd, max, out);
	close(fd);
	return rc;
}

int kw_open_regular_at(int dirfd, const char *name)
{
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EBADFD;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

int kw_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	bool sock = true;

	while (len) {
		/* send() so a peer that went away is EPIPE, not SIGPIPE */
		ssize_t n = sock ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (sock && errno == ENOTSOCK) {
				sock = false;
				continue;
			}
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The folder of path, for its fsync. */
static int parent_dir(const char *path, char dir[PATH_MAX])
{
	const char *slash = strrchr(path, '/');

	if (!slash) {
		strcpy(dir, ".");
		return 0;
	}
	size_t dl = slash == path ? 1 : (size_t)(slash - path);
	if (dl >= PATH_MAX)
		return -ENAMETOOLONG;
	memcpy(dir, path, dl);
	dir[dl] = '\0';
	return 0;
}

static int sync_dir(const char *dir)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

	if (dfd < 0)
		return -errno;
	if (fsync(dfd) < 0)
		rc = -errno;
	close(dfd);
	return rc;
}

static int write_file_replace(const char *path, const void *data, size_t len, unsigned mode,
			      bool sync)
{
	char dir[PATH_MAX], tmp[PATH_MAX];
	int rc = parent_dir(path, dir);

	if (rc)
		return rc;
	int n = snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;

	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, mode & 07777) < 0)
		rc = -errno;
	if (!rc)
		rc = kw_write_all(fd, data, len);
	if (!rc && sync && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return rc;
	}
	/* The rename is durable only once the directory itself is synced. */
	return sync ? sync_dir(dir) : 0;
}

int kw_write_file_atomic(const char *path, const void *data, size_t len, unsigned mode)
{
	return write_file_replace(path, data, len, mode, true);
}

int kw_write_file_replace(const char *path, const void *data, size_t len, unsigned mode)
{
	return write_file_replace(path, data, len, mode, false);
}

int kw_sync_file(const char *path)
{
	char dir[PATH_MAX];
	int fd, rc = parent_dir(path, dir);

	if (rc)
		return rc;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		rc = -errno;
	close(fd);
	return rc ? rc : sync_dir(dir);
}
