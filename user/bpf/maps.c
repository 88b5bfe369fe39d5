// SPDX-License-Identifier: Apache-2.0
/* Whole-map chores of the loader (see maps.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "maps.h"

/* Deletes every entry of a hash map. */
void kw_map_clear(const struct bpf_map *m)
{
	int fd = bpf_map__fd(m);
	void *key = malloc(bpf_map__key_size(m));

	if (!key)
		return;
	while (bpf_map_get_next_key(fd, NULL, key) == 0)
		if (bpf_map_delete_elem(fd, key))
			break;
	free(key);
}

int kw_map_delete_matching(int map_fd, size_t key_size, size_t val_size, uint32_t slot,
			   kw_key_match match)
{
	unsigned char key[64], next[64], val[256];
	unsigned char *keys = NULL;
	size_t n = 0, cap = 0, i;
	void *prev = NULL;
	int ret = 0;

	if (key_size > sizeof(key) || val_size > sizeof(val))
		return -EINVAL;
	while (bpf_map_get_next_key(map_fd, prev, next) == 0) {
		memcpy(key, next, key_size);
		prev = key;
		if (bpf_map_lookup_elem(map_fd, key, val))
			continue;
		if (!match(key, val, slot))
			continue;
		if (n == cap) {
			unsigned char *k2 = realloc(keys, (cap ? cap * 2 : 64) * key_size);

			if (!k2) {
				free(keys);
				return -ENOMEM;
			}
			keys = k2;
			cap = cap ? cap * 2 : 64;
		}
		memcpy(keys + n * key_size, key, key_size);
		n++;
	}
	for (i = 0; i < n; i++)
		if (bpf_map_delete_elem(map_fd, keys + i * key_size) && errno != ENOENT)
			ret = -errno;
	free(keys);
	return ret < 0 ? ret : (int)n;
}

