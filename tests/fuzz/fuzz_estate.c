/* SPDX-License-Identifier: Apache-2.0 */
/* What the estate reads from a sandbox's session: a decision log line as an
 * entries row (estate_entry_parse), an address or CIDR (the same parser
 * --object uses), and any text through the HTML escaper of the report. A
 * row's object fits its bound, an address is 32 hex digits or nothing, a
 * range has lo <= hi, and the escaped text holds no '<', '>', quote or raw
 * control byte. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estate/entry.h"
#include "estate/html.h"

static int hex32(const char *s)
{
	if (strlen(s) != 32)
		return 0;
	for (int i = 0; i < 32; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct estate_entry e;
	char *text = malloc(size + 1), lo[ESTATE_ADDR_LEN], hi[ESTATE_ADDR_LEN], *out = NULL;
	size_t outlen = 0;
	FILE *f;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	if (estate_entry_parse(&e, 1, (const char *)data, size) == 0) {
		if (strlen(e.object) >= sizeof(e.object) || (e.addr[0] && !hex32(e.addr)) || !e.tool)
			abort();
		if (e.has_port && (e.port < 0 || e.port > 65535))
			abort();
		estate_entry_clear(&e);
	}
	if (estate_cidr_range(text, lo, hi) && (!hex32(lo) || !hex32(hi) || strcmp(lo, hi) > 0))
		abort();

	f = open_memstream(&out, &outlen);
	if (f) {
		html_escape(f, text);
		fclose(f);
		for (size_t i = 0; out && i < outlen; i++) {
			unsigned char c = (unsigned char)out[i];

			if (c == '<' || c == '>' || c == '"' || c == '\'' ||
			    (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
				abort();
		}
		free(out);
	}
	free(text);
	return 0;
}
