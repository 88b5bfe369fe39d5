/* SPDX-License-Identifier: Apache-2.0 */
/* The image digest `kwitness oci-hook` gives a container whose bundle names
 * none: a digest of its root filesystem's listing (names, types, modes,
 * owners, sizes, link targets; not file contents). */
#ifndef KWITNESS_IMAGE_ROOTFS_DIGEST_H
#define KWITNESS_IMAGE_ROOTFS_DIGEST_H

#include <stddef.h>

#include "lib/digest.h"

/* At most this many entries are listed; a larger tree is refused. */
#define KW_ROOTFS_MAX_ENTRIES 4000000

/* "sha256:<hex>" of the listing of the tree at root, or -errno with a
 * sentence in err. */
int kw_rootfs_digest(const char *root, char out[KW_DIGEST_STR_MAX], char *err, size_t errlen);

#endif
