/* SPDX-License-Identifier: Apache-2.0 */
/* Canonical JSON straight from C values (the collector's hot path) and from
 * jansson trees (jcs_dump). Strings are escaped from a byte table: only '"',
 * '\\' and controls are escaped, UTF-8 is validated and copied as is. */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jcs/jcs.h"
#include "jcs_internal.h"

/* The member writers are small; inlining the shared pieces into each saves
 * calls on the hot path. Sanitizer builds cannot inline the unchecked
 * readers into checked code (gcc says so with __SANITIZE_ADDRESS__, clang
 * with __has_feature). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KW_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(KW_ASAN)
#define HOT_INLINE inline
#else
#define HOT_INLINE inline __attribute__((always_inline))
#endif

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

static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static const uint64_t pow10_table[20] = {
	1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
	100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
	10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
	100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL,
};

/* Number of decimal digits of v: log10 from the bit length, then one
 * comparison. */
static inline size_t decimal_digits(uint64_t v)
{
	unsigned t = ((64 - (unsigned)__builtin_clzll(v | 1)) * 1233) >> 12; /* <= 19 */
	return v ? t + 1 - (v < pow10_table[t]) : 1;
}

static inline void pair(char *p, unsigned v)
{
	p[0] = digit_pairs[2 * v];
	p[1] = digit_pairs[2 * v + 1];
}

/* Exactly 8 digits of v < 10^8, as four independent pairs. */
static inline void eight_digits(char *p, uint32_t v)
{
	uint32_t hi = v / 10000, lo = v % 10000;
	pair(p, hi / 100);
	pair(p + 2, hi % 100);
	pair(p + 4, lo / 100);
	pair(p + 6, lo % 100);
}

/* The 8 digits of v < 10^8 (leading zeros included) as the bytes of a
 * little-endian word, first digit lowest. */
static inline uint64_t pair_word(unsigned v)
{
	uint16_t w;
	memcpy(&w, digit_pairs + 2 * v, 2);
	return w;
}

static inline uint64_t eight_ascii(uint32_t v)
{
	uint32_t hi = v / 10000, lo = v % 10000;
	return pair_word(hi / 100) | pair_word(hi % 100) << 16 | pair_word(lo / 100) << 32 |
	       pair_word(lo % 100) << 48;
}

size_t jcs_put_u64(uint64_t v, char *out)
{
	size_t n = decimal_digits(v);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (__builtin_expect(v < 10000000000000000ULL, 1)) {
		/* No digit-by-digit loop, whose exit would be mispredicted on
		 * every number: whole 8-digit words, leading zeros shifted out,
		 * stored 8 bytes at a time. */
		if (v < 100000000) {
			uint64_t w = eight_ascii((uint32_t)v) >> (8 * (8 - n));
			memcpy(out, &w, 8);
			return n;
		}
		uint64_t hi = eight_ascii((uint32_t)(v / 100000000)) >> (8 * (16 - n));
		uint64_t lo = eight_ascii((uint32_t)(v % 100000000));
		memcpy(out, &hi, 8);
		memcpy(out + n - 8, &lo, 8);
		return n;
	}
#endif
	char *p = out + n;
	while (v >= 100000000) {
		p -= 8;
		eight_digits(p, (uint32_t)(v % 100000000));
		v /= 100000000;
	}
	uint32_t w = (uint32_t)v;
	while (w >= 100) {
		p -= 2;
		pair(p, w % 100);
		w /= 100;
	}
	if (w >= 10)
		pair(p - 2, w);
	else
		p[-1] = (char)('0' + w);
	return n;
}

/* Room for n more bytes (and the NUL); the write position, or NULL. */
static inline char *room(struct kw_buf *b, size_t n)
{
	if (__builtin_expect(b->cap - b->len <= n, 0) && kw_buf_reserve(b, n))
		return NULL;
	return b->data + b->len;
}

/* Worst case for a string of n bytes: every byte a control as \u00xx. */
static inline size_t string_room(size_t n)
{
	return n > (SIZE_MAX - 64) / 6 ? SIZE_MAX : n * 6 + 2;
}

