/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* proc (task_kill, ptrace_access_check, file_send_sigiotask) and mount
 * (sb_mount, move_mount, sb_umount, sb_pivotroot, fs_context_parse_param). A
 * session may signal and trace only its own processes - the target's cgroup
 * maps to the same slot - unless proc.signal_outside; changing the mount tree
 * is refused inside a session unless mount.allow. Included by lsm.bpf.h. */
#ifndef KWITNESS_LSM_PROC_BPF_H
#define KWITNESS_LSM_PROC_BPF_H

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

struct file___kw61 {
	struct fown_struct f_owner;
} __attribute__((preserve_access_index));

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
	key = (__u64)((void *)fown - bpf_core_field_offset(struct file___kw61, f_owner));
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

/* ---- mount ---- */

/* Judges a change of the mount tree: refused unless mount.allow. The record
 * names the mount point (any_root: reported as the kernel walks it). */
static __always_inline int kw_mount_hook(__u32 op, struct vfsmount *mnt, struct dentry *dentry)
{
	struct kw_lsm_scratch *sc;
	struct kw_lsm_slot *cfg;
	struct kw_ctx c;
	int permit;

	if (!kw_session_find(&c, KW_CLASS_MOUNT))
		return 0;
	cfg = bpf_map_lookup_elem(&kw_lsm_slots, &c.slot);
	permit = cfg && cfg->mount_allow;
	sc = kw_scratch();
	if (!sc)
		return kw_fail_closed(&c, KW_EV_MOUNT, -EPERM);
	kw_path_build_ex(sc, mnt, dentry, NULL, 1);
	return kw_path_record(&c, sc, KW_EV_MOUNT, op, permit, permit ? 0 : KW_RULE_DEFAULT, EPERM);
}

SEC("lsm/sb_mount")
int BPF_PROG(kw_lsm_sb_mount, const char *dev_name, const struct path *path, const char *type,
	     unsigned long flags, void *data, int ret)
{
	if (ret)
		return ret;
	return kw_mount_hook(KW_MOUNTOP_MOUNT, BPF_CORE_READ(path, mnt), BPF_CORE_READ(path, dentry));
}

/* move_mount(2): attaching a detached tree (open_tree, fsmount) or moving a
 * mount; the record names the target. */
SEC("lsm/move_mount")
int BPF_PROG(kw_lsm_move_mount, const struct path *from_path, const struct path *to_path, int ret)
{
	if (ret)
		return ret;
	return kw_mount_hook(KW_MOUNTOP_MOVE, BPF_CORE_READ(to_path, mnt),
			     BPF_CORE_READ(to_path, dentry));
}

/* umount(2) would uncover what a mount hides. */
SEC("lsm/sb_umount")
int BPF_PROG(kw_lsm_sb_umount, struct vfsmount *mnt, int flags, int ret)
{
	if (ret)
		return ret;
	return kw_mount_hook(KW_MOUNTOP_UMOUNT, mnt, BPF_CORE_READ(mnt, mnt_root));
}

/* pivot_root(2) changes what every path is relative to. */
SEC("lsm/sb_pivotroot")
int BPF_PROG(kw_lsm_sb_pivotroot, const struct path *old_path, const struct path *new_path,
	     int ret)
{
	if (ret)
		return ret;
	return kw_mount_hook(KW_MOUNTOP_PIVOT_ROOT, BPF_CORE_READ(new_path, mnt),
			     BPF_CORE_READ(new_path, dentry));
}

/* fsconfig(2) setting an option of a new or picked filesystem (fsopen,
 * fspick). Under mount.allow it is not a decision of its own (the mount is
 * judged where it attaches: sb_mount, move_mount), so nothing is recorded;
 * otherwise it is refused and recorded with the filesystem type. The options
 * of a mount(2) pass here too: they are not judged again. */
SEC("lsm/fs_context_parse_param")
int BPF_PROG(kw_lsm_fs_param, struct fs_context *fc, struct fs_parameter *param, int ret)
{
	struct kw_lsm_scratch *sc;
	struct kw_lsm_slot *cfg;
	const char *type;
	struct kw_ctx c;
	__u64 owner;
	long r;

	if (ret)
		return ret;
	if (!kw_session_find(&c, KW_CLASS_MOUNT))
		return 0;
	cfg = bpf_map_lookup_elem(&kw_lsm_slots, &c.slot);
	if (cfg && cfg->mount_allow)
		return 0;
	/* fsconfig(2) parses under the context's uapi_mutex, held by this task;
	 * mount(2) parses its options without it, after sb_mount judged it */
	owner = BPF_CORE_READ(fc, uapi_mutex.owner.counter);
	if ((owner & ~0x7UL) != (__u64)bpf_get_current_task())
		return 0;
	sc = kw_scratch();
	if (!sc)
		return kw_fail_closed(&c, KW_EV_MOUNT, -EPERM);
	__builtin_memset(sc->path, 0, sizeof(sc->path));
	sc->truncated = 0;
	sc->detached = 0;
	type = BPF_CORE_READ(fc, fs_type, name);
	r = bpf_probe_read_kernel_str(sc->path, 64, type);
	sc->len = r > 1 ? (__u32)(r - 1) & 63 : 0;
	return kw_path_record(&c, sc, KW_EV_MOUNT, KW_MOUNTOP_FSCONFIG, 0, KW_RULE_DEFAULT, EPERM);
}

#endif
