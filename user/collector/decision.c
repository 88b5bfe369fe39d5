// SPDX-License-Identifier: Apache-2.0
/* Kernel decision events -> canonical decision-log entries (docs/policy.md,
 * docs/decision-log.md). Events come from the kernel but are still
 * treated as bytes: sizes are checked, strings are bounded and written lossy. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bpf.h>

#include "collector/decision.h"
#include "kwitness/abi/event.h"
#include "kwitness/jcs.h"
#include "kwitness/policy.h"

enum field_type { F_STR, F_LOSSY, F_INT, F_BOOL };

struct field {
	const char *key;
	enum field_type type;
	const char *s;
	size_t n;
	int64_t i;
	bool b;
};

#define MAX_FIELDS 20

struct entry {
	struct field f[MAX_FIELDS];
	size_t n;
	char scratch[8][64]; /* backing store for formatted strings */
	size_t n_scratch;
};

static void add_str(struct entry *e, const char *key, const char *s)
{
	e->f[e->n++] = (struct field){ .key = key, .type = F_STR, .s = s, .n = strlen(s) };
}

static void add_lossy(struct entry *e, const char *key, const char *s, size_t n)
{
	e->f[e->n++] = (struct field){ .key = key, .type = F_LOSSY, .s = s, .n = n };
}

static void add_int(struct entry *e, const char *key, int64_t v)
{
	e->f[e->n++] = (struct field){ .key = key, .type = F_INT, .i = v };
}

/* 64-bit kernel identifiers (cgroup ids) can exceed 2^53 - 1, which a
 * JSON number may not (docs/canonical-json.md): they are always decimal
 * strings, so a member's type never depends on its value. */
static void add_id(struct entry *e, const char *key, uint64_t v)
{
	char *buf = e->scratch[e->n_scratch++];

	snprintf(buf, 64, "%llu", (unsigned long long)v);
	add_str(e, key, buf);
}

static void add_bool(struct entry *e, const char *key, bool v)
{
	e->f[e->n++] = (struct field){ .key = key, .type = F_BOOL, .b = v };
}

static char *scratch(struct entry *e)
{
	return e->scratch[e->n_scratch++];
}

/* RFC 8785 member order is UTF-16 order; every key here is ASCII, so strcmp.
 * The common members (f[0..n_common)) and the kind's own members (the rest)
 * are each added in key order; emitting merges the two lists. */
static int emit_field(struct jcs_obj *o, const struct field *f)
{
	switch (f->type) {
	case F_STR: return jcs_obj_strn(o, f->key, f->s, f->n);
	case F_LOSSY: return jcs_obj_strn_lossy(o, f->key, f->s, f->n, NULL);
	case F_INT: return jcs_obj_int(o, f->key, f->i);
	case F_BOOL: return jcs_obj_bool(o, f->key, f->b);
	}
	return -EINVAL;
}

static int emit(struct entry *e, size_t n_common, struct kw_buf *out)
{
	size_t i = 0, j = n_common;
	struct jcs_obj o;
	int ret;

	ret = jcs_obj_begin(&o, out);
	while (!ret && (i < n_common || j < e->n)) {
		if (j == e->n || (i < n_common && strcmp(e->f[i].key, e->f[j].key) < 0))
			ret = emit_field(&o, &e->f[i++]);
		else
			ret = emit_field(&o, &e->f[j++]);
	}
	if (!ret)
		ret = jcs_obj_end(&o);
	return ret;
}

