/* SPDX-License-Identifier: Apache-2.0 */
/* A subject's digest: an artifact may be large, so it is read as a stream. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "intoto.h"

/* SHA-256 of a file's content, read as a stream. */
int attest_file_sha256(const char *path, char out[KW_DIGEST_STR_MAX])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), e = 0;
	struct kw_digest d;
	char buf[65536];
	ssize_t n;

	if (fd < 0)
		return -errno;
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
