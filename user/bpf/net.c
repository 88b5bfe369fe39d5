// SPDX-License-Identifier: Apache-2.0
/* The network rule writer: net.connect, net.send, net.bind compiled to kw_net_rules (see net.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "policy/net_compile.h"
#include "kwitness.skel.h"
#include "maps.h"
#include "net.h"

static bool match_net(const void *key, const void *val, uint32_t slot)
{
	(void)val;
	return ((const struct kw_net_key *)key)->slot == slot;
}

int kw_net_rules_write(struct kwitness_bpf *skel, uint32_t slot, const struct kw_policy *pol,
			char *err, size_t errlen)
{
	int fd = bpf_map__fd(skel->maps.kw_net_rules), ret = 0;
	struct kw_net_entry *ents;
	size_t n, i;

	ret = kw_net_compile(pol, slot, &ents, &n, err, errlen);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		if (bpf_map_update_elem(fd, &ents[i].key, &ents[i].val, BPF_ANY)) {
			ret = -errno;
			snprintf(err, errlen, "writing network rule %zu of %zu failed: %s", i + 1,
				 n, strerror(errno));
			break;
		}
	}
	free(ents);
	return ret;
}


int kw_net_rules_remove(struct kwitness_bpf *skel, uint32_t slot)
{
	int r = kw_map_delete_matching(bpf_map__fd(skel->maps.kw_net_rules),
				       sizeof(struct kw_net_key), sizeof(struct kw_net_rules), slot,
				       match_net);

	return r < 0 ? r : 0;
}
