/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* proc: task_kill, ptrace_access_check and file_send_sigiotask. A session may
 * signal and trace only its own processes - the target's cgroup maps to the
 * same slot - unless proc.signal_outside. */
#ifndef KWITNESS_LSM_PROC_BPF_H
#define KWITNESS_LSM_PROC_BPF_H

#include "base.bpf.h"
#include "maps.bpf.h"
#include "session.bpf.h"
#include "lsm_slot.bpf.h"

#define KW_PTRACE_MODE_NOAUDIT 0x04

/* Judges and records a process decision of session c; returns the hook's
 * verdict. */
static __always_inline int kw_proc_judge(struct kw_ctx *c, struct task_struct *target, __u16 kind,
					 __u32 sig_or_mode)
{
	struct kw_lsm_slot *cfg;
	struct kw_ev_proc *e;
	__u64 target_cg;
	__u32 *tslot;
	__u16 rule = KW_RULE_DEFAULT;
	int permit, verdict;

	target_cg = BPF_CORE_READ(target, cgroups, dfl_cgrp, kn, id);
	tslot = bpf_map_lookup_elem(&kw_cgroups, &target_cg);
	permit = tslot && *tslot == c->slot;
	if (!permit) {
		cfg = bpf_map_lookup_elem(&kw_lsm_slots, &c->slot);
		if (cfg && cfg->signal_outside) {
			permit = 1;
			rule = 0; /* "proc.signal_outside" */
		}
	}
	e = kw_record_decision(c, kind, permit, rule, sizeof(*e), &verdict);
	if (e) {
		e->target_pid = BPF_CORE_READ(target, tgid);
		e->sig_or_mode = sig_or_mode;
		e->target_cgroup = target_cg;
		kw_event_submit(e);
	}
	return verdict ? 0 : -EPERM;
}

static __always_inline int kw_proc_decide(struct task_struct *target, __u16 kind, __u32 sig_or_mode)
{
	struct kw_ctx c;

	if (!kw_session_find(&c, KW_CLASS_PROC))
		return 0;
	return kw_proc_judge(&c, target, kind, sig_or_mode);
}

SEC("lsm/task_kill")
int BPF_PROG(kw_lsm_task_kill, struct task_struct *p, struct kernel_siginfo *info, int sig,
	     const struct cred *cred, int ret)
{
	if (ret)
		return ret;
	return kw_proc_decide(p, KW_EV_PROC_KILL, (__u32)sig);
}

SEC("lsm/ptrace_access_check")
int BPF_PROG(kw_lsm_ptrace, struct task_struct *child, unsigned int mode, int ret)
{
	if (ret)
		return ret;
	/* NOAUDIT checks are the kernel asking quietly (e.g. for /proc listings);
	 * they gate no tracing of their own and are not decisions to record */
	if (mode & KW_PTRACE_MODE_NOAUDIT)
		return 0;
	return kw_proc_decide(child, KW_EV_PROC_PTRACE, mode);
}

/* ---- signals through file ownership (F_SETOWN + O_ASYNC: SIGIO, SIGURG or
 * the F_SETSIG signal) ----
 * The signal is raised by whoever causes the I/O, possibly from interrupt
 * context; the one who aimed it is whoever set the file's owner. So the
 * session of the task setting an owner (fcntl F_SETOWN, F_SETOWN_EX, F_SETSIG;
 * ioctl FIOSETOWN, SIOCSPGRP) is remembered per file, and each signal the
 * file sends is judged against that session like a kill(). */
struct kw_sigio_owner {
	__u64 cgroup_id;
	__u32 slot;
	__u32 generation;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64); /* struct file * */
	__type(value, struct kw_sigio_owner);
} kw_sigio_owners SEC(".maps");

