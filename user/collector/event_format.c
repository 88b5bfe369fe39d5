// SPDX-License-Identifier: Apache-2.0
/* Each event kind's own members (the format column of KW_EVENT_TABLE,
 * kwitness/abi/events.h). A formatter runs after decision.c checked the
 * record's size and added the members every entry has; it returns 0 or
 * -EINVAL for a value no entry may hold. Strings from the kernel are still
 * bounded and written lossy. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <linux/bpf.h>

#include "collector/entry.h"
#include "collector/event_format.h"
#include "kwitness/abi/event.h"

/* Dotted quad into buf (inet_ntop goes through printf); returns its length. */
static size_t ipv4_text(const uint8_t a[4], char *buf)
{
	char *p = buf;
	int i;

	for (i = 0; i < 4; i++) {
		unsigned v = a[i];

		if (i)
			*p++ = '.';
		if (v >= 100)
			*p++ = (char)('0' + v / 100);
		if (v >= 10)
			*p++ = (char)('0' + v / 10 % 10);
		*p++ = (char)('0' + v % 10);
	}
	return (size_t)(p - buf);
}

static const char *proto_name(uint8_t proto, char *buf)
{
	if (proto == 6)
		return "tcp";
	if (proto == 17)
		return "udp";
	snprintf(buf, 64, "%u", proto);
	return buf;
}

static const char *sock_type_name(uint32_t type)
{
	switch (type) {
	case 1: return "stream";
	case 2: return "dgram";
	case 3: return "raw";
	case 4: return "rdm";
	case 5: return "seqpacket";
	}
	return NULL;
}

static const char *path_op_name(uint32_t op, const char *fallback)
{
	static const char *const names[] = {
		[KW_PATHOP_MKDIR] = "fs.mkdir", [KW_PATHOP_RMDIR] = "fs.rmdir",
		[KW_PATHOP_UNLINK] = "fs.unlink", [KW_PATHOP_RENAME] = "fs.rename",
		[KW_PATHOP_LINK] = "fs.link", [KW_PATHOP_SYMLINK] = "fs.symlink",
		[KW_PATHOP_MKNOD] = "fs.mknod", [KW_PATHOP_TRUNCATE] = "fs.truncate",
		[KW_PATHOP_CHMOD] = "fs.chmod", [KW_PATHOP_CHOWN] = "fs.chown",
		[KW_PATHOP_UTIMES] = "fs.utimes", [KW_PATHOP_SETXATTR] = "fs.setxattr",
		[KW_PATHOP_REMOVEXATTR] = "fs.removexattr", [KW_PATHOP_CHATTR] = "fs.chattr",
	};

	if (op < sizeof(names) / sizeof(names[0]) && names[op])
		return names[op];
	return fallback;
}

static const char *mount_op_name(uint32_t op, const char *fallback)
{
	switch (op) {
	case KW_MOUNTOP_MOVE: return "fs.move_mount";
	case KW_MOUNTOP_UMOUNT: return "fs.umount";
	case KW_MOUNTOP_PIVOT_ROOT: return "fs.pivot_root";
	case KW_MOUNTOP_FSCONFIG: return "fs.fsconfig";
	}
	return fallback;
}

/* "r", "w", "x" letters in that order, for KW_ACC_* bits. */
static const char *path_access(uint32_t acc, char *buf)
{
	size_t n = 0;

	if (acc & KW_ACC_READ)
		buf[n++] = 'r';
	if (acc & KW_ACC_WRITE)
		buf[n++] = 'w';
	if (acc & KW_ACC_EXEC)
		buf[n++] = 'x';
	buf[n] = '\0';
	return buf;
}

/* IMA's hash algorithm numbers (enum hash_algo) that a kernel may be
 * configured with instead of SHA-256 (ima_hash=). */
static const char *hash_algo_name(int32_t algo)
{
	switch (algo) {
	case 1: return "md5";
	case 2: return "sha1";
	case 5: return "sha384";
	case 6: return "sha512";
	case 7: return "sha224";
	case 13: return "sm3";
	case 17: return "streebog256";
	case 18: return "streebog512";
	}
	return NULL;
}

/* "PREFIX" + lowercase hex of n bytes into out (room for it). */
static const char *hex_digest(char *out, const char *prefix, const uint8_t *d, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, k = strlen(prefix);

	memcpy(out, prefix, k);
	for (i = 0; i < n; i++) {
		out[k++] = hex[d[i] >> 4];
		out[k++] = hex[d[i] & 15];
	}
	out[k] = '\0';
	return out;
}

