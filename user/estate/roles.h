/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness estate roles: the PostgreSQL roles of an estate that hosts push
 * to (docs/estate.md, "Who can write the estate"). The database's owner is
 * the administrator; each trusted key gets a login role that may insert the
 * records of its own signer (and procs rows of those records only) and
 * nothing else: no UPDATE, no DELETE. */
#ifndef KWITNESS_ESTATE_ROLES_H
#define KWITNESS_ESTATE_ROLES_H

#include "lib/buf.h"
#include "estate/trust.h"

#define ESTATE_PUSH_GROUP "kwitness_push"
#define ESTATE_PUSH_PREFIX "kwitness_push_"

/* The SQL, appended to out: -EINVAL (with err) when a key file's name does
 * not make a role name (letters, digits, '_' and '-'), -ENOMEM. */
int estate_roles_sql(const struct estate_trust *t, struct kw_buf *out, char *err, size_t errlen);

#endif
