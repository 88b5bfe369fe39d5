/* SPDX-License-Identifier: Apache-2.0 */
#ifndef KWITNESSD_HOSTINFO_H
#define KWITNESSD_HOSTINFO_H

/* hostinfo.c: facts about the witness, read once at start. */
struct kwd_hostinfo {
	char hostname[256];
	char machine_id[64];
	char boot_id[64];
	char kernel[128];
	char cgroup_mode[16]; /* "unified" (cgroup2 only) or "hybrid" */
};
void kwd_hostinfo_read(struct kwd_hostinfo *h);

#endif
