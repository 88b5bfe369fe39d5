/* SPDX-License-Identifier: Apache-2.0 */
/* Terminal-safe text, see text_safe.h. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lib/text_safe.h"

/* Characters that are printable bytes but invisible or reordering: the bidi
 * embeddings, overrides and isolates (Trojan Source, CVE-2021-42574), the
 * marks, zero-width characters, line separators and the BOM. */
static bool invisible(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9f) || c == 0x061c || (c >= 0x200b && c <= 0x200f) ||
	       (c >= 0x2028 && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0xfeff;
}

/* The code point of the well-formed UTF-8 sequence at p, its length in *n;
 * false for an overlong form, a surrogate, a value past U+10FFFF or a cut
 * sequence (a NUL is never a continuation byte, so p is not overrun). */
static bool utf8_decode(const unsigned char *p, uint32_t *cp, size_t *n)
{
	uint32_t c, min;

	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		*n = 2, c = p[0] & 0x1f, min = 0x80;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		*n = 3, c = p[0] & 0x0f, min = 0x800;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		*n = 4, c = p[0] & 0x07, min = 0x10000;
	} else {
		return false;
	}
	for (size_t i = 1; i < *n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return false;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return false;
	*cp = c;
	return true;
}

size_t kw_text_step(const unsigned char *p, char esc[KW_TEXT_ESC_MAX])
{
	static const char hex[] = "0123456789abcdef";
	uint32_t cp;
	size_t n;

	esc[0] = '\0';
	if (*p == '\\') {
		memcpy(esc, "\\\\", 3);
		return 1;
	}
	if (*p >= 0x20 && *p < 0x7f)
		return 1;
	if (*p < 0x80 || !utf8_decode(p, &cp, &n)) {
		esc[0] = '\\', esc[1] = 'x', esc[2] = hex[*p >> 4], esc[3] = hex[*p & 15];
		esc[4] = '\0';
		return 1;
	}
	if (invisible(cp)) {
		esc[0] = '\\', esc[1] = 'u';
		for (int i = 0; i < 4; i++)
			esc[2 + i] = hex[(cp >> (12 - 4 * i)) & 15];
		esc[6] = '\0';
	}
	return n;
}

void kw_text_fput(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[KW_TEXT_ESC_MAX];

	while (p && *p) {
		size_t n = kw_text_step(p, esc);

		if (esc[0])
			fputs(esc, f);
		else
			fwrite(p, 1, n, f);
		p += n;
	}
}

const char *kw_text_safe(const char *s, char *out, size_t cap)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[KW_TEXT_ESC_MAX];
	size_t len = 0;

	while (p && *p) {
		size_t n = kw_text_step(p, esc);
		const char *piece = esc[0] ? esc : (const char *)p;
		size_t m = esc[0] ? strlen(esc) : n;

		if (len + m >= cap)
			break;
		memcpy(out + len, piece, m);
		len += m;
		p += n;
	}
	out[len] = '\0';
	return out;
}

size_t kw_text_safe_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[KW_TEXT_ESC_MAX];
	size_t len = 0;

	while (p && *p) {
		size_t n = kw_text_step(p, esc);

		len += esc[0] ? strlen(esc) : n;
		p += n;
	}
	return len;
}
