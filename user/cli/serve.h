/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP services of kwitness log serve and kwitness witness serve: one
 * connection at a time, one bounded request each (tlog/http.c). */
#ifndef KWITNESS_CLI_SERVE_H
#define KWITNESS_CLI_SERVE_H

#include <stddef.h>

#include "tlog/http.h"

typedef void (*serve_handler)(void *ctx, const struct http_request *req, int fd);

/* Listens on ADDR:PORT (port 0: any free one), prints "listening on
 * http://ADDR:PORT" on stdout, and serves until killed. Returns only on a
 * setup error (printed), with exit status 1. */
int cli_serve(const char *cmd, const char *listen, size_t max_body, serve_handler h, void *ctx);

/* kwitness log serve (cmd_log_serve.c). */
int cli_log_serve(int argc, char **argv);

#endif
