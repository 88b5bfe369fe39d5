/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers of the estate commands (cmd_estate.c). */
#ifndef KWITNESS_CLI_ESTATE_H
#define KWITNESS_CLI_ESTATE_H

#include <stdbool.h>
#include <stdio.h>

struct estate_db;
struct estate_trust;

/* kwitness estate push (cmd_estate_push.c). */
int estate_push_cmd(int argc, char **argv);

/* kwitness estate report (cmd_report.c). */
int estate_report_cmd(int argc, char **argv);

/* kwitness estate verify and estate roles (cmd_estate_admin.c). */
int estate_verify_cmd(int argc, char **argv);
int estate_roles_cmd(int argc, char **argv);

/* cmd_estate_ux.c: the database at url, which must exist unless create
 * (then it is made); NULL after "kwitness CMD: why and the fix". */
struct estate_db *cli_estate_open(const char *cmd, const char *url, bool create);
/* The trust folder; NULL after a line that names --trust when it is missing. */
struct estate_trust *cli_estate_trust(const char *cmd, const char *dir);
/* The default query table (fits 120 columns): whether column col is in it,
 * and its cell text cut to the column's width (in place; returns text). */
bool estate_narrow_shown(int col);
char *estate_narrow_cell(int col, char *text);
/* cmd_estate_gaps.c: prints a "missing:" line per gap in a host's TPM
 * counter sequence and their count (nothing when there is none).
 * 0 (*n gaps) or -1 after an error line. */
#include <stdint.h>
int cli_estate_print_gaps(struct estate_db *db, const char *cmd, uint64_t *n);
/* kwitness estate init and estate rejected. */
int estate_init_cmd(int argc, char **argv);
int estate_rejected_cmd(int argc, char **argv);

#endif
