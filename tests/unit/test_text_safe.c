/* SPDX-License-Identifier: Apache-2.0 */
/* Untrusted text for people (lib/text_safe.c): terminal escapes, C1
 * controls, bidi controls and bytes that are not UTF-8 become visible
 * escapes; printable ASCII and other UTF-8 stay as they are; the HTML
 * escaper (estate/html.c) does the same inside a page. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "estate/html.h"
#include "lib/text_safe.h"

static void expect_safe(const char *in, const char *want)
{
	char buf[256], *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);

	assert_non_null(f);
	kw_text_fput(f, in);
	fclose(f);
	assert_string_equal(mem, want);
	free(mem);
	assert_string_equal(kw_text_safe(in, buf, sizeof(buf)), want);
	assert_int_equal(kw_text_safe_len(in), strlen(want));
}

static void test_escapes(void **state)
{
	(void)state;
	expect_safe("spiffe://x/y-1_2.3", "spiffe://x/y-1_2.3");
	expect_safe("", "");
	/* ESC [ 2 J (clear screen), a newline forging a line, a tab, DEL */
	expect_safe("a\x1b[2Jb\nc\td\x7f", "a\\x1b[2Jb\\x0ac\\x09d\\x7f");
	/* U+009B (CSI as C1), U+202E (RLO), U+2066 (LRI), U+200F, U+061C, U+FEFF */
	expect_safe("\xc2\x9b" "1m", "\\u009b1m");
	expect_safe("x\xe2\x80\xaeyz", "x\\u202eyz");
	expect_safe("\xe2\x81\xa6\xe2\x80\x8f\xd8\x9c\xef\xbb\xbf", "\\u2066\\u200f\\u061c\\ufeff");
	/* ordinary UTF-8 stays: é, €, a 4-byte emoji */
	expect_safe("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	/* not UTF-8: a lone continuation, an overlong '/', a surrogate, a cut sequence */
	expect_safe("\x80", "\\x80");
	expect_safe("\xc0\xaf", "\\xc0\\xaf");
	expect_safe("\xed\xa0\x80", "\\xed\\xa0\\x80");
	expect_safe("\xe2\x80", "\\xe2\\x80");
	/* the backslash itself, so "\x1b" typed by a sandbox is not an ESC shown */
	expect_safe("\\x1b", "\\\\x1b");
}

static void test_truncation(void **state)
{
	char buf[7];

	(void)state;
	/* cut between escapes, never inside one */
	assert_string_equal(kw_text_safe("\x1b\x1b", buf, sizeof(buf)), "\\x1b");
	assert_string_equal(kw_text_safe("abcdefghij", buf, sizeof(buf)), "abcdef");
	assert_string_equal(kw_text_safe(NULL, buf, sizeof(buf)), "");
}

static void test_html(void **state)
{
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);

	(void)state;
	assert_non_null(f);
	html_escape(f, "<a href='x'>&\x1b[31m\xe2\x80\xae\t\n\xff</a>");
	fclose(f);
	assert_string_equal(mem, "&lt;a href=&#39;x&#39;&gt;&amp;\\x1b[31m\\u202e\t\n\\xff&lt;/a&gt;");
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_html),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
