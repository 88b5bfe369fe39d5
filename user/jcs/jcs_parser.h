/* SPDX-License-Identifier: Apache-2.0 */
/* The JCS parser's state, shared by the parser (jcs.c) and the object
 * member ordering (jcs_members.c). Not a public interface. */
#ifndef KWITNESS_JCS_PARSER_H
#define KWITNESS_JCS_PARSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "jcs/jcs.h"

struct jcs_member {
	uint64_t prefix;   /* the name's first 8 bytes, ordered like UTF-16 */
	size_t key_off;    /* decoded name: in out, or in keys when in_keys */
	size_t key_len;
	size_t start, end; /* canonical "name":value in out */
	size_t in_off;     /* the name's offset in the input, for errors */
	bool in_keys;
};

struct jcs_parser {
	const unsigned char *begin, *p, *end;
	struct kw_buf *out;
	struct jcs_member *m;  /* members of every open object, innermost last */
	size_t m_len, m_cap;
	struct kw_buf keys; /* decoded names that needed escapes */
	struct kw_buf perm; /* scratch for reordering an object's members */
	struct jcs_error *err;
	int depth;
	const struct jcs_sink *sink; /* NULL: all output stays in out */
	bool handed;                 /* some output went to the sink */
};

static inline const char *jcs_key_of(struct jcs_parser *ps, const struct jcs_member *m)
{
	return (m->in_keys ? ps->keys.data : ps->out->data) + m->key_off;
}

/* Records the error at input position at; returns -EINVAL. */
int jcs_fail(struct jcs_parser *ps, const unsigned char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Sorts the members of the object that just closed (ps->m from base on),
 * refuses duplicate names and rewrites the object's bytes in canonical order. */
int jcs_finish_object(struct jcs_parser *ps, size_t base);

#endif
