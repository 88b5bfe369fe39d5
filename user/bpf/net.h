/* SPDX-License-Identifier: Apache-2.0 */
/* The rule writer of the network classes (net.connect, net.send, net.bind):
 * the policy compiled (kw_net_compile) into kw_net_rules, keyed by slot. */
#ifndef KWITNESS_USER_BPF_NET_H
#define KWITNESS_USER_BPF_NET_H

#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

struct kwitness_bpf; /* the generated skeleton */

/* Writes the session's net rules for slot. 0 or -errno, with a sentence in err. */
int kw_net_rules_write(struct kwitness_bpf *skel, uint32_t slot, const struct kw_policy *pol,
			char *err, size_t errlen);
/* Removes every net rule of slot. 0 or -errno. */
int kw_net_rules_remove(struct kwitness_bpf *skel, uint32_t slot);

#endif
