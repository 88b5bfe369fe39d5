/* SPDX-License-Identifier: Apache-2.0 */
#ifndef KWITNESS_CLI_VERIFY_COMMIT_H
#define KWITNESS_CLI_VERIFY_COMMIT_H

#include <jansson.h>

#include "tpm/commit.h"

/* The TPM commitment of the session a record and its log describe, certified
 * by the AK of evidence (already appraised): commit_path, or (NULL) the file
 * state/commit/<session>.json beside the log's folder. Returns 0 (checked:
 * res says how), 1 (the log names no TPM counter and no file was given:
 * nothing to check), -errno. */
int verify_commit(const char *record_path, const char *log_path, const json_t *evidence,
		  const char *commit_path, struct kw_commit_result *res);

#endif
