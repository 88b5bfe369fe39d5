/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The decision event kinds: one row per kind of ring buffer record. This
 * table is the only place a kind is defined; the kernel programs (enum
 * kw_event_kind in event.h), the collector's formatters
 * (user/collector/event_format.c) and the rule names of the decision log
 * (kw_rule_name) all expand it. Adding a kind: docs/extending.md.
 *
 * KW_EVENT_TABLE(X) calls X(id, value, record, format, tool, rules, section, single):
 *   id       KW_EV_<id> in enum kw_event_kind
 *   value    its number in kw_event_hdr.kind (never reused: logs outlive code)
 *   record   the ring buffer record's struct (struct <record>): a shorter
 *            record is refused before its formatter runs
 *   format   the collector's formatter, kw_fmt_<format> (event_format.c):
 *            the kind's own members; kinds with the same members share one
 *   tool     the entry's "tool" member (for fs.path and fs.mount the
 *            formatter names the operation instead, "fs.mkdir", "fs.umount")
 *   rules    how the header's rule becomes the entry's "rule" (kw_rule_name):
 *            LIST       "section[N]", "section:default"
 *            PATH       "section:default"; a path rule "fs.read[N]",
 *                       "net.unix[N]" ...; else "single", else "section[N]"
 *            EXEC       PATH, and "exec.allow[N]:digest_mismatch"
 *            FIXED      always "section" (no rule decided it)
 *            UNTRACKED  "section", or "section.session_quota" /
 *                       "section.table_full" for KW_UNTRACKED_*
 *   section  the policy section (or list) the rule indexes
 *   single   a PATH kind's name for its one rule ("" when none)
 */
#ifndef KWITNESS_ABI_EVENTS_H
#define KWITNESS_ABI_EVENTS_H

#define KW_EVENT_TABLE(X)                                                                       \
	X(NET_CONNECT, 1, kw_ev_net, net, "net.connect", LIST, "net.connect", "")               \
	X(NET_SEND, 2, kw_ev_net, net, "net.send", LIST, "net.send", "")                        \
	X(NET_BIND, 3, kw_ev_net, net, "net.bind", LIST, "net.bind", "")                        \
	X(NET_SOCKET, 4, kw_ev_socket, socket, "net.socket", LIST, "net.socket", "")            \
	X(DEV, 5, kw_ev_dev, dev, "dev.access", LIST, "dev.allow", "")                          \
	X(SYSCTL, 6, kw_ev_sysctl, sysctl, "sysctl.write", PATH, "sysctl", "sysctl.write")      \
	/* not a decision: a descendant cgroup left untagged */                                 \
	X(CGROUP_UNTRACKED, 7, kw_ev_cgroup, cgroup_untracked, "cgroup.untracked", UNTRACKED,   \
	  "cgroups", "")                                                                        \
	/* a session task left its session's cgroups (followed) */                              \
	X(CGROUP_MOVE, 8, kw_ev_proc, cgroup_move, "cgroup.move", FIXED, "session.follow", "")  \
	/* BPF-LSM */                                                                           \
	X(FS_OPEN, 16, kw_ev_path, fs_open, "fs.open", PATH, "fs", "")                          \
	X(FS_EXEC, 17, kw_ev_exec, fs_exec, "fs.exec", EXEC, "exec", "")                        \
	X(FS_PATHOP, 18, kw_ev_path, fs_pathop, "fs.path", PATH, "fs", "")                      \
	X(MOUNT, 19, kw_ev_path, mount, "fs.mount", PATH, "mount", "mount.allow")               \
	X(PROC_KILL, 20, kw_ev_proc, proc_signal, "proc.kill", PATH, "proc", "proc.signal_outside") \
	X(PROC_PTRACE, 21, kw_ev_proc, proc_ptrace, "proc.ptrace", PATH, "proc",                \
	  "proc.signal_outside")                                                                \
	X(NET_UNIX, 22, kw_ev_path, net_unix, "net.unix", PATH, "net.unix", "")                 \
	X(PROC_SIGIO, 23, kw_ev_proc, proc_signal, "proc.sigio", PATH, "proc",                  \
	  "proc.signal_outside")                                                                \
	X(BPF, 24, kw_ev_bpf, bpf, "bpf", PATH, "bpf", "bpf.allow")                            \
	/* not decisions: a session process appeared (a "proc" entry, lineage.c) */            \
	X(PROC_FORK, 32, kw_ev_task, proc_task, "proc", FIXED, "proc", "")                      \
	X(PROC_EXEC, 33, kw_ev_task, proc_task, "proc", FIXED, "proc", "")

/* How kw_rule_name names a kind's rules (the rules column). */
enum kw_event_rules {
	KW_EVR_LIST = 1,
	KW_EVR_PATH,
	KW_EVR_EXEC,
	KW_EVR_FIXED,
	KW_EVR_UNTRACKED,
};

#define KW_EVENT_ENUM_(id, value, record, format, tool, rules, section, single) \
	KW_EV_##id = value,
enum kw_event_kind { KW_EVENT_TABLE(KW_EVENT_ENUM_) };
#undef KW_EVENT_ENUM_

/* One above the largest kind: the size of arrays indexed by kind (a row
 * beyond it fails to compile where such an array is initialised). */
#define KW_EV_LIMIT 34

#endif
