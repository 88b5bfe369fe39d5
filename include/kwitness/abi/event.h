/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Layouts shared by the BPF programs (bpf/) and userspace (user/): session
 * slots, per-session configuration and counters, rule map keys and values, and
 * the fixed-layout decision events written to the per-session ring buffers.
 * Types are the kernel's __u8..__u64 so the BPF side can use vmlinux.h. */
#ifndef KWITNESS_EVENT_H
#define KWITNESS_EVENT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "kwitness/abi/classes.h"
#include "kwitness/abi/events.h"

/* Session slots: index into kw_sessions and kw_ringbufs. */
#define KW_MAX_SESSIONS 1024
/* Cgroups (a tagged cgroup and its descendants) the kernel can map to slots. */
#define KW_MAX_CGROUPS 65536
/* Cgroups one session may add to that map after it opened (its descendants
 * made while it runs), so one sandbox cannot take the table from the others.
 * A descendant past this, or one the full table cannot hold, is not tracked:
 * a KW_EV_CGROUP_UNTRACKED entry is logged and the session is incomplete. */
#define KW_SESSION_MAX_CGROUPS 1024
/* Tasks (threads) carrying a session tag, across all sessions. */
#define KW_MAX_TAGGED_TASKS 262144
/* kw_unmarked's keys (bpf/maps.bpf.h): a session being tagged, a mark missed. */
enum { KW_UNMARKED_OPENING = 0, KW_UNMARKED_FAILED = 1, KW_UNMARKED_KEYS = 2 };
#define KW_COMM_LEN 16
#define KW_SYSCTL_NAME_MAX 64
/* Kernel path buffer for LSM decisions; longer paths carry KW_EVF_TRUNCATED. */
#define KW_PATH_MAX 256
/* Port/action entries per network prefix (own and inherited, see policy.c). */
#define KW_NET_PORT_RULES 16
/* Rule index meaning "no rule matched": the section's default deny. */
#define KW_RULE_DEFAULT 0xffff
/* Rule of a net decision the resolver guard made whatever the policy says
 * (docs/security.md, "DNS"): "net.dns:guard". */
#define KW_RULE_RESOLVER_GUARD 0xfffe
/* Rule of an LSM path decision: the list (enum kw_path_kind in policy.h: 1
 * fs.read, 2 fs.write, 3 fs.deny, 4 exec.allow, 5 net.unix) in the top 4 bits,
 * the index in that list below. kw_rule_name() prints "fs.deny[3]". */
#define KW_RULE_PATH(kind, index) ((__u16)(((kind) << 12) | ((index) & 0xfff)))
#define KW_RULE_PATH_KIND(rule) ((rule) >> 12)
#define KW_RULE_PATH_INDEX(rule) ((rule) & 0xfff)
/* Rule of an exec refused because the file's digest is not the one its
 * exec.allow entry requires ({"path", "sha256"}): "exec.allow[3]:digest_mismatch". */
#define KW_RULE_KIND_DIGEST_MISMATCH 6

enum kw_mode { KW_MODE_ENFORCE = 0, KW_MODE_ADVISORY = 1, KW_MODE_SILENT = 2 };
enum kw_record_mode { KW_RECORD_ALL = 0, KW_RECORD_DENY = 1 };
enum kw_on_failure { KW_ONFAIL_DENY = 0, KW_ONFAIL_ALLOW = 1 };


/* kw_session.socket_allow bits. Bits 0-7: an inet socket of that type (type &
 * 7), 8-15: inet6; ping sockets (SOCK_DGRAM with IPPROTO_ICMP/ICMPV6) have bits
 * of their own, so "dgram" never grants them. */
#define KW_SOCK_BIT(family_index, type) ((family_index) * 8 + ((type) & 7))
#define KW_SOCK_BIT_INET_ICMP 16
#define KW_SOCK_BIT_INET6_ICMP 17
/* AF_PACKET (any type), decided by lsm/socket_create where BPF-LSM works */
#define KW_SOCK_BIT_PACKET 18
#define KW_SOCK_BITS 32 /* a power of two: the kernel side masks with it */
/* kw_session.flags */
/* No net.socket list, but other net lists: the inet/inet6 stream and datagram
 * sockets pass undecided (the other lists govern what they do); any other inet
 * socket (raw, ping, seqpacket) is a denied net.socket decision. */
#define KW_SESSF_SOCKET_IMPLICIT 0x01

/* Network operations in kw_net_key.op. */
enum kw_net_op { KW_NET_CONNECT = 1, KW_NET_SEND = 2, KW_NET_BIND = 3 };

