/* SPDX-License-Identifier: Apache-2.0 */
/* Rolling a session log into segments on the I/O worker, see segwrite.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/digest.h"
#include "trace/logsegment.h"
#include "segwrite.h"
#include "worker.h"

struct kwd_seg {
	char *log;          /* segment 1's path */
	uint64_t limit;
	struct kw_segment cur; /* n, bytes, lines of the segment being written */
	struct kw_digest sha;  /* of its bytes */
	dev_t dev;          /* its file: a registration whose fd now names */
	ino_t ino;          /* another file is stale */
	int mfd;            /* the manifest, -1 until the first roll */
};

struct kwd_segs {
	struct kwd_seg **by_fd;
	size_t cap;
};

int kwd_segs_request(struct kwd *d, int fd, const char *path, uint64_t n, uint64_t limit)
{
	struct kwd_job *job = calloc(1, sizeof(*job));

	if (!job || !(job->path = strdup(path))) {
		free(job);
		return -ENOMEM;
	}
	job->kind = KWD_JOB_SEGMENTS;
	job->fd = fd;
	job->len = (size_t)limit;
	job->seg_n = n;
	kwd_worker_submit(d, job);
	return 0;
}

static void seg_free(struct kwd_seg *s)
{
	if (!s)
		return;
	kw_digest_free(&s->sha);
	if (s->mfd >= 0)
		close(s->mfd);
	free(s->log);
	free(s);
}

static int note_file(struct kwd_seg *s, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	return 0;
}

/* What the segment already holds (the open entry, which the loop wrote
 * before the first chunk; a resumed log's lines) belongs to it: read back
 * through its path (the log's descriptor may be write-only), which must
 * still be that file. */
static int take_in(struct kwd_seg *s)
{
	char buf[16384], path[4300];
	struct stat st;
	ssize_t r;
	int e = 0, fd;

	if (kw_segment_name(path, sizeof(path), s->log, s->cur.n))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_dev != s->dev || st.st_ino != s->ino)
		e = -ESTALE;
	while (!e && (r = read(fd, buf, sizeof(buf))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		e = r < 0 ? -errno : kwd_seg_wrote(s, buf, (size_t)r);
	}
	close(fd);
	return e;
}

/* A resumed log's manifest, appended to from the next cut on (the first cut
 * of a log makes it). */
static int open_manifest(struct kwd_seg *s)
{
	char path[4300];

	snprintf(path, sizeof(path), "%s%s", s->log, KW_SEGMENT_MANIFEST_SUFFIX);
	s->mfd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	return s->mfd >= 0 || errno == ENOENT ? 0 : -errno;
}

