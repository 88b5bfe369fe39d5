/* SPDX-License-Identifier: Apache-2.0 */
/* State folder access, see statedir.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"
#include "policy/policy.h"
#include "trace/record.h"
#include "trace/statedir.h"

static bool session_id_prefix(const char *s)
{
	for (size_t i = 0; i < KW_SESSION_ID_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

bool kw_is_session_id(const char *s)
{
	return strlen(s) == KW_SESSION_ID_LEN && session_id_prefix(s);
}

bool kw_is_record_name(const char *name)
{
	size_t n = strlen(name);

	return n == KW_SESSION_ID_LEN + 5 && !strcmp(name + KW_SESSION_ID_LEN, ".json") &&
	       session_id_prefix(name);
}

void kw_state_dir_close(struct kw_state_dir *s)
{
	int *fds[] = { &s->records, &s->logs, &s->policies, &s->evidence, &s->commit };

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

	s->records = s->logs = s->policies = s->evidence = s->commit = -1;
	if (fd < 0)
		return -errno;
	s->records = sub(fd, "records");
	e = s->records < 0 ? -errno : 0;
	s->logs = sub(fd, "logs");
	s->policies = sub(fd, "policies");
	s->evidence = sub(fd, "evidence");
	s->commit = sub(fd, "commit");
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

int kw_state_find_evidence(const struct kw_state_dir *st, const char *session,
			   const json_t *rec, int *log_fd, struct kw_buf *bundle,
			   struct kw_verify_result *res)
{
	const char *hash = json_string_value(json_object_get(json_object_get(rec, "policy"),
							     "bundle_hash"));
	char name[KW_SESSION_ID_LEN + 8];
	int pol_fd, e;

	*log_fd = -1;
	if (!session || !session[0])
		return kw_verify_result_set(res, KW_VERIFY_LOG_MISSING,
					    "The record's decision log was not found: the record file "
					    "is not named <session>.json");
	snprintf(name, sizeof(name), "%.32s.jsonl", session);
	e = kw_state_open_file(st->logs, name);
	if (e < 0)
		return kw_verify_result_set(res, e == -ENOENT ? KW_VERIFY_LOG_MISSING
							      : KW_VERIFY_LOG_UNREADABLE,
					    "The decision log logs/%s cannot be used: %s", name,
					    kw_state_open_error(e));
	*log_fd = e;
	if (!hash || strncmp(hash, "sha256:", 7)) {
		e = kw_verify_result_set(res, KW_VERIFY_POLICY_MISSING,
					 "The record's policy bundle was not found: its bundle_hash is "
					 "not a sha256 digest, which names bundles in policies/");
		goto fail;
	}
	pol_fd = kw_state_open_file(st->policies, hash + 7);
	if (pol_fd < 0) {
		e = kw_verify_result_set(res, pol_fd == -ENOENT ? KW_VERIFY_POLICY_MISSING
								: KW_VERIFY_POLICY_UNREADABLE,
					 "The policy bundle policies/%.64s cannot be used: %s", hash + 7,
					 kw_state_open_error(pol_fd));
		goto fail;
	}
	e = kw_read_fd(pol_fd, KW_POLICY_MAX_BYTES, bundle);
	close(pol_fd);
	if (e) {
		e = kw_verify_result_set(res, KW_VERIFY_POLICY_UNREADABLE,
					 "The policy bundle policies/%.64s cannot be read: %s", hash + 7,
					 kw_state_open_error(e));
		goto fail;
	}
	return 0;
fail:
	close(*log_fd);
	*log_fd = -1;
	return e;
}
