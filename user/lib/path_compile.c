/* SPDX-License-Identifier: Apache-2.0 */
/* Path rules -> kw_path_rules entries, see path_compile.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kwitness/path_compile.h"

_Static_assert(KW_PK_READ == KW_PATH_READ && KW_PK_WRITE == KW_PATH_WRITE &&
	       KW_PK_DENY == KW_PATH_DENY && KW_PK_EXEC == KW_PATH_EXEC &&
	       KW_PK_UNIX == KW_PATH_UNIX, "kw_path_val.rule is indexed by enum kw_path_kind");

static bool governed(uint8_t kind, uint32_t classes)
{
	switch (kind) {
	case KW_PK_READ:
	case KW_PK_WRITE:
	case KW_PK_DENY:
		return classes & KW_CLASS_FS;
	case KW_PK_EXEC:
		return classes & KW_CLASS_EXEC;
	case KW_PK_UNIX:
		return classes & KW_CLASS_UNIX;
	}
	return false;
}

int kw_path_compile(const struct kw_policy *pol, uint32_t slot, struct kw_path_entry **out,
		    size_t *n)
{
	struct kw_path_entry *e = calloc(pol->n_paths ? pol->n_paths : 1, sizeof(*e));
	size_t i, j, used = 0;

	*out = NULL;
	*n = 0;
	if (!e)
		return -ENOMEM;
	for (i = 0; i < pol->n_paths; i++) {
		const struct kw_path_rule *r = &pol->paths[i];
		struct kw_path_key key;

		if (r->kind < KW_PK_READ || r->kind >= KW_PK_N || r->len == 0 ||
		    r->len >= KW_PATH_MAX || r->path[0] != '/' || r->index >= 0xfff) {
			free(e);
			return -EINVAL;
		}
		if (!governed(r->kind, pol->classes))
			continue;
		memset(&key, 0, sizeof(key));
		key.slot = slot;
		key.len = r->len;
		memcpy(key.path, r->path, r->len);
		for (j = 0; j < used && memcmp(&e[j].key, &key, sizeof(key)); j++)
			;
		if (j == used) {
			e[used].key = key;
			for (int k = 0; k < KW_PK_N; k++)
				e[used].val.rule[k] = KW_PATH_NONE;
			used++;
		}
		/* a path listed twice in one list: the first listing names it */
		if (e[j].val.rule[r->kind] == KW_PATH_NONE || e[j].val.rule[r->kind] > r->index)
			e[j].val.rule[r->kind] = r->index;
	}
	*out = e;
	*n = used;
	return 0;
}
