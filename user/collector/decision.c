// SPDX-License-Identifier: Apache-2.0
/* Kernel decision events -> canonical decision-log entries (docs/policy.md,
 * docs/decision-log.md). Events come from the kernel but are still
 * treated as bytes: sizes are checked, strings are bounded and written lossy. */
#include <arpa/inet.h>
#include <assert.h>
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

/* How a member's value is written. */
enum field_type {
	F_PLAIN, /* s[0..n): ASCII that needs no escapes by construction (names
		  * from tables, digits, addresses): copied as is */
	F_STR,   /* s[0..n): must be UTF-8 (the entry is refused otherwise) */
	F_LOSSY, /* s[0..n): kernel bytes, invalid UTF-8 written as U+FFFD */
	F_INT,   /* i, within +-JCS_MAX_SAFE_INT (checked when added) */
	F_ID,    /* u as a decimal string (see add_id) */
	F_BOOL,  /* i != 0 */
};

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

/* Each name as it follows the previous member, ,"name": (the entry's first
 * comma becomes its '{'), padded so that it is moved with one fixed-size
 * copy. */
#define KEY_ROOM 24
struct member_key {
	char text[KEY_ROOM];
	uint8_t len;
};
#define KEY(m, name) [m] = { ",\"" name "\":", sizeof(name) + 3 }
static const struct member_key member_key[M_COUNT] = {
	KEY(M_ACCESS, "access"),
	KEY(M_CGROUP, "cgroup"),
	KEY(M_CHILD_CGROUP, "child_cgroup"),
	KEY(M_COMM, "comm"),
	KEY(M_DECISION, "decision"),
	KEY(M_DEV, "dev"),
	KEY(M_DIGEST, "digest"),
	KEY(M_DIGEST_UNAVAILABLE, "digest_unavailable"),
	KEY(M_ENFORCED, "enforced"),
	KEY(M_FAMILY, "family"),
	KEY(M_FSTYPE, "fstype"),
	KEY(M_GENERATION, "generation"),
	KEY(M_HOST, "host"),
	KEY(M_INO, "ino"),
	KEY(M_INTERPRETER, "interpreter"),
	KEY(M_MODE, "mode"),
	KEY(M_MOUNT, "mount"),
	KEY(M_NAME, "name"),
	KEY(M_PATH, "path"),
	KEY(M_PID, "pid"),
	KEY(M_PORT, "port"),
	KEY(M_PROTO, "proto"),
	KEY(M_PROTOCOL, "protocol"),
	KEY(M_RULE, "rule"),
	KEY(M_SEQ, "seq"),
	KEY(M_SIGNAL, "signal"),
	KEY(M_TARGET_CGROUP, "target_cgroup"),
	KEY(M_TARGET_PID, "target_pid"),
	KEY(M_TOOL, "tool"),
	KEY(M_TRUNCATED, "truncated"),
	KEY(M_TS, "ts"),
	KEY(M_TYPE, "type"),
	KEY(M_UID, "uid"),
	KEY(M_VERITY_DIGEST, "verity_digest"),
	KEY(M_VIA, "via"),
	KEY(M_VIA_SEQ, "via_seq"),
};
#undef KEY

struct field {
	union {
		const char *s;
		int64_t i;
		uint64_t u;
	};
	size_t n;
	enum field_type type;
};

_Static_assert(M_COUNT <= 64, "one presence bit per member");

/* An entry being built: its members by name, and the most bytes they can
 * take, so that the output is reserved once and written without checks. */
struct entry {
	uint64_t present; /* bit m: f[m] is set */
	size_t room;
	int err; /* a value no entry may hold (-EINVAL) */
	struct field f[M_COUNT];
	char scratch[8][64]; /* backing store for formatted strings */
	size_t n_scratch;
	char digest[sizeof(KW_SHA256_PREFIX) + 2 * KW_SHA256_LEN];
	char verity[sizeof("sha512:") + 2 * KW_VERITY_MAX];
};

/* Marks m present and returns its field. The caller sets the value member
 * by member: gcc builds a whole struct (a compound literal) with narrow
 * stores and then copies it with a wide load, which stalls on every member. */
static inline struct field *set(struct entry *e, enum member m, enum field_type t,
				size_t value_room)
{
	e->present |= 1ULL << m;
	e->room += KEY_ROOM + value_room;
	e->f[m].type = t;
	return &e->f[m];
}

