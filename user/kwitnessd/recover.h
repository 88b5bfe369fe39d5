/* SPDX-License-Identifier: Apache-2.0 */
#ifndef KWITNESSD_RECOVER_H
#define KWITNESSD_RECOVER_H

#include <stddef.h>

struct kwd;

/* recover.c: at start, seals the logs of sessions no collector closed and
 * no collector can resume; seal_one with a reason for one of them. */
void kwd_seal_unclosed(struct kwd *d);
int kwd_seal_one(struct kwd *d, const char *id, const char *reason, char *why, size_t whylen);

#endif
