/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What every kwitness BPF header builds on: the kernel's types (vmlinux.h),
 * libbpf's helpers and macros, the event and session layouts shared with
 * userspace, the declaration of a sparse map, and the few uapi constants
 * vmlinux.h does not carry (they are macros in the kernel's headers, not
 * types). */
#ifndef KWITNESS_BASE_BPF_H
#define KWITNESS_BASE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "kwitness/abi/event.h"

/* A hash-like map whose entries are allocated as they are added (rule
 * tables, tags): most of max_entries is never used. */
#define KW_SPARSE_MAP(map_type, size, key_type, value_type) \
	struct {                                             \
		__uint(type, map_type);                      \
		__uint(max_entries, size);                   \
		__uint(map_flags, BPF_F_NO_PREALLOC);        \
		__type(key, key_type);                       \
		__type(value, value_type);                   \
	}

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif
#ifndef AF_PACKET
#define AF_PACKET 17
#endif
#ifndef IPPROTO_ICMPV6
#define IPPROTO_ICMPV6 58
#endif
#ifndef EPERM
#define EPERM 1
#endif
#ifndef EACCES
#define EACCES 13
#endif
#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((void *)(ptr) - __builtin_offsetof(type, member)))
#endif

#endif
