/* SPDX-License-Identifier: Apache-2.0 */
/* The control socket client: one JSON request line, one JSON reply line. */
#ifndef KWITNESS_CLI_CLIENT_H
#define KWITNESS_CLI_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

#include "client/protocol.h"
#include "lib/options.h"

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

/* The options kwitness session open and kwitness run share (kwitness/options.h
 * rows, filling the struct kw_open_options at o); the caller's table adds
 * its own and ends with { 0 }. */
#define KW_OPEN_OPTIONS(o)                                       \
	{ "sandbox-id", 0, CLI_TEXT, &(o)->sandbox_id },         \
	{ "policy", 0, CLI_TEXT, &(o)->policy },                 \
	{ "image-digest", 0, CLI_TEXT, &(o)->image_digest },     \
	{ "model-provider", 0, CLI_TEXT, &(o)->model_provider }, \
	{ "model-id", 0, CLI_TEXT, &(o)->model_id },             \
	{ "data-class", 0, CLI_TEXT, &(o)->data_class },         \
	{ "checkpoint-interval", 0, CLI_TEXT, &(o)->checkpoint_interval }, \
	{ "log-segment-bytes", 0, CLI_TEXT, &(o)->log_segment_bytes }, \
	{ "socket", 0, CLI_TEXT, &(o)->socket },                 \
	{ "json", 0, CLI_FLAG, &(o)->json },                     \
	{ "help", 'h', CLI_HELP }

/* What an open request carries besides the cgroup, and --socket / --json.
 * Zero-initialise; unset members stay NULL (false). */
struct kw_open_options {
	const char *sandbox_id, *policy, *image_digest;
	const char *model_provider, *model_id, *data_class; /* optional */
	const char *checkpoint_interval; /* optional: seconds */
	const char *log_segment_bytes;   /* optional: a size, trace/logsegment.h */
	const char *socket;
	bool json;
};

/* An open request with the policy file's bytes (for session open and run);
 * NULL after printing why the policy could not be read. */
json_t *kw_session_open_request(const char *cgroup, const struct kw_open_options *o);
/* Record/log/policy paths and the counts of a close reply (session close, run). */
void kw_print_close_summary(FILE *f, const json_t *reply);

#endif
