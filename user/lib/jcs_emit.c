/* SPDX-License-Identifier: Apache-2.0 */
/* Canonical JSON straight from C values (the collector's hot path) and from
 * jansson trees (jcs_dump). Strings are escaped from a byte table: only '"',
 * '\\' and controls are escaped, UTF-8 is validated and copied as is. */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kwitness/jcs.h"
#include "jcs_internal.h"

#define P JCS_C_PLAIN
#define Q JCS_C_QUOTE
#define B JCS_C_BSLASH
#define C JCS_C_CTRL
#define H JCS_C_HIGH
const uint8_t jcs_byte_class[256] = {
	C, C, C, C, C, C, C, C, C, C, C, C, C, C, C, C, /* 00 */
	C, C, C, C, C, C, C, C, C, C, C, C, C, C, C, C, /* 10 */
	P, P, Q, P, P, P, P, P, P, P, P, P, P, P, P, P, /* 20 */
	P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, /* 30 */
	P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, /* 40 */
	P, P, P, P, P, P, P, P, P, P, P, P, B, P, P, P, /* 50 */
	P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, /* 60 */
	P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, /* 70: DEL is not escaped */
	H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, /* 80 */
	H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H,
	H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H,
	H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H,
	H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H,
	H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H,
	H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H,
	H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H,
};
#undef P
#undef Q
#undef B
#undef C
#undef H

