/* SPDX-License-Identifier: Apache-2.0 */
/* The keys an estate trusts: a folder of public keys (JWK or PEM files, one
 * per host or per signer), found by their RFC 7638 thumbprint. */
#ifndef KWITNESS_ESTATE_TRUST_H
#define KWITNESS_ESTATE_TRUST_H

#include <stddef.h>

#include "kwitness/key.h"

#define ESTATE_DEFAULT_TRUST "/etc/kwitness/trust"
/* Keys read from one folder at most. */
#define ESTATE_TRUST_MAX 100000

struct estate_trust;

/* Loads every *.jwk, *.json and *.pem regular file of dir (links are not
 * followed). A file that is not a public key is an error: a trust folder
 * says exactly whom it trusts. NULL with a one-line message in err. */
struct estate_trust *estate_trust_load(const char *dir, char *err, size_t errlen);
/* A trust of one key: the public half of key (a collector trusting its own
 * signatures when it pushes its records). NULL on error. */
struct estate_trust *estate_trust_of_key(const struct kw_key *key, char *err, size_t errlen);
/* The trusted key with this thumbprint, or NULL. */
const struct kw_key *estate_trust_find(const struct estate_trust *t, const char *thumbprint);
size_t estate_trust_count(const struct estate_trust *t);
void estate_trust_free(struct estate_trust *t);

#endif
