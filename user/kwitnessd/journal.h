/* SPDX-License-Identifier: Apache-2.0 */
#ifndef KWITNESSD_JOURNAL_H
#define KWITNESSD_JOURNAL_H

#include "session.h"

/* journal.c: <state>/sessions/<id>.json, what a restarted collector needs to
 * find a pinned session again (slot, generation) and who may act on it
 * (owner). Written atomically. */
/* closing: 0 open, 1 close asked, 2 close with kill asked. */
int kwd_journal_write(const struct kwd_session *s, int closing);
void kwd_journal_remove(struct kwd *d, const char *id);

#endif
