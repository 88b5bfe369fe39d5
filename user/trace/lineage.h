/* SPDX-License-Identifier: Apache-2.0 */
/* The process tree of a decision log (kwitness log tree; lineage.c). */
#ifndef KWITNESS_TRACE_LINEAGE_H
#define KWITNESS_TRACE_LINEAGE_H

#include <stdio.h>

#include <jansson.h>

/* A process tree being built from log entries. */
struct kw_lineage;
struct kw_lineage *kw_lineage_new(void);
void kw_lineage_free(struct kw_lineage *l);
/* One parsed log entry: a proc entry adds (to) a process, a decision with
 * a "proc" counts for it, anything else is ignored. 0, -EINVAL (not an
 * object), -ENOMEM. */
int kw_lineage_add(struct kw_lineage *l, const json_t *entry);
/* The tree as kw_log_tree prints it. */
void kw_lineage_print(struct kw_lineage *l, FILE *out);

/* A log string for reading: NULs (argv's separators) as spaces, cut at max
 * - 1 bytes on a UTF-8 character boundary (0: uncut). NULL when v is not a
 * string, or on no memory. */
char *kw_log_text(const json_t *v, size_t max);

/* Reads the log f (name for messages) and prints its process tree to out:
 * one line per process, "PID EXE decisions=N proc=REF [digest=D]
 * [argv="..."]", children indented two spaces below their parent. 0,
 * -EINVAL (a line that is not a JSON object), -ENOMEM. */
int kw_log_tree(FILE *f, const char *name, FILE *out);

#endif