static inline void add_text(struct entry *e, enum member m, enum field_type t, const char *s,
			    size_t n, size_t value_room)
{
	struct field *f = set(e, m, t, value_room);

	f->s = s;
	f->n = n;
}

static inline void add_plainn(struct entry *e, enum member m, const char *s, size_t n)
{
	add_text(e, m, F_PLAIN, s, n, n + 2);
}

/* Inline, so that a literal's length is known when compiling. */
static inline void add_plain(struct entry *e, enum member m, const char *s)
{
	add_plainn(e, m, s, strlen(s));
}

static void add_string(struct entry *e, enum member m, enum field_type t, const char *s, size_t n)
{
	if (n >= SIZE_MAX / 8) {
		e->err = -EINVAL;
		return;
	}
	add_text(e, m, t, s, n, jcs_string_room(n));
}

static void add_str(struct entry *e, enum member m, const char *s)
{
	add_string(e, m, F_STR, s, strlen(s));
}

static void add_lossy(struct entry *e, enum member m, const char *s, size_t n)
{
	add_string(e, m, F_LOSSY, s, n);
}

static inline void add_int(struct entry *e, enum member m, int64_t v)
{
	if (v > JCS_MAX_SAFE_INT || v < -JCS_MAX_SAFE_INT)
		e->err = -EINVAL;
	set(e, m, F_INT, 24)->i = v;
}

/* 64-bit kernel identifiers (cgroup ids) can exceed 2^53 - 1, which a
 * JSON number may not (docs/canonical-json.md): they are always decimal
 * strings, so a member's type never depends on its value. */
static inline void add_id(struct entry *e, enum member m, uint64_t v)
{
	set(e, m, F_ID, 24)->u = v;
}

static inline void add_bool(struct entry *e, enum member m, bool v)
{
	set(e, m, F_BOOL, 5)->i = v;
}

static char *scratch(struct entry *e)
{
	return e->scratch[e->n_scratch++];
}

#ifndef NDEBUG
static bool plain_ascii(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e || s[i] == '"' || s[i] == '\\')
			return false;
	return true;
}
#endif

/* The members present, in enum (= key) order, into room reserved once. */
static int emit(const struct entry *e, struct kw_buf *out)
{
	uint64_t left = e->present;
	char *start, *o;

	if (e->err || !left)
		return e->err ? e->err : -EINVAL;
	if (kw_buf_reserve(out, e->room + 1)) /* + the closing '}' */
		return -ENOMEM;
	start = o = out->data + out->len;
	while (left) {
		unsigned m = (unsigned)__builtin_ctzll(left);
		const struct field *f = &e->f[m];

		left &= left - 1;
		memcpy(o, member_key[m].text, KEY_ROOM);
		o += member_key[m].len;
		switch (f->type) {
		case F_PLAIN:
			assert(plain_ascii(f->s, f->n));
			*o++ = '"';
			memcpy(o, f->s, f->n);
			o += f->n;
			*o++ = '"';
			break;
		case F_STR:
		case F_LOSSY:
			o = jcs_string_at(o, f->s, f->n, f->type == F_LOSSY, NULL);
			if (!o) {
				out->data[out->len] = '\0';
				return -EINVAL;
			}
			break;
		case F_ID:
			*o++ = '"';
			o = jcs_u64_at(o, f->u);
			*o++ = '"';
			break;
		case F_INT:
			if (f->i < 0) {
				*o++ = '-';
				o = jcs_u64_at(o, -(uint64_t)f->i);
			} else {
				o = jcs_u64_at(o, (uint64_t)f->i);
			}
			break;
		case F_BOOL:
			memcpy(o, f->i ? "true" : "false", 5);
			o += f->i ? 4 : 5;
			break;
		}
	}
	*start = '{'; /* over the first member's comma */
	*o++ = '}';
	*o = '\0';
	out->len = (size_t)(o - out->data);
	return 0;
}

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

