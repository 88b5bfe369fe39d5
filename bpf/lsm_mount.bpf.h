/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* mount (BPF-LSM sb_mount): refused inside a session unless mount.allow; the
 * record names the mount point and carries the mount flags. */
#ifndef KWITNESS_LSM_MOUNT_BPF_H
#define KWITNESS_LSM_MOUNT_BPF_H

#include "lsm_path.bpf.h"

SEC("lsm/sb_mount")
int BPF_PROG(kw_lsm_sb_mount, const char *dev_name, const struct path *path, const char *type,
	     unsigned long flags, void *data, int ret)
{
	struct kw_lsm_scratch *sc;
	struct kw_lsm_slot *cfg;
	struct kw_ctx c;
	int permit;

	if (ret || !kw_session_find(&c, KW_CLASS_MOUNT))
		return ret;
	cfg = bpf_map_lookup_elem(&kw_lsm_slots, &c.slot);
	permit = cfg && cfg->mount_allow;
	sc = kw_scratch();
	if (!sc)
		return kw_fail_closed(&c, KW_EV_MOUNT, -EPERM);
	/* the record names the mount point */
	kw_path_build(sc, BPF_CORE_READ(path, mnt), BPF_CORE_READ(path, dentry), NULL);
	return kw_path_record(&c, sc, KW_EV_MOUNT, (__u32)flags, permit,
			      permit ? 0 : KW_RULE_DEFAULT, EPERM);
}

#endif