/* The exec members: "dev", "digest" or "digest_unavailable", "generation",
 * "ino", "interpreter" (key order; "access" comes before, "mount" after). */
static void add_exec_members(struct entry *e, const struct kw_ev_exec *ev)
{
	char *dev = scratch(e), *why;

	snprintf(dev, 64, "%u:%u", ev->dev >> 20, ev->dev & 0xfffff);
	add_plain(e, M_DEV, dev);
	if (ev->digest_status == KW_DIGEST_OK) {
		add_plain(e, M_DIGEST, hex_digest(e->digest, KW_SHA256_PREFIX, ev->sha256,
						KW_SHA256_LEN));
	} else {
		why = scratch(e);
		if (ev->digest_status == KW_DIGEST_ALGORITHM && hash_algo_name(ev->digest_err))
			snprintf(why, 64, "ima_algorithm:%s", hash_algo_name(ev->digest_err));
		else if (ev->digest_status == KW_DIGEST_ALGORITHM)
			snprintf(why, 64, "ima_algorithm:%d", ev->digest_err);
		else if (ev->digest_status == KW_DIGEST_ERROR && ev->digest_err < 0 &&
			 ev->digest_err > -4096 && strerrorname_np(-ev->digest_err))
			snprintf(why, 64, "ima_error:%s", strerrorname_np(-ev->digest_err));
		else if (ev->digest_status == KW_DIGEST_ERROR)
			snprintf(why, 64, "ima_error:%d", ev->digest_err);
		else
			snprintf(why, 64, "unsupported");
		add_plain(e, M_DIGEST_UNAVAILABLE, why);
	}
	add_int(e, M_GENERATION, ev->generation);
	add_id(e, M_INO, ev->ino);
	if (ev->p.h.flags & KW_EVF_INTERP)
		add_bool(e, M_INTERPRETER, true);
}

/* "verity_digest" (last in key order): the fs-verity digest, when the file
 * has one; SHA-256 and SHA-512 are fs-verity's algorithms, told by size. */
static void add_verity(struct entry *e, const struct kw_ev_exec *ev)
{
	if (ev->verity_len == 32)
		add_plain(e, M_VERITY_DIGEST, hex_digest(e->verity, "sha256:", ev->verity, 32));
	else if (ev->verity_len == 64)
		add_plain(e, M_VERITY_DIGEST, hex_digest(e->verity, "sha512:", ev->verity, 64));
}

static size_t bounded_len(const char *s, size_t claimed, size_t cap)
{
	size_t n = claimed < cap ? claimed : cap;

	return strnlen(s, n);
}


/* ---- one formatter per kind (or per kinds with the same members) ---- */

/* net.connect, net.send, net.bind */
static int kw_fmt_net(struct entry *e, const struct kw_event_hdr *h, const void *rec,
			const struct kw_event_format *k, const char *via)
{
	const struct kw_ev_net *ev = rec;
	char *host = scratch(e);

	if (ev->family != 4 && ev->family != 6)
		return -EINVAL;
	if (ev->family == 4)
		add_plainn(e, M_HOST, host, ipv4_text(ev->addr, host));
	else
		add_plain(e, M_HOST, inet_ntop(AF_INET6, ev->addr, host, 64));
	add_int(e, M_PORT, ev->port);
	add_plain(e, M_PROTO, proto_name(ev->proto, scratch(e)));
	add_plainn(e, M_TOOL, k->tool, k->tool_len);
	if (h->flags & KW_EVF_VIA) {
		if (ev->via_seq > (uint64_t)JCS_MAX_SAFE_INT)
			return -EINVAL;
		if (via)
			add_str(e, M_VIA, via);
		add_int(e, M_VIA_SEQ, (int64_t)ev->via_seq);
	}
	return 0;
}

static int kw_fmt_socket(struct entry *e, const struct kw_event_hdr *h, const void *rec,
			const struct kw_event_format *k, const char *via)
{
	const struct kw_ev_socket *ev = rec;
	const char *t;

	(void)h, (void)via;
	if (ev->family == AF_INET)
		add_plain(e, M_FAMILY, "inet");
	else if (ev->family == AF_INET6)
		add_plain(e, M_FAMILY, "inet6");
	else if (ev->family == AF_PACKET)
		add_plain(e, M_FAMILY, "packet");
	else
		add_int(e, M_FAMILY, ev->family);
	add_int(e, M_PROTOCOL, ev->protocol);
	add_plainn(e, M_TOOL, k->tool, k->tool_len);
	t = sock_type_name(ev->type);
	if (t)
		add_plain(e, M_TYPE, t);
	else
		add_int(e, M_TYPE, ev->type);
	return 0;
}

