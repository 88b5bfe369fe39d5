/* SPDX-License-Identifier: Apache-2.0 */
/* A command's options, read the same way everywhere: a table says what each
 * option sets, and one parser (getopt_long underneath) fills it in, prints
 * the usage for --help, and says what is wrong with a bad option. */
#ifndef KWITNESS_OPTIONS_H
#define KWITNESS_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum cli_opt_kind {
	CLI_HELP,   /* the usage on stdout; the command exits 0 */
	CLI_FLAG,   /* *(bool *)to = true */
	CLI_TEXT,   /* *(const char **)to = the argument */
	CLI_NUMBER, /* *(int64_t *)to = the argument, a whole number from min to max */
	CLI_COUNT,  /* ++*(int *)to */
	CLI_OWN,    /* the command reads the argument itself: cli_next_option returns id */
};

struct cli_opt {
	const char *name; /* --name */
	char letter;      /* -l too (0: --name only) */
	enum cli_opt_kind kind;
	void *to;
	int id;               /* CLI_OWN: > 0 */
	long long min, max;   /* CLI_NUMBER */
	const char *bad;      /* CLI_NUMBER: "CMD: --NAME <bad>" when it is not one */
};

/* Kept for the tables that set it: every command now says one line about
 * an option it does not know (or one that lacks its argument) and where its
 * help is, never the whole usage (issue 38); the exit status is 2. */
enum cli_on_bad {
	CLI_BAD_SAY_USAGE,
	CLI_BAD_SAY,
	CLI_BAD_USAGE,
};

#define CLI_OPTS_MAX 32

struct cli_options {
	const char *cmd;            /* "kwitness record build": what the messages begin with */
	void (*usage)(FILE *f);
	const struct cli_opt *opts; /* ended by { 0 } */
	enum cli_on_bad on_bad;
	bool in_order;              /* options end at the first operand (what follows is its own) */
	int status;                 /* after CLI_OPTIONS_EXIT: the command's exit status */
	/* the parser's */
	struct option longs[CLI_OPTS_MAX + 1];
	char letters[2 * CLI_OPTS_MAX + 3];
	bool begun;
};

#define CLI_OPTIONS_DONE 0  /* all options read; optind is the first operand */
#define CLI_OPTIONS_EXIT -1 /* --help or a bad option: exit with status */

/* Reads argv (from argv[1]) up to the next CLI_OWN option and returns its
 * id, or CLI_OPTIONS_DONE or CLI_OPTIONS_EXIT. A bad option gets one line
 * naming it and `CMD --help` (exit 2). With KWITNESS_LIST_OPTIONS=1 in the
 * environment it prints the table instead, one "--name" (and "-l") a line,
 * and exits 0: tests/cli/test_man.sh checks the man pages against it. */
int cli_next_option(struct cli_options *p, int argc, char **argv);
/* All of them, for a command without CLI_OWN options: true when the command
 * is to exit with p->status. */
bool cli_options_parse(struct cli_options *p, int argc, char **argv);
/* Strict decimal: the whole string, within [lo, hi]. 0 or -EINVAL. */
int cli_parse_int(const char *s, long long lo, long long hi, long long *out);

#endif
