/* SPDX-License-Identifier: Apache-2.0 */
/* A /proc/PID/stat line, read by the collector for a process of a sandbox
 * (lineage_open.c): its comm, field 2, is the process's to choose (spaces,
 * parentheses, anything but NUL). */
#ifndef KWITNESS_COLLECTOR_PROC_STAT_H
#define KWITNESS_COLLECTOR_PROC_STAT_H

#include <stddef.h>

/* Field 22, starttime (clock ticks since boot), of the n bytes at buf:
 * fields counted after the last ')' (the end of comm). 0, or -EINVAL when
 * there is no such field or it is not a decimal number that fits. */
int kw_proc_stat_starttime(const char *buf, size_t n, unsigned long long *ticks);

#endif