static const char *path_op_name(uint32_t op)
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
	e->room = 0;
	e->err = 0;
	e->n_scratch = 0;

	/* common members */
	add_id(e, M_CGROUP, h.cgroup_id);
	add_lossy(e, M_COMM, h.comm, strnlen(h.comm, sizeof(h.comm)));
	add_plain(e, M_DECISION, h.decision == KW_PERMIT ? "permit" : "deny");
	add_bool(e, M_ENFORCED, h.decision != KW_PERMIT && h.enforced);
	add_int(e, M_PID, h.pid);
	add_plain(e, M_RULE, kw_rule_name(h.kind, h.rule, rule, sizeof(rule)));
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
			add_plainn(e, M_HOST, host, ipv4_text(ev->addr, host));
		else
			add_plain(e, M_HOST, inet_ntop(AF_INET6, ev->addr, host, 64));
		add_int(e, M_PORT, ev->port);
		add_plain(e, M_PROTO, proto_name(ev->proto, scratch(e)));
		add_plain(e, M_TOOL, h.kind == KW_EV_NET_CONNECT ? "net.connect" :
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
			add_plain(e, M_FAMILY, "inet");
		else if (ev->family == AF_INET6)
			add_plain(e, M_FAMILY, "inet6");
		else if (ev->family == AF_PACKET)
			add_plain(e, M_FAMILY, "packet");
		else
			add_int(e, M_FAMILY, ev->family);
		add_int(e, M_PROTOCOL, ev->protocol);
		add_plain(e, M_TOOL, "net.socket");
		t = sock_type_name(ev->type);
		if (t)
			add_plain(e, M_TYPE, t);
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
		add_plain(e, M_ACCESS, acc);
		snprintf(dev, 64, "%c %u:%u", ev->type == BPF_DEVCG_DEV_BLOCK ? 'b' : 'c',
			 ev->major, ev->minor);
		add_plain(e, M_DEV, dev);
		add_plain(e, M_TOOL, "dev.access");
		break;
	}
	case KW_EV_CGROUP_UNTRACKED: {
		const struct kw_ev_cgroup *ev = data;

		if (size < sizeof(*ev)) {
			ret = -EINVAL;
			break;
		}
		add_id(e, M_CHILD_CGROUP, ev->child_cgroup);
		add_plain(e, M_TOOL, "cgroup.untracked");
		break;
	}
	case KW_EV_SYSCTL: {
		const struct kw_ev_sysctl *ev = data;

		if (size < sizeof(*ev)) {
			ret = -EINVAL;
			break;
		}
		add_lossy(e, M_NAME, ev->name, bounded_len(ev->name, ev->name_len, KW_SYSCTL_NAME_MAX));
		add_plain(e, M_TOOL, "sysctl.write");
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
			add_plain(e, M_ACCESS, "w");
		else if (h.kind == KW_EV_NET_UNIX)
			add_plain(e, M_ACCESS, ev->access == KW_UNIX_SEND ? "send" : "connect");
		else if (h.kind != KW_EV_MOUNT)
			add_plain(e, M_ACCESS, path_access(ev->access, scratch(e)));
		if (h.kind == KW_EV_FS_EXEC)
			add_exec_members(e, data);
		if (fstype)
			add_lossy(e, M_FSTYPE, ev->path, n);
		if (h.flags & KW_EVF_DETACHED)
			add_plain(e, M_MOUNT, "detached");
		if (!fstype)
			add_lossy(e, M_PATH, ev->path, n);
		switch (h.kind) {
		case KW_EV_FS_OPEN: add_plain(e, M_TOOL, "fs.open"); break;
		case KW_EV_FS_EXEC: add_plain(e, M_TOOL, "fs.exec"); break;
		case KW_EV_NET_UNIX: add_plain(e, M_TOOL, "net.unix"); break;
		case KW_EV_MOUNT: add_plain(e, M_TOOL, mount_op_name(ev->access)); break;
		default: add_plain(e, M_TOOL, path_op_name(ev->access)); break;
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
			add_plain(e, M_TOOL, "cgroup.move");
			add_plain(e, M_VIA, ev->sig_or_mode == KW_MOVE_CLONE_INTO ? "clone_into_cgroup" :
					  "cgroup.procs");
			break;
		}
		add_int(e, h.kind == KW_EV_PROC_PTRACE ? M_MODE : M_SIGNAL, ev->sig_or_mode);
		add_id(e, M_TARGET_CGROUP, ev->target_cgroup);
		add_int(e, M_TARGET_PID, ev->target_pid);
		add_plain(e, M_TOOL, h.kind == KW_EV_PROC_KILL ? "proc.kill" :
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
