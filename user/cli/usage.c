/* SPDX-License-Identifier: Apache-2.0 */
/* What every command does with --help and with bad arguments, see commands.h. */
#include <stdarg.h>
#include <stdio.h>

#include "commands.h"

int cli_usage_error(const char *cmd, void (*usage)(FILE *f), const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kwitness %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage(stderr);
	return 2;
}

int cli_help_or_bad_option(const char *cmd, int opt, int help, char **argv,
			   void (*usage)(FILE *f))
{
	if (opt == help) {
		usage(stdout);
		return 0;
	}
	return cli_usage_error(cmd, usage, "unknown or incomplete option '%s'", argv[optind - 1]);
}
