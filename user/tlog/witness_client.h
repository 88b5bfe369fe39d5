/* SPDX-License-Identifier: Apache-2.0 */
/* How a log reaches a witness: over HTTP (the tlog-witness protocol at
 * http://HOST:PORT[/PREFIX], POST <prefix>/add-checkpoint), or in the same
 * process, for a witness on the log's own host:
 *   local:NAME:KEYFILE:STATEDIR
 * (the witness's name, its PEM private key, its state directory). */
#ifndef KWITNESS_TLOG_WITNESS_CLIENT_H
#define KWITNESS_TLOG_WITNESS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"
#include "tlog/http.h"
#include "tlog/witness.h"

struct tlog_witness_client {
	bool local;
	struct http_url url;
	struct tlog_witness w; /* local: key and statefd owned */
};

/* log is the log the local witness trusts (borrowed). 0 or -errno with err. */
int tlog_witness_client_open(const char *spec, const struct tlog_key *log,
			     struct tlog_witness_client *out, char *err, size_t errlen);
/* A tlog_witness_submit (ctx: the client). */
int tlog_witness_client_submit(void *ctx, const char *req, size_t len, struct kw_buf *resp);
void tlog_witness_client_close(struct tlog_witness_client *c);

#endif
