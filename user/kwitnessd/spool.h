/* SPDX-License-Identifier: Apache-2.0 */
#ifndef KWITNESSD_SPOOL_H
#define KWITNESSD_SPOOL_H

#include <stddef.h>
#include <jansson.h>

/* spool.c: written records spooled for `kwitness estate push` (the
 * collector itself ships nothing). */
struct kwd;
/* Makes the spool folder and logs what ships it; 0 without an estate setting. */
int kwd_spool_start(struct kwd *d, char *err, size_t errlen);
/* Spools a written record; nothing without the setting. */
void kwd_spool_enqueue(struct kwd *d, const char *session);
/* {"backlog":N,"error":"..."}, or NULL without the setting. */
json_t *kwd_spool_status(struct kwd *d);

#endif
