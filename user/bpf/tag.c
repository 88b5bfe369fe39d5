// SPDX-License-Identifier: Apache-2.0
/* A session's members (see tag.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/cgroup.h"
#include "maps.h"
#include "state.h"
#include "tag.h"

/* Deepest cgroup nesting walked when tagging descendants. */
#define KW_CGROUP_WALK_DEPTH 64

static bool match_cgroup(const void *key, const void *val, uint32_t slot)
{
	(void)key;
	return *(const __u32 *)val == slot;
}

int kw_untag_members(struct kw_hooks *h, uint32_t slot)
{
	int fd = bpf_map__fd(h->skel->maps.kw_cgroups), pass, n = 0;

	/* a child made during a pass (tracked by tp_btf/cgroup_mkdir) is caught
	 * by the next */
	for (pass = 0; pass < 4; pass++) {
		n = kw_map_delete_matching(fd, sizeof(__u64), sizeof(__u32), slot, match_cgroup);
		if (n <= 0)
			break;
	}
	return n < 0 ? n : 0;
}

int kw_set_unmarked(struct kw_hooks *h, uint32_t key, uint32_t value)
{
	__u32 k = key, v = value;

	return bpf_map_update_elem(bpf_map__fd(h->skel->maps.kw_unmarked), &k, &v, BPF_ANY) ?
		       -errno :
		       0;
}

/* Adds id -> slot. Already there for this slot (cgroup_mkdir raced us): fine;
 * there for another live session: nested sessions are refused; there for a
 * slot no session of ours holds (left in pinned maps by an earlier
 * instance): stale, replaced. */
int kw_tag_one(const struct kw_hooks *h, int map_fd, uint64_t id, uint32_t slot, char *err,
	       size_t errlen)
{
	__u32 cur;

	if (bpf_map_update_elem(map_fd, &id, &slot, BPF_NOEXIST) == 0)
		return 0;
	if (errno == EEXIST && bpf_map_lookup_elem(map_fd, &id, &cur) == 0) {
		if (cur == slot)
			return 0;
		if (cur >= KW_MAX_SESSIONS || !h->slots[cur].used)
			return bpf_map_update_elem(map_fd, &id, &slot, BPF_ANY) ? -errno : 0;
		snprintf(err, errlen, "cgroup %llu already belongs to session slot %u",
			 (unsigned long long)id, cur);
		return -EBUSY;
	}
	snprintf(err, errlen, "tagging cgroup %llu failed: %s", (unsigned long long)id,
		 strerror(errno));
	return errno == E2BIG ? -ENOSPC : -errno;
}

/* The iterator's output: whole kw_iter_proc records, kept up to
 * KW_EXISTING_MAX (the others get "seen" entries with their decisions). */
static void keep_existing(struct kw_hooks *h, const char *buf, size_t n, size_t *have)
{
	char *dst = (char *)h->existing;
	size_t cap = KW_EXISTING_MAX * sizeof(*h->existing);

	if (!dst)
		return;
	if (*have < cap) {
		size_t k = n < cap - *have ? n : cap - *have;

		memcpy(dst + *have, buf, k);
		*have += k;
	}
	h->n_existing = *have / sizeof(*h->existing);
}

/* Keeps slot's records only (another session's task that moved into its
 * cgroup untagged is tagged by the same pass). */
static void only_slot(struct kw_hooks *h, uint32_t slot)
{
	size_t k = 0;

	for (size_t i = 0; i < h->n_existing; i++)
		if (h->existing[i].slot == slot)
			h->existing[k++] = h->existing[i];
	h->n_existing = k;
	h->existing_slot = slot;
}

size_t kw_hooks_existing(const struct kw_hooks *h, uint32_t slot, const struct kw_iter_proc **out)
{
	*out = h->existing;
	return h->existing_slot == slot ? h->n_existing : 0;
}

/* Tags every task (threads included) already in the session's cgroups, in
 * the kernel: a task iterator (kw_tag_existing) run once, read to its end.
 * Tasks that fork or join later are tagged by the tracepoints. */
int kw_tag_existing_tasks(struct kw_hooks *h, uint32_t slot, char *err, size_t errlen)
{
	struct bpf_link *link = bpf_program__attach_iter(h->skel->progs.kw_tag_existing, NULL);
	char buf[256];
	size_t have = 0;
	ssize_t n;
	int fd, ret = 0;

	h->n_existing = 0;
	if (!h->existing)
		h->existing = calloc(KW_EXISTING_MAX, sizeof(*h->existing));

	if (!link) {
		ret = -errno ?: -EINVAL;
		snprintf(err, errlen, "the task iterator could not be attached: %s", strerror(-ret));
		return ret;
	}
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "the task iterator could not be created: %s", strerror(errno));
	} else {
		while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
			if (n > 0)
				keep_existing(h, buf, (size_t)n, &have);
		if (n < 0) {
			ret = -errno;
			snprintf(err, errlen, "the task iterator failed: %s", strerror(errno));
		}
		close(fd);
	}
	only_slot(h, slot);
	bpf_link__destroy(link);
	return ret;
}

/* Tags every descendant of the directory dirfd (already tagged itself): each
 * child is tagged before its own children are read, so a grandchild made
 * meanwhile is tagged by cgroup_mkdir or found by the read. */
int kw_tag_descendants(const struct kw_hooks *h, int map_fd, int dirfd, uint32_t slot,
		       int depth, char *err, size_t errlen)
{
	struct dirent *de;
	DIR *d;
	int fd, ret = 0;

	if (depth > KW_CGROUP_WALK_DEPTH) {
		snprintf(err, errlen, "cgroup tree deeper than %d levels", KW_CGROUP_WALK_DEPTH);
		return -ELOOP;
	}
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		ret = -errno;
		snprintf(err, errlen, "reading the cgroup's children failed: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	while (!ret && (de = readdir(d))) {
		uint64_t id = 0;
		int cfd;

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		cfd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (cfd < 0) {
			if (errno == ENOENT) /* removed meanwhile */
				continue;
			ret = -errno;
			snprintf(err, errlen, "opening child cgroup %s failed: %s", de->d_name,
				 strerror(errno));
			break;
		}
		ret = kw_cgroup_id(cfd, &id);
		if (ret)
			snprintf(err, errlen, "reading the id of child cgroup %s failed: %s",
				 de->d_name, strerror(-ret));
		else
			ret = kw_tag_one(h, map_fd, id, slot, err, errlen);
		if (!ret)
			ret = kw_tag_descendants(h, map_fd, cfd, slot, depth + 1, err, errlen);
		close(cfd);
	}
	closedir(d);
	return ret;
}

