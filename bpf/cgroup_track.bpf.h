/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Keeps kw_cgroups in step with the cgroup tree: a cgroup made under a tagged
 * cgroup joins its session, a removed one leaves. Attached globally. Only the
 * cgroup2 (default) hierarchy counts: cgroup ids are per hierarchy, so a v1
 * cgroup may share an id with a tagged v2 one. */
#ifndef KWITNESS_CGROUP_TRACK_BPF_H
#define KWITNESS_CGROUP_TRACK_BPF_H

#include "maps.bpf.h"

/* hierarchy_id of the cgroup2 root (cgrp_dfl_root); v1 hierarchies count from 1.
 * Checked on the hybrid test host by tests/kernel/test_hooks_direct.sh. */
#define KW_DFL_HIERARCHY_ID 0

static __always_inline int kw_cgroup_is_v2(struct cgroup *cgrp)
{
	return BPF_CORE_READ(cgrp, root, hierarchy_id) == KW_DFL_HIERARCHY_ID;
}

SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(kw_cgroup_mkdir, struct cgroup *cgrp, const char *path)
{
	struct cgroup_subsys_state *parent_css;
	struct cgroup *parent;
	__u64 id, parent_id;
	__u32 *slot, s;

	if (!kw_cgroup_is_v2(cgrp))
		return 0;
	parent_css = BPF_CORE_READ(cgrp, self.parent);
	if (!parent_css)
		return 0;
	/* self is the first member of struct cgroup */
	parent = container_of(parent_css, struct cgroup, self);
	parent_id = BPF_CORE_READ(parent, kn, id);
	slot = bpf_map_lookup_elem(&kw_cgroups, &parent_id);
	if (!slot)
		return 0;
	s = *slot;
	id = BPF_CORE_READ(cgrp, kn, id);
	bpf_map_update_elem(&kw_cgroups, &id, &s, BPF_ANY);
	return 0;
}

SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(kw_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	__u64 id;

	if (!kw_cgroup_is_v2(cgrp))
		return 0;
	id = BPF_CORE_READ(cgrp, kn, id);
	bpf_map_delete_elem(&kw_cgroups, &id);
	return 0;
}

#endif
