/* SPDX-License-Identifier: Apache-2.0 */
/* HTML escaping, see html.h. */
#include "estate/html.h"
#include "lib/text_safe.h"

void html_escape(FILE *f, const char *s)
{
	char esc[KW_TEXT_ESC_MAX];

	for (const unsigned char *p = (const unsigned char *)s; p && *p;) {
		size_t n;

		switch (*p) {
		case '&': fputs("&amp;", f); p++; continue;
		case '<': fputs("&lt;", f); p++; continue;
		case '>': fputs("&gt;", f); p++; continue;
		case '"': fputs("&quot;", f); p++; continue;
		case '\'': fputs("&#39;", f); p++; continue;
		case '\t':
		case '\n': fputc(*p, f); p++; continue;
		}
		/* the terminal's escapes are visible text in a page too: a bidi
		 * override would reorder what the reader sees */
		n = kw_text_step(p, esc);
		if (esc[0])
			fputs(esc, f);
		else
			fwrite(p, 1, n, f);
		p += n;
	}
}