/* Per-session state, kw_sessions[slot]. The configuration half is written by
 * kwitnessd before the session's cgroup is tagged; the counters are updated by
 * the programs with atomic adds. */
struct kw_session {
	/* configuration */
	__u32 classes;        /* enum kw_class bits */
	__u32 generation;     /* bumps each time the slot is reused */
	__u8 mode;            /* enum kw_mode */
	__u8 record;          /* enum kw_record_mode */
	__u8 on_failure;      /* enum kw_on_failure */
	__u8 sysctl_write;    /* 1: sysctl writes allowed */
	__u32 wakeup_bytes;   /* 0: wake the consumer per event (once caught up);
				 N: only once N bytes wait (consumer polls) */
	__u64 socket_allow;   /* KW_SOCK_BIT_*: which inet/inet6 sockets may be created */
	__u8 socket_rule[KW_SOCK_BITS]; /* net.socket list index behind each socket_allow bit */
	__u8 flags;           /* KW_SESSF_* */
	__u8 pad0[7];
	/* counters (own cache line) */
	__u64 next_seq;       /* sequence numbers handed out to recorded decisions */
	__u64 dropped;        /* decisions whose event could not be reserved */
	__u64 unrecorded;     /* permits not recorded under record: deny */
	__u64 denials;        /* deny decisions (enforced or not) */
	__s64 cgroups;        /* descendants tagged since open, less those removed */
	__u64 untracked;      /* descendants that could not be tagged */
	__u64 pad2[2];
};

/* kw_lost[slot]: one bit per sequence number, modulo KW_LOST_BITS, set by
 * the program whose event could not be reserved (a drop). The collector reads
 * it to give up a missing number at once instead of waiting for a number in
 * flight that never comes; it trusts a bit only while fewer than
 * KW_LOST_BITS numbers have been handed out past it. Zeroed at session open. */
#define KW_LOST_BITS 32768
struct kw_lost {
	__u64 bits[KW_LOST_BITS / 64];
};

/* kw_net_rules: LPM trie. prefixlen counts the bits after itself: 64 bits of
 * slot/op/family/pad, then the address prefix. */
struct kw_net_key {
	__u32 prefixlen;
	__u32 slot;
	__u8 op;      /* enum kw_net_op */
	__u8 family;  /* 4 or 6; IPv4-mapped IPv6 addresses are looked up as 4 */
	__u8 pad[2];
	__u8 addr[16];
};

struct kw_net_port_rule {
	__u16 port_lo;   /* host order, inclusive */
	__u16 port_hi;
	__u16 rule;      /* index in the policy section */
	__u8 prefixlen;  /* address prefix length of the rule, for longest match */
	__u8 allow;      /* 1 allow, 0 deny */
};

/* Value at a prefix: that prefix's own rules plus every rule of a shorter
 * prefix covering it (the compiler copies them down), so one lookup finds every
 * candidate; the longest matching prefix wins and a tie goes to deny. */
struct kw_net_rules {
	__u32 count;
	__u32 pad;
	struct kw_net_port_rule r[KW_NET_PORT_RULES];
};

/* kw_dev_rules: hash. KW_DEV_ANY in major/minor is a wildcard; lookup order
 * exact, (major, any), (any, any). type is BPF_DEVCG_DEV_BLOCK/CHAR. */
#define KW_DEV_ANY 0xffffffffu
struct kw_dev_key {
	__u32 slot;
	__u32 type;
	__u32 major;
	__u32 minor;
};
struct kw_dev_rule {
	__u32 access; /* BPF_DEVCG_ACC_MKNOD | _READ | _WRITE allowed */
	__u16 rule;
	__u16 pad;
};

/* ---- Decision events (ring buffer records) ---- */
/* enum kw_event_kind: kwitness/abi/events.h */

enum kw_decision { KW_DENY = 0, KW_PERMIT = 1 };

