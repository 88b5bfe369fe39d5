/* SPDX-License-Identifier: Apache-2.0 */
/* What the estate reads from a sandbox's session: a decision log line as an
 * entries row (estate_entry_parse), an address or CIDR (the same parser
 * --object uses), and any text through the HTML escaper of the report. A
 * row's object fits its bound, an address is 32 hex digits or nothing, a
 * range has lo <= hi, and the escaped text holds no '<', '>', quote or raw
 * control byte. The same text through the terminal escaper (lib/text_safe.c):
 * neither output holds a C1 or bidi control or a byte that is not UTF-8, and
 * kw_text_safe and kw_text_safe_len agree with what kw_text_fput wrote. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estate/entry.h"
#include "jcs/jcs.h"
#include "estate/html.h"
#include "lib/text_safe.h"

static int hex32(const char *s)
{
	if (strlen(s) != 32)
		return 0;
	for (int i = 0; i < 32; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* Aborts unless s is well-formed UTF-8 with none of the characters that
 * move a cursor or reorder text (checked here by their bytes, not by the
 * escaper's own tables). */
static void check_visible(const unsigned char *s, size_t n, int tab_nl)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		size_t k = c < 0x80 ? 0 : c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 :
			   c >= 0xf0 && c <= 0xf4 ? 3 : 9;

		if ((c < 0x20 && !(tab_nl && (c == '\t' || c == '\n'))) || c == 0x7f || k == 9 ||
		    (k && i + k >= n))
			abort();
		for (size_t j = 1; j <= k; j++)
			if ((s[i + j] & 0xc0) != 0x80)
				abort();
		if (c == 0xc2 && s[i + 1] <= 0x9f)
			abort(); /* C1 */
		if ((c == 0xd8 && s[i + 1] == 0x9c) ||
		    (c == 0xe2 && s[i + 1] == 0x80 && ((s[i + 2] >= 0x8b && s[i + 2] <= 0x8f) ||
						       (s[i + 2] >= 0xa8 && s[i + 2] <= 0xae))) ||
		    (c == 0xe2 && s[i + 1] == 0x81 && s[i + 2] >= 0xa6 && s[i + 2] <= 0xa9) ||
		    (c == 0xef && s[i + 1] == 0xbb && s[i + 2] == 0xbf))
			abort(); /* bidi and invisible format characters */
		i += k;
	}
}

static void check_text_safe(const char *text)
{
	char *out = NULL, small[64], *big;
	size_t outlen = 0;
	FILE *f = open_memstream(&out, &outlen);

	if (!f)
		return;
	kw_text_fput(f, text);
	fclose(f);
	if (!out)
		return;
	check_visible((const unsigned char *)out, outlen, 0);
	if (kw_text_safe_len(text) != outlen)
		abort();
	big = malloc(outlen + 1);
	if (big && strcmp(kw_text_safe(text, big, outlen + 1), out))
		abort();
	/* a cut copy is a prefix of the whole */
	kw_text_safe(text, small, sizeof(small));
	if (strncmp(small, out, strlen(small)))
		abort();
	free(big);
	free(out);
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* A line that is its own canonical form (what the ingest's log check
 * passes on): the member scan gives the columns the JSON parse gives. Any
 * other input: the scan stays inside it. */
static void check_canonical(const char *text, size_t size)
{
	struct estate_entry a, b;
	struct kw_buf canon = { 0 };
	char *strs = malloc(size + 1);
	bool canonical;
	int ra, rb;

	if (!strs)
		return;
	canonical = jcs_canonicalize(text, size, &canon, NULL) == 0 && canon.len == size &&
		    !memcmp(canon.data, text, size) && size && text[0] == '{';
	kw_buf_free(&canon);
	rb = estate_entry_parse_canonical(&b, 1, text, size, strs);
	if (canonical) {
		ra = estate_entry_parse(&a, 1, text, size);
		if (ra != rb)
			abort();
		if (!ra) {
			if (!same_str(a.tool, b.tool) || !same_str(a.decision, b.decision) ||
			    !same_str(a.host, b.host) || !same_str(a.path, b.path) ||
			    !same_str(a.rule, b.rule) || !same_str(a.comm, b.comm) ||
			    strcmp(a.object, b.object) || strcmp(a.addr, b.addr) ||
			    a.has_seq != b.has_seq || a.seq != b.seq || a.has_ts != b.has_ts ||
			    a.ts_us != b.ts_us || a.has_pid != b.has_pid || a.pid != b.pid ||
			    a.has_uid != b.has_uid || a.uid != b.uid || a.has_port != b.has_port ||
			    a.port != b.port || a.has_enforced != b.has_enforced ||
			    a.enforced != b.enforced)
				abort();
			estate_entry_clear(&a);
		}
	}
	if (!rb)
		estate_entry_clear(&b);
	free(strs);
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
	check_canonical((const char *)data, size);
	if (estate_cidr_range(text, lo, hi) && (!hex32(lo) || !hex32(hi) || strcmp(lo, hi) > 0))
		abort();

	f = open_memstream(&out, &outlen);
	if (f) {
		html_escape(f, text);
		fclose(f);
		if (out)
			check_visible((const unsigned char *)out, outlen, 1);
		for (size_t i = 0; out && i < outlen; i++) {
			unsigned char c = (unsigned char)out[i];

			if (c == '<' || c == '>' || c == '"' || c == '\'' ||
			    (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
				abort();
		}
		free(out);
	}
	check_text_safe(text);
	free(text);
	return 0;
}
