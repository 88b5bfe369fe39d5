/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers of the estate commands (cmd_estate.c). */
#ifndef KWITNESS_CLI_ESTATE_H
#define KWITNESS_CLI_ESTATE_H

#include <stdio.h>

/* kwitness estate push (cmd_estate_push.c). */
int estate_push_cmd(int argc, char **argv);

/* kwitness estate report (cmd_report.c). */
int estate_report_cmd(int argc, char **argv);

#endif
