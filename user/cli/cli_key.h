/* SPDX-License-Identifier: Apache-2.0 */
/* Key loading and key error messages shared by keygen, key, sign and verify. */
#ifndef KWITNESS_CLI_KEY_H
#define KWITNESS_CLI_KEY_H

#include "trace/key.h"

/* Prints one clear line for a key error (-EPERM: group/world accessible, ...).
 * cmd "verify" loads public keys; every other command a private key. */
void cli_key_error(const char *cmd, const char *what, int err);
/* path, else TRACE_PRIVATE_KEY_PEM, else the default path. Prints errors. */
int cli_load_signing_key(const char *cmd, const char *path, struct kw_key **key);

#endif
