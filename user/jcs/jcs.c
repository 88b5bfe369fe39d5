/* SPDX-License-Identifier: Apache-2.0 */
/* Strict single-pass JSON parser that writes RFC 8785 canonical bytes.
 *
 * Every value is written to the output as soon as it is read. Object
 * members are written in input order and their spans remembered; when the
 * object closes the members are sorted by their names' UTF-16 code units and,
 * only if the input order was different, the object's bytes are rearranged.
 * Duplicate names show up as neighbours after the sort. Names are compared in
 * their decoded form: for the usual name without escapes that is the
 * canonical output itself, so nothing is copied. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "jcs_internal.h"
#include "jcs_parser.h"

int jcs_fail(struct jcs_parser *ps, const unsigned char *at, const char *fmt, ...)
{
	struct jcs_error *e = ps->err;
	if (!e)
		return -EINVAL;
	/* Line and column are computed only now: the fast path never counts. */
	size_t off = (size_t)(at - ps->begin), line = 1, line_start = 0;
	for (size_t i = 0; i < off; i++)
		if (ps->begin[i] == '\n') {
			line++;
			line_start = i + 1;
		}
	e->offset = off;
	e->line = line;
	e->column = off - line_start + 1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void describe(const unsigned char *p, const unsigned char *end, char *buf, size_t n)
{
	if (p >= end)
		snprintf(buf, n, "end of input");
	else if (*p >= 0x21 && *p < 0x7f)
		snprintf(buf, n, "'%c'", *p);
	else
		snprintf(buf, n, "byte 0x%02x", *p);
}

static inline void skip_ws(struct jcs_parser *ps)
{
	const unsigned char *p = ps->p, *end = ps->end;
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++;
	ps->p = p;
}

static inline int put(struct jcs_parser *ps, const void *s, size_t n)
{
	struct kw_buf *o = ps->out;
	if (o->cap - o->len <= n && kw_buf_reserve(o, n))
		return -ENOMEM;
	memcpy(o->data + o->len, s, n);
	o->len += n;
	return 0;
}

static inline int putch(struct jcs_parser *ps, char c)
{
	struct kw_buf *o = ps->out;
	if (o->cap - o->len <= 1 && kw_buf_reserve(o, 1))
		return -ENOMEM;
	o->data[o->len++] = c;
	return 0;
}

