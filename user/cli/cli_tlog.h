/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the transparency-log commands (log, witness, verify). */
#ifndef KWITNESS_CLI_TLOG_H
#define KWITNESS_CLI_TLOG_H

#include <stdint.h>

#include "tlog/note.h"

/* Loads the private key at path as a note key named name of the given type
 * (TLOG_SIG_ED25519 for a log, TLOG_SIG_COSIGNATURE for a witness). Prints
 * errors; 0 or -EINVAL. */
int cli_tlog_key(const char *cmd, const char *path, const char *name, uint8_t type,
		 struct tlog_key *out);

/* Reads and parses a tlog-policy file; NULL after printing why. Free with
 * cli_tlog_policy_free. (verify_transparency.c) */
struct tlog_policy;
struct tlog_policy *cli_tlog_policy_load(const char *cmd, const char *path);
void cli_tlog_policy_free(struct tlog_policy *p);

/* kwitness log sign (cmd_log_sign.c). */
#include <stddef.h>
#include <stdio.h>
void cli_log_sign_usage(FILE *f);
int cli_log_sign(const char *dir, const char *logkey, const char *signkey, char **witnesses,
		 size_t nw, const char *policy_path, const char *out, const char *unsigned_path);
int cli_log_sign_remote(const char *url, const char *log_vkey, const char *token_file,
			const char *signkey, const char *out, const char *unsigned_path);

#endif
