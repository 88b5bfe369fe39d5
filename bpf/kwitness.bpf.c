// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* kwitness kernel side: every program and map in one object, so one skeleton
 * loads them. Data flow: a hook fires -> session.bpf.h finds the session by
 * cgroup id -> the class's rules decide -> the decision is counted and written
 * to the session's ring buffer. Each header includes what it uses. */
#include "base.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "maps.bpf.h"
#include "session.bpf.h"
/* cgroup programs: net, dev, sysctl; cgroup and task tracking */
#include "dns_steer.bpf.h"
#include "net.bpf.h"
#include "dev.bpf.h"
#include "sysctl.bpf.h"
#include "cgroup_track.bpf.h"
#include "proc_track.bpf.h" /* process lineage (fork: from cgroup_track) */
/* BPF-LSM programs: fs, exec, net.unix, proc, mount */
#include "lsm_path.bpf.h"
#include "lsm_fs.bpf.h"
#include "lsm_exec.bpf.h"
#include "lsm_unix.bpf.h"
#include "lsm_proc.bpf.h"
#include "lsm_mount.bpf.h"
#include "lsm_bpf.bpf.h"
