/* SPDX-License-Identifier: Apache-2.0 */
/* Command-line options with their help in one table, for kwitness's commands
 * and kwitnessd: the getopt table, the help text and the answers to --help
 * and to a bad option all come from it. */
#ifndef KWITNESS_CLIOPT_H
#define KWITNESS_CLIOPT_H

#include <getopt.h>
#include <stdio.h>

struct kw_cli_opt {
	const char *name;  /* the long option; NULL ends the table */
	int arg;           /* no_argument or required_argument */
	int val;           /* what kw_cli_next returns for it */
	const char *left;  /* its help's left column ("--out FILE"); NULL: not listed */
	const char *help;  /* the rest of the line; each "\n" continues under it */
};

struct kw_cli {
	const char *prog;    /* "kwitness keygen": messages start "PROG: " */
	const char *head;    /* synopsis and description, printed before the options */
	int width;           /* of the help's left column; 0: no option list */
	const char *shorts;  /* getopt's short options ("fvh"), "" for none */
	int help;            /* the val of --help (every command has it, listed last) */
	const char *help_left; /* its left column: NULL for "--help" ("-h, --help") */
	const struct kw_cli_opt *opts;
};

/* The help: head, then one line per listed option, then --help. */
void kw_cli_usage(FILE *f, const struct kw_cli *c);
/* The next option of argv (from optind 1 on the first call): its val, with
 * optarg set; 0 once the options end (optind is then the first operand); -1
 * after --help (the help on stdout, *status 0) or an unknown or incomplete
 * option (one line and the help on stderr, *status 2). */
int kw_cli_next(const struct kw_cli *c, int argc, char **argv, int *status);
/* "PROG: <message>" and the help on stderr; returns 2 (the usage-error exit). */
int kw_cli_error(const struct kw_cli *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
