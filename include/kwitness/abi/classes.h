/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The hook classes: one bit per policy section. This table is the only place
 * a class is defined; the kernel programs (enum kw_class), the policy parser
 * (section names), the loader (which programs serve a class), kwitnessd
 * (status, open refusals) and `kwitness probe` all expand it.
 *
 * KW_CLASS_TABLE(X) calls X(id, bit, name, kernel, probe):
 *   id      KW_CLASS_<id> in enum kw_class
 *   bit     its bit number in a class mask
 *   name    the policy section, and the class's name in logs and replies;
 *           "exec.digest" is no section of its own: a policy whose exec.allow
 *           names a SHA-256 needs it (the kernel hashing each executed file)
 *   kernel  CGROUP: cgroup programs attached once at the cgroup2 root;
 *           LSM: BPF-LSM programs attached once, for every task
 *   probe   the `kwitness probe` class that tells whether this kernel can
 *           run the class's kind of program (enum kw_probe_class, KW_PROBE_<probe>)
 */
#ifndef KWITNESS_ABI_CLASSES_H
#define KWITNESS_ABI_CLASSES_H

#define KW_CLASS_TABLE(X)                                                \
	X(NET_CONNECT, 0, "net.connect", CGROUP, CGROUP_NET)             \
	X(NET_SEND, 1, "net.send", CGROUP, CGROUP_NET)                   \
	X(NET_BIND, 2, "net.bind", CGROUP, CGROUP_NET)                   \
	X(NET_SOCKET, 3, "net.socket", CGROUP, CGROUP_NET)               \
	X(DEV, 4, "dev", CGROUP, CGROUP_DEV)                             \
	X(SYSCTL, 5, "sysctl", CGROUP, SYSCTL)                           \
	X(FS, 6, "fs", LSM, LSM_FILE)                                    \
	X(EXEC, 7, "exec", LSM, LSM_EXEC)                                \
	X(PROC, 8, "proc", LSM, LSM_PROC)                                \
	X(MOUNT, 9, "mount", LSM, LSM_MOUNT)                             \
	X(UNIX, 10, "net.unix", LSM, LSM_UNIX)                           \
	X(EXEC_DIGEST, 11, "exec.digest", LSM, LSM_EXEC_DIGEST)          \
	X(NET_DNS, 12, "net.dns", CGROUP, CGROUP_NET)                    \
	X(BPF, 13, "bpf", LSM, LSM_BPF)

/* The programs that serve each class (a class is available only when every
 * hook it needs on this kernel has a program that loads). The two exec programs are one judgement, with
 * and without the file's digest: the loader loads exactly one of them
 * (user/bpf/lsm.c), kw_lsm_bprm_check_digest where this kernel can hash an
 * executed file, and that one then serves exec too. KW_CLASS_PROGRAMS(CG, LSM) calls
 *   CG(class, program, prog_type, section)  a cgroup program: its skeleton
 *       name, BPF_PROG_TYPE_<prog_type>, and its ELF section
 *   LSM(class, program, hook, args, need)   a BPF-LSM program: its skeleton
 *       name, the LSM hook (bpf_lsm_<hook> in the kernel's BTF), and
 *       args  0: any prototype; N: written for the hook's N-argument
 *             prototype (a hook whose arguments changed between kernels has
 *             one program per prototype; the loader loads the one that fits)
 *       need  KW_HOOK_NEEDED: a kernel without the hook cannot serve the class;
 *             KW_HOOK_IF_PRESENT: where the kernel has no such hook, the
 *             operation goes through another one the class has (POSIX ACLs
 *             reach inode_setxattr on 6.1, inode_set_acl from 6.2 on); where it
 *             has it, the class needs the program like any other
 * An LSM program of a CGROUP class extends that class where BPF-LSM works
 * (it is loaded when it can be) and is not part of its availability. */
