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
	X(NET_DNS, 12, "net.dns", CGROUP, CGROUP_NET)

/* The programs that serve each class (a class is available only when every
 * one of its programs loads). The two exec programs are one judgement, with
 * and without the file's digest: the loader loads exactly one of them
 * (user/bpf/lsm.c), kw_lsm_bprm_check_digest where this kernel can hash an
 * executed file, and that one then serves exec too. KW_CLASS_PROGRAMS(CG, LSM) calls
 *   CG(class, program, prog_type, section)  a cgroup program: its skeleton
 *       name, BPF_PROG_TYPE_<prog_type>, and its ELF section
 *   LSM(class, program, hook)               a BPF-LSM program: its skeleton
 *       name and the LSM hook (the kernel must have bpf_lsm_<hook>)
 * An LSM program of a CGROUP class extends that class where BPF-LSM works
 * (it is loaded when it can be) and is not part of its availability. */
#define KW_CLASS_PROGRAMS(CG, LSM)                                                     \
	CG(NET_CONNECT, kw_connect4, CGROUP_SOCK_ADDR, "cgroup/connect4")              \
	CG(NET_CONNECT, kw_connect6, CGROUP_SOCK_ADDR, "cgroup/connect6")              \
	CG(NET_SEND, kw_sendmsg4, CGROUP_SOCK_ADDR, "cgroup/sendmsg4")                 \
	CG(NET_SEND, kw_sendmsg6, CGROUP_SOCK_ADDR, "cgroup/sendmsg6")                 \
	CG(NET_BIND, kw_bind4, CGROUP_SOCK_ADDR, "cgroup/bind4")                       \
	CG(NET_BIND, kw_bind6, CGROUP_SOCK_ADDR, "cgroup/bind6")                       \
	CG(NET_SOCKET, kw_sock_create, CGROUP_SOCK, "cgroup/sock_create")              \
	LSM(NET_SOCKET, kw_lsm_socket_create, socket_create)                           \
	CG(DEV, kw_dev, CGROUP_DEVICE, "cgroup/dev")                                   \
	CG(SYSCTL, kw_sysctl, CGROUP_SYSCTL, "cgroup/sysctl")                          \
	CG(NET_DNS, kw_recvmsg4, CGROUP_SOCK_ADDR, "cgroup/recvmsg4")                  \
	CG(NET_DNS, kw_recvmsg6, CGROUP_SOCK_ADDR, "cgroup/recvmsg6")                  \
	LSM(FS, kw_lsm_file_open, file_open)                                           \
	LSM(FS, kw_lsm_path_unlink, path_unlink)                                       \
	LSM(FS, kw_lsm_path_mkdir, path_mkdir)                                         \
	LSM(FS, kw_lsm_path_rmdir, path_rmdir)                                         \
	LSM(FS, kw_lsm_path_mknod, path_mknod)                                         \
	LSM(FS, kw_lsm_path_symlink, path_symlink)                                     \
	LSM(FS, kw_lsm_path_truncate, path_truncate)                                   \
	LSM(FS, kw_lsm_path_link, path_link)                                           \
	LSM(FS, kw_lsm_path_rename, path_rename)                                       \
	LSM(FS, kw_lsm_path_chmod, path_chmod)                                         \
	LSM(FS, kw_lsm_path_chown, path_chown)                                         \
	LSM(FS, kw_lsm_inode_setattr, inode_setattr)                                   \
	LSM(FS, kw_lsm_inode_setxattr, inode_setxattr)                                 \
	LSM(FS, kw_lsm_inode_removexattr, inode_removexattr)                           \
	LSM(EXEC, kw_lsm_bprm_check, bprm_check_security)                              \
	LSM(EXEC_DIGEST, kw_lsm_bprm_check_digest, bprm_check_security)                \
	LSM(PROC, kw_lsm_task_kill, task_kill)                                         \
	LSM(PROC, kw_lsm_ptrace, ptrace_access_check)                                  \
	LSM(PROC, kw_lsm_file_fcntl, file_fcntl)                                       \
	LSM(PROC, kw_lsm_file_ioctl, file_ioctl)                                       \
	LSM(PROC, kw_lsm_file_free, file_free_security)                                \
	LSM(PROC, kw_lsm_file_sigio, file_send_sigiotask)                              \
	LSM(MOUNT, kw_lsm_sb_mount, sb_mount)                                          \
	LSM(MOUNT, kw_lsm_move_mount, move_mount)                                      \
	LSM(MOUNT, kw_lsm_sb_umount, sb_umount)                                        \
	LSM(MOUNT, kw_lsm_sb_pivotroot, sb_pivotroot)                                  \
	LSM(MOUNT, kw_lsm_fs_param, fs_context_parse_param)                            \
	LSM(UNIX, kw_lsm_unix_connect, unix_stream_connect)                            \
	LSM(UNIX, kw_lsm_unix_may_send, unix_may_send)

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