/* kw_ev_path.access for KW_EV_FS_OPEN, KW_EV_FS_EXEC */
#define KW_ACC_READ 0x1
#define KW_ACC_WRITE 0x2
#define KW_ACC_EXEC 0x4
/* kw_ev_path.access for KW_EV_NET_UNIX */
#define KW_UNIX_CONNECT 0 /* stream or seqpacket connect */
#define KW_UNIX_SEND 1    /* datagram connect or send */
/* kw_ev_path.access for KW_EV_MOUNT: the operation ("fs.mount", ...) */
enum kw_mount_op {
	KW_MOUNTOP_MOUNT = 0,      /* mount(2) */
	KW_MOUNTOP_MOVE = 1,       /* move_mount(2): path is the target */
	KW_MOUNTOP_UMOUNT = 2,     /* umount(2): path is the mount point */
	KW_MOUNTOP_PIVOT_ROOT = 3, /* pivot_root(2): path is the new root */
	KW_MOUNTOP_FSCONFIG = 4,   /* fsconfig(2) setting an option: path holds the fs type */
};
/* kw_ev_path.access for KW_EV_FS_PATHOP: the operation ("fs.mkdir", ...) */
enum kw_path_op {
	KW_PATHOP_MKDIR = 1,
	KW_PATHOP_RMDIR = 2,
	KW_PATHOP_UNLINK = 3,
	KW_PATHOP_RENAME = 4,
	KW_PATHOP_LINK = 5,
	KW_PATHOP_SYMLINK = 6,
	KW_PATHOP_MKNOD = 7,
	KW_PATHOP_TRUNCATE = 8,
	KW_PATHOP_CHMOD = 9,
	KW_PATHOP_CHOWN = 10,
	KW_PATHOP_UTIMES = 11,
	KW_PATHOP_SETXATTR = 12,
	KW_PATHOP_REMOVEXATTR = 13,
	KW_PATHOP_CHATTR = 14, /* inode flags (FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR, file_setattr(2)) */
};

/* Event flags */
#define KW_EVF_TRUNCATED 0x01 /* the object (path, name) did not fit its buffer */
#define KW_EVF_DETACHED 0x02  /* the path is not under the task's root mount ("mount":"detached") */
#define KW_EVF_INTERP 0x04    /* exec: a pass for the interpreter of the previous one ("interpreter":true) */
#define KW_EVF_VIA 0x08       /* net: permitted by an address a DNS answer opened ("via") */

struct kw_event_hdr {
	__u64 seq;        /* per-session, from kw_session.next_seq */
	__u64 ts_ns;      /* bpf_ktime_get_boot_ns() */
	__u64 cgroup_id;  /* the task's cgroup (v2) */
	__u32 pid;        /* tgid */
	__u32 uid;
	__u32 slot;       /* the session's slot and its generation: the */
	__u32 generation; /* collector believes only its own session's events */
	__u16 kind;       /* enum kw_event_kind */
	__u16 rule;       /* index in the governing section, or KW_RULE_DEFAULT */
	__u8 decision;    /* enum kw_decision */
	__u8 enforced;    /* 1 when a deny was enforced (0 under advisory, and for permits) */
	__u8 flags;       /* KW_EVF_* */
	__u8 wake;        /* the program's note to itself, between reserve and
			   * submit, of how to wake the consumer; 0 once submitted */
	char comm[KW_COMM_LEN];
	__u64 start_ns;   /* the process's (thread group leader's) start_boottime:
			   * with pid, the boot-unique process reference ("proc") */
};

/* The decision log's process reference: "<pid>-<start_ns>" (decimal). */
#define KW_PROC_REF_MAX 32
/* Bytes of a process's argument vector an exec event carries (the rest is
 * cut; docs/decision-log.md, "proc"). */
#define KW_ARGV_MAX 1024

/* connect, sendmsg, bind */
struct kw_ev_net {
	struct kw_event_hdr h;
	__u8 family;      /* 4 or 6 */
	__u8 proto;       /* IPPROTO_TCP / IPPROTO_UDP / 0 when unknown */
	__u16 port;       /* host order */
	__u32 sock_type;  /* SOCK_STREAM, SOCK_DGRAM, ... */
	__u8 addr[16];    /* v4 in the first 4 bytes */
	__u64 via_seq;    /* KW_EVF_VIA: the dns.query whose answer permitted it */
};

/* sock_create */
struct kw_ev_socket {
	struct kw_event_hdr h;
	__u32 family;
	__u32 type;
	__u32 protocol;
	__u32 pad;
};

/* cgroup/dev */
struct kw_ev_dev {
	struct kw_event_hdr h;
	__u32 type;   /* BPF_DEVCG_DEV_BLOCK / _CHAR */
	__u32 major;
	__u32 minor;
	__u32 access; /* BPF_DEVCG_ACC_* requested */
};

/* cgroup/sysctl */
struct kw_ev_sysctl {
	struct kw_event_hdr h;
	__u32 write;
	__u32 name_len;
	char name[KW_SYSCTL_NAME_MAX]; /* "net/ipv4/ip_forward" */
};

/* A cgroup made under a session's cgroup that could not be tagged. The
 * header's cgroup_id is its parent, rule says why (KW_UNTRACKED_*). */
