// SPDX-License-Identifier: Apache-2.0
/* The rule writer of net.dns, egress by name (see dns.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kwitness/abi/name_match.h"
#include "dns.h"
#include "maps.h"
#include "state.h"

static bool match_name(const void *key, const void *val, uint32_t slot)
{
	(void)val;
	return ((const struct kw_name_key *)key)->slot == slot;
}

static void steer_ports(int fd, const struct kw_dns_steer *st, const __u32 *slot)
{
	const __u16 ports[4] = { st->udp4, st->tcp4, st->udp6, st->tcp6 };

	for (int i = 0; i < 4; i++) {
		__u32 key = ports[i];

		if (!key)
			continue;
		if (slot)
			bpf_map_update_elem(fd, &key, slot, BPF_ANY);
		else
			bpf_map_delete_elem(fd, &key);
	}
}

int kw_hooks_dns_steer(struct kw_hooks *h, uint32_t slot, const struct kw_dns_steer *steer)
{
	int sfd = bpf_map__fd(h->skel->maps.kw_dns_steer);
	int pfd = bpf_map__fd(h->skel->maps.kw_dns_ports);
	struct kw_dns_steer old, none = { 0 };

	if (slot >= KW_MAX_SESSIONS)
		return -EINVAL;
	if (!bpf_map_lookup_elem(sfd, &slot, &old))
		steer_ports(pfd, &old, NULL);
	if (!steer)
		return bpf_map_update_elem(sfd, &slot, &none, BPF_ANY) ? -errno : 0;
	/* the ports first: from the moment DNS is steered, no other session
	 * may reach these sockets */
	steer_ports(pfd, steer, &slot);
	return bpf_map_update_elem(sfd, &slot, steer, BPF_ANY) ? -errno : 0;
}

int kw_hooks_name_put(struct kw_hooks *h, const struct kw_name_key *k,
		      const struct kw_name_allow *v)
{
	return bpf_map_update_elem(bpf_map__fd(h->skel->maps.kw_name_allow), k, v, BPF_ANY) ?
		       -errno : 0;
}

int kw_hooks_name_del(struct kw_hooks *h, const struct kw_name_key *k)
{
	if (bpf_map_delete_elem(bpf_map__fd(h->skel->maps.kw_name_allow), k) && errno != ENOENT)
		return -errno;
	return 0;
}


int kw_dns_rules_remove(struct kw_hooks *h, uint32_t slot)
{
	int r;

	/* egress by name: the resolver's ports and what its answers opened */
	kw_hooks_dns_steer(h, slot, NULL);
	r = kw_map_delete_matching(bpf_map__fd(h->skel->maps.kw_name_allow),
				   sizeof(struct kw_name_key), sizeof(struct kw_name_allow), slot,
				   match_name);
	return r < 0 ? r : 0;
}