/* The two-character escapes RFC 8785 keeps; 0 means \u00xx. */
static const char short_escape[32] = {
	['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n', ['\f'] = 'f', ['\r'] = 'r',
};
static const char hex_digit[] = "0123456789abcdef";

int jcs_put_string(struct kw_buf *out, const char *s, size_t n, bool lossy, bool *replaced)
{
	/* Worst case: every byte a control written as \u00xx. */
	if (n > (SIZE_MAX - 64) / 6)
		return -ENOMEM;
	if (kw_buf_reserve(out, n * 6 + 2))
		return -ENOMEM;
	char *o = out->data + out->len;
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	*o++ = '"';
	while (p < end) {
		const unsigned char *run = p;
		while (p < end && jcs_byte_class[*p] == JCS_C_PLAIN)
			p++;
		memcpy(o, run, (size_t)(p - run));
		o += p - run;
		if (p == end)
			break;
		unsigned c = *p;
		switch (jcs_byte_class[c]) {
		case JCS_C_QUOTE:
		case JCS_C_BSLASH:
			*o++ = '\\';
			*o++ = (char)c;
			p++;
			break;
		case JCS_C_CTRL:
			*o++ = '\\';
			if (short_escape[c]) {
				*o++ = short_escape[c];
			} else {
				memcpy(o, "u00", 3);
				o[3] = hex_digit[c >> 4];
				o[4] = hex_digit[c & 15];
				o += 5;
			}
			p++;
			break;
		default: {
			size_t len = jcs_utf8_seq(p, (size_t)(end - p));
			if (len) {
				memcpy(o, p, len);
				o += len;
				p += len;
			} else if (lossy) {
				memcpy(o, "\xEF\xBF\xBD", 3);
				o += 3;
				p++;
				if (replaced)
					*replaced = true;
			} else {
				out->data[out->len] = '\0';
				return -EILSEQ;
			}
		}
		}
	}
	*o++ = '"';
	*o = '\0';
	out->len = (size_t)(o - out->data);
	return 0;
}

int jcs_write_string(struct kw_buf *out, const char *s, size_t n)
{
	return jcs_put_string(out, s, n, false, NULL);
}

int jcs_write_string_lossy(struct kw_buf *out, const char *s, size_t n)
{
	bool replaced = false;
	int rc = jcs_put_string(out, s, n, true, &replaced);
	return rc ? rc : replaced;
}

static inline int put_int(struct kw_buf *out, int64_t v)
{
	if (v > JCS_MAX_SAFE_INT || v < -JCS_MAX_SAFE_INT)
		return -EINVAL;
	if (kw_buf_reserve(out, 24))
		return -ENOMEM;
	char *o = out->data + out->len;
	uint64_t u = (uint64_t)v;
	if (v < 0) {
		*o++ = '-';
		u = (uint64_t)-v;
	}
	o += jcs_put_u64(u, o);
	*o = '\0';
	out->len = (size_t)(o - out->data);
	return 0;
}

int jcs_write_int(struct kw_buf *out, int64_t v)
{
	return put_int(out, v);
}

int jcs_obj_begin(struct jcs_obj *o, struct kw_buf *out)
{
	o->out = out;
	o->first = true;
#ifndef NDEBUG
	o->last_key = NULL;
#endif
	return kw_buf_putc(out, '{');
}

/* Writes [","] "key": */
static int member(struct jcs_obj *o, const char *key)
{
	size_t kl = strlen(key);
#ifndef NDEBUG
	/* RFC 8785 order is the caller's job; a wrong order would sign
	 * bytes no verifier reproduces. */
	assert(!o->last_key ||
	       jcs_utf16_cmp(o->last_key, strlen(o->last_key), key, kl) < 0);
	o->last_key = key;
#endif
	if (!o->first && kw_buf_putc(o->out, ','))
		return -ENOMEM;
	o->first = false;
	int rc = jcs_put_string(o->out, key, kl, false, NULL);
	if (rc)
		return rc;
	return kw_buf_putc(o->out, ':');
}

int jcs_obj_key(struct jcs_obj *o, const char *key)
{
	return member(o, key);
}

int jcs_obj_str(struct jcs_obj *o, const char *key, const char *val)
{
	return jcs_obj_strn(o, key, val, strlen(val));
}

int jcs_obj_strn(struct jcs_obj *o, const char *key, const char *val, size_t n)
{
	int rc = member(o, key);
	return rc ? rc : jcs_put_string(o->out, val, n, false, NULL);
}

int jcs_obj_strn_lossy(struct jcs_obj *o, const char *key, const char *val, size_t n,
		       bool *replaced)
{
	bool r = false;
	int rc = member(o, key);
	if (!rc)
		rc = jcs_put_string(o->out, val, n, true, &r);
	if (replaced)
		*replaced = r;
	return rc;
}

int jcs_obj_int(struct jcs_obj *o, const char *key, int64_t v)
{
	if (v > JCS_MAX_SAFE_INT || v < -JCS_MAX_SAFE_INT)
		return -EINVAL;
	int rc = member(o, key);
	return rc ? rc : put_int(o->out, v);
}

int jcs_obj_bool(struct jcs_obj *o, const char *key, bool v)
{
	int rc = member(o, key);
	return rc ? rc : kw_buf_puts(o->out, v ? "true" : "false");
}

int jcs_obj_end(struct jcs_obj *o)
{
	return kw_buf_putc(o->out, '}');
}

/* --- jcs_dump: canonical bytes of a jansson tree. ------------------------ */

struct dump_member {
	const char *key;
	size_t len;
	json_t *value;
};

static int member_cmp(const void *a, const void *b)
{
	const struct dump_member *x = a, *y = b;
	return jcs_utf16_cmp(x->key, x->len, y->key, y->len);
}

static int dump(const json_t *v, struct kw_buf *out, int depth)
{
	char num[JCS_NUMBER_MAX];
	int rc;

	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		if (depth >= JCS_MAX_DEPTH)
			return -EINVAL;
		size_t n = json_object_size(v), i = 0;
		struct dump_member *m = n ? calloc(n, sizeof(*m)) : NULL;
		if (n && !m)
			return -ENOMEM;
		for (void *it = json_object_iter((json_t *)v); it && i < n;
		     it = json_object_iter_next((json_t *)v, it), i++) {
			m[i].key = json_object_iter_key(it);
			m[i].len = json_object_iter_key_len(it);
			m[i].value = json_object_iter_value(it);
		}
		if (i > 1)
			qsort(m, i, sizeof(*m), member_cmp);
		rc = kw_buf_putc(out, '{');
		for (size_t j = 0; !rc && j < i; j++) {
			if (j && (rc = kw_buf_putc(out, ',')))
				break;
			rc = jcs_put_string(out, m[j].key, m[j].len, false, NULL);
			if (!rc)
				rc = kw_buf_putc(out, ':');
			if (!rc)
				rc = dump(m[j].value, out, depth + 1);
		}
		free(m);
		if (!rc)
			rc = kw_buf_putc(out, '}');
		break;
	}
	case JSON_ARRAY: {
		if (depth >= JCS_MAX_DEPTH)
			return -EINVAL;
		size_t n = json_array_size(v);
		rc = kw_buf_putc(out, '[');
		for (size_t j = 0; !rc && j < n; j++) {
			if (j && (rc = kw_buf_putc(out, ',')))
				break;
			rc = dump(json_array_get(v, j), out, depth + 1);
		}
		if (!rc)
			rc = kw_buf_putc(out, ']');
		break;
	}
	case JSON_STRING:
		rc = jcs_put_string(out, json_string_value(v), json_string_length(v), false, NULL);
		break;
	case JSON_INTEGER:
		rc = put_int(out, json_integer_value(v));
		break;
	case JSON_REAL: {
		size_t len = jcs_format_double(json_real_value(v), num);
		rc = len ? kw_buf_append(out, num, len) : -EINVAL;
		break;
	}
	case JSON_TRUE:
		rc = kw_buf_puts(out, "true");
		break;
	case JSON_FALSE:
		rc = kw_buf_puts(out, "false");
		break;
	case JSON_NULL:
		rc = kw_buf_puts(out, "null");
		break;
	default:
		rc = -EINVAL;
	}
	return rc == -EILSEQ ? -EINVAL : rc;
}

int jcs_dump(const json_t *value, struct kw_buf *out)
{
	if (!value)
		return -EINVAL;
	size_t start = out->len;
	int rc = dump(value, out, 0);
	if (rc) {
		/* Leave no half-written value behind. */
		out->len = start;
		if (out->data)
			out->data[start] = '\0';
	}
	return rc;
}