enum { KW_UNTRACKED_QUOTA = 1, KW_UNTRACKED_MAP_FULL = 2 };
struct kw_ev_cgroup {
	struct kw_event_hdr h;
	__u64 child_cgroup;
};

/* LSM path decisions (file_open, exec, path_*, unix connect) */
struct kw_ev_path {
	struct kw_event_hdr h;
	__u32 access;    /* kind-specific: read/write bits, path op */
	__u32 path_len;  /* bytes used in path, without NUL */
	char path[KW_PATH_MAX];
};

/* kw_ev_exec.digest_status: whether sha256 holds the file's digest. */
enum kw_digest_status {
	KW_DIGEST_OK = 0,          /* SHA-256 of the file's content, computed by the kernel */
	KW_DIGEST_UNSUPPORTED = 1, /* this kernel cannot hash an executed file */
	KW_DIGEST_ALGORITHM = 2,   /* IMA hashes with another algorithm (digest_err: enum hash_algo) */
	KW_DIGEST_ERROR = 3,       /* bpf_ima_file_hash failed (digest_err: -errno) */
};
#define KW_SHA256_LEN 32
#define KW_VERITY_MAX 64 /* the largest fs-verity digest (SHA-512) */

/* exec (bprm_check_security): the path decision plus what the file is */
struct kw_ev_exec {
	struct kw_ev_path p;
	__u64 ino;
	__u32 dev;          /* the file system's s_dev: major << 20 | minor */
	__u32 generation;   /* the inode's i_generation */
	__u8 digest_status; /* enum kw_digest_status */
	__u8 verity_len;    /* fs-verity digest bytes: 32 (SHA-256), 64 (SHA-512), 0: none */
	__u8 pad[2];
	__s32 digest_err;
	__u8 sha256[KW_SHA256_LEN];
	__u8 verity[KW_VERITY_MAX];
};

/* bpf(2) (lsm/bpf): the command (BPF_MAP_CREATE, BPF_PROG_LOAD, ...) */
struct kw_ev_bpf {
	struct kw_event_hdr h;
	__u32 cmd;
	__u32 pad;
};

/* kw_ev_proc.sig_or_mode for KW_EV_CGROUP_MOVE: how the task left */
enum kw_move_how { KW_MOVE_PROCS = 1, KW_MOVE_CLONE_INTO = 2 };

/* kw_task_tags (by task address) and kw_tgid_tags (by tgid): the session a
 * task belongs to, set when it joins a tagged cgroup or is forked by a session task, kept wherever it
 * moves. Valid while kw_slot_live[slot] == generation. */
struct kw_task_tag {
	__u32 slot;
	__u32 generation;
};

/* LSM process decisions (task_kill, ptrace, file_send_sigiotask) and cgroup moves
 * (target_pid: the task moved; target_cgroup: where it went) */
struct kw_ev_proc {
	struct kw_event_hdr h;
	__u32 target_pid;
	__u32 sig_or_mode;
	__u64 target_cgroup;
};

/* A process of a session appeared (KW_EV_PROC_FORK: forked by a session
 * task; KW_EV_PROC_EXEC: a session process ran execve). The header names the
 * process (pid, start_ns, uid, comm); the collector writes a "proc" entry.
 * Variable size: an exec record is followed by path_len bytes of the file
 * name execve was given, then argv_len bytes of the argument vector (each
 * argument ending in NUL); a fork record has neither. */
struct kw_ev_task {
	struct kw_event_hdr h;
	__u64 parent_start_ns; /* the parent process's start_boottime */
	__u32 ppid;            /* the parent's tgid (fork: the forking process) */
	__u32 gid;
	__u32 argv_len;        /* exec: bytes of argv after the path (< KW_ARGV_MAX + 1) */
	__u32 argv_full;       /* exec: bytes of the whole argv (arg_end - arg_start) */
	__u32 path_len;        /* exec: bytes of the path (< KW_PATH_MAX; KW_PATH_MAX - 1: cut) */
	__u32 pad;
};

/* A process already in a session's cgroups when it opened: what the task
 * iterator that tags them (kw_tag_existing) writes for each thread group
 * leader it tags, for the collector's "open" proc entries. */
struct kw_iter_proc {
	__u64 start_ns;        /* start_boottime: the reference's second half */
	__u64 parent_start_ns; /* the real parent's */
	__u64 cgroup_id;
	__u32 slot;
	__u32 pid;             /* tgid */
	__u32 ppid;
	__u32 uid;
	__u32 gid;
	__u32 pad;
	char comm[KW_COMM_LEN];
};

#endif