#define KW_HOOK_NEEDED 0
#define KW_HOOK_IF_PRESENT 1
#define KW_CLASS_PROGRAMS(CG, LSM)                                                     \
	CG(NET_CONNECT, kw_connect4, CGROUP_SOCK_ADDR, "cgroup/connect4")              \
	CG(NET_CONNECT, kw_connect6, CGROUP_SOCK_ADDR, "cgroup/connect6")              \
	CG(NET_SEND, kw_sendmsg4, CGROUP_SOCK_ADDR, "cgroup/sendmsg4")                 \
	CG(NET_SEND, kw_sendmsg6, CGROUP_SOCK_ADDR, "cgroup/sendmsg6")                 \
	CG(NET_BIND, kw_bind4, CGROUP_SOCK_ADDR, "cgroup/bind4")                       \
	CG(NET_BIND, kw_bind6, CGROUP_SOCK_ADDR, "cgroup/bind6")                       \
	CG(NET_SOCKET, kw_sock_create, CGROUP_SOCK, "cgroup/sock_create")              \
	LSM(NET_SOCKET, kw_lsm_socket_create, socket_create, 0, KW_HOOK_NEEDED)               \
	CG(DEV, kw_dev, CGROUP_DEVICE, "cgroup/dev")                                   \
	CG(SYSCTL, kw_sysctl, CGROUP_SYSCTL, "cgroup/sysctl")                          \
	CG(NET_DNS, kw_recvmsg4, CGROUP_SOCK_ADDR, "cgroup/recvmsg4")                  \
	CG(NET_DNS, kw_recvmsg6, CGROUP_SOCK_ADDR, "cgroup/recvmsg6")                  \
	LSM(FS, kw_lsm_file_open, file_open, 0, KW_HOOK_NEEDED)                               \
	LSM(FS, kw_lsm_path_unlink, path_unlink, 0, KW_HOOK_NEEDED)                           \
	LSM(FS, kw_lsm_path_mkdir, path_mkdir, 0, KW_HOOK_NEEDED)                             \
	LSM(FS, kw_lsm_path_rmdir, path_rmdir, 0, KW_HOOK_NEEDED)                             \
	LSM(FS, kw_lsm_path_mknod, path_mknod, 0, KW_HOOK_NEEDED)                             \
	LSM(FS, kw_lsm_path_symlink, path_symlink, 0, KW_HOOK_NEEDED)                         \
	LSM(FS, kw_lsm_path_truncate, path_truncate, 0, KW_HOOK_NEEDED)                       \
	LSM(FS, kw_lsm_path_link, path_link, 0, KW_HOOK_NEEDED)                               \
	LSM(FS, kw_lsm_path_rename, path_rename, 0, KW_HOOK_NEEDED)                           \
	LSM(FS, kw_lsm_path_chmod, path_chmod, 0, KW_HOOK_NEEDED)                             \
	LSM(FS, kw_lsm_path_chown, path_chown, 0, KW_HOOK_NEEDED)                             \
	LSM(FS, kw_lsm_inode_setattr, inode_setattr, 2, KW_HOOK_NEEDED)                       \
	LSM(FS, kw_lsm_inode_setattr_idmap, inode_setattr, 3, KW_HOOK_NEEDED)                 \
	LSM(FS, kw_lsm_inode_setxattr, inode_setxattr, 0, KW_HOOK_NEEDED)                     \
	LSM(FS, kw_lsm_inode_removexattr, inode_removexattr, 0, KW_HOOK_NEEDED)               \
	LSM(FS, kw_lsm_inode_set_acl, inode_set_acl, 0, KW_HOOK_IF_PRESENT)                   \
	LSM(FS, kw_lsm_inode_remove_acl, inode_remove_acl, 0, KW_HOOK_IF_PRESENT)             \
	LSM(FS, kw_lsm_file_truncate, file_truncate, 0, KW_HOOK_IF_PRESENT)                   \
	LSM(FS, kw_lsm_file_ioctl_attr, file_ioctl, 0, KW_HOOK_NEEDED)                        \
	LSM(FS, kw_lsm_file_ioctl_compat_attr, file_ioctl_compat, 0, KW_HOOK_IF_PRESENT)      \
	LSM(FS, kw_lsm_inode_file_setattr, inode_file_setattr, 2, KW_HOOK_IF_PRESENT)         \
	LSM(EXEC, kw_lsm_bprm_check, bprm_check_security, 0, KW_HOOK_NEEDED)                  \
	LSM(EXEC_DIGEST, kw_lsm_bprm_check_digest, bprm_check_security, 0, KW_HOOK_NEEDED)    \
	LSM(PROC, kw_lsm_task_kill, task_kill, 0, KW_HOOK_NEEDED)                             \
	LSM(PROC, kw_lsm_ptrace, ptrace_access_check, 0, KW_HOOK_NEEDED)                      \
	LSM(PROC, kw_lsm_file_fcntl, file_fcntl, 0, KW_HOOK_NEEDED)                           \
	LSM(PROC, kw_lsm_file_ioctl, file_ioctl, 0, KW_HOOK_NEEDED)                           \
	LSM(PROC, kw_lsm_file_free, file_free_security, 0, KW_HOOK_NEEDED)                    \
	LSM(PROC, kw_lsm_file_sigio, file_send_sigiotask, 0, KW_HOOK_NEEDED)                  \
	LSM(MOUNT, kw_lsm_sb_mount, sb_mount, 0, KW_HOOK_NEEDED)                              \
	LSM(MOUNT, kw_lsm_move_mount, move_mount, 0, KW_HOOK_NEEDED)                          \
	LSM(MOUNT, kw_lsm_sb_umount, sb_umount, 0, KW_HOOK_NEEDED)                            \
	LSM(MOUNT, kw_lsm_sb_pivotroot, sb_pivotroot, 0, KW_HOOK_NEEDED)                      \
	LSM(MOUNT, kw_lsm_fs_param, fs_context_parse_param, 0, KW_HOOK_NEEDED)                \
	LSM(UNIX, kw_lsm_unix_connect, unix_stream_connect, 0, KW_HOOK_NEEDED)                \
	LSM(UNIX, kw_lsm_unix_may_send, unix_may_send, 0, KW_HOOK_NEEDED)                    \
	LSM(BPF, kw_lsm_bpf, bpf, 3, KW_HOOK_NEEDED)                                         \
	LSM(BPF, kw_lsm_bpf_kernel, bpf, 4, KW_HOOK_NEEDED)

