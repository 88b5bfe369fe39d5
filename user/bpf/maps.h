/* SPDX-License-Identifier: Apache-2.0 */
/* Whole-map chores of the loader: emptying a map, and deleting a slot's keys
 * (each rule writer removes its class's rules with these). */
#ifndef KWITNESS_USER_BPF_MAPS_H
#define KWITNESS_USER_BPF_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_map;

/* Deletes every entry of a hash map. */
void kw_map_clear(const struct bpf_map *m);

/* Deletes every key of map whose value (a __u32 slot, or the key's own slot
 * field) belongs to slot, as match says. Keys are collected before deleting
 * so the iteration is not disturbed. The number deleted, or -errno. */
typedef bool (*kw_key_match)(const void *key, const void *val, uint32_t slot);
int kw_map_delete_matching(int map_fd, size_t key_size, size_t val_size, uint32_t slot,
			   kw_key_match match);

#endif
