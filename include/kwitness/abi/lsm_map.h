/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Map layouts of the BPF-LSM part, shared by bpf/lsm*.bpf.h and
 * user/bpf/lsm.c. The matching logic is in kwitness/abi/path_match.h. */
#ifndef KWITNESS_LSM_MAP_H
#define KWITNESS_LSM_MAP_H

#include "kwitness/abi/event.h"

/* Index of struct kw_path_val.rule: enum kw_path_kind of policy.h. */
#define KW_PK_READ 1  /* fs.read */
#define KW_PK_WRITE 2 /* fs.write */
#define KW_PK_DENY 3  /* fs.deny */
#define KW_PK_EXEC 4  /* exec.allow */
#define KW_PK_UNIX 5  /* net.unix */
#define KW_PK_N 6
/* No rule of this list at this path. */
#define KW_PATH_NONE 0xffff

/* kw_path_rules: hash, one entry per distinct rule path of a session. */
struct kw_path_key {
	__u32 slot;
	__u32 len;              /* bytes of path used; the rest is zero */
	char path[KW_PATH_MAX]; /* absolute, normalised, no trailing slash but "/" */
};

struct kw_path_val {
	__u16 rule[KW_PK_N]; /* index in each list, or KW_PATH_NONE; [0] unused */
};

/* kw_lsm_slots[slot]: the LSM settings that are not path lists. */
struct kw_lsm_slot {
	__u8 mount_allow;    /* mount: {"allow": true} */
	__u8 signal_outside; /* proc: {"signal_outside": true} */
	__u8 pad[6];
};

#endif
