/* SPDX-License-Identifier: Apache-2.0 */
/* Text into HTML, for pages that show what a sandbox wrote. */
#ifndef KWITNESS_ESTATE_HTML_H
#define KWITNESS_ESTATE_HTML_H

#include <stdio.h>

/* Writes s escaped for HTML text and for quoted attribute values (& < > "
 * and ' as references); tab and newline as they are; every other control,
 * bidi or invisible format character and every byte that is not UTF-8 as the
 * visible text kw_text_step gives it (\x1b, \u202e). Nothing in s can open an
 * element, end an attribute, start a reference or reorder the page. */
void html_escape(FILE *f, const char *s);

#endif
