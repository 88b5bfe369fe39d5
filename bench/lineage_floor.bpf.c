// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The floor for bench_lineage: an empty program on each tracepoint the
 * lineage programs use (kw_task_fork, kw_proc_exec, kw_task_free), attached
 * the same way (tp_btf), so the kernel's run_time_ns per run of these is
 * what merely having a program there costs. Not part of the product. */
#include "../bpf/base.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/sched_process_fork")
int BPF_PROG(floor_fork, struct task_struct *parent, struct task_struct *child)
{
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(floor_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	return 0;
}

SEC("tp_btf/sched_process_free")
int BPF_PROG(floor_free, struct task_struct *task)
{
	return 0;
}
