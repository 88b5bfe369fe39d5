/* SPDX-License-Identifier: Apache-2.0 */
/* Terminal-safe text, see estate_cli.h. */
#include "estate_cli.h"

void cli_print_safe(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p; p++) {
		if (*p < 0x20 || *p == 0x7f) {
			fputc('?', f);
		} else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			fputc('?', f); /* U+0080..U+009F: C1 controls, CSI among them */
			p++;
		} else {
			fputc(*p, f);
		}
	}
}