/* Writes s as a canonical JSON string at o, which has string_room(n)
 * bytes. Returns the end, or NULL for invalid UTF-8 when not lossy. */
static inline char *string_out(char *o, const char *s, size_t n, bool lossy, bool *replaced)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	*o++ = '"';
	for (;;) {
		if (end - p < 16) {
			/* Short: copy while checking, no library call. */
			while (p < end && jcs_byte_class[*p] == JCS_C_PLAIN)
				*o++ = (char)*p++;
		} else {
			const unsigned char *q = jcs_scan_plain(p, end);
			memcpy(o, p, (size_t)(q - p));
			o += q - p;
			p = q;
		}
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
				return NULL;
			}
		}
		}
	}
	*o++ = '"';
	return o;
}

static inline int finish(struct kw_buf *out, char *o)
{
	*o = '\0';
	out->len = (size_t)(o - out->data);
	return 0;
}

int jcs_put_string(struct kw_buf *out, const char *s, size_t n, bool lossy, bool *replaced)
{
	if (!s)
		s = ""; /* n must then be 0 */
	size_t need = string_room(n);
	char *o = need == SIZE_MAX ? NULL : room(out, need);
	if (!o)
		return -ENOMEM;
	o = string_out(o, s, n, lossy, replaced);
	if (!o) {
		out->data[out->len] = '\0';
		return -EILSEQ;
	}
	return finish(out, o);
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

static inline char *int_out(char *o, int64_t v)
{
	uint64_t u = (uint64_t)v;
	if (v < 0) {
		*o++ = '-';
		u = -u;
	}
	return o + jcs_put_u64(u, o);
}

static inline bool int_ok(int64_t v)
{
	return v <= JCS_MAX_SAFE_INT && v >= -JCS_MAX_SAFE_INT;
}

static int put_int(struct kw_buf *out, int64_t v)
{
	if (!int_ok(v))
		return -EINVAL;
	char *o = room(out, 24);
	if (!o)
		return -ENOMEM;
	return finish(out, int_out(o, v));
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

#ifndef NDEBUG
/* jcs_utf16_cmp() for NUL-terminated names; finds the first difference 16
 * bytes at a time (same page rule as copy_plain_cstr). */
__attribute__((no_sanitize_address))
static HOT_INLINE int utf16_cmpz(const char *a, const char *b)
{
#ifdef __SSE2__
	while (((uintptr_t)a & 4095) <= 4096 - 16 && ((uintptr_t)b & 4095) <= 4096 - 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)a);
		__m128i y = _mm_loadu_si128((const __m128i *)(const void *)b);
		unsigned ne = ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) & 0xFFFF;
		unsigned nul = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_setzero_si128()));
		unsigned stop = ne | nul;
		if (stop) {
			/* Decide from the vectors: reloading the bytes at the
			 * first difference would wait on the bit scan. */
			unsigned bit = stop & -stop;
			unsigned high = (unsigned)(_mm_movemask_epi8(x) | _mm_movemask_epi8(y));
			if (bit & high) {
				/* Non-ASCII: the UTF-16 rule needs the bytes. */
				unsigned i = (unsigned)__builtin_ctz(stop);
				a += i;
				b += i;
				break;
			}
			/* Both bytes are ASCII there: a signed compare will do. */
			unsigned lt = (unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(x, y));
			unsigned gt = (unsigned)_mm_movemask_epi8(_mm_cmpgt_epi8(x, y));
			return (bit & lt) ? -1 : (bit & gt) ? 1 : 0;
		}
		a += 16;
		b += 16;
	}
#endif
	while (*a && *a == *b) /* no-op after the break above */
		a++, b++;
	unsigned x = (unsigned char)*a, y = (unsigned char)*b;
	if (x >= 0xF0 && (y == 0xEE || y == 0xEF))
		return -1;
	if (y >= 0xF0 && (x == 0xEE || x == 0xEF))
		return 1;
	return x < y ? -1 : x > y;
}
#endif

/* Names up to this long that need no escaping take the fast path. */
#define FAST_NAME 32
/* Values up to this long that are plain ASCII take the fast path. */
#define FAST_VALUE 64

