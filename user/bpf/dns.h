/* SPDX-License-Identifier: Apache-2.0 */
/* The rule writer of net.dns, egress by name: the session's DNS steered to
 * its resolver (kw_dns_steer, kw_dns_ports), and the addresses its answers
 * opened (kw_name_allow), written while the session runs through
 * kw_hooks_dns_steer and kw_hooks_name_put/del (user/bpf/hooks.h). */
#ifndef KWITNESS_USER_BPF_DNS_H
#define KWITNESS_USER_BPF_DNS_H

#include <stdint.h>

struct kw_hooks;

/* Stops the steering and removes what the session's answers opened. 0 or -errno. */
int kw_dns_rules_remove(struct kw_hooks *h, uint32_t slot);

#endif
