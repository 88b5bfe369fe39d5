/* SPDX-License-Identifier: Apache-2.0 */
/* Interim checkpoints while a session runs (docs/decision-log.md,
 * "Checkpoints"). Three threads share the work so that no decision waits:
 * the loop decides when one is due (checkpoint_interval, checkpoint_entries,
 * never with nothing new) and queues a CHECKPOINT job behind the log's
 * chunks; the I/O worker, which already hashes the log, takes the
 * transcript prefix from a copy of its running digest; the signing thread
 * here syncs the log, signs, appends the line and fsyncs it before the next. */
#ifndef KWITNESSD_CHECKPOINT_H
#define KWITNESSD_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#define KWD_DEFAULT_CHECKPOINT_INTERVAL 60 /* seconds; 0: none by time */
/* Checkpoints waiting to be signed, all sessions: past it one is skipped
 * (the next covers its lines). */
#define KWD_CKPT_QUEUE_MAX 256

struct kwd;
struct kwd_session;
struct kwd_ckpt;
struct kw_transcript;

/* The signing thread (none when checkpoints are off). */
int kwd_ckpt_start(struct kwd *d, char *err, size_t errlen);
/* After every session was released. */
void kwd_ckpt_stop(struct kwd *d);
/* Loop: the session's chain, its file beside the log created or (resumed)
 * continued from its last line, into s->ckpt; nothing when off. A failure
 * is logged: the session runs on without checkpoints. */
void kwd_ckpt_attach(struct kwd_session *s);
/* Loop, on the tick and after ring buffer reads: queues a checkpoint when
 * one is due. */
void kwd_ckpt_maybe(struct kwd_session *s, int64_t now_ms);
/* Worker: a CHECKPOINT job's turn (write_err: the log's first write error,
 * then none is made). req is the job's owner. sync_fd (taken; -1: none) is
 * the log's current segment, synced in place of the log's first file. */
void kwd_ckpt_take(void *req, const struct kw_transcript *tr, int write_err, int sync_fd);
/* Worker, at the seal: waits for the chain's last checkpoint, then names it
 * in the close entry, the last line of data ("checkpoint", "checkpoints"
 * are its first members in RFC 8785 order). 0 or -errno. */
int kwd_ckpt_bind_close(struct kwd_ckpt *k, char **data, size_t *len);
/* Loop, when the session goes: waits for its checkpoints, closes the file. */
void kwd_ckpt_free(struct kwd_ckpt *k);

#endif
