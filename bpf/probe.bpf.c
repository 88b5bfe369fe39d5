// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* `kwitness probe`: one tiny program per hook class. Each counts the calls made
 * by the probing child (target_tgid) and lets them through unchanged, so
 * userspace can tell "loads and attaches" from "actually fires". */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Index into hits[]; the same order as enum kw_probe_class (probe.h). */
enum { P_NET, P_DEV, P_SYSCTL, P_FILE, P_EXEC, P_PROC, P_MOUNT, P_UNIX, P_EXEC_DIGEST, P_BPF, P_N };

__u32 target_tgid = 0;
__u64 hits[P_N] = {};
/* lsm.exec_digest: calls seen, and what bpf_ima_file_hash returned last */
__u64 digest_calls = 0;
__s64 digest_ret = 0;

static __always_inline void count(int i)
{
	if ((__u32)(bpf_get_current_pid_tgid() >> 32) == target_tgid && target_tgid)
		__sync_fetch_and_add(&hits[i], 1);
}

SEC("cgroup/connect4")
int probe_connect4(struct bpf_sock_addr *ctx)
{
	count(P_NET);
	return 1;
}

SEC("cgroup/dev")
int probe_dev(struct bpf_cgroup_dev_ctx *ctx)
{
	count(P_DEV);
	return 1;
}

SEC("cgroup/sysctl")
int probe_sysctl(struct bpf_sysctl *ctx)
{
	count(P_SYSCTL);
	return 1;
}

SEC("lsm/file_open")
int BPF_PROG(probe_file_open, struct file *file, int ret)
{
	count(P_FILE);
	return ret;
}

SEC("lsm/bprm_check_security")
int BPF_PROG(probe_bprm_check, struct linux_binprm *bprm, int ret)
{
	count(P_EXEC);
	return ret;
}

SEC("lsm/task_kill")
int BPF_PROG(probe_task_kill, struct task_struct *p, struct kernel_siginfo *info, int sig,
	     const struct cred *cred, int ret)
{
	count(P_PROC);
	return ret;
}

SEC("lsm/sb_mount")
int BPF_PROG(probe_sb_mount, const char *dev_name, const struct path *path, const char *type,
	     unsigned long flags, void *data, int ret)
{
	count(P_MOUNT);
	return ret;
}

SEC("lsm/bpf")
/* The hook's arguments changed (6.16 added "kernel"), so its return value
 * has no fixed place: 0 lets the call through (a program runs only while no
 * earlier one refused). */
int BPF_PROG(probe_bpf, int cmd)
{
	count(P_BPF);
	return 0;
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(probe_unix_connect, struct sock *sock, struct sock *other, struct sock *newsk,
	     int ret)
{
	count(P_UNIX);
	return ret;
}

/* Counts only an exec whose file the kernel hashed with SHA-256 (IMA's
 * enum hash_algo 4): what the exec.digest class needs. */
SEC("lsm.s/bprm_check_security")
int BPF_PROG(probe_bprm_digest, struct linux_binprm *bprm, int ret)
{
	__u8 d[64];
	long r;

	if ((__u32)(bpf_get_current_pid_tgid() >> 32) != target_tgid || !target_tgid)
		return ret;
	r = bpf_ima_file_hash(bprm->file, d, sizeof(d));
	digest_ret = r;
	__sync_fetch_and_add(&digest_calls, 1);
	if (r == 4)
		__sync_fetch_and_add(&hits[P_EXEC_DIGEST], 1);
	return ret;
}
