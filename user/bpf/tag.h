/* SPDX-License-Identifier: Apache-2.0 */
/* A session's members: its cgroups (kw_cgroups: id -> slot) and the tasks
 * already in them. Tasks that fork or join later are tagged by the
 * tracepoints; cgroups made later by tp_btf/cgroup_mkdir. */
#ifndef KWITNESS_USER_BPF_TAG_H
#define KWITNESS_USER_BPF_TAG_H

#include <stddef.h>
#include <stdint.h>

struct kw_hooks;

/* Adds cgroup id -> slot to kw_cgroups (map_fd). 0 or -errno, with a
 * sentence in err (-EBUSY: the cgroup belongs to another live session). */
int kw_tag_one(const struct kw_hooks *h, int map_fd, uint64_t id, uint32_t slot, char *err,
	       size_t errlen);
/* Tags every descendant of the cgroup directory dirfd (already tagged). */
int kw_tag_descendants(const struct kw_hooks *h, int map_fd, int dirfd, uint32_t slot, int depth,
		       char *err, size_t errlen);
/* Tags every task already in the session's cgroups (a task iterator). */
int kw_tag_existing_tasks(struct kw_hooks *h, uint32_t slot, char *err, size_t errlen);
/* Writes kw_unmarked[key] (KW_UNMARKED_*): nonzero, the lineage programs'
 * untagged test looks up every task (bpf/maps.bpf.h). 0 or -errno. */
int kw_set_unmarked(struct kw_hooks *h, uint32_t key, uint32_t value);
/* Removes every cgroup of slot from kw_cgroups. 0 or -errno. */
int kw_untag_members(struct kw_hooks *h, uint32_t slot);

#endif
