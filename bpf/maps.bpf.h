/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The maps every kwitness program shares: sessions, membership, task tags and
 * ring buffers. A map one concern alone uses is declared in that concern's
 * header. Layouts: include/kwitness/abi/event.h. */
#ifndef KWITNESS_MAPS_BPF_H
#define KWITNESS_MAPS_BPF_H

#include "base.bpf.h"

/* Session slots: configuration and counters. Mapped by kwitnessd too: its
 * resolver numbers the decisions it records with the same atomic add on
 * next_seq as the programs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, KW_MAX_SESSIONS);
	__type(key, __u32);
	__type(value, struct kw_session);
} kw_sessions SEC(".maps");

/* Drops by sequence number (struct kw_lost), mapped by kwitnessd: written
 * only when a reservation fails, so the hot path never touches it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, KW_MAX_SESSIONS);
	__type(key, __u32);
	__type(value, struct kw_lost);
} kw_lost SEC(".maps");

/* The class gate: the union of the classes of every session in kw_sessions,
 * written by userspace alone, raised before a session's first tag and
 * lowered only once its classes are cleared (docs/hooks.md, "The class
 * gate"). A hook whose class no session governs returns before any lookup. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} kw_governed SEC(".maps");

/* Membership: cgroup (v2) id -> session slot, for a tagged cgroup and each of
 * its descendants. The one lookup every hooked operation starts with. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KW_MAX_CGROUPS);
	__type(key, __u64);
	__type(value, __u32);
} kw_cgroups SEC(".maps");

/* A session follows its tasks: the tag every session task carries (see
 * cgroup_track.bpf.h), checked when the task's cgroup is not tagged. Keyed
 * by the task's address (bpf_get_current_task(): cgroup programs of 6.1
 * cannot use task storage); deleted when the task is freed, before its
 * memory can hold another task. */
KW_SPARSE_MAP(BPF_MAP_TYPE_HASH, KW_MAX_TAGGED_TASKS, __u64, struct kw_task_tag)
kw_task_tags SEC(".maps");

/* The lineage programs' untagged test (docs/hooks.md, "A task in no
 * session"): every task kw_tag_task tags is marked in its own storage too,
 * so a task in no session is told by reading the task, not by two hash
 * lookups (a cold bucket each). A mark only says "look": a marked task takes
 * the full lookup. Cgroup programs of 6.1 cannot read task storage; the
 * lineage programs (tp_btf) can. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} kw_task_marks SEC(".maps");

/* When the marks cannot be trusted to cover every session task, the
 * untagged test looks anyway: [KW_UNMARKED_OPENING] nonzero while kwitnessd
 * tags a session's cgroups and their tasks (written by userspace alone);
 * [KW_UNMARKED_FAILED] nonzero once a mark could not be made, since a
 * kwitnessd started with an earlier one's sessions (sticky until one starts
 * with none), and always on a kernel whose bpf_task_storage_get may return
 * NULL without looking (6.1: while this CPU is inside another task storage
 * operation, a preempted one; 6.2 added bpf_task_storage_get_recur, which
 * looks anyway). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KW_UNMARKED_KEYS);
	__type(key, __u32);
	__type(value, __u32);
} kw_unmarked SEC(".maps");

/* The same tags by thread group id, for kwitnessd's control socket (a
 * process inside a session, even one that left its cgroup, is refused). */
KW_SPARSE_MAP(BPF_MAP_TYPE_HASH, KW_MAX_TAGGED_TASKS, __u32, struct kw_task_tag)
kw_tgid_tags SEC(".maps");

/* slot -> the generation whose task tags are honoured (0: none). Cleared at
 * untag, so tagged tasks stop being decided then, as tagged cgroups do. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KW_MAX_SESSIONS);
	__type(key, __u32);
	__type(value, __u32);
} kw_slot_live SEC(".maps");

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

#endif