/* Entries in kw_sigio_owners (approximate): file_free_security and
 * file_send_sigiotask skip the map while it is empty. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} kw_sigio_count SEC(".maps");

static __always_inline __u64 *kw_sigio_tagged(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&kw_sigio_count, &zero);
}

/* A file's owner: embedded in struct file up to 6.11, a separate
 * fown_struct pointing back at its file from 6.12 on. */
struct file___kw61 {
	struct fown_struct f_owner;
} __attribute__((preserve_access_index));

struct fown_struct___kw612 {
	struct file *file;
} __attribute__((preserve_access_index));

/* The file whose owner fown is (the key kw_sigio_owners is indexed by). */
static __always_inline __u64 kw_fown_file(struct fown_struct *fown)
{
	if (bpf_core_field_exists(struct fown_struct___kw612, file))
		return (__u64)BPF_CORE_READ((struct fown_struct___kw612 *)fown, file);
	return (__u64)((void *)fown - bpf_core_field_offset(struct file___kw61, f_owner));
}

#define KW_F_SETOWN 8
#define KW_F_SETSIG 10
#define KW_F_SETOWN_EX 15
#define KW_FIOSETOWN 0x8901
#define KW_SIOCSPGRP 0x8902
#define KW_SIGIO 29

static __always_inline int kw_sigio_tag(struct file *file)
{
	struct kw_sigio_owner o;
	struct kw_ctx c;
	__u64 key = (__u64)file;

	if (!kw_session_find(&c, KW_CLASS_PROC))
		return 0;
	o.cgroup_id = c.cgroup_id;
	o.slot = c.slot;
	o.generation = c.s->generation;
	__u64 *n = kw_sigio_tagged();

	if (!n || bpf_map_update_elem(&kw_sigio_owners, &key, &o, BPF_ANY))
		/* untracked, its signals would go unjudged: the owner change is a
		 * decision that could not be evaluated */
		return kw_fail_closed(&c, KW_EV_PROC_SIGIO, -EPERM);
	__sync_fetch_and_add(n, 1);
	return 0;
}

SEC("lsm/file_fcntl")
int BPF_PROG(kw_lsm_file_fcntl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	if (ret)
		return ret;
	if (cmd != KW_F_SETOWN && cmd != KW_F_SETOWN_EX && cmd != KW_F_SETSIG)
		return 0;
	return kw_sigio_tag(file);
}

SEC("lsm/file_ioctl")
int BPF_PROG(kw_lsm_file_ioctl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	if (ret)
		return ret;
	if (cmd != KW_FIOSETOWN && cmd != KW_SIOCSPGRP)
		return 0;
	return kw_sigio_tag(file);
}

SEC("lsm/file_free_security")
int BPF_PROG(kw_lsm_file_free, struct file *file)
{
	__u64 key = (__u64)file, *n = kw_sigio_tagged();

	if (!n || !*n)
		return 0;
	if (!bpf_map_delete_elem(&kw_sigio_owners, &key))
		__sync_fetch_and_add(n, -1);
	return 0;
}

SEC("lsm/file_send_sigiotask")
int BPF_PROG(kw_lsm_file_sigio, struct task_struct *tsk, struct fown_struct *fown, int sig,
	     int ret)
{
	struct kw_sigio_owner *o;
	struct kw_ctx c;
	__u64 key, *n;

	if (ret)
		return ret;
	n = kw_sigio_tagged();
	if (!n || !*n)
		return 0;
	key = kw_fown_file(fown);
	o = bpf_map_lookup_elem(&kw_sigio_owners, &key);
	if (!o)
		return 0;
	c.slot = o->slot;
	c.cgroup_id = o->cgroup_id;
	c.s = bpf_map_lookup_elem(&kw_sessions, &c.slot);
	if (!c.s || c.s->generation != o->generation || !(c.s->classes & KW_CLASS_PROC))
		return 0;
	return kw_proc_judge(&c, tsk, KW_EV_PROC_SIGIO, sig ? (__u32)sig : KW_SIGIO);
}

#endif
