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

/* F_CSTR: NUL-terminated, its length found while it is copied */
enum field_type { F_STR, F_CSTR, F_LOSSY, F_INT, F_BOOL };

/* Every member name an entry may have, in RFC 8785 order (UTF-16 order;
 * all ASCII here, so byte order): an entry is a set of members indexed by
 * this enum and written in enum order, with no sorting at run time.
 * tests/unit/test_decision.c checks entries against the canonicaliser. */
enum member {
	M_ACCESS,
	M_CGROUP,
	M_CHILD_CGROUP,
	M_COMM,
	M_DECISION,
	M_DEV,
	M_DIGEST,
	M_DIGEST_UNAVAILABLE,
	M_ENFORCED,
	M_FAMILY,
	M_FSTYPE,
	M_GENERATION,
	M_HOST,
	M_INO,
	M_INTERPRETER,
	M_MODE,
	M_MOUNT,
	M_NAME,
	M_PATH,
	M_PID,
	M_PORT,
	M_PROTO,
	M_PROTOCOL,
	M_RULE,
	M_SEQ,
	M_SIGNAL,
	M_TARGET_CGROUP,
	M_TARGET_PID,
	M_TOOL,
	M_TRUNCATED,
	M_TS,
	M_TYPE,
	M_UID,
	M_VERITY_DIGEST,
	M_VIA,
	M_VIA_SEQ,
	M_COUNT
};

static const char *const member_name[M_COUNT] = {
	[M_ACCESS] = "access",
	[M_CGROUP] = "cgroup",
	[M_CHILD_CGROUP] = "child_cgroup",
	[M_COMM] = "comm",
	[M_DECISION] = "decision",
	[M_DEV] = "dev",
	[M_DIGEST] = "digest",
	[M_DIGEST_UNAVAILABLE] = "digest_unavailable",
	[M_ENFORCED] = "enforced",
	[M_FAMILY] = "family",
	[M_FSTYPE] = "fstype",
	[M_GENERATION] = "generation",
	[M_HOST] = "host",
	[M_INO] = "ino",
	[M_INTERPRETER] = "interpreter",
	[M_MODE] = "mode",
	[M_MOUNT] = "mount",
	[M_NAME] = "name",
	[M_PATH] = "path",
	[M_PID] = "pid",
	[M_PORT] = "port",
	[M_PROTO] = "proto",
	[M_PROTOCOL] = "protocol",
	[M_RULE] = "rule",
	[M_SEQ] = "seq",
	[M_SIGNAL] = "signal",
	[M_TARGET_CGROUP] = "target_cgroup",
	[M_TARGET_PID] = "target_pid",
	[M_TOOL] = "tool",
	[M_TRUNCATED] = "truncated",
	[M_TS] = "ts",
	[M_TYPE] = "type",
	[M_UID] = "uid",
	[M_VERITY_DIGEST] = "verity_digest",
	[M_VIA] = "via",
	[M_VIA_SEQ] = "via_seq",
};

struct field {
	enum field_type type;
	const char *s;
	size_t n;
	int64_t i;
};

_Static_assert(M_COUNT <= 64, "one presence bit per member");

struct entry {
	uint64_t present; /* bit m: f[m] is set */
	struct field f[M_COUNT];
	char scratch[8][64]; /* backing store for formatted strings */
	size_t n_scratch;
	char digest[sizeof(KW_SHA256_PREFIX) + 2 * KW_SHA256_LEN];
	char verity[sizeof("sha512:") + 2 * KW_VERITY_MAX];
};

static inline void set(struct entry *e, enum member m, struct field f)
{
	e->f[m] = f;
	e->present |= 1ULL << m;
}

static void add_str(struct entry *e, enum member m, const char *s)
{
	set(e, m, (struct field){ .type = F_CSTR, .s = s });
}

static void add_strn(struct entry *e, enum member m, const char *s, size_t n)
{
	set(e, m, (struct field){ .type = F_STR, .s = s, .n = n });
}

static void add_lossy(struct entry *e, enum member m, const char *s, size_t n)
{
	set(e, m, (struct field){ .type = F_LOSSY, .s = s, .n = n });
}

static void add_int(struct entry *e, enum member m, int64_t v)
{
	set(e, m, (struct field){ .type = F_INT, .i = v });
}

