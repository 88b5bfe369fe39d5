/* SPDX-License-Identifier: Apache-2.0 */
/* Text into HTML, for pages that show what a sandbox wrote. */
#ifndef KWITNESS_ESTATE_HTML_H
#define KWITNESS_ESTATE_HTML_H

#include <stdio.h>

/* Writes s escaped for HTML text and for quoted attribute values (& < > "
 * and ' as references); bytes below 0x20 other than tab and newline, and
 * DEL, as U+FFFD. Nothing in s can open an element, end an attribute or
 * start a reference. */
void html_escape(FILE *f, const char *s);

#endif
