/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the transparency-log commands (tlog, witness, verify,
 * estate ingest): cli_tlog.c. */
#ifndef KWITNESS_CLI_TLOG_H
#define KWITNESS_CLI_TLOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "collector/publish.h"
#include "tlog/note.h"
#include "tlog/server.h"
#include "tlog/policy.h"
#include "tlog/witness_client.h"

/* --witness-at given at most this often. */
#define CLI_WITNESSES_MAX 16

/* Loads the private key at path as a note key named name of the given type
 * (TLOG_SIG_ED25519 for a log, TLOG_SIG_COSIGNATURE for a witness). Prints
 * errors; 0 or -EINVAL. */
int cli_tlog_key(const char *cmd, const char *path, const char *name, uint8_t type,
		 struct tlog_key *out);

/* Reads and parses a tlog-policy file (what names it in messages); NULL
 * after printing why. Free with cli_tlog_policy_free. */
struct tlog_policy *cli_tlog_policy_load(const char *cmd, const char *what, const char *path);
void cli_tlog_policy_free(struct tlog_policy *p);

/* The witnesses asked to cosign and the policy their cosignatures must
 * meet, for kw_publish (tlog sign, tlog serve --append-token). */
struct cli_tlog_witnesses {
	struct tlog_witness_client wc[CLI_WITNESSES_MAX];
	struct kw_publish_witness pw[CLI_WITNESSES_MAX];
	size_t opened;
	struct tlog_policy *policy; /* NULL: none given */
};

/* Opens the n (<= CLI_WITNESSES_MAX) --witness-at specs for the log whose
 * key is lk, and reads policy_path (NULL: none); prints why not. 0 or -1;
 * close with cli_tlog_witnesses_close either way. */
int cli_tlog_witnesses_open(const char *cmd, struct cli_tlog_witnesses *w, char **specs, size_t n,
			    const struct tlog_key *lk, const char *policy_path);
void cli_tlog_witnesses_close(struct cli_tlog_witnesses *w);

/* Listens on ADDR:PORT (port 0: any free one), prints "listening on
 * http://ADDR:PORT" on stdout, and serves with h until killed (tlog/server.c).
 * Returns only on an error (printed): the exit status, 2 for a bad --listen. */
int cli_serve(const char *cmd, const char *listen_at, size_t max_body, tlog_server_handler h,
	      void *ctx);
/* The same with nthreads connections at once (tlog/server.h). */
int cli_serve_threads(const char *cmd, const char *listen_at, size_t max_body,
		      tlog_server_handler h, void *ctx, unsigned nthreads);

/* kwitness tlog serve (cmd_tlog_serve.c). */
int cli_tlog_serve(int argc, char **argv);

/* kwitness tlog sign (cmd_tlog_sign.c). */
void cli_tlog_sign_usage(FILE *f);
int cli_tlog_sign(const char *dir, const char *logkey, const char *signkey, char **witnesses,
		 size_t nw, const char *policy_path, const char *out, const char *unsigned_path);
int cli_tlog_sign_remote(const char *url, const char *log_vkey, const char *token_file,
			const char *signkey, const char *out, const char *unsigned_path);

#endif
