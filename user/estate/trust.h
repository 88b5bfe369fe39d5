/* SPDX-License-Identifier: Apache-2.0 */
/* The keys an estate trusts: a folder of public keys (JWK or PEM files, one
 * per host or per signer), found by their RFC 7638 thumbprint, and the hosts
 * each key may sign for: the folder's file `hosts`, one binding a line,
 *   KEYFILE hostname=NAME machine_id=ID
 * (either or both fields; a key may have several lines; '#' starts a
 * comment). With a `hosts` file, a key signs only for the hosts its lines
 * name; without one, every key signs for every host (docs/estate.md). */
#ifndef KWITNESS_ESTATE_TRUST_H
#define KWITNESS_ESTATE_TRUST_H

#include <stdbool.h>
#include <stddef.h>

#include "trace/key.h"

#define ESTATE_DEFAULT_TRUST "/etc/kwitness/trust"
/* Keys read from one folder at most. */
#define ESTATE_TRUST_MAX 100000
#define ESTATE_TRUST_HOSTS "hosts"
/* Bindings read from the hosts file at most, and the longest line. */
#define ESTATE_BINDINGS_MAX 1000000
#define ESTATE_BINDING_LINE_MAX 4096

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
/* Key i (in thumbprint order): its file name and thumbprint. */
void estate_trust_key_at(const struct estate_trust *t, size_t i, const char **file,
			 const char **thumbprint);
/* Whether the folder binds keys to hosts (it has a hosts file). */
bool estate_trust_binds_hosts(const struct estate_trust *t);
/* Whether the key with this thumbprint may sign for the host a log's open
 * entry names: true when the folder binds no host, or a binding of the key
 * matches every field it gives. */
bool estate_trust_allows_host(const struct estate_trust *t, const char *thumbprint,
			      const char *hostname, const char *machine_id);
void estate_trust_free(struct estate_trust *t);

#endif
