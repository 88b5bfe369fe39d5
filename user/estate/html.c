/* SPDX-License-Identifier: Apache-2.0 */
/* HTML escaping, see html.h. */
#include "estate/html.h"

void html_escape(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		case '\t':
		case '\n': fputc(*p, f); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fputs("&#xFFFD;", f);
			else
				fputc(*p, f);
		}
	}
}
