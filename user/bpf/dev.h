/* SPDX-License-Identifier: Apache-2.0 */
/* The rule writer of the dev class: dev.allow into kw_dev_rules, keyed by
 * slot, type, major and minor. */
#ifndef KWITNESS_USER_BPF_DEV_H
#define KWITNESS_USER_BPF_DEV_H

#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

struct kwitness_bpf; /* the generated skeleton */

/* Writes the session's dev rules for slot. 0 or -errno, with a sentence in err. */
int kw_dev_rules_write(struct kwitness_bpf *skel, uint32_t slot, const struct kw_policy *pol,
			char *err, size_t errlen);
/* Removes every dev rule of slot. 0 or -errno. */
int kw_dev_rules_remove(struct kwitness_bpf *skel, uint32_t slot);

#endif
