// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* kwitness kernel side: every program and map in one object, so one skeleton
 * loads them. Data flow: a hook fires -> session.bpf.h finds the session by
 * cgroup id -> the class's rules decide -> the decision is counted and written
 * to the session's ring buffer. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "kwitness/abi/event.h"

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif
#ifndef AF_PACKET
#define AF_PACKET 17
#endif
#ifndef EPERM
#define EPERM 1
#endif
#ifndef EACCES
#define EACCES 13
#endif
#ifndef IPPROTO_ICMPV6
#define IPPROTO_ICMPV6 58
#endif
#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((void *)(ptr) - __builtin_offsetof(type, member)))
#endif

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "maps.bpf.h"
#include "session.bpf.h"
#include "dns_steer.bpf.h"
#include "net.bpf.h"
#include "dev.bpf.h"
#include "sysctl.bpf.h"
#include "cgroup_track.bpf.h"
/* BPF-LSM programs (fs, exec, proc, mount, unix) */
#include "lsm.bpf.h"