/* Copies the NUL-terminated s to w when it is at most max bytes of plain
 * ASCII and returns its length; otherwise returns SIZE_MAX (w may have been
 * written). w needs max + 16 bytes of room. Names and values are short and
 * of every length, so a byte loop mispredicts its exit on every call; this
 * reads 16 bytes at a time, never across a page, which may read past the NUL
 * within the page (as string functions do): hence no ASan checks here. */
__attribute__((no_sanitize_address))
static HOT_INLINE size_t copy_plain_cstr(const unsigned char *s, char *w, size_t max)
{
	size_t i = 0;
#ifdef __SSE2__
	while (i < max && ((uintptr_t)(s + i) & 4095) <= 4096 - 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		_mm_storeu_si128((__m128i *)(void *)(w + i), x);
		unsigned mask = jcs_special16(x);
		if (mask) {
			/* Plain up to the first hit, and the hit is the NUL? */
			unsigned nul = (unsigned)_mm_movemask_epi8(
				_mm_cmpeq_epi8(x, _mm_setzero_si128()));
			size_t end = i + (size_t)__builtin_ctz(mask);
			return (mask & -mask & nul) && end <= max ? end : SIZE_MAX;
		}
		i += 16;
	}
#endif
	for (; i <= max; i++) {
		unsigned c = s[i];
		if (c == '\0')
			return i;
		if (jcs_byte_class[c] != JCS_C_PLAIN)
			return SIZE_MAX;
		w[i] = (char)c;
	}
	return SIZE_MAX;
}

/* Copies s[0..n), n <= 16, to w (16 bytes of room) when it is all plain
 * ASCII. Same reading rule as above. */
__attribute__((no_sanitize_address))
static HOT_INLINE bool copy_plain_short(const unsigned char *s, size_t n, char *w)
{
#ifdef __SSE2__
	/* n == 0: s may point at a page that cannot be read at all. */
	if (n - 1 < 16 && ((uintptr_t)s & 4095) <= 4096 - 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)s);
		unsigned mask = jcs_special16(x) & ((1u << n) - 1);
		if (mask)
			return false;
		_mm_storeu_si128((__m128i *)(void *)w, x);
		return true;
	}
#endif
	(void)s;
	(void)n;
	(void)w;
	return false;
}

/* Writes [","] "key": with room for value more bytes after it, and returns
 * where the value goes (out->len is not yet advanced), or NULL with *rc. */
static HOT_INLINE char *member(struct jcs_obj *o, const char *key, size_t value, int *rc)
{
#ifndef NDEBUG
	/* RFC 8785 order is the caller's job; a wrong order would sign
	 * bytes no verifier reproduces. Only the pointer to the last name is
	 * kept: a caller that builds names in one reused buffer passes the
	 * same pointer again, and its old contents are gone, so that case is
	 * not checked rather than refused. */
	assert(!o->last_key || o->last_key == key || utf16_cmpz(o->last_key, key) < 0);
	o->last_key = key;
#endif
	char *w = value <= SIZE_MAX / 2 ? room(o->out, FAST_NAME + 20 + value) : NULL;
	if (!w) {
		*rc = -ENOMEM;
		return NULL;
	}
	char *start = w;
	if (!o->first)
		*w++ = ',';
	*w++ = '"';
	size_t i = copy_plain_cstr((const unsigned char *)key, w, FAST_NAME);
	if (__builtin_expect(i != SIZE_MAX, 1)) {
		w += i;
		*w++ = '"';
		*w++ = ':';
		o->first = false;
		return w;
	}
	/* A long name or one that needs escapes or UTF-8 checks. */
	size_t kl = strlen(key), kr = string_room(kl);
	size_t off = (size_t)(start - o->out->data);
	w = kr == SIZE_MAX || value > SIZE_MAX - kr - 2 ? NULL : room(o->out, kr + 2 + value);
	if (!w) {
		*rc = -ENOMEM;
		return NULL;
	}
	w = o->out->data + off;
	if (!o->first)
		*w++ = ',';
	w = string_out(w, key, kl, false, NULL);
	if (!w) {
		*rc = -EILSEQ;
		return NULL;
	}
	o->first = false;
	*w++ = ':';
	return w;
}

