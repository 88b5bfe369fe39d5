/* SPDX-License-Identifier: Apache-2.0 */
/* State folder access, see statedir.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "kwitness/buf.h"
#include "kwitness/statedir.h"

bool kw_is_record_name(const char *name)
{
	size_t n = strlen(name);

	if (n != KW_SESSION_ID_LEN + 5 || strcmp(name + KW_SESSION_ID_LEN, ".json"))
		return false;
	for (size_t i = 0; i < KW_SESSION_ID_LEN; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return false;
	return true;
}

void kw_state_dir_close(struct kw_state_dir *s)
{
	int *fds[] = { &s->records, &s->logs, &s->policies, &s->evidence };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

static int sub(int fd, const char *name)
{
	return openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int kw_state_dir_open(const char *path, struct kw_state_dir *s)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), e;

	s->records = s->logs = s->policies = s->evidence = -1;
	if (fd < 0)
		return -errno;
	s->records = sub(fd, "records");
	e = s->records < 0 ? -errno : 0;
	s->logs = sub(fd, "logs");
	s->policies = sub(fd, "policies");
	s->evidence = sub(fd, "evidence");
	close(fd);
	return e;
}

int kw_state_open_file(int dirfd, const char *name)
{
	return dirfd < 0 ? -ENOENT : kw_open_regular_at(dirfd, name);
}

const char *kw_state_open_error(int e)
{
	switch (e) {
	case -ELOOP: return "it is a symbolic link, which is not followed";
	case -EBADFD: return "not a regular file";
	case -EFBIG: return "larger than any the collector writes";
	default: return strerror(-e);
	}
}
