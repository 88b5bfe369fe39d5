/* SPDX-License-Identifier: Apache-2.0 */
/* One result line of a test helper: "ok - ..." or "not ok - ..." (the shell
 * suite numbers them); tap_failures counts the failed ones. */
#ifndef KW_TESTS_TAP_RESULT_H
#define KW_TESTS_TAP_RESULT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int tap_failures;

__attribute__((format(printf, 2, 3))) static void result(bool pass, const char *fmt, ...)
{
	va_list ap;

	printf(pass ? "ok - " : "not ok - ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!pass)
		tap_failures++;
}

#endif
