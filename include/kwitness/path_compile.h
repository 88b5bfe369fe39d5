/* SPDX-License-Identifier: Apache-2.0 */
/* Path rules of a parsed policy -> kw_path_rules hash entries. Plain C (no
 * libbpf): the loader (user/bpf/lsm.c) writes the entries, the unit tests
 * judge paths against them with kwitness/abi/path_match.h. */
#ifndef KWITNESS_PATH_COMPILE_H
#define KWITNESS_PATH_COMPILE_H

#include <stddef.h>
#include <stdint.h>

#include "kwitness/abi/lsm_map.h"
#include "kwitness/policy.h"

struct kw_path_entry {
	struct kw_path_key key; /* zero past key.len: the kernel hashes every byte */
	struct kw_path_val val;
};

/* One entry per distinct path of the lists the policy governs (fs.read,
 * fs.write, fs.deny with fs; exec.allow with exec; net.unix with net.unix),
 * naming per list the index that lists it first. Returns 0 with *out
 * (free()) and *n, -EINVAL for a rule the parser would not have made,
 * -ENOMEM. */
int kw_path_compile(const struct kw_policy *pol, uint32_t slot, struct kw_path_entry **out,
		    size_t *n);

#endif
