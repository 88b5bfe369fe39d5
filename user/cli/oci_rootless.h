/* SPDX-License-Identifier: Apache-2.0 */
/* Whether kwitness oci-hook runs in a user namespace (rootless podman). */
#ifndef KW_CLI_OCI_ROOTLESS_H
#define KW_CLI_OCI_ROOTLESS_H

#include <stdbool.h>

/* True when this process's uid map is not the initial namespace's identity
 * map of every uid ("0 0 4294967295"): a rootless runtime runs its hooks in
 * its user namespace. */
bool oci_in_user_namespace(void);

#endif
