// SPDX-License-Identifier: Apache-2.0
/* Writing an entry's members (see entry.h). */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "collector/entry.h"
#include "jcs/jcs.h"

struct member_key {
	char text[KEY_ROOM];
	uint8_t len;
};
#define KEY(m, name) [m] = { ",\"" name "\":", sizeof(name) + 3 }
static const struct member_key member_key[M_COUNT] = {
	KEY(M_ACCESS, "access"),
	KEY(M_ARGV, "argv"),
	KEY(M_ARGV_LEN, "argv_len"),
	KEY(M_ARGV_SHA256, "argv_sha256"),
	KEY(M_ARGV_TRUNCATED, "argv_truncated"),
	KEY(M_CGROUP, "cgroup"),
	KEY(M_CHILD_CGROUP, "child_cgroup"),
	KEY(M_CMD, "cmd"),
	KEY(M_COMM, "comm"),
	KEY(M_DECISION, "decision"),
	KEY(M_DEV, "dev"),
	KEY(M_DIGEST, "digest"),
	KEY(M_DIGEST_UNAVAILABLE, "digest_unavailable"),
	KEY(M_ENFORCED, "enforced"),
	KEY(M_EVENT, "event"),
	KEY(M_EXE, "exe"),
	KEY(M_FAMILY, "family"),
	KEY(M_FSTYPE, "fstype"),
	KEY(M_GENERATION, "generation"),
	KEY(M_GID, "gid"),
	KEY(M_HOST, "host"),
	KEY(M_INO, "ino"),
	KEY(M_INTERPRETER, "interpreter"),
	KEY(M_MODE, "mode"),
	KEY(M_MOUNT, "mount"),
	KEY(M_NAME, "name"),
	KEY(M_PARENT, "parent"),
	KEY(M_PATH, "path"),
	KEY(M_PID, "pid"),
	KEY(M_PORT, "port"),
	KEY(M_PPID, "ppid"),
	KEY(M_PROC, "proc"),
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

#ifndef NDEBUG
static bool plain_ascii(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e || s[i] == '"' || s[i] == '\\')
			return false;
	return true;
}
#endif

/* Into room reserved once. */
int kw_entry_emit(const struct entry *e, struct kw_buf *out)
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

