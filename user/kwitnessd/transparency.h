/* SPDX-License-Identifier: Apache-2.0 */
#ifndef KWITNESSD_TRANSPARENCY_H
#define KWITNESSD_TRANSPARENCY_H

#include <stddef.h>

struct kwd;

/* transparency.c: opens the log, its key, the witnesses and the policy of
 * `log = DIR` (d->publish stays NULL without it); stop releases them. */
int kwd_transparency_start(struct kwd *d, char *err, size_t errlen);
void kwd_transparency_stop(struct kwd *d);

#endif
