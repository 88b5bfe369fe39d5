/* SPDX-License-Identifier: Apache-2.0 */
/* BPF-LSM part of the loader: which LSM classes work here, and their per-session maps. */
#ifndef KWITNESS_USER_BPF_LSM_H
#define KWITNESS_USER_BPF_LSM_H

#include <stdbool.h>
#include <stdint.h>
#include "policy/policy.h"
#include "bpf/probe.h"

struct kwitness_bpf; /* the generated skeleton */

/* Before load: turn autoload off for LSM programs that plan says cannot
 * work here. Returns the KW_CLASS_* bits that LSM will provide. */
uint32_t kw_lsm_prepare(struct kwitness_bpf *skel, const struct kw_probe_plan *plan);
/* The index in plan->lsm_prog of the LSM program called name, or -1; its
 * class in *class_bit. */
int kw_lsm_prog_index(struct kwitness_bpf *skel, const char *name, uint32_t *class_bit);
/* After load: attach the LSM programs (pinned under pin_dir/links when set;
 * reuse keeps existing pins, see kw_hooks_global_link). 0 or -errno. */
int kw_lsm_attach(struct kwitness_bpf *skel, const char *pin_dir, bool reuse);
/* Write/remove the session's path rules and LSM settings. 0 or -errno. */
int kw_lsm_session_add(struct kwitness_bpf *skel, uint32_t slot, const struct kw_policy *pol);
int kw_lsm_session_remove(struct kwitness_bpf *skel, uint32_t slot);

#endif
