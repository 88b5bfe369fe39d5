/* SPDX-License-Identifier: Apache-2.0 */
/* A one-line progress report on stderr for long verifications: done so far,
 * the rate and the time left, redrawn at most five times a second. Only on a
 * terminal: a pipe, a file or --json never sees it. Safe to update from
 * several threads. */
#ifndef KWITNESS_VERIFY_PROGRESS_H
#define KWITNESS_VERIFY_PROGRESS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct progress {
	bool enabled;
	uint64_t total_bytes;   /* 0: unknown (a pipe) */
	uint64_t total_items;   /* 0: a single log, progress in bytes */
	_Atomic uint64_t bytes, items;
	int64_t start_ns;
	_Atomic int64_t next_ns; /* earliest time of the next redraw */
	pthread_mutex_t lock;
	bool drawn;
};

/* enabled only when stderr is a terminal and want is true. */
void progress_init(struct progress *p, bool want, uint64_t total_bytes, uint64_t total_items);
void progress_add(struct progress *p, uint64_t bytes, uint64_t items);
/* Erases the line before other output; the next update draws it again. */
void progress_clear(struct progress *p);
/* Erases the line, if one was drawn, and stops drawing. */
void progress_end(struct progress *p);
/* Seconds since progress_init, for the closing summary. */
double progress_seconds(const struct progress *p);

#endif