/* Decimal of v at p (no NUL); returns the end. */
static char *put_uint(char *p, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* 64-bit kernel identifiers (cgroup ids) can exceed 2^53 - 1, which a
 * JSON number may not (docs/canonical-json.md): they are always decimal
 * strings, so a member's type never depends on its value. */
static void add_id(struct entry *e, enum member m, uint64_t v)
{
	char *buf = e->scratch[e->n_scratch++];

	add_strn(e, m, buf, (size_t)(put_uint(buf, v) - buf));
}

static void add_bool(struct entry *e, enum member m, bool v)
{
	set(e, m, (struct field){ .type = F_BOOL, .i = v });
}

static char *scratch(struct entry *e)
{
	return e->scratch[e->n_scratch++];
}

static int emit_field(struct jcs_obj *o, const char *key, const struct field *f)
{
	switch (f->type) {
	case F_STR: return jcs_obj_strn(o, key, f->s, f->n);
	case F_CSTR: return jcs_obj_str(o, key, f->s);
	case F_LOSSY: return jcs_obj_strn_lossy(o, key, f->s, f->n, NULL);
	case F_INT: return jcs_obj_int(o, key, f->i);
	case F_BOOL: return jcs_obj_bool(o, key, f->i != 0);
	}
	return -EINVAL;
}

/* The members present, in enum (= key) order. */
static int emit(struct entry *e, struct kw_buf *out)
{
	uint64_t left = e->present;
	struct jcs_obj o;
	int ret;

	ret = jcs_obj_begin(&o, out);
	while (!ret && left) {
		int m = __builtin_ctzll(left);

		left &= left - 1;
		ret = emit_field(&o, member_name[m], &e->f[m]);
	}
	if (!ret)
		ret = jcs_obj_end(&o);
	return ret;
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
	add_str(e, M_DEV, dev);
	if (ev->digest_status == KW_DIGEST_OK) {
		add_str(e, M_DIGEST, hex_digest(e->digest, KW_SHA256_PREFIX, ev->sha256,
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
		add_str(e, M_DIGEST_UNAVAILABLE, why);
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
		add_str(e, M_VERITY_DIGEST, hex_digest(e->verity, "sha256:", ev->verity, 32));
	else if (ev->verity_len == 64)
		add_str(e, M_VERITY_DIGEST, hex_digest(e->verity, "sha512:", ev->verity, 64));
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
	return kw_event_to_entry_via(data, size, boot_to_realtime_ns, NULL, out);
}

int kw_event_to_entry_via(const void *data, size_t size, int64_t boot_to_realtime_ns,
			  const char *via, struct kw_buf *out)
{
	struct kw_event_hdr h;
	struct entry ent, *e = &ent;
	size_t start;
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
	e->present = 0;
	e->n_scratch = 0;

	/* common members */
	add_id(e, M_CGROUP, h.cgroup_id);
	add_lossy(e, M_COMM, h.comm, strnlen(h.comm, sizeof(h.comm)));
	add_str(e, M_DECISION, h.decision == KW_PERMIT ? "permit" : "deny");
	add_bool(e, M_ENFORCED, h.decision != KW_PERMIT && h.enforced);
	add_int(e, M_PID, h.pid);
	add_str(e, M_RULE, kw_rule_name(h.kind, h.rule, rule, sizeof(rule)));
	add_int(e, M_SEQ, (int64_t)h.seq);
	add_int(e, M_TS, real_ns / 1000);
	add_int(e, M_UID, h.uid);

	/* the kind's own members */

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
		add_str(e, M_HOST, host);
		add_int(e, M_PORT, ev->port);
		add_str(e, M_PROTO, proto_name(ev->proto, scratch(e)));
		add_str(e, M_TOOL, h.kind == KW_EV_NET_CONNECT ? "net.connect" :
				   h.kind == KW_EV_NET_SEND ? "net.send" : "net.bind");
		if (h.flags & KW_EVF_VIA) {
			if (ev->via_seq > (uint64_t)JCS_MAX_SAFE_INT) {
				ret = -EINVAL;
				break;
			}
			if (via)
				add_str(e, M_VIA, via);
			add_int(e, M_VIA_SEQ, (int64_t)ev->via_seq);
		}
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
			add_str(e, M_FAMILY, "inet");
		else if (ev->family == AF_INET6)
			add_str(e, M_FAMILY, "inet6");
		else if (ev->family == AF_PACKET)
			add_str(e, M_FAMILY, "packet");
		else
			add_int(e, M_FAMILY, ev->family);
		add_int(e, M_PROTOCOL, ev->protocol);
		add_str(e, M_TOOL, "net.socket");
		t = sock_type_name(ev->type);
		if (t)
			add_str(e, M_TYPE, t);
		else
			add_int(e, M_TYPE, ev->type);
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
		add_str(e, M_ACCESS, acc);
		snprintf(dev, 64, "%c %u:%u", ev->type == BPF_DEVCG_DEV_BLOCK ? 'b' : 'c',
			 ev->major, ev->minor);
		add_str(e, M_DEV, dev);
		add_str(e, M_TOOL, "dev.access");
		break;
	}
	case KW_EV_CGROUP_UNTRACKED: {
		const struct kw_ev_cgroup *ev = data;

		if (size < sizeof(*ev)) {
			ret = -EINVAL;
			break;
		}
		add_id(e, M_CHILD_CGROUP, ev->child_cgroup);
		add_str(e, M_TOOL, "cgroup.untracked");
		break;
	}
	case KW_EV_SYSCTL: {
		const struct kw_ev_sysctl *ev = data;

		if (size < sizeof(*ev)) {
			ret = -EINVAL;
			break;
		}
		add_lossy(e, M_NAME, ev->name, bounded_len(ev->name, ev->name_len, KW_SYSCTL_NAME_MAX));
		add_str(e, M_TOOL, "sysctl.write");
		if (h.flags & KW_EVF_TRUNCATED)
			add_bool(e, M_TRUNCATED, true);
		break;
	}
	case KW_EV_FS_OPEN:
	case KW_EV_FS_EXEC:
	case KW_EV_FS_PATHOP:
	case KW_EV_NET_UNIX:
	case KW_EV_MOUNT: {
		const struct kw_ev_path *ev = data;
		bool fstype;
		size_t n;

		if (size < sizeof(*ev) ||
		    (h.kind == KW_EV_FS_EXEC && size < sizeof(struct kw_ev_exec))) {
			ret = -EINVAL;
			break;
		}
		n = bounded_len(ev->path, ev->path_len, KW_PATH_MAX);
		/* fsconfig has no path yet: the filesystem's type instead */
		fstype = h.kind == KW_EV_MOUNT && ev->access == KW_MOUNTOP_FSCONFIG;

		if (h.kind == KW_EV_FS_PATHOP)
			add_str(e, M_ACCESS, "w");
		else if (h.kind == KW_EV_NET_UNIX)
			add_str(e, M_ACCESS, ev->access == KW_UNIX_SEND ? "send" : "connect");
		else if (h.kind != KW_EV_MOUNT)
			add_str(e, M_ACCESS, path_access(ev->access, scratch(e)));
		if (h.kind == KW_EV_FS_EXEC)
			add_exec_members(e, data);
		if (fstype)
			add_lossy(e, M_FSTYPE, ev->path, n);
		if (h.flags & KW_EVF_DETACHED)
			add_str(e, M_MOUNT, "detached");
		if (!fstype)
			add_lossy(e, M_PATH, ev->path, n);
		switch (h.kind) {
		case KW_EV_FS_OPEN: add_str(e, M_TOOL, "fs.open"); break;
		case KW_EV_FS_EXEC: add_str(e, M_TOOL, "fs.exec"); break;
		case KW_EV_NET_UNIX: add_str(e, M_TOOL, "net.unix"); break;
		case KW_EV_MOUNT: add_str(e, M_TOOL, mount_op_name(ev->access)); break;
		default: add_str(e, M_TOOL, path_op_name(ev->access)); break;
		}
		if (h.flags & KW_EVF_TRUNCATED)
			add_bool(e, M_TRUNCATED, true);
		if (h.kind == KW_EV_FS_EXEC)
			add_verity(e, data);
		break;
	}
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
			add_id(e, M_TARGET_CGROUP, ev->target_cgroup);
			add_int(e, M_TARGET_PID, ev->target_pid);
			add_str(e, M_TOOL, "cgroup.move");
			add_str(e, M_VIA, ev->sig_or_mode == KW_MOVE_CLONE_INTO ? "clone_into_cgroup" :
					  "cgroup.procs");
			break;
		}
		add_int(e, h.kind == KW_EV_PROC_PTRACE ? M_MODE : M_SIGNAL, ev->sig_or_mode);
		add_id(e, M_TARGET_CGROUP, ev->target_cgroup);
		add_int(e, M_TARGET_PID, ev->target_pid);
		add_str(e, M_TOOL, h.kind == KW_EV_PROC_KILL ? "proc.kill" :
				   h.kind == KW_EV_PROC_SIGIO ? "proc.sigio" : "proc.ptrace");
		break;
	}
	default:
		ret = -EINVAL;
	}
	if (!ret)
		ret = emit(e, out);
	if (ret && out->len > start) {
		/* a member the emitter refused: no half entry stays behind */
		out->len = start;
		out->data[start] = '\0';
	}
	return ret == -EILSEQ ? -EINVAL : ret;
}
