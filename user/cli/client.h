/* SPDX-License-Identifier: Apache-2.0 */
/* The control socket client: one JSON request line, one JSON reply line. */
#ifndef KWITNESS_CLI_CLIENT_H
#define KWITNESS_CLI_CLIENT_H

#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

#define KW_DEFAULT_SOCKET "/run/kwitness/kwitnessd.sock"

/* --socket, else $KWITNESS_SOCKET, else the default path. */
const char *kw_client_socket(const char *given);
/* Sends req and reads the reply. Returns 0 with *reply (new reference; it may
 * be {"ok":false,...}), or -errno with a sentence in err when kwitnessd could
 * not be reached or answered nonsense. */
int kw_client_call(const char *socket_path, json_t *req, json_t **reply, char *err,
		   size_t errlen);
/* Prints "kwitness CMD: code: message" for an {"ok":false} reply; returns
 * true when the reply was ok. */
int kw_client_reply_ok(const char *cmd, const json_t *reply);

/* An open request with the policy file's bytes (cmd_session.c); NULL after
 * printing why the policy could not be read. mp, mi, dc may be NULL. */
json_t *kw_session_open_request(const char *cgroup, const char *sandbox_id, const char *policy_path,
				const char *image_digest, const char *mp, const char *mi,
				const char *dc);
/* Record/log/policy paths and the counts of a close reply (cmd_session.c). */
void kw_print_close_summary(FILE *f, const json_t *reply);

#endif
