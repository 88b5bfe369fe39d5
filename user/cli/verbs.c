/* SPDX-License-Identifier: Apache-2.0 */
/* The verb dispatcher, see verbs.h. */
#include <string.h>

#include "lib/messages.h"
#include "verbs.h"

#define VERBS_MAX 64

/* "kwitness CMD: unknown verb 'x' (did you mean y?); see `kwitness CMD --help`" */
static void say_unknown(const struct cli_command *c, const char *verb)
{
	const char *names[VERBS_MAX + 1], *near;
	char cmd[64], line[200];
	size_t n = 0;

	for (const struct cli_verb *v = c->verbs; v->name && n < VERBS_MAX; v++)
		names[n++] = v->name;
	names[n] = NULL;
	near = *verb ? kw_nearest(verb, names) : NULL;
	snprintf(cmd, sizeof(cmd), "kwitness%s%s", c->name ? " " : "", c->name ? c->name : "");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(line, sizeof(line), c->unknown, verb);
#pragma GCC diagnostic pop
	if (near)
		kw_usage_error(cmd, "%s (did you mean '%s'?)", line, near);
	else
		kw_usage_error(cmd, "%s", line);
}

int cli_dispatch(const struct cli_command *c, int argc, char **argv)
{
	const char *verb = argc >= 2 ? argv[1] : NULL;

	if (!verb) {
		if (c->missing_says)
			say_unknown(c, "");
		else
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
	return 2;
}

void cli_verbs_list(FILE *f, const struct cli_verb *verbs)
{
	for (const struct cli_verb *v = verbs; v->name; v++)
		if (v->summary)
			fprintf(f, "  %-10s %s\n", v->name, v->summary);
}
