/* SPDX-License-Identifier: Apache-2.0 */
/* A subject's digest: an artifact may be large, so it is read as a stream. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "intoto.h"

/* SHA-256 of a file's content, read as a stream. */
int attest_file_sha256(const char *path, char out[KW_DIGEST_STR_MAX])
{
	/* O_NONBLOCK: a FIFO named by mistake must not hang the open. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), e = 0;
	struct kw_digest d;
	struct stat st;
	char buf[65536];
	ssize_t n;

	if (fd < 0)
		return -errno;
	/* An artifact is a file: a FIFO or a device would hang or never end. */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if ((e = kw_digest_init(&d, KW_SHA256))) {
		close(fd);
		return e;
	}
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (e = kw_digest_update(&d, buf, (size_t)n))) {
			e = e ?: -errno;
			break;
		}
	}
	close(fd);
	if (e) {
		kw_digest_free(&d);
		return e;
	}
	return kw_digest_final(&d, out);
}
