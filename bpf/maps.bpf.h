/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every map of the kwitness object, in one place. Layouts:
 * include/kwitness/abi/event.h and lsm_map.h; userspace reaches them through
 * the skeleton (user/bpf/hooks.c, lsm.c). */
#ifndef KWITNESS_MAPS_BPF_H
#define KWITNESS_MAPS_BPF_H

#include "common.bpf.h"
#include "kwitness/abi/lsm_map.h"
#include "kwitness/abi/path_match.h"

/* An array with one value per session slot. */
#define KW_PER_SLOT(name, value_type)                    \
	struct {                                         \
		__uint(type, BPF_MAP_TYPE_ARRAY);        \
		__uint(max_entries, KW_MAX_SESSIONS);    \
		__type(key, __u32);                      \
		__type(value, value_type);               \
	} name SEC(".maps")

/* Rules of every session, keyed by slot first; allocated as rules are added. */
#define KW_RULES(name, map_type, key_type, value_type)   \
	struct {                                         \
		__uint(type, map_type);                  \
		__uint(max_entries, 65536);              \
		__uint(map_flags, BPF_F_NO_PREALLOC);    \
		__type(key, key_type);                   \
		__type(value, value_type);               \
	} name SEC(".maps")

/* Session slots: configuration and counters. */
KW_PER_SLOT(kw_sessions, struct kw_session);

/* Membership: cgroup (v2) id -> session slot, for a tagged cgroup and each of
 * its descendants. The one lookup every hooked operation starts with. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KW_MAX_CGROUPS);
	__type(key, __u64);
	__type(value, __u32);
} kw_cgroups SEC(".maps");

/* One ring buffer per session slot, created by userspace at session start.
 * The template's size is irrelevant: ring buffers of any size fit the slot. */
struct kw_ringbuf_tmpl {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, KW_MAX_SESSIONS);
	__type(key, __u32);
	__array(values, struct kw_ringbuf_tmpl);
} kw_ringbufs SEC(".maps");

/* Network rules: (slot, op, family, address prefix) -> port rules. */
KW_RULES(kw_net_rules, BPF_MAP_TYPE_LPM_TRIE, struct kw_net_key, struct kw_net_rules);

/* Device rules: (slot, type, major|any, minor|any) -> allowed access. */
KW_RULES(kw_dev_rules, BPF_MAP_TYPE_HASH, struct kw_dev_key, struct kw_dev_rule);

/* ---- BPF-LSM ---- */

/* Path rules of every session: (slot, prefix) -> which lists hold it. */
KW_RULES(kw_path_rules, BPF_MAP_TYPE_HASH, struct kw_path_key, struct kw_path_val);

/* LSM settings of each session that are not path lists (mount.allow,
 * proc.signal_outside), written by user/bpf/lsm.c beside its path rules. */
KW_PER_SLOT(kw_lsm_slots, struct kw_lsm_slot);

/* Components walked per path; a power of two (indices are masked). */
#define KW_PATH_DEPTH 64

/* Per-CPU scratch: the path is built in path[] (spill[] takes a component
 * read that overruns the end) and copied into key for the prefix scan. The
 * walk, the writer and the scan are bpf_loop callbacks that keep their state
 * here, so the verifier checks each body once. LSM programs run with
 * migration disabled and never sleep here. */
struct kw_lsm_scratch {
	char path[KW_PATH_MAX];
	char spill[KW_PATH_MAX];
	struct kw_path_key key;
	struct kw_path_scan scan;
	__u64 comps[KW_PATH_DEPTH]; /* dentries, leaf first */
	__u64 w_mnt, w_dentry, w_root; /* walk position: struct mount *, dentry, mount root */
	__u32 n;         /* components in comps */
	__u32 pos;       /* bytes written to path */
	__u32 len;       /* final path length */
	__u32 truncated; /* the path is longer or deeper than we keep */
	__u32 walk_done;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kw_lsm_scratch);
} kw_lsm_scratch SEC(".maps");

#endif
