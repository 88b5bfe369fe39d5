/* SPDX-License-Identifier: Apache-2.0 */
#ifndef KWITNESS_CLI_CMD_VERIFY_CKPT_TLOG_H
#define KWITNESS_CLI_CMD_VERIFY_CKPT_TLOG_H

#include <jansson.h>

/* verify --log LOG --transparency POLICY: each checkpoint's transparency
 * proof (verify/checkpoint_tlog.h) printed, or put in out[key] as a list
 * when out is given. 0 every proof present holds, 1 one fails, 2 a file
 * cannot be read (said on stderr). */
int cli_verify_ckpt_tlog(const char *policy_path, const char *ckpt_path, json_t *out,
			 const char *key);

#endif
