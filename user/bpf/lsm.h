/* SPDX-License-Identifier: Apache-2.0 */
/* BPF-LSM part of the loader: which LSM classes work here, and their per-session maps. */
#ifndef KWITNESS_USER_BPF_LSM_H
#define KWITNESS_USER_BPF_LSM_H

#include <stdint.h>
#include "kwitness/policy.h"

struct kwitness_bpf; /* the generated skeleton */

/* Before load: load the LSM programs of these KW_CLASS_* bits only. */
void kw_lsm_prepare(struct kwitness_bpf *skel, uint32_t classes);
/* After load: attach the LSM programs. 0 or -errno. */
int kw_lsm_attach(struct kwitness_bpf *skel);
/* Write/remove the session's path rules and LSM settings. 0 or -errno. */
int kw_lsm_session_add(struct kwitness_bpf *skel, uint32_t slot, const struct kw_policy *pol);
int kw_lsm_session_remove(struct kwitness_bpf *skel, uint32_t slot);

#endif