int kwd_segs_add(struct kwd_segs **t, int fd, const char *path, uint64_t n, uint64_t limit)
{
	struct kwd_seg *s;
	int e;

	if (fd < 0 || n < 1 || limit < KW_SEGMENT_BYTES_MIN)
		return -EINVAL;
	if (!*t && !(*t = calloc(1, sizeof(**t))))
		return -ENOMEM;
	if ((size_t)fd >= (*t)->cap) {
		size_t cap = (size_t)fd * 2 + 16;
		struct kwd_seg **grown = realloc((*t)->by_fd, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		memset(grown + (*t)->cap, 0, (cap - (*t)->cap) * sizeof(*grown));
		(*t)->by_fd = grown;
		(*t)->cap = cap;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->mfd = -1;
	s->limit = limit;
	s->cur.n = n;
	s->log = strdup(path);
	e = s->log ? kw_digest_init(&s->sha, KW_SHA256) : -ENOMEM;
	e = e ?: open_manifest(s);
	e = e ?: note_file(s, fd);
	e = e ?: take_in(s);
	if (e) {
		seg_free(s);
		return e;
	}
	seg_free((*t)->by_fd[fd]);
	(*t)->by_fd[fd] = s;
	return 0;
}

struct kwd_seg *kwd_segs_get(struct kwd_segs *t, int fd)
{
	struct kwd_seg *s;
	struct stat st;

	if (!t || fd < 0 || (size_t)fd >= t->cap || !(s = t->by_fd[fd]))
		return NULL;
	/* a session that ended without a seal left its registration behind */
	if (fstat(fd, &st) < 0 || st.st_dev != s->dev || st.st_ino != s->ino) {
		seg_free(s);
		t->by_fd[fd] = NULL;
		return NULL;
	}
	return s;
}

size_t kwd_seg_room(const struct kwd_seg *s, const char *data, size_t len)
{
	size_t room = s->cur.bytes < s->limit ? (size_t)(s->limit - s->cur.bytes) : 0;
	const char *nl;

	if (len <= room)
		return len;
	nl = room ? memrchr(data, '\n', room) : NULL;
	if (nl)
		return (size_t)(nl - data) + 1;
	if (s->cur.bytes)
		return 0;
	nl = memchr(data, '\n', len); /* one line longer than the bound */
	return nl ? (size_t)(nl - data) + 1 : len;
}

int kwd_seg_wrote(struct kwd_seg *s, const char *data, size_t len)
{
	const char *p = data, *end = data + len;

	while (p < end && (p = memchr(p, '\n', (size_t)(end - p)))) {
		s->cur.lines++;
		p++;
	}
	s->cur.bytes += len;
	return kw_digest_update(&s->sha, data, len);
}

int kwd_sync_dir_of(const char *path)
{
	char *copy = strdup(path);
	int fd, e = 0;

	if (!copy)
		return -ENOMEM;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(copy);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		e = -errno;
	close(fd);
	return e;
}

/* The current segment's manifest line, appended and synced. */
static int list_current(struct kwd_seg *s)
{
	struct kw_buf line = { 0 };
	char path[4300];
	int e;

	e = kw_digest_final(&s->sha, s->cur.sha256);
	if (e)
		return e;
	if (s->mfd < 0) {
		snprintf(path, sizeof(path), "%s%s", s->log, KW_SEGMENT_MANIFEST_SUFFIX);
		s->mfd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
		if (s->mfd < 0)
			return -errno;
		e = kwd_sync_dir_of(path);
		if (e)
			return e;
	}
	e = kw_segment_line(&s->cur, &line);
	e = e ?: kw_buf_putc(&line, '\n');
	e = e ?: kw_write_all(s->mfd, line.data, line.len);
	if (!e && fsync(s->mfd) < 0)
		e = -errno;
	kw_buf_free(&line);
	return e;
}

int kwd_seg_roll(struct kwd_seg *s, int fd)
{
	char path[4300];
	int nfd, e;

	/* the segment is whole on disk before the manifest names it */
	if (fsync(fd) < 0)
		return -errno;
	e = list_current(s);
	if (e)
		return e;
	if (kw_segment_name(path, sizeof(path), s->log, s->cur.n + 1))
		return -ENAMETOOLONG;
	nfd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (nfd < 0)
		return -errno;
	e = kwd_sync_dir_of(path);
	if (!e && dup3(nfd, fd, O_CLOEXEC) < 0)
		e = -errno;
	close(nfd);
	e = e ?: note_file(s, fd);
	e = e ?: kw_digest_init(&s->sha, KW_SHA256);
	if (e)
		return e;
	s->cur.n++;
	s->cur.bytes = s->cur.lines = 0;
	return 0;
}

int kwd_segs_dup(struct kwd_segs *t, int fd)
{
	return kwd_segs_get(t, fd) ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
}

int kwd_segs_finish(struct kwd_segs *t, int fd)
{
	struct kwd_seg *s = kwd_segs_get(t, fd);
	int e = 0;

	if (!s)
		return 0;
	if (s->cur.n > 1 || s->mfd >= 0) {
		e = fsync(fd) < 0 ? -errno : 0;
		e = e ?: list_current(s);
	}
	seg_free(s);
	t->by_fd[fd] = NULL;
	return e;
}

void kwd_segs_free(struct kwd_segs *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->cap; i++)
		seg_free(t->by_fd[i]);
	free(t->by_fd);
	free(t);
}