static int kw_fmt_dev(struct entry *e, const struct kw_event_hdr *h, const void *rec,
			const struct kw_event_format *k, const char *via)
{
	const struct kw_ev_dev *ev = rec;
	char *dev = scratch(e), *acc = scratch(e);
	size_t n = 0;

	(void)h, (void)via;
	if (ev->access & BPF_DEVCG_ACC_READ)
		acc[n++] = 'r';
	if (ev->access & BPF_DEVCG_ACC_WRITE)
		acc[n++] = 'w';
	if (ev->access & BPF_DEVCG_ACC_MKNOD)
		acc[n++] = 'm';
	acc[n] = '\0';
	add_plain(e, M_ACCESS, acc);
	snprintf(dev, 64, "%c %u:%u", ev->type == BPF_DEVCG_DEV_BLOCK ? 'b' : 'c', ev->major,
		 ev->minor);
	add_plain(e, M_DEV, dev);
	add_plainn(e, M_TOOL, k->tool, k->tool_len);
	return 0;
}

static int kw_fmt_cgroup_untracked(struct entry *e, const struct kw_event_hdr *h, const void *rec,
			const struct kw_event_format *k, const char *via)
{
	const struct kw_ev_cgroup *ev = rec;

	(void)h, (void)via;
	add_id(e, M_CHILD_CGROUP, ev->child_cgroup);
	add_plainn(e, M_TOOL, k->tool, k->tool_len);
	return 0;
}

static int kw_fmt_sysctl(struct entry *e, const struct kw_event_hdr *h, const void *rec,
			const struct kw_event_format *k, const char *via)
{
	const struct kw_ev_sysctl *ev = rec;

	(void)via;
	add_lossy(e, M_NAME, ev->name, bounded_len(ev->name, ev->name_len, KW_SYSCTL_NAME_MAX));
	add_plainn(e, M_TOOL, k->tool, k->tool_len);
	if (h->flags & KW_EVF_TRUNCATED)
		add_bool(e, M_TRUNCATED, true);
	return 0;
}

/* The members every path kind ends with: "mount" when detached, "path",
 * "tool", "truncated" (key order; "access" and exec's come before). */
static void add_path_members(struct entry *e, const struct kw_event_hdr *h,
			     const struct kw_ev_path *ev, const char *tool, size_t tool_len)
{
	if (h->flags & KW_EVF_DETACHED)
		add_plain(e, M_MOUNT, "detached");
	add_lossy(e, M_PATH, ev->path, bounded_len(ev->path, ev->path_len, KW_PATH_MAX));
	add_plainn(e, M_TOOL, tool, tool_len);
	if (h->flags & KW_EVF_TRUNCATED)
		add_bool(e, M_TRUNCATED, true);
}

static int kw_fmt_fs_open(struct entry *e, const struct kw_event_hdr *h, const void *rec,
			const struct kw_event_format *k, const char *via)
{
	const struct kw_ev_path *ev = rec;

	(void)via;
	add_plain(e, M_ACCESS, path_access(ev->access, scratch(e)));
	add_path_members(e, h, ev, k->tool, k->tool_len);
	return 0;
}

static int kw_fmt_fs_exec(struct entry *e, const struct kw_event_hdr *h, const void *rec,
			const struct kw_event_format *k, const char *via)
{
	const struct kw_ev_exec *ev = rec;

	(void)via;
	add_plain(e, M_ACCESS, path_access(ev->p.access, scratch(e)));
	add_exec_members(e, ev);
	add_path_members(e, h, &ev->p, k->tool, k->tool_len);
	add_verity(e, ev);
	return 0;
}

/* tool is the fallback: the operation names itself ("fs.mkdir", ...) */
static int kw_fmt_fs_pathop(struct entry *e, const struct kw_event_hdr *h, const void *rec,
			const struct kw_event_format *k, const char *via)
{
	const struct kw_ev_path *ev = rec;
	const char *op = path_op_name(ev->access, k->tool);

	(void)via;
	add_plain(e, M_ACCESS, "w");
	add_path_members(e, h, ev, op, strlen(op));
	return 0;
}