static int hex4(const unsigned char *p, unsigned *v)
{
	unsigned r = 0;
	for (int i = 0; i < 4; i++) {
		unsigned c = p[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		r = r << 4 | d;
	}
	*v = r;
	return 0;
}

/* Writes code point cp in its canonical string form. */
static int put_code_point(struct jcs_parser *ps, unsigned cp, bool *escaped)
{
	char b[6];
	size_t n;
	if (cp < 0x20 || cp == '"' || cp == '\\') {
		static const char short_esc[32] = {
			['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n', ['\f'] = 'f', ['\r'] = 'r',
		};
		*escaped = true;
		b[0] = '\\';
		if (cp >= 0x20) {
			b[1] = (char)cp;
			n = 2;
		} else if (short_esc[cp]) {
			b[1] = short_esc[cp];
			n = 2;
		} else {
			static const char hex[] = "0123456789abcdef";
			memcpy(b + 1, "u00", 3);
			b[4] = hex[cp >> 4];
			b[5] = hex[cp & 15];
			n = 6;
		}
	} else if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xC0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xE0 | cp >> 12);
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[2] = (char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		b[0] = (char)(0xF0 | cp >> 18);
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[3] = (char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	return put(ps, b, n);
}

/* Reads the escape at p (p[0] == '\\'), writes its canonical form and
 * returns the bytes consumed, or a negative errno. */
static int parse_escape(struct jcs_parser *ps, const unsigned char *p, bool *escaped)
{
	const unsigned char *end = ps->end;
	if (end - p < 2)
		return jcs_fail(ps, p, "unterminated string");
	switch (p[1]) {
	case '"': return put_code_point(ps, '"', escaped) ?: 2;
	case '\\': return put_code_point(ps, '\\', escaped) ?: 2;
	case '/': return put_code_point(ps, '/', escaped) ?: 2;
	case 'b': return put_code_point(ps, '\b', escaped) ?: 2;
	case 'f': return put_code_point(ps, '\f', escaped) ?: 2;
	case 'n': return put_code_point(ps, '\n', escaped) ?: 2;
	case 'r': return put_code_point(ps, '\r', escaped) ?: 2;
	case 't': return put_code_point(ps, '\t', escaped) ?: 2;
	case 'u': break;
	default: {
		char what[24];
		describe(p + 1, end, what, sizeof(what));
		return jcs_fail(ps, p, "invalid escape \\%s in string", what);
	}
	}
	unsigned cp, lo;
	if (end - p < 6 || hex4(p + 2, &cp))
		return jcs_fail(ps, p, "invalid \\u escape: four hex digits expected");
	if (cp >= 0xDC00 && cp <= 0xDFFF)
		return jcs_fail(ps, p, "lone low surrogate \\u%04X", cp);
	if (cp >= 0xD800 && cp <= 0xDBFF) {
		if (end - p < 12 || p[6] != '\\' || p[7] != 'u' || hex4(p + 8, &lo) ||
		    lo < 0xDC00 || lo > 0xDFFF)
			return jcs_fail(ps, p, "lone high surrogate \\u%04X", cp);
		cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
		return put_code_point(ps, cp, escaped) ?: 12;
	}
	return put_code_point(ps, cp, escaped) ?: 6;
}

/* Undoes the canonical escapes of a name (only \" \\ \b \t \n \f \r \u00xx
 * can occur) into ps->keys, for comparing. */
static int decode_key(struct jcs_parser *ps, struct jcs_member *m)
{
	const char *s = ps->out->data + m->key_off;
	size_t n = m->key_len;
	size_t start = ps->keys.len;
	if (kw_buf_reserve(&ps->keys, n))
		return -ENOMEM;
	char *o = ps->keys.data + start;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\\') {
			*o++ = s[i];
			continue;
		}
		char c = s[++i];
		switch (c) {
		case 'b': *o++ = '\b'; break;
		case 't': *o++ = '\t'; break;
		case 'n': *o++ = '\n'; break;
		case 'f': *o++ = '\f'; break;
		case 'r': *o++ = '\r'; break;
		case 'u': {
			unsigned v = 0;
			hex4((const unsigned char *)s + i + 1, &v);
			*o++ = (char)v;
			i += 4;
			break;
		}
		default: *o++ = c;
		}
	}
	m->key_off = start;
	m->key_len = (size_t)(o - (ps->keys.data + start));
	m->in_keys = true;
	ps->keys.len = start + m->key_len;
	return 0;
}

/* Room for n more output bytes past position o (out->len is behind o while
 * a string is being copied). */
static inline char *room_at(struct jcs_parser *ps, size_t o, size_t n)
{
	struct kw_buf *b = ps->out;
	if (__builtin_expect(b->cap - o <= n, 0)) {
		b->len = o;
		if (kw_buf_reserve(b, n))
			return NULL;
	}
	return b->data;
}

/* ps->p is at the opening quote. With key, records where the decoded
 * name is. Plain bytes are copied sixteen at a time as they are scanned:
 * each block is stored whole and the write position advanced only past its
 * plain part, so the common string costs no library call. */
static int parse_string(struct jcs_parser *ps, struct jcs_member *key)
{
	const unsigned char *open = ps->p, *p = open + 1, *end = ps->end;
	bool escaped = false;
	int rc;
	char *d;

	if ((rc = putch(ps, '"')))
		return rc;
	size_t content = ps->out->len, o = content;
	for (;;) {
#ifdef __SSE2__
		while (end - p >= 16) {
			if (!(d = room_at(ps, o, 16)))
				return -ENOMEM;
			__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
			_mm_storeu_si128((__m128i *)(void *)(d + o), x);
			unsigned mask = jcs_special16(x);
			if (mask) {
				unsigned k = (unsigned)__builtin_ctz(mask);
				p += k;
				o += k;
				goto special;
			}
			p += 16;
			o += 16;
		}
#endif
		if (!(d = room_at(ps, o, (size_t)(end - p))))
			return -ENOMEM;
		while (p < end && jcs_byte_class[*p] == JCS_C_PLAIN)
			d[o++] = (char)*p++;
#ifdef __SSE2__
special:
#endif
		if (p >= end)
			return jcs_fail(ps, open, "unterminated string");
		switch (jcs_byte_class[*p]) {
		case JCS_C_QUOTE:
			ps->out->len = o;
			if (key) {
				key->key_off = content;
				key->key_len = o - content;
				key->in_keys = false;
				if (escaped && (rc = decode_key(ps, key)))
					return rc;
			}
			ps->p = p + 1;
			return putch(ps, '"');
		case JCS_C_BSLASH:
			ps->out->len = o;
			rc = parse_escape(ps, p, &escaped);
			if (rc < 0)
				return rc;
			p += rc;
			o = ps->out->len;
			break;
		case JCS_C_CTRL:
			return jcs_fail(ps, p, "control character 0x%02x in string (must be escaped)", *p);
		default: {
			size_t len = jcs_utf8_seq(p, (size_t)(end - p));
			if (!len)
				return jcs_fail(ps, p, "invalid UTF-8 (byte 0x%02x)", *p);
			if (!(d = room_at(ps, o, len)))
				return -ENOMEM;
			memcpy(d + o, p, len);
			o += len;
			p += len;
		}
		}
	}
}

static inline bool is_digit(const unsigned char *p, const unsigned char *end)
{
	return p < end && *p >= '0' && *p <= '9';
}

/* The canonical form of a decimal literal with at most 15 significant
 * digits, below 10^15 and in the normal range, without strtod: the double
 * nearest to such a decimal prints back as exactly those digits (15 = DBL_DIG:
 * two different 15-digit decimals never round to the same double, so no
 * shorter or closer digit string can read back as it). Returns 0 when this
 * does not apply; larger values take the strtod path, which applies the
 * integer rule. */
static size_t short_decimal(bool neg, const unsigned char *ip, const unsigned char *ie,
			    const unsigned char *fp, const unsigned char *fe,
			    const unsigned char *ep, const unsigned char *ee, bool exp_neg,
			    char out[JCS_NUMBER_MAX])
{
	char d[16];
	int k = 0;
	long long lead = 0;      /* leading zeros of intpart ++ fraction */
	long long total = (ie - ip) + (fe - fp);
	bool seen = false;
	int zeros = 0;           /* zeros seen since the last non-zero digit */
	for (const unsigned char *q = ip; q < fe; q++) {
		if (q == ie)
			q = fp;
		if (q >= fe)
			break;
		if (*q == '0') {
			if (!seen)
				lead++;
			else
				zeros++;
			continue;
		}
		if (seen && k + zeros + 1 > 15)
			return 0;
		while (zeros) {
			d[k++] = '0';
			zeros--;
		}
		d[k++] = (char)*q;
		seen = true;
	}
	if (!seen) {
		out[0] = '0'; /* 0.0, -0e5 */
		out[1] = '\0';
		return 1;
	}
	long long e = 0;
	for (const unsigned char *q = ep; q && q < ee && e < 100000; q++)
		e = e * 10 + (*q - '0');
	if (exp_neg)
		e = -e;
	/* value = 0.d * 10^n, below 10^15 < 2^53 */
	long long n = total - lead - (fe - fp) + e;
	if (n < -300 || n > 15)
		return 0;
	return jcs_number_layout(neg, d, k, (int)n, out);
}

static int parse_number(struct jcs_parser *ps)
{
	const unsigned char *start = ps->p, *p = start, *end = ps->end;
	bool neg = *p == '-', integer = true;
	if (neg)
		p++;
	const unsigned char *digits = p;
	if (!is_digit(p, end)) {
		if (p < end && *p == 'I')
			return jcs_fail(ps, start, "Infinity is not a JSON number");
		return jcs_fail(ps, p, "invalid number: digit expected");
	}
	if (*p == '0') {
		p++;
		if (is_digit(p, end))
			return jcs_fail(ps, start, "invalid number: leading zero");
	} else {
		while (is_digit(p, end))
			p++;
	}
	const unsigned char *int_end = p, *frac = p, *frac_end = p, *exp = NULL;
	bool exp_neg = false;
	if (p < end && *p == '.') {
		p++;
		if (!is_digit(p, end))
			return jcs_fail(ps, p, "invalid number: digit expected after '.'");
		frac = p;
		while (is_digit(p, end))
			p++;
		frac_end = p;
		integer = false;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			exp_neg = *p++ == '-';
		if (!is_digit(p, end))
			return jcs_fail(ps, p, "invalid number: digit expected in exponent");
		exp = p;
		while (is_digit(p, end))
			p++;
		integer = false;
	}
	ps->p = p;

	if (integer) {
		/* An integer literal is an integer claim: refuse what a double
		 * cannot hold exactly instead of rounding it. */
		size_t nd = (size_t)(int_end - digits);
		uint64_t v = 0;
		if (nd <= 16)
			for (const unsigned char *d = digits; d < int_end; d++)
				v = v * 10 + (uint64_t)(*d - '0');
		if (nd > 16 || v > (uint64_t)JCS_MAX_SAFE_INT)
			return jcs_fail(ps, start, "integer outside +-(2^53-1)");
		if (v == 0)
			return putch(ps, '0'); /* -0 -> 0 */
		return put(ps, start, (size_t)(int_end - start));
	}

	char num[JCS_NUMBER_MAX];
	size_t len = short_decimal(neg, digits, int_end, frac, frac_end, exp, p, exp_neg, num);
	if (len)
		return put(ps, num, len);

	/* strtod reads the decimal point of the locale: hand it the digits
	 * and an adjusted exponent instead ("1.25e3" -> "125e1"). */
	long long e = 0;
	for (const unsigned char *q = exp; q && q < p && e < 100000000000000000LL; q++)
		e = e * 10 + (*q - '0');
	if (exp_neg)
		e = -e;
	e -= frac_end - frac;
	size_t n = (size_t)(frac_end - start) + 24;
	char small[128], *s = small;
	if (n >= sizeof(small) && !(s = malloc(n)))
		return -ENOMEM;
	char *w = s;
	memcpy(w, start, (size_t)(int_end - start));
	w += int_end - start;
	memcpy(w, frac, (size_t)(frac_end - frac));
	w += frac_end - frac;
	snprintf(w, 24, "e%lld", e);
	double v = strtod(s, NULL);
	if (s != small)
		free(s);
	if (isinf(v))
		return jcs_fail(ps, start, "number overflows to infinity");
	/* Every double of magnitude 2^53 or more is an integer: the same integer
	 * rule as for literals, whatever the spelling (1e16, 9007199254740992.0). */
	if (fabs(v) > (double)JCS_MAX_SAFE_INT)
		return jcs_fail(ps, start, "integer-valued number outside +-(2^53-1)");
	len = jcs_format_double(v, num);
	return put(ps, num, len);
}

static int parse_value(struct jcs_parser *ps);

static int enter(struct jcs_parser *ps)
{
	if (++ps->depth > JCS_MAX_DEPTH)
		return jcs_fail(ps, ps->p, "nesting deeper than %d", JCS_MAX_DEPTH);
	return 0;
}

/* The opening character (appended, one level deeper) and white space: 1
 * when close follows at once (consumed, appended, the level given back). */
static int open_container(struct jcs_parser *ps, char open, char close)
{
	int rc;
	if ((rc = enter(ps)) || (rc = putch(ps, open)))
		return rc;
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		ps->depth--;
		return (rc = putch(ps, close)) ? rc : 1;
	}
	return 0;
}