/* Decimal of v at p; returns the end. */
static char *put_uint(char *p, unsigned v)
{
	char tmp[12];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* Dotted quad (inet_ntop goes through printf). */
static const char *ipv4_text(const uint8_t a[4], char *buf)
{
	char *p = buf;
	int i;

	for (i = 0; i < 4; i++) {
		if (i)
			*p++ = '.';
		p = put_uint(p, a[i]);
	}
	*p = '\0';
	return buf;
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

static const char *path_op_name(uint32_t op)
{
	static const char *const names[] = {
		[KW_PATHOP_MKDIR] = "fs.mkdir", [KW_PATHOP_RMDIR] = "fs.rmdir",
		[KW_PATHOP_UNLINK] = "fs.unlink", [KW_PATHOP_RENAME] = "fs.rename",
		[KW_PATHOP_LINK] = "fs.link", [KW_PATHOP_SYMLINK] = "fs.symlink",
		[KW_PATHOP_MKNOD] = "fs.mknod", [KW_PATHOP_TRUNCATE] = "fs.truncate",
		[KW_PATHOP_CHMOD] = "fs.chmod", [KW_PATHOP_CHOWN] = "fs.chown",
		[KW_PATHOP_UTIMES] = "fs.utimes", [KW_PATHOP_SETXATTR] = "fs.setxattr",
		[KW_PATHOP_REMOVEXATTR] = "fs.removexattr",
	};

	if (op < sizeof(names) / sizeof(names[0]) && names[op])
		return names[op];
	return "fs.path";
}

static const char *mount_op_name(uint32_t op)
{
	switch (op) {
	case KW_MOUNTOP_MOVE: return "fs.move_mount";
	case KW_MOUNTOP_UMOUNT: return "fs.umount";
	case KW_MOUNTOP_PIVOT_ROOT: return "fs.pivot_root";
	case KW_MOUNTOP_FSCONFIG: return "fs.fsconfig";
	}
	return "fs.mount";
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

static size_t bounded_len(const char *s, size_t claimed, size_t cap)
{
	size_t n = claimed < cap ? claimed : cap;

	return strnlen(s, n);
}

int kw_event_seq(const void *data, size_t size, uint64_t *seq)
{
	const struct kw_event_hdr *h = data;

	if (!data || size < sizeof(*h))
		return -EINVAL;
	memcpy(seq, &h->seq, sizeof(*seq));
	return 0;
}

int kw_event_to_entry(const void *data, size_t size, int64_t boot_to_realtime_ns,
		      struct kw_buf *out)
{
	struct kw_event_hdr h;
	struct entry ent, *e = &ent;
	size_t n_common, start;
	int64_t real_ns;
	char rule[48];
	int ret = 0;

	if (!data || !out || size < sizeof(h))
		return -EINVAL;
	start = out->len;
	memcpy(&h, data, sizeof(h));
	/* seq counts decisions and ts is microseconds: both stay far below
	 * 2^53 (centuries of decisions, the year 2255); more means a corrupt
	 * event, not a value to write. */
	if (h.seq > (uint64_t)JCS_MAX_SAFE_INT || h.ts_ns > (uint64_t)INT64_MAX ||
	    __builtin_add_overflow((int64_t)h.ts_ns, boot_to_realtime_ns, &real_ns))
		return -EINVAL;
	e->n = 0;
	e->n_scratch = 0;

	/* common members, added in key order (the sort then has little to do) */
	add_id(e, "cgroup", h.cgroup_id);
	add_lossy(e, "comm", h.comm, strnlen(h.comm, sizeof(h.comm)));
	add_str(e, "decision", h.decision == KW_PERMIT ? "permit" : "deny");
	add_bool(e, "enforced", h.decision != KW_PERMIT && h.enforced);
	add_int(e, "pid", h.pid);
	add_str(e, "rule", kw_rule_name(h.kind, h.rule, rule, sizeof(rule)));
	add_int(e, "seq", (int64_t)h.seq);
	add_int(e, "ts", real_ns / 1000);
	add_int(e, "uid", h.uid);
	n_common = e->n;

	/* the kind's own members, in key order too */

	switch (h.kind) {
	case KW_EV_NET_CONNECT:
	case KW_EV_NET_SEND:
	case KW_EV_NET_BIND: {
		const struct kw_ev_net *ev = data;
		char *host = scratch(e);

		if (size < sizeof(*ev) || (ev->family != 4 && ev->family != 6)) {
			ret = -EINVAL;
			break;
		}
		if (ev->family == 4)
			ipv4_text(ev->addr, host);
		else
			inet_ntop(AF_INET6, ev->addr, host, 64);
		add_str(e, "host", host);
		add_int(e, "port", ev->port);
		add_str(e, "proto", proto_name(ev->proto, scratch(e)));
		add_str(e, "tool", h.kind == KW_EV_NET_CONNECT ? "net.connect" :
				   h.kind == KW_EV_NET_SEND ? "net.send" : "net.bind");
		break;
	}
	case KW_EV_NET_SOCKET: {
		const struct kw_ev_socket *ev = data;
		const char *t;

		if (size < sizeof(*ev)) {
			ret = -EINVAL;
			break;
		}
		if (ev->family == AF_INET)
			add_str(e, "family", "inet");
		else if (ev->family == AF_INET6)
			add_str(e, "family", "inet6");
		else if (ev->family == AF_PACKET)
			add_str(e, "family", "packet");
		else
			add_int(e, "family", ev->family);
		add_int(e, "protocol", ev->protocol);
		add_str(e, "tool", "net.socket");
		t = sock_type_name(ev->type);
		if (t)
			add_str(e, "type", t);
		else
			add_int(e, "type", ev->type);
		break;
	}
	case KW_EV_DEV: {
		const struct kw_ev_dev *ev = data;
		char *dev = scratch(e), *acc = scratch(e);
		size_t n = 0;

		if (size < sizeof(*ev)) {
			ret = -EINVAL;
			break;
		}
		if (ev->access & BPF_DEVCG_ACC_READ)
			acc[n++] = 'r';
		if (ev->access & BPF_DEVCG_ACC_WRITE)
			acc[n++] = 'w';
		if (ev->access & BPF_DEVCG_ACC_MKNOD)
			acc[n++] = 'm';
		acc[n] = '\0';
		add_str(e, "access", acc);
		snprintf(dev, 64, "%c %u:%u", ev->type == BPF_DEVCG_DEV_BLOCK ? 'b' : 'c',
			 ev->major, ev->minor);
		add_str(e, "dev", dev);
		add_str(e, "tool", "dev.access");
		break;
	}
	case KW_EV_CGROUP_UNTRACKED: {
		const struct kw_ev_cgroup *ev = data;

		if (size < sizeof(*ev)) {
			ret = -EINVAL;
			break;
		}
		add_id(e, "child_cgroup", ev->child_cgroup);
		add_str(e, "tool", "cgroup.untracked");
		break;
	}
	case KW_EV_SYSCTL: {
		const struct kw_ev_sysctl *ev = data;

		if (size < sizeof(*ev)) {
			ret = -EINVAL;
			break;
		}
		add_lossy(e, "name", ev->name, bounded_len(ev->name, ev->name_len, KW_SYSCTL_NAME_MAX));
		add_str(e, "tool", "sysctl.write");
		if (h.flags & KW_EVF_TRUNCATED)
			add_bool(e, "truncated", true);
		break;
	}
	case KW_EV_FS_OPEN:
	case KW_EV_FS_EXEC:
	case KW_EV_FS_PATHOP:
	case KW_EV_NET_UNIX:
	path: {
		const struct kw_ev_path *ev = data;
		bool fstype;
		size_t n;

		if (size < sizeof(*ev)) {
			ret = -EINVAL;
			break;
		}
		n = bounded_len(ev->path, ev->path_len, KW_PATH_MAX);
		/* fsconfig has no path yet: the filesystem's type instead */
		fstype = h.kind == KW_EV_MOUNT && ev->access == KW_MOUNTOP_FSCONFIG;

		if (h.kind == KW_EV_FS_PATHOP)
			add_str(e, "access", "w");
		else if (h.kind == KW_EV_NET_UNIX)
			add_str(e, "access", ev->access == KW_UNIX_SEND ? "send" : "connect");
		else if (h.kind != KW_EV_MOUNT)
			add_str(e, "access", path_access(ev->access, scratch(e)));
		if (fstype)
			add_lossy(e, "fstype", ev->path, n);
		if (h.flags & KW_EVF_DETACHED)
			add_str(e, "mount", "detached");
		if (!fstype)
			add_lossy(e, "path", ev->path, n);
		switch (h.kind) {
		case KW_EV_FS_OPEN: add_str(e, "tool", "fs.open"); break;
		case KW_EV_FS_EXEC: add_str(e, "tool", "fs.exec"); break;
		case KW_EV_NET_UNIX: add_str(e, "tool", "net.unix"); break;
		case KW_EV_MOUNT: add_str(e, "tool", mount_op_name(ev->access)); break;
		default: add_str(e, "tool", path_op_name(ev->access)); break;
		}
		if (h.flags & KW_EVF_TRUNCATED)
			add_bool(e, "truncated", true);
		break;
	}
	case KW_EV_MOUNT:
		/* a mount event may carry its mount point (path layout) */
		if (size >= sizeof(struct kw_ev_path))
			goto path;
		/* fallthrough */
	case KW_EV_PROC_KILL:
	case KW_EV_PROC_PTRACE:
	case KW_EV_PROC_SIGIO:
	case KW_EV_CGROUP_MOVE: {
		const struct kw_ev_proc *ev = data;

		if (size < sizeof(*ev)) {
			ret = -EINVAL;
			break;
		}
		if (h.kind == KW_EV_CGROUP_MOVE) {
			/* a session task left the session's cgroups; still governed */
			add_id(e, "target_cgroup", ev->target_cgroup);
			add_int(e, "target_pid", ev->target_pid);
			add_str(e, "tool", "cgroup.move");
			add_str(e, "via", ev->sig_or_mode == KW_MOVE_CLONE_INTO ? "clone_into_cgroup" :
					  "cgroup.procs");
			break;
		}
		if (h.kind == KW_EV_MOUNT) {
			add_int(e, "flags", ev->sig_or_mode);
			add_str(e, "tool", "fs.mount");
			break;
		}
		add_int(e, h.kind == KW_EV_PROC_PTRACE ? "mode" : "signal", ev->sig_or_mode);
		add_id(e, "target_cgroup", ev->target_cgroup);
		add_int(e, "target_pid", ev->target_pid);
		add_str(e, "tool", h.kind == KW_EV_PROC_KILL ? "proc.kill" :
				   h.kind == KW_EV_PROC_SIGIO ? "proc.sigio" : "proc.ptrace");
		break;
	}
	default:
		ret = -EINVAL;
	}
	if (!ret)
		ret = emit(e, n_common, out);
	if (ret && out->len > start) {
		/* a member the emitter refused: no half entry stays behind */
		out->len = start;
		out->data[start] = '\0';
	}
	return ret == -EILSEQ ? -EINVAL : ret;
}
