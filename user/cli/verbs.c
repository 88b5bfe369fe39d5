/* SPDX-License-Identifier: Apache-2.0 */
/* The verb dispatcher, see verbs.h. */
#include <string.h>

#include "verbs.h"

static void say_unknown(const struct cli_command *c, const char *verb)
{
	if (c->name)
		fprintf(stderr, "kwitness %s: ", c->name);
	else
		fputs("kwitness: ", stderr);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	fprintf(stderr, c->unknown, verb);
#pragma GCC diagnostic pop
	fputc('\n', stderr);
}

int cli_dispatch(const struct cli_command *c, int argc, char **argv)
{
	const char *verb = argc >= 2 ? argv[1] : NULL;

	if (!verb) {
		if (c->missing_says)
			say_unknown(c, "");
		c->usage(stderr);
		return 2;
	}
	if (!strcmp(verb, "--help") || !strcmp(verb, "-h") || (c->help_verb && !strcmp(verb, "help"))) {
		(c->help ? c->help : c->usage)(stdout);
		return 0;
	}
	for (const struct cli_verb *v = c->verbs; v->name; v++)
		if (!strcmp(verb, v->name))
			return v->run(argc - 1, argv + 1);
	say_unknown(c, verb);
	if (c->unknown_usage)
		c->usage(stderr);
	return 2;
}

void cli_verbs_list(FILE *f, const struct cli_verb *verbs)
{
	for (const struct cli_verb *v = verbs; v->name; v++)
		if (v->summary)
			fprintf(f, "  %-10s %s\n", v->name, v->summary);
}
