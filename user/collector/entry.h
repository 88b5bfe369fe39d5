/* SPDX-License-Identifier: Apache-2.0 */
/* A decision-log entry being built: its members by name, written in RFC 8785
 * order by kw_entry_emit with no sorting at run time. The builders are inline:
 * they run for every member of every decision. */
#ifndef KWITNESS_COLLECTOR_ENTRY_H
#define KWITNESS_COLLECTOR_ENTRY_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kwitness/abi/event.h"
#include "lib/buf.h"
#include "jcs/jcs.h"
#include "policy/policy.h"

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
	M_ARGV,
	M_ARGV_LEN,
	M_ARGV_SHA256,
	M_ARGV_TRUNCATED,
	M_CGROUP,
	M_CHILD_CGROUP,
	M_CMD,
	M_COMM,
	M_DECISION,
	M_DEV,
	M_DIGEST,
	M_DIGEST_UNAVAILABLE,
	M_ENFORCED,
	M_EVENT,
	M_EXE,
	M_FAMILY,
	M_FSTYPE,
	M_GENERATION,
	M_GID,
	M_HOST,
	M_INO,
	M_INTERPRETER,
	M_MODE,
	M_MOUNT,
	M_NAME,
	M_PARENT,
	M_PATH,
	M_PID,
	M_PORT,
	M_PPID,
	M_PROC,
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

static inline void add_string(struct entry *e, enum member m, enum field_type t, const char *s, size_t n)
{
	if (n >= SIZE_MAX / 8) {
		e->err = -EINVAL;
		return;
	}
	add_text(e, m, t, s, n, jcs_string_room(n));
}

static inline void add_str(struct entry *e, enum member m, const char *s)
{
	add_string(e, m, F_STR, s, strlen(s));
}

static inline void add_lossy(struct entry *e, enum member m, const char *s, size_t n)
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

static inline char *scratch(struct entry *e)
{
	return e->scratch[e->n_scratch++];
}

/* The members present, in enum (= key) order, into out (appended; nothing
 * is appended on error). 0, -EINVAL (a value no entry may hold), -ENOMEM. */
int kw_entry_emit(const struct entry *e, struct kw_buf *out);

#endif