/* After an element or a member: 1 when ',' follows (consumed, appended),
 * 0 when close follows (consumed only), else an error. */
static int next_item(struct jcs_parser *ps, char close)
{
	int rc;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ',') {
		ps->p++;
		return (rc = putch(ps, ',')) ? rc : 1;
	}
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return 0;
	}
	char what[24];
	describe(ps->p, ps->end, what, sizeof(what));
	return jcs_fail(ps, ps->p, "expected ',' or '%c' but found %s", close, what);
}

/* Hands out's contents to the sink when they are final and there are
 * enough. Called between array elements: with no member recorded no object
 * is open (a member is recorded before its value is read), so nothing will
 * rearrange or refer back to what out holds. */
static inline int hand_over(struct jcs_parser *ps)
{
	struct kw_buf *o = ps->out;
	if (!ps->sink || ps->m_len || o->len < ps->sink->chunk)
		return 0;
	int rc = ps->sink->write(ps->sink->ctx, o->data, o->len);
	o->len = 0;
	ps->handed = true;
	return rc;
}

static int parse_array(struct jcs_parser *ps)
{
	int rc = open_container(ps, '[', ']');
	if (rc)
		return rc < 0 ? rc : 0;
	do {
		if ((rc = parse_value(ps)) || (rc = hand_over(ps)))
			return rc;
	} while ((rc = next_item(ps, ']')) > 0);
	if (rc < 0)
		return rc;
	ps->depth--;
	return putch(ps, ']');
}