static int kw_fmt_net_unix(struct entry *e, const struct kw_event_hdr *h, const void *rec,
			const struct kw_event_format *k, const char *via)
{
	const struct kw_ev_path *ev = rec;

	(void)via;
	add_plain(e, M_ACCESS, ev->access == KW_UNIX_SEND ? "send" : "connect");
	add_path_members(e, h, ev, k->tool, k->tool_len);
	return 0;
}

/* tool is the fallback: the operation names itself ("fs.umount", ...);
 * fsconfig has no path yet: the filesystem's type instead */
static int kw_fmt_mount(struct entry *e, const struct kw_event_hdr *h, const void *rec,
			const struct kw_event_format *k, const char *via)
{
	const struct kw_ev_path *ev = rec;
	const char *op = mount_op_name(ev->access, k->tool);

	(void)via;
	if (ev->access != KW_MOUNTOP_FSCONFIG) {
		add_path_members(e, h, ev, op, strlen(op));
		return 0;
	}
	add_lossy(e, M_FSTYPE, ev->path, bounded_len(ev->path, ev->path_len, KW_PATH_MAX));
	if (h->flags & KW_EVF_DETACHED)
		add_plain(e, M_MOUNT, "detached");
	add_plain(e, M_TOOL, op);
	if (h->flags & KW_EVF_TRUNCATED)
		add_bool(e, M_TRUNCATED, true);
	return 0;
}

/* proc.kill, proc.sigio */
static int kw_fmt_proc_signal(struct entry *e, const struct kw_event_hdr *h, const void *rec,
			const struct kw_event_format *k, const char *via)
{
	const struct kw_ev_proc *ev = rec;

	(void)h, (void)via;
	add_int(e, M_SIGNAL, ev->sig_or_mode);
	add_id(e, M_TARGET_CGROUP, ev->target_cgroup);
	add_int(e, M_TARGET_PID, ev->target_pid);
	add_plainn(e, M_TOOL, k->tool, k->tool_len);
	return 0;
}

static int kw_fmt_proc_ptrace(struct entry *e, const struct kw_event_hdr *h, const void *rec,
			const struct kw_event_format *k, const char *via)
{
	const struct kw_ev_proc *ev = rec;

	(void)h, (void)via;
	add_int(e, M_MODE, ev->sig_or_mode);
	add_id(e, M_TARGET_CGROUP, ev->target_cgroup);
	add_int(e, M_TARGET_PID, ev->target_pid);
	add_plainn(e, M_TOOL, k->tool, k->tool_len);
	return 0;
}

/* a session task left the session's cgroups; still governed */
static int kw_fmt_cgroup_move(struct entry *e, const struct kw_event_hdr *h, const void *rec,
			const struct kw_event_format *k, const char *via)
{
	const struct kw_ev_proc *ev = rec;

	(void)h, (void)via;
	add_id(e, M_TARGET_CGROUP, ev->target_cgroup);
	add_int(e, M_TARGET_PID, ev->target_pid);
	add_plainn(e, M_TOOL, k->tool, k->tool_len);
	add_plain(e, M_VIA, ev->sig_or_mode == KW_MOVE_CLONE_INTO ? "clone_into_cgroup" :
				  "cgroup.procs");
	return 0;
}

/* bpf(2): its command, a number (enum bpf_cmd of the uapi) */
static int kw_fmt_bpf(struct entry *e, const struct kw_event_hdr *h, const void *rec,
		      const struct kw_event_format *k, const char *via)
{
	const struct kw_ev_bpf *ev = rec;

	(void)h, (void)via;
	add_int(e, M_CMD, ev->cmd);
	add_plainn(e, M_TOOL, k->tool, k->tool_len);
	return 0;
}

/* proc.fork, proc.exec: not decisions; decision.c hands them to
 * kw_proc_event_facts (proc_entry.c), which writes a "proc" entry */
static int kw_fmt_proc_task(struct entry *e, const struct kw_event_hdr *h, const void *rec,
			    const struct kw_event_format *k, const char *via)
{
	(void)e, (void)h, (void)rec, (void)k, (void)via;
	return -EINVAL;
}

#define KW_FORMAT_(id, value, record, format, tool, rules, section, single) \
	[value] = { kw_fmt_##format, sizeof(struct record), tool, sizeof(tool) - 1 },
const struct kw_event_format kw_event_formats[KW_EV_LIMIT] = { KW_EVENT_TABLE(KW_FORMAT_) };
#undef KW_FORMAT_
