/* SPDX-License-Identifier: Apache-2.0 */
#ifndef KWITNESSD_RESUME_H
#define KWITNESSD_RESUME_H

struct kwd;

/* resume.c: at start, adopts every pinned session (journal + pins + log),
 * seals what cannot be resumed, ends pinned slots nobody claims. */
void kwd_resume_sessions(struct kwd *d);

#endif
