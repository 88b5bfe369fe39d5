/* SPDX-License-Identifier: Apache-2.0 */
/* Long options, see cli_options.h. */
#include "cli_options.h"

void cli_options_begin(void)
{
	optind = 1;
	opterr = 0;
}

int cli_bad_option(const char *cmd, char **argv, void (*usage)(FILE *))
{
	fprintf(stderr, "kwitness %s: unknown or incomplete option '%s'\n", cmd, argv[optind - 1]);
	if (usage)
		usage(stderr);
	return 2;
}
