/* SPDX-License-Identifier: Apache-2.0 */
/* The control socket client: one JSON request line, one JSON reply line. */
#ifndef KWITNESS_CLI_CLIENT_H
#define KWITNESS_CLI_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <getopt.h>
#include <jansson.h>

#include "kwitness/cliopt.h"

#include "kwitness/protocol.h"

/* --socket, else $KWITNESS_SOCKET (KW_SOCKET_ENV), else KW_DEFAULT_SOCKET. */
const char *kw_client_socket(const char *given);
/* Sends req and reads the reply. Returns 0 with *reply (new reference; it may
 * be {"ok":false,...}), or -errno with a sentence in err when kwitnessd could
 * not be reached or answered nonsense. */
int kw_client_call(const char *socket_path, json_t *req, json_t **reply, char *err,
		   size_t errlen);
/* kw_client_call for a command: consumes req (NULL is reported as a request
 * that cannot be encoded), prints "kwitness CMD: why" when kwitnessd could not
 * be reached. Returns 0 with *reply, or -errno. */
int kw_client_request(const char *cmd, const char *socket_given, json_t *req, json_t **reply);
/* Prints "kwitness CMD: code: message" for an {"ok":false} reply; returns
 * true when the reply was ok. */
int kw_client_reply_ok(const char *cmd, const json_t *reply);
/* A whole reply on stdout, indented, keys sorted (--json). */
void kw_print_json(const json_t *v);

/* The options kwitness session open and kwitness run share (struct
 * kw_cli_opt); the caller's table adds its own and ends with { 0 }.
 * kw_open_option stores them. */
#define KW_OPEN_OPTIONS                                             \
	{ "sandbox-id", required_argument, 'i', NULL, NULL },       \
	{ "policy", required_argument, 'p', NULL, NULL },           \
	{ "image-digest", required_argument, 'd', NULL, NULL },     \
	{ "model-provider", required_argument, 'P', NULL, NULL },   \
	{ "model-id", required_argument, 'M', NULL, NULL },         \
	{ "data-class", required_argument, 'C', NULL, NULL },       \
	{ "socket", required_argument, 's', NULL, NULL },           \
	{ "json", no_argument, 'j', NULL, NULL }

/* What an open request carries besides the cgroup, and --socket / --json.
 * Zero-initialise; unset members stay NULL (false). */
struct kw_open_options {
	const char *sandbox_id, *policy, *image_digest;
	const char *model_provider, *model_id, *data_class; /* optional */
	const char *socket;
	bool json;
};
/* Stores arg when opt is one of KW_OPEN_OPTIONS;
 * returns false (nothing stored) for any other opt. */
bool kw_open_option(int opt, const char *arg, struct kw_open_options *o);

/* An open request with the policy file's bytes (for session open and run);
 * NULL after printing why the policy could not be read. */
json_t *kw_session_open_request(const char *cgroup, const struct kw_open_options *o);
/* Record/log/policy paths and the counts of a close reply (session close, run). */
void kw_print_close_summary(FILE *f, const json_t *reply);

#endif
