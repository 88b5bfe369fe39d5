/* SPDX-License-Identifier: Apache-2.0 */
#ifndef KWITNESSD_PUBLISHER_H
#define KWITNESSD_PUBLISHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* Records waiting for the transparency thread: past this the worker seals
 * at once without transparency (a hung witness holds one record for up to
 * HTTP_TIMEOUT_S per witness, the queue the close replies behind it). */
#define KWD_PUBLISH_QUEUE_MAX 16
/* A record sealed without its Level 2 is tried again this much later, at
 * most this many times, and at most this many records wait. */
#define KWD_PUBLISH_RETRY_S 60
#define KWD_PUBLISH_TRIES 5
#define KWD_PUBLISH_RETRY_MAX 256
/* The largest record file read back for a retry. */
#define KWD_RECORD_MAX ((size_t)1 << 20)

struct kwd;
struct kwd_job;

/* What the transparency thread did, in status. */
struct kwd_publish_counters {
	uint64_t logged;       /* records sealed with their Level 2 */
	uint64_t unlogged;     /* records sealed without it, not (yet) logged */
	uint64_t queue_full;   /* of those, sealed at once: the queue was full */
	uint64_t retry_logged; /* logged on a later try (record rewritten) */
	uint64_t given_up;     /* left without it: tries or room ran out */
};

/* publisher.c: the transparency thread (with `log = DIR` only). */
int kwd_publisher_start(struct kwd *d, char *err, size_t errlen);
/* I/O worker: takes a SEAL job whose log is on disk, to seal with its
 * transparency and hand back through kwd_worker_finish; false when the
 * queue is full (the worker seals without). */
bool kwd_publisher_take(struct kwd *d, struct kwd_job *job);
/* Any thread: the record at record_path was sealed without its Level 2
 * (why): said in the log and tried again later. */
void kwd_publisher_unlogged(struct kwd *d, const char *record_path, const char *why);
/* The counters and queue for status; NULL without a publisher. */
json_t *kwd_publisher_status(struct kwd *d);
/* After kwd_worker_stop: seals what is queued without transparency, hands
 * it back, stops the thread. */
void kwd_publisher_stop(struct kwd *d);

#endif