/* Classes a policy governs: one bit per policy section. A class not set is
 * neither evaluated nor recorded. */
#define KW_CLASS_ENUM_(id, bit, name, kernel, probe) KW_CLASS_##id = 1u << (bit),
enum kw_class { KW_CLASS_TABLE(KW_CLASS_ENUM_) };
#undef KW_CLASS_ENUM_

/* Kinds of the kernel column. */
#define KW_CLASS_KIND_CGROUP 1
#define KW_CLASS_KIND_LSM 2

#define KW_CLASS_COUNT_(id, bit, name, kernel, probe) +1
/* Number of classes; bits 0 .. KW_CLASS_COUNT - 1. */
#define KW_CLASS_COUNT (0 KW_CLASS_TABLE(KW_CLASS_COUNT_))
#define KW_CLASS_MASK_LSM_(id, bit, name, kernel, probe) \
	| (KW_CLASS_KIND_##kernel == KW_CLASS_KIND_LSM ? (1u << (bit)) : 0u)
/* Every class served by BPF-LSM programs. */
#define KW_CLASS_LSM_MASK (0u KW_CLASS_TABLE(KW_CLASS_MASK_LSM_))
#define KW_CLASS_MASK_ALL_(id, bit, name, kernel, probe) | (1u << (bit))
#define KW_CLASS_ALL_MASK (0u KW_CLASS_TABLE(KW_CLASS_MASK_ALL_))

#endif
