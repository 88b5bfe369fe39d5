/* SPDX-License-Identifier: Apache-2.0 */
/* The process tree of a decision log (kwitness log tree; lineage.c). */
#ifndef KWITNESS_TRACE_LINEAGE_H
#define KWITNESS_TRACE_LINEAGE_H

#include <stdio.h>

/* Reads the log f (name for messages) and prints its process tree to out:
 * one line per process, "PID EXE decisions=N proc=REF [digest=D]
 * [argv="..."]", children indented two spaces below their parent. 0,
 * -EINVAL (a line that is not a JSON object), -ENOMEM. */
int kw_log_tree(FILE *f, const char *name, FILE *out);

#endif
