/* SPDX-License-Identifier: Apache-2.0 */
/* Pieces shared by the JCS parser (jcs.c), number formatting (jcs_number.c)
 * and the emitter (jcs_emit.c). Not a public interface. */
#ifndef KWITNESS_JCS_INTERNAL_H
#define KWITNESS_JCS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "lib/buf.h"
#include "jcs/jcs.h"

/* Byte classes for string scanning: 0 = copy as is (printable ASCII other
 * than '"' and '\\'), 1 = '"', 2 = '\\', 3 = control (< 0x20), 4 = first
 * byte of a UTF-8 sequence or a stray byte (>= 0x80). */
enum { JCS_C_PLAIN, JCS_C_QUOTE, JCS_C_BSLASH, JCS_C_CTRL, JCS_C_HIGH };
extern const uint8_t jcs_byte_class[256];

#ifdef __SSE2__
/* One bit per byte of x that is not plain ASCII (see above): '"', '\\', or
 * below 0x20 in a signed compare, which catches controls and every byte >=
 * 0x80 at once. The one definition of "plain" for sixteen bytes. */
static inline unsigned jcs_special16(__m128i x)
{
	__m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
						_mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
				   _mm_cmplt_epi8(x, _mm_set1_epi8(0x20)));

	return (unsigned)_mm_movemask_epi8(hit);
}
#endif

/* The first byte at or after p that is not plain ASCII (see above), or end,
 * sixteen bytes at a time where SSE2 is there. */
static inline const unsigned char *jcs_scan_plain(const unsigned char *p, const unsigned char *end)
{
#ifdef __SSE2__
	while (end - p >= 16) {
		unsigned mask = jcs_special16(_mm_loadu_si128((const __m128i *)(const void *)p));

		if (mask)
			return p + __builtin_ctz(mask);
		p += 16;
	}
#endif
	while (p < end && jcs_byte_class[*p] == JCS_C_PLAIN)
		p++;
	return p;
}

/* Length (2..4) of the valid UTF-8 sequence starting at p (p[0] >= 0x80),
 * or 0 when it is not valid: overlong, a surrogate, beyond U+10FFFF,
 * truncated, or a stray continuation byte. */
static inline size_t jcs_utf8_seq(const unsigned char *p, size_t avail)
{
	unsigned c = p[0];
	if (c < 0xC2)
		return 0;
	if (c < 0xE0)
		return avail >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
	if (c < 0xF0) {
		if (avail < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80)
			return 0;
		if (c == 0xE0 && p[1] < 0xA0)
			return 0; /* overlong */
		if (c == 0xED && p[1] >= 0xA0)
			return 0; /* UTF-16 surrogate */
		return 3;
	}
	if (c > 0xF4 || avail < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 ||
	    (p[3] & 0xC0) != 0x80)
		return 0;
	if (c == 0xF0 && p[1] < 0x90)
		return 0; /* overlong */
	if (c == 0xF4 && p[1] >= 0x90)
		return 0; /* beyond U+10FFFF */
	return 4;
}

/* Compares two valid UTF-8 strings in the order of their UTF-16 code units
 * (RFC 8785 section 3.2.3). Returns <0, 0, >0. */
static inline int jcs_utf16_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;
	for (size_t i = 0; i < n; i++) {
		unsigned x = (unsigned char)a[i], y = (unsigned char)b[i];
		if (x == y)
			continue;
		/* Equal prefixes put both at the same place in a character, so only
		 * differing lead bytes can disagree with code point order: a code
		 * point >= U+10000 (lead F0..F4) is a high surrogate in UTF-16 and
		 * sorts before U+E000..U+FFFF (lead EE, EF). */
		if (x >= 0xF0 && (y == 0xEE || y == 0xEF))
			return -1;
		if (y >= 0xF0 && (x == 0xEE || x == 0xEF))
			return 1;
		return x < y ? -1 : 1;
	}
	return alen < blen ? -1 : alen > blen ? 1 : 0;
}

/* Writes v in decimal; returns the length (no NUL). out needs 20 bytes, and
 * at least 8 even for fewer digits: bytes past the digits may be written. */
size_t jcs_put_u64(uint64_t v, char *out);

/* ECMAScript Number::toString layout of digits d[0..k) (no trailing zeros,
 * d[0] != '0') with decimal exponent n (value = 0.d * 10^n). Writes a
 * NUL-terminated string and returns its length. */
size_t jcs_number_layout(bool neg, const char *d, int k, int n, char *out);

/* jcs_format_double() computed another way (glibc printf and strtod), about
 * twenty times slower: the tests' independent oracle. */

/* Appends s (valid or not) as a canonical JSON string. With lossy, invalid
 * UTF-8 bytes become U+FFFD and *replaced is set; without, returns -EILSEQ.
 * Returns 0 or -ENOMEM / -EILSEQ. */
int jcs_put_string(struct kw_buf *out, const char *s, size_t n, bool lossy, bool *replaced);

#endif
