/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Map layouts of the BPF-LSM part, shared by bpf/lsm*.bpf.h and
 * user/bpf/lsm.c. The matching logic is in kwitness/abi/path_match.h. */
#ifndef KWITNESS_LSM_MAP_H
#define KWITNESS_LSM_MAP_H

#include "kwitness/abi/event.h"

/* Index of struct kw_path_val.rule: enum kw_path_kind of policy.h; index 0
 * (KW_PK_BELOW) marks an ancestor of an fs.deny path: the index of the first
 * fs.deny rule strictly below it (a rename or link of it is refused). */
#define KW_PK_BELOW 0
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
	__u16 rule[KW_PK_N]; /* index in each list, or KW_PATH_NONE */
};

/* kw_exec_digests: hash, the digests exec.allow names, per session.
 * - "sha256:<hex>" at list index i: {slot, KW_EXEC_ANY_PATH, 0, digest} -> i.
 *   An exec of a file with that digest is allowed, whatever its path.
 * - {"path": P, "sha256": D} at index i: P is a path rule of exec.allow; the
 *   kernel names it by the index r of P's first listing, and r is marked
 *   pinned ({slot, r, 1, zeros} -> r) with each digest allowed at P
 *   ({slot, r, 0, D} -> i). A path decision by a pinned rule stands only
 *   when the file's digest is one of them; otherwise the exec is refused
 *   (KW_RULE_KIND_DIGEST_MISMATCH). */
#define KW_EXEC_ANY_PATH 0xffff
struct kw_exec_digest_key {
	__u32 slot;
	__u16 rule;   /* KW_EXEC_ANY_PATH or the path rule's index */
	__u8 pinned;  /* 1: the marker of a pinned rule (sha256 all zero) */
	__u8 pad;
	__u8 sha256[KW_SHA256_LEN];
};

/* kw_lsm_slots[slot]: the LSM settings that are not path lists. */
struct kw_lsm_slot {
	__u8 mount_allow;    /* mount: {"allow": true} */
	__u8 signal_outside; /* proc: {"signal_outside": true} */
	__u8 exec_digests;   /* exec.allow names a digest */
	__u8 bpf_allow;      /* bpf: {"allow": true} */
	__u8 pad[4];
};

#endif
