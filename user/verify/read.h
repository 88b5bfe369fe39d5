/* SPDX-License-Identifier: Apache-2.0 */
/* The files a verification reads, with the sentence a caller prints when one
 * cannot be read ("cannot read decision log PATH: ..."). */
#ifndef KWITNESS_VERIFY_READ_H
#define KWITNESS_VERIFY_READ_H

#include <stddef.h>

#include "lib/buf.h"

/* Input size limits: a record is small; a bundle can be larger. Logs are
 * streamed, never read whole. */
#define VERIFY_RECORD_MAX ((size_t)1 << 20)
#define VERIFY_BUNDLE_MAX ((size_t)16 << 20)

struct tlog_policy;

/* kw_read_file of at most max bytes; -errno with err saying which file
 * (what, e.g. "record", "policy bundle") and why. */
int verify_read(const char *what, const char *path, size_t max, struct kw_buf *out, char *err,
		size_t errlen);
/* A C2SP tlog-policy file, read and parsed: a new policy (verify_policy_free),
 * or NULL with err saying why. */
struct tlog_policy *verify_policy_load(const char *what, const char *path, char *err,
				       size_t errlen);
void verify_policy_free(struct tlog_policy *p);

#endif
