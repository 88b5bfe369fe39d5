/* SPDX-License-Identifier: Apache-2.0 */
/* The messages a user's own mistake gets, in one place so that they say the
 * same thing everywhere: each names the problem and its fix (the flag, the
 * command, or the valid values, with "did you mean" for a near miss). The
 * CLI, kwitnessd and the policy parser use them; tests/cli/test_messages.sh
 * checks each. */
#ifndef KWITNESS_LIB_MESSAGES_H
#define KWITNESS_LIB_MESSAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Levenshtein distance of a and b (each cut at 64 characters). */
size_t kw_edit_distance(const char *a, const char *b);
/* The name of names (NULL-terminated) nearest to word when it is a near miss
 * (at most a third of its length away, and at least 1), else NULL. */
const char *kw_nearest(const char *word, const char *const *names);
/* "valid: a, b, c" and, for a near miss, "; did you mean \"x\"?" into buf
 * (cut to n). word may be NULL (no suggestion). Returns buf. */
char *kw_valid_names(char *buf, size_t n, const char *word, const char *const *names);

/* Why a signing key at path could not be loaded (err from
 * kw_key_load_private) and how to fix it, into buf: a missing key names
 * `kwitness keygen --out PATH` and flag (--key); a public key (JWK or PEM)
 * says so; a key others can read names chmod 600. path NULL: the key was
 * TRACE_PRIVATE_KEY_PEM. Returns buf. */
char *kw_msg_signing_key(char *buf, size_t n, const char *path, int err, const char *flag);
/* The fix for a kwitnessd that cannot be reached at socket (errno e). */
char *kw_msg_unreachable(char *buf, size_t n, const char *socket, int e);
/* Ends a usage error: "CMD: what; see `CMD --help`" on stderr. */
void kw_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* kwitness run's exit status when CMD did not run (docker's and the shells'
 * conventions): kwitness itself failed; CMD could not be executed; CMD was not
 * found. Else the status is CMD's own. */
#define KW_EXIT_OWN_FAILURE 125
#define KW_EXIT_CANNOT_EXEC 126
#define KW_EXIT_NOT_FOUND 127

#endif
