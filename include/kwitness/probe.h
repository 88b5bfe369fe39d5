/* SPDX-License-Identifier: Apache-2.0 */
/* Which hook classes work on this host, and why not when they don't: program
 * type known, securityfs and the active LSM list, a trivial program loads and
 * attaches, and it really fires when the operation is done (user/bpf/probe.c). */
#ifndef KWITNESS_PROBE_H
#define KWITNESS_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kw_probe_class {
	KW_PROBE_CGROUP_NET,   /* cgroup/connect4 (and the other sock_addr hooks) */
	KW_PROBE_CGROUP_DEV,   /* cgroup/dev */
	KW_PROBE_SYSCTL,       /* cgroup/sysctl */
	KW_PROBE_LSM_FILE,     /* lsm/file_open (fs class) */
	KW_PROBE_LSM_EXEC,     /* lsm/bprm_check_security */
	KW_PROBE_LSM_PROC,     /* lsm/task_kill */
	KW_PROBE_LSM_MOUNT,    /* lsm/sb_mount */
	KW_PROBE_LSM_UNIX,     /* lsm/unix_stream_connect */
	KW_PROBE_NCLASSES
};

#define KW_PROBE_REASON_MAX 192

struct kw_probe_result {
	bool available;
	char reason[KW_PROBE_REASON_MAX]; /* why not; empty when available */
};

/* "cgroup.net", "cgroup.dev", "sysctl", "lsm.file", "lsm.exec", "lsm.proc",
 * "lsm.mount", "lsm.unix"; NULL out of range. */
const char *kw_probe_class_name(int cls);

/* Probes every class for real (loads, attaches, triggers, counts; for the LSM
 * classes also: the kernel has every hook their programs use). Mounts
 * securityfs if needed. The loader (kw_hooks_open) loads exactly what this
 * finds working. Returns 0, or -errno when probing itself could not run. */
int kw_probe_all(struct kw_probe_result out[KW_PROBE_NCLASSES]);

/* Active LSM list ("lockdown,capability,bpf") into buf; mounts securityfs if
 * needed. 0 or -errno. */
int kw_probe_lsm_list(char *buf, size_t len);

/* The probe class that tells whether a policy class (one KW_CLASS_* bit) can
 * run here (the class table's probe column), or -1. */
int kw_probe_class_of(uint32_t class_bit);

#endif
