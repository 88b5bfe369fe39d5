/* SPDX-License-Identifier: Apache-2.0 */
/* Options with their help in one table, see kwitness/cliopt.h. */
#include <stdarg.h>
#include <string.h>

#include "kwitness/cliopt.h"

/* getopt_long's table: at most this many options per command. */
#define KW_CLI_MAX_OPTS 24

/* One line of the help ("  LEFT  help", continued under itself). */
static void help_line(FILE *f, int width, const char *left, const char *h)
{
	if (!h || !*h) {
		fprintf(f, "  %s\n", left);
		return;
	}
	fprintf(f, "  %-*s", width, left);
	for (const char *nl; (nl = strchr(h, '\n')); h = nl + 1)
		fprintf(f, "%.*s\n%*s", (int)(nl - h), h, width + 2, "");
	fprintf(f, "%s\n", h);
}

void kw_cli_usage(FILE *f, const struct kw_cli *c)
{
	fputs(c->head, f);
	if (!c->width)
		return; /* the head says it all */
	for (const struct kw_cli_opt *o = c->opts; o->name; o++)
		if (o->left)
			help_line(f, c->width, o->left, o->help);
	help_line(f, c->width, c->help_left ? c->help_left : "--help", "this text");
}

int kw_cli_error(const struct kw_cli *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", c->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	kw_cli_usage(stderr, c);
	return 2;
}

int kw_cli_next(const struct kw_cli *c, int argc, char **argv, int *status)
{
	struct option longs[KW_CLI_MAX_OPTS + 1];
	size_t n = 0;
	int opt;

	for (const struct kw_cli_opt *o = c->opts; o->name && n < KW_CLI_MAX_OPTS; o++, n++)
		longs[n] = (struct option){ o->name, o->arg, NULL, o->val };
	longs[n++] = (struct option){ "help", no_argument, NULL, c->help };
	longs[n] = (struct option){ 0 };
	opterr = 0;
	opt = getopt_long(argc, argv, c->shorts, longs, NULL);
	if (opt == -1)
		return 0;
	if (opt == c->help) {
		kw_cli_usage(stdout, c);
		*status = 0;
		return -1;
	}
	if (opt == '?' || opt == ':') {
		*status = kw_cli_error(c, "unknown or incomplete option '%s'", argv[optind - 1]);
		return -1;
	}
	return opt;
}
