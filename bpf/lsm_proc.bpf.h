/* SPDX-License-Identifier: Apache-2.0 */
/* proc (task_kill, ptrace_access_check) and mount (sb_mount). A session may
 * signal and trace only its own processes - the target's cgroup maps to the
 * same slot - unless proc.signal_outside; mounting is refused inside a session
 * unless mount.allow. Included by lsm.bpf.h. */
#ifndef KWITNESS_LSM_PROC_BPF_H
#define KWITNESS_LSM_PROC_BPF_H

/* Records a process decision; returns the hook's verdict. */
static __always_inline int kw_proc_decide(struct task_struct *target, __u16 kind, __u32 sig_or_mode)
{
	struct kw_lsm_slot *cfg;
	struct kw_ev_proc *e;
	struct kw_ctx c;
	__u64 target_cg;
	__u32 *tslot;
	__u16 rule = KW_RULE_DEFAULT;
	int permit, verdict;

	if (!kw_session_find(&c, KW_CLASS_PROC))
		return 0;
	target_cg = BPF_CORE_READ(target, cgroups, dfl_cgrp, kn, id);
	tslot = bpf_map_lookup_elem(&kw_cgroups, &target_cg);
	permit = tslot && *tslot == c.slot;
	if (!permit) {
		cfg = bpf_map_lookup_elem(&kw_lsm_slots, &c.slot);
		if (cfg && cfg->signal_outside) {
			permit = 1;
			rule = 0; /* "proc.signal_outside" */
		}
	}
	e = kw_record_decision(&c, kind, permit, rule, sizeof(*e), &verdict);
	if (e) {
		e->target_pid = BPF_CORE_READ(target, tgid);
		e->sig_or_mode = sig_or_mode;
		e->target_cgroup = target_cg;
		kw_event_submit(e);
	}
	return verdict ? 0 : -EPERM;
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

SEC("lsm/sb_mount")
int BPF_PROG(kw_lsm_sb_mount, const char *dev_name, const struct path *path, const char *type,
	     unsigned long flags, void *data, int ret)
{
	struct kw_lsm_scratch *sc;
	struct kw_lsm_slot *cfg;
	struct kw_ctx c;
	int permit;

	if (ret)
		return ret;
	if (!kw_session_find(&c, KW_CLASS_MOUNT))
		return 0;
	cfg = bpf_map_lookup_elem(&kw_lsm_slots, &c.slot);
	permit = cfg && cfg->mount_allow;
	sc = kw_scratch();
	if (!sc)
		return kw_fail_closed(&c, KW_EV_MOUNT, -EPERM);
	/* the record names the mount point */
	kw_path_build(sc, BPF_CORE_READ(path, mnt), BPF_CORE_READ(path, dentry), NULL);
	return kw_path_record(&c, sc, KW_EV_MOUNT, (__u32)flags, permit,
			      permit ? 0 : KW_RULE_DEFAULT, EPERM);
}

#endif