/* A name's first 8 bytes as a big-endian number whose order is the UTF-16
 * order: only the lead bytes EE and EF (U+E000..U+FFFF) are moved above
 * F0..F4 (supplementary planes), see jcs_utf16_cmp(). Equal prefixes fall
 * back to the full comparison. */
static inline uint64_t key_prefix(const unsigned char *k, size_t n)
{
	unsigned char b[8] = { 0 };
	memcpy(b, k, n < 8 ? n : 8);
	uint64_t v;
	memcpy(&v, b, 8);
	if (v & 0x8080808080808080ULL)
		for (int i = 0; i < 8; i++)
			if (b[i] == 0xEE || b[i] == 0xEF)
				b[i] += 0x10;
	memcpy(&v, b, 8);
	return __builtin_bswap64(v);
}

static int parse_object(struct jcs_parser *ps)
{
	size_t base = ps->m_len, keys_mark = ps->keys.len;
	int rc = open_container(ps, '{', '}');
	if (rc)
		return rc < 0 ? rc : 0;
	for (;;) {
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != '"') {
			char what[24];
			describe(ps->p, ps->end, what, sizeof(what));
			return jcs_fail(ps, ps->p, "expected a member name (string) but found %s", what);
		}
		if (ps->m_len == ps->m_cap) {
			struct jcs_member *nm = kw_array_grow(ps->m, &ps->m_cap, sizeof(*nm), 64);
			if (!nm)
				return -ENOMEM;
			ps->m = nm;
		}
		/* Indexes, not pointers: nested objects may move ps->m. */
		size_t mi = ps->m_len++;
		ps->m[mi].start = ps->out->len;
		ps->m[mi].in_off = (size_t)(ps->p - ps->begin);
		struct jcs_member key;
		if ((rc = parse_string(ps, &key)))
			return rc;
		ps->m[mi].key_off = key.key_off;
		ps->m[mi].key_len = key.key_len;
		ps->m[mi].in_keys = key.in_keys;
		ps->m[mi].prefix = key_prefix((const unsigned char *)jcs_key_of(ps, &ps->m[mi]),
					      key.key_len);
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != ':') {
			char what[24];
			describe(ps->p, ps->end, what, sizeof(what));
			return jcs_fail(ps, ps->p, "expected ':' but found %s", what);
		}
		ps->p++;
		if ((rc = putch(ps, ':')) || (rc = parse_value(ps)))
			return rc;
		ps->m[mi].end = ps->out->len;
		rc = next_item(ps, '}');
		if (rc < 0)
			return rc;
		if (rc == 0)
			break;
	}
	if ((rc = jcs_finish_object(ps, base)))
		return rc;
	ps->m_len = base;
	ps->keys.len = keys_mark;
	ps->depth--;
	return putch(ps, '}');
}

