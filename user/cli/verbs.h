/* SPDX-License-Identifier: Apache-2.0 */
/* One table per command with verbs, and one dispatcher for all of them
 * (verbs.c): `kwitness VERB` itself, and `kwitness estate VERB`, `session`,
 * `tlog`, `tpm`, `witness`, `key`, `record`. Each verb parses only its own
 * options. A command whose usage text describes its verbs leaves their
 * summaries out. */
#ifndef KWITNESS_CLI_VERBS_H
#define KWITNESS_CLI_VERBS_H

#include <stdbool.h>
#include <stdio.h>

struct cli_verb {
	const char *name;
	int (*run)(int argc, char **argv); /* argv[0] is the verb; returns the exit status */
	const char *summary;               /* for cli_verbs_list; NULL: not listed */
};

struct cli_command {
	const char *name;              /* "estate" (messages begin "kwitness estate: "); NULL: kwitness */
	const struct cli_verb *verbs;  /* ended by { 0 } */
	void (*usage)(FILE *f);        /* the verb list, for a missing or unknown verb */
	void (*help)(FILE *f);         /* for --help (NULL: usage) */
	const char *unknown;           /* the line for an unknown verb, after the prefix; %s: the verb */
	bool unknown_usage;            /* unused: an unknown verb gets one line, the nearest
					* verb and `kwitness CMD --help`, never the usage */
	bool missing_says;             /* no verb: that line instead of the usage */
	bool help_verb;                /* `help` asks for the help too */
};

/* Runs argv[1]'s verb with argc - 1, argv + 1; --help and -h print the help
 * (exit 0); a missing verb gets the usage on stderr, an unknown one a line
 * (exit 2). */
int cli_dispatch(const struct cli_command *c, int argc, char **argv);
/* The table's verbs with a summary, as "  NAME  SUMMARY" lines. */
void cli_verbs_list(FILE *f, const struct cli_verb *verbs);

#endif
