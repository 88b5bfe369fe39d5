/* SPDX-License-Identifier: Apache-2.0 */
/* Which hook classes work on this host, and why not when they don't: program
 * type known, securityfs and the active LSM list, a trivial program loads and
 * attaches, and it really fires when the operation is done (user/bpf/probe.c). */
#ifndef KWITNESS_PROBE_H
#define KWITNESS_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kwitness/abi/classes.h"

enum kw_probe_class {
	KW_PROBE_CGROUP_NET,   /* cgroup/connect4 (and the other sock_addr hooks) */
	KW_PROBE_CGROUP_DEV,   /* cgroup/dev */
	KW_PROBE_SYSCTL,       /* cgroup/sysctl */
	KW_PROBE_LSM_FILE,     /* lsm/file_open (fs class) */
	KW_PROBE_LSM_EXEC,     /* lsm/bprm_check_security */
	KW_PROBE_LSM_PROC,     /* lsm/task_kill */
	KW_PROBE_LSM_MOUNT,    /* lsm/sb_mount */
	KW_PROBE_LSM_UNIX,     /* lsm/unix_stream_connect */
	KW_PROBE_LSM_EXEC_DIGEST, /* lsm.s/bprm_check_security hashing the file (bpf_ima_file_hash) */
	KW_PROBE_LSM_BPF,      /* lsm/bpf */
	KW_PROBE_NCLASSES
};

#define KW_PROBE_REASON_MAX 192

struct kw_probe_result {
	bool available;
	char reason[KW_PROBE_REASON_MAX]; /* why not; empty when available */
};

/* "cgroup.net", "cgroup.dev", "sysctl", "lsm.file", "lsm.exec", "lsm.proc",
 * "lsm.mount", "lsm.unix", "lsm.exec_digest", "lsm.bpf"; NULL out of range. */
const char *kw_probe_class_name(int cls);

/* What the hook classes leave out of reach, whatever the kernel: operations
 * no LSM hook sees on Linux 6.1, and how the rules still hold around them
 * (docs/lsm.md, "Notes and limits"). NULL-terminated; printed by `kwitness probe`. */
struct kw_probe_limit {
	const char *what;
	const char *why;
};
extern const struct kw_probe_limit kw_probe_limits[];

/* Probes every class for real (loads, attaches, triggers, counts). Mounts
 * securityfs if needed. Returns 0, or -errno when probing itself could not run. */
int kw_probe_all(struct kw_probe_result out[KW_PROBE_NCLASSES]);

/* Probes one class the same way (the loader asks for lsm.exec_digest: whether
 * the kernel gives the SHA-256 of an executed file). 0 or -errno. */
int kw_probe_class(int cls, struct kw_probe_result *out);

/* Active LSM list ("lockdown,capability,bpf") into buf; mounts securityfs if
 * needed. 0 or -errno. */
int kw_probe_lsm_list(char *buf, size_t len);

/* Cheap check for the loader: `bpf` is an active LSM and a trivial lsm program
 * loads (not attached). 1 yes; 0 no, with why; never fires anything. */
int kw_probe_lsm_loadable(char *why, size_t whylen);

/* What the loader would load on this host: the one answer that the loader
 * (kw_hooks_open) and `kwitness probe` both use. Attaching can still fail
 * later (no cgroup2 mount, tp_btf refused at load); kw_hooks_available says
 * what did attach. */
#define KW_PLAN_ONE_(...) +1
#define KW_PLAN_NONE_(...)
/* Numbers of cgroup and of BPF-LSM programs in KW_CLASS_PROGRAMS. */
#define KW_PLAN_N_CG (0 KW_CLASS_PROGRAMS(KW_PLAN_ONE_, KW_PLAN_NONE_))
#define KW_PLAN_N_LSM (0 KW_CLASS_PROGRAMS(KW_PLAN_NONE_, KW_PLAN_ONE_))

struct kw_probe_plan {
	uint32_t classes;             /* KW_CLASS_* bits whose every program can load */
	bool cg_prog[KW_PLAN_N_CG];   /* per cgroup program, in KW_CLASS_PROGRAMS order */
	bool lsm_prog[KW_PLAN_N_LSM]; /* per BPF-LSM program, in the same order */
	/* the kernel's own BTF has the kfuncs the object calls (weakly): the
	 * loader takes the object built with them only then, since libbpf looks
	 * a kfunc missing from vmlinux up in module BTF, which needs
	 * CAP_SYS_ADMIN (kwitnessd's unit does not have it) */
	bool kfuncs;
	char why[KW_CLASS_COUNT][KW_PROBE_REASON_MAX]; /* per class bit number, why not */
};

/* Fills out. Worked out at the first call of the process and kept; the exec
 * digest probe (a real exec) runs at the first call with exec_digest true.
 * exec_digest false leaves exec.digest out ("turned off by the loader's
 * caller"). */
void kw_probe_plan(bool exec_digest, struct kw_probe_plan *out);

/* Where exec entries' verity_digest comes from on this kernel, the choice
 * the exec programs make: the kfunc bpf_get_fsverity_digest (6.12 on), the
 * inode's fs-verity state as 6.1 lays it out, or nowhere. true when one
 * works; how says which, or why none. */
bool kw_probe_verity(char *how, size_t len);

/* Gives each class of class_bits that has no reason yet (why[bit number])
 * the formatted one: the first reason a class is left out for is kept. */
void kw_class_why(char why[][KW_PROBE_REASON_MAX], uint32_t class_bits, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
