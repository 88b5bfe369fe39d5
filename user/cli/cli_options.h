/* SPDX-License-Identifier: Apache-2.0 */
/* A command's long options, read with getopt_long the same way everywhere:
 * from argv[1], getopt's own messages off (the command says what is wrong
 * in one line of its own). */
#ifndef KWITNESS_CLI_OPTIONS_H
#define KWITNESS_CLI_OPTIONS_H

#include <getopt.h>
#include <stdio.h>

/* Before the getopt_long loop. */
void cli_options_begin(void);
/* The loop's default branch: "kwitness CMD: unknown or incomplete option
 * 'X'" on stderr, then usage(stderr) when usage is given. Returns 2, the
 * exit status of a usage error. */
int cli_bad_option(const char *cmd, char **argv, void (*usage)(FILE *));

#endif
