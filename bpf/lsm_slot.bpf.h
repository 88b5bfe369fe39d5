/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Per-session settings of the LSM classes that are not path lists, written by
 * user/bpf/lsm.c (kw_lsm_session_add) beside the session's path rules. */
#ifndef KWITNESS_LSM_SLOT_BPF_H
#define KWITNESS_LSM_SLOT_BPF_H

#include "base.bpf.h"
#include "kwitness/abi/lsm_map.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KW_MAX_SESSIONS);
	__type(key, __u32);
	__type(value, struct kw_lsm_slot);
} kw_lsm_slots SEC(".maps");

#endif
