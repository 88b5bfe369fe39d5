// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* kwitness kernel side: every program and map in one object, so one skeleton
 * loads them. Data flow: a hook fires -> session.bpf.h finds the session by
 * cgroup id -> the class's rules decide -> the decision is counted and written
 * to the session's ring buffer. */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* the cgroup hooks */
#include "net.bpf.h"
#include "dev.bpf.h"
#include "sysctl.bpf.h"
/* session membership follows the cgroup tree */
#include "cgroup_track.bpf.h"
/* the BPF-LSM hooks */
#include "lsm_fs.bpf.h"
#include "lsm_exec.bpf.h"
#include "lsm_mount.bpf.h"
#include "lsm_proc.bpf.h"
#include "lsm_unix.bpf.h"