static int parse_literal(struct jcs_parser *ps, const char *word, size_t n)
{
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
		return jcs_fail(ps, ps->p, "invalid literal (expected %s)", word);
	ps->p += n;
	return put(ps, word, n);
}

static int parse_value(struct jcs_parser *ps)
{
	skip_ws(ps);
	if (ps->p >= ps->end)
		return jcs_fail(ps, ps->p, "unexpected end of input: value expected");
	switch (*ps->p) {
	case '{': return parse_object(ps);
	case '[': return parse_array(ps);
	case '"': return parse_string(ps, NULL);
	case 't': return parse_literal(ps, "true", 4);
	case 'f': return parse_literal(ps, "false", 5);
	case 'n': return parse_literal(ps, "null", 4);
	case '-':
	case '0' ... '9': return parse_number(ps);
	case 'N':
	case 'I': return jcs_fail(ps, ps->p, "NaN and Infinity are not JSON numbers");
	default: {
		char what[24];
		describe(ps->p, ps->end, what, sizeof(what));
		return jcs_fail(ps, ps->p, "unexpected %s: value expected", what);
	}
	}
}

static int parse_document(struct jcs_scratch *scratch, const char *text, size_t len,
			  struct kw_buf *out, const struct jcs_sink *sink, struct jcs_error *err)
{
	if (!text)
		text = ""; /* len must then be 0: nothing to read */
	struct jcs_parser ps = {
		.begin = (const unsigned char *)text,
		.p = (const unsigned char *)text,
		.end = (const unsigned char *)text + len,
		.out = out,
		.err = err,
		.sink = sink,
	};
	if (scratch) {
		ps.m = scratch->members;
		ps.m_cap = scratch->cap;
		ps.keys = scratch->keys;
		ps.perm = scratch->perm;
		kw_buf_reset(&ps.keys);
	}
	size_t start = out->len;
	/* Canonical output is rarely longer than the input; with a sink, out
	 * holds a chunk and an element. */
	int rc = kw_buf_reserve(out, (sink && sink->chunk < len ? 2 * sink->chunk : len) + 64);
	if (!rc)
		rc = parse_value(&ps);
	if (!rc) {
		skip_ws(&ps);
		if (ps.p != ps.end)
			rc = jcs_fail(&ps, ps.p, "trailing content after the JSON value");
	}
	if (scratch) {
		scratch->members = ps.m;
		scratch->cap = ps.m_cap;
		scratch->keys = ps.keys;
		scratch->perm = ps.perm;
	} else {
		free(ps.m);
		kw_buf_free(&ps.keys);
		kw_buf_free(&ps.perm);
	}
	if (rc == -ENOMEM && err) {
		err->line = err->column = err->offset = 0;
		snprintf(err->message, sizeof(err->message), "out of memory");
	}
	if (rc) {
		out->len = ps.handed ? 0 : start;
	}
	if (out->data)
		out->data[out->len] = '\0';
	return rc;
}

