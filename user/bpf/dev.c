// SPDX-License-Identifier: Apache-2.0
/* The device rule writer: dev.allow to kw_dev_rules (see dev.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kwitness.skel.h"
#include "maps.h"
#include "dev.h"

static bool match_dev(const void *key, const void *val, uint32_t slot)
{
	(void)val;
	return ((const struct kw_dev_key *)key)->slot == slot;
}

int kw_dev_rules_write(struct kwitness_bpf *skel, uint32_t slot, const struct kw_policy *pol,
			char *err, size_t errlen)
{
	int fd = bpf_map__fd(skel->maps.kw_dev_rules);
	size_t i;

	for (i = 0; i < pol->n_dev; i++) {
		const struct kw_dev_rule_spec *d = &pol->dev[i];
		struct kw_dev_key key = { .slot = slot, .type = d->type, .major = d->major,
					  .minor = d->minor };
		struct kw_dev_rule val = { .access = d->access, .rule = d->index };

		if (bpf_map_update_elem(fd, &key, &val, BPF_NOEXIST)) {
			int ret = -errno;

			snprintf(err, errlen, "dev.allow[%u]: writing the rule failed: %s",
				 d->index, strerror(errno));
			return ret;
		}
	}
	return 0;
}


int kw_dev_rules_remove(struct kwitness_bpf *skel, uint32_t slot)
{
	int r = kw_map_delete_matching(bpf_map__fd(skel->maps.kw_dev_rules),
				       sizeof(struct kw_dev_key), sizeof(struct kw_dev_rule), slot,
				       match_dev);

	return r < 0 ? r : 0;
}
