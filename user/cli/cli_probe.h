/* SPDX-License-Identifier: Apache-2.0 */
/* What this host can enforce, as `kwitness probe` finds it (cmd_probe.c),
 * for the commands that ask about one policy (kwitness policy check). */
#ifndef KWITNESS_CLI_PROBE_H
#define KWITNESS_CLI_PROBE_H

#include <stdint.h>

#include "kwitness/abi/classes.h"
#include "bpf/probe.h"

/* The classes kwitnessd's programs load and attach for here (a mask of
 * enum kw_class), each missing one's reason in why[bit]. Needs root (else
 * every class is missing, for the kernel's reason). 0 or -errno. */
int cli_probe_enforceable(uint32_t *classes, char why[KW_CLASS_COUNT][KW_PROBE_REASON_MAX]);

#endif