int jcs_canonicalize_with(struct jcs_scratch *scratch, const char *text, size_t len,
			  struct kw_buf *out, struct jcs_error *err)
{
	return parse_document(scratch, text, len, out, NULL, err);
}

int jcs_canonicalize_stream(const char *text, size_t len, struct kw_buf *out,
			    const struct jcs_sink *sink, struct jcs_error *err)
{
	return parse_document(NULL, text, len, out, sink, err);
}

int jcs_canonicalize(const char *text, size_t len, struct kw_buf *out, struct jcs_error *err)
{
	return jcs_canonicalize_with(NULL, text, len, out, err);
}

void jcs_scratch_free(struct jcs_scratch *scratch)
{
	free(scratch->members);
	scratch->members = NULL;
	scratch->cap = 0;
	kw_buf_free(&scratch->keys);
	kw_buf_free(&scratch->perm);
}

json_t *jcs_parse(const char *text, size_t len, struct jcs_error *err)
{
	struct kw_buf scratch = {0};
	int rc = jcs_canonicalize(text, len, &scratch, err);
	kw_buf_free(&scratch);
	if (rc)
		return NULL;
	/* The text passed every strict check; jansson only builds the tree. */
	json_error_t je;
	json_t *v = json_loadb(text, len,
			       JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL | JSON_DECODE_ANY, &je);
	if (!v && err) {
		err->line = je.line > 0 ? (size_t)je.line : 0;
		err->column = je.column > 0 ? (size_t)je.column : 0;
		err->offset = je.position > 0 ? (size_t)je.position : 0;
		snprintf(err->message, sizeof(err->message), "%s", je.text);
	}
	return v;
}