int jcs_obj_key(struct jcs_obj *o, const char *key)
{
	int rc = 0;
	char *w = member(o, key, 0, &rc);
	return w ? finish(o->out, w) : rc;
}

static inline int obj_string(struct jcs_obj *o, const char *key, const char *val, size_t n,
			     bool lossy, bool *replaced)
{
	int rc = 0;
	bool first = o->first;
#ifndef NDEBUG
	const char *last = o->last_key;
#endif
	if (!val)
		val = ""; /* n must then be 0 */
	size_t vr = string_room(n);
	char *w = vr == SIZE_MAX ? NULL : member(o, key, vr < 18 ? 18 : vr, &rc);
	if (!w)
		return rc ? rc : -ENOMEM;
	if (copy_plain_short((const unsigned char *)val, n, w + 1)) {
		w[0] = '"';
		w[1 + n] = '"';
		return finish(o->out, w + 2 + n);
	}
	w = string_out(w, val, n, lossy, replaced);
	if (!w) {
		/* Leave the buffer and the object as they were. */
		o->out->data[o->out->len] = '\0';
		o->first = first;
#ifndef NDEBUG
		o->last_key = last; /* the caller may retry the name lossily */
#endif
		return -EILSEQ;
	}
	return finish(o->out, w);
}

int jcs_obj_str(struct jcs_obj *o, const char *key, const char *val)
{
	int rc = 0;
	bool first = o->first;
#ifndef NDEBUG
	const char *last = o->last_key;
#endif
	char *w = member(o, key, FAST_VALUE + 18, &rc);
	if (!w)
		return rc;
	*w = '"';
	size_t i = copy_plain_cstr((const unsigned char *)val, w + 1, FAST_VALUE);
	if (__builtin_expect(i != SIZE_MAX, 1)) {
		w[1 + i] = '"';
		return finish(o->out, w + 2 + i);
	}
	/* Not plain: write the member again the general way. */
	o->first = first;
#ifndef NDEBUG
	o->last_key = last;
#endif
	return obj_string(o, key, val, strlen(val), false, NULL);
}

int jcs_obj_strn(struct jcs_obj *o, const char *key, const char *val, size_t n)
{
	return obj_string(o, key, val, n, false, NULL);
}

int jcs_obj_strn_lossy(struct jcs_obj *o, const char *key, const char *val, size_t n,
		       bool *replaced)
{
	bool r = false;
	int rc = obj_string(o, key, val, n, true, &r);
	if (replaced)
		*replaced = r;
	return rc;
}

int jcs_obj_int(struct jcs_obj *o, const char *key, int64_t v)
{
	if (!int_ok(v))
		return -EINVAL;
	int rc = 0;
	char *w = member(o, key, 24, &rc);
	return w ? finish(o->out, int_out(w, v)) : rc;
}

int jcs_obj_bool(struct jcs_obj *o, const char *key, bool v)
{
	int rc = 0;
	char *w = member(o, key, 5, &rc);
	if (!w)
		return rc;
	if (v) {
		memcpy(w, "true", 4);
		w += 4;
	} else {
		memcpy(w, "false", 5);
		w += 5;
	}
	return finish(o->out, w);
}

char *jcs_string_at(char *o, const char *s, size_t n, bool lossy, bool *replaced)
{
	if (copy_plain_short((const unsigned char *)s, n, o + 1)) {
		o[0] = '"';
		o[1 + n] = '"';
		return o + 2 + n;
	}
	return string_out(o, n ? s : "", n, lossy, replaced);
}

char *jcs_u64_at(char *o, uint64_t v)
{
	return o + jcs_put_u64(v, o);
}

int jcs_obj_end(struct jcs_obj *o)
{
	char *w = room(o->out, 1);
	if (!w)
		return -ENOMEM;
	*w++ = '}';
	return finish(o->out, w);
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
		double d = json_real_value(v);
		size_t len = fabs(d) > (double)JCS_MAX_SAFE_INT ? 0 : jcs_format_double(d, num);

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
