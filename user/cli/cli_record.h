/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the offline record commands (record build, sign, verify). */
#ifndef KWITNESS_CLI_RECORD_H
#define KWITNESS_CLI_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "lib/buf.h"

/* Input size limits: a record is small; logs can be long. */
#define CLI_RECORD_MAX ((size_t)1 << 20)
#define CLI_BUNDLE_MAX ((size_t)16 << 20)
#define CLI_LOG_MAX ((size_t)1 << 30)

/* kw_read_file with one clear error line on failure. */
int cli_read(const char *cmd, const char *what, const char *path, size_t max, struct kw_buf *out);
/* Canonical JSON + newline, or indented with pretty. */
int cli_print_json(const json_t *v, bool pretty);
/* Reads a JSON object file (at most KW_TPM_EVIDENCE_MAX bytes; cmd_tpm.c). */
json_t *cli_read_json(const char *cmd, const char *what, const char *path);

#endif
