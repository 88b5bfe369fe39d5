/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers of the estate commands (cmd_estate.c). */
#ifndef KWITNESS_CLI_ESTATE_H
#define KWITNESS_CLI_ESTATE_H

#include <stdio.h>

/* Writes s with every control character (C0, DEL, and the C1 range as
 * UTF-8) shown as '?': text a sandbox chose must not drive the terminal. */
void cli_print_safe(FILE *f, const char *s);

/* kwitness estate push (cmd_estate_push.c). */
int estate_push_cmd(int argc, char **argv);

/* kwitness estate report (cmd_report.c). */
int estate_report_cmd(int argc, char **argv);

/* kwitness estate verify and estate roles (cmd_estate_admin.c). */
int estate_verify_cmd(int argc, char **argv);
int estate_roles_cmd(int argc, char **argv);

#endif
