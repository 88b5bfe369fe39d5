/* SPDX-License-Identifier: Apache-2.0 */
/* kwitnessd --tpm: committed sessions (commit.c; tpm/commit.h says what is
 * extended). Every open takes the next TPM counter value and extends its
 * open event; every sealed close extends its close event, has the index
 * certified and writes the commitment file state/commit/<session>.json. */
#ifndef KWITNESSD_COMMIT_H
#define KWITNESSD_COMMIT_H

#include <stdbool.h>
#include <stdint.h>

/* What a session holds of its commitment. */
struct kwd_session_commit {
	bool committed;          /* its open event is in the TPM */
	uint64_t from;           /* the absolute number of its open event */
	uint8_t start[32];       /* the index value before it */
	char counter[24];        /* the TPM counter value, decimal; "" without one */
};

struct kwd;
struct kwd_session;
struct kw_tpm;
/* With --tpm: the auth value (state/tpm-commit.auth, made once, 0600), both
 * NV indexes (defined when missing) and the index's value now. 0 or -errno. */
int kwd_commit_start(struct kwd *d, struct kw_tpm *tpm, char *err, size_t errlen);
void kwd_commit_stop(struct kwd *d);
/* Before the open entry is written: the counter value and the open event. */
void kwd_commit_open(struct kwd *d, struct kwd_session *s);
/* A session a restarted collector resumed: committed again when its open
 * event (rebuilt from its log's open entry, counter the entry's
 * tpm_counter, NULL without one) is in the chain the TPM's value replays. */
void kwd_commit_resume(struct kwd *d, struct kwd_session *s, const char *counter);
/* After the record is sealed, with its transcript hash. */
void kwd_commit_close(struct kwd *d, struct kwd_session *s, const char *transcript_hash);
/* The session goes (sealed or not): its events need not be kept for it. */
void kwd_commit_release(struct kwd *d, struct kwd_session *s);

#endif
