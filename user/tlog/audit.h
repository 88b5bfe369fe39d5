/* SPDX-License-Identifier: Apache-2.0 */
/* A full audit of a log directory against a checkpoint: every entry bundle
 * rehashed, every tile rebuilt from the level below and compared byte for
 * byte, the root recomputed. What a monitor does after fetching the log. */
#ifndef KWITNESS_TLOG_AUDIT_H
#define KWITNESS_TLOG_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "tlog/merkle.h"

/* 0 when the files of dirfd hold exactly the tree (size, root); -EBADMSG
 * with the first difference in why; -errno when a file cannot be read. */
int tlog_audit(int dirfd, uint64_t size, const struct tlog_hash *root, char *why, size_t whylen);

#endif
