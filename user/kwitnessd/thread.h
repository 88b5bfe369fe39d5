/* SPDX-License-Identifier: Apache-2.0 */
/* kwitnessd's threads besides the loop (the I/O worker, the signers, the
 * exporters, the watch and metrics threads): one way to start and stop
 * them. A thread starts with every signal blocked (the loop takes SIGTERM,
 * SIGINT and SIGHUP from its signalfd; no handler runs elsewhere), named
 * (ps -L, top, /proc/PID/task/TID/comm) and, with KWD_THREAD_LOOP_PRIORITY,
 * at the loop's priority (loop_priority.h); the start returns once it is
 * so. A struct kwd_thread holds what a long-lived one is stopped with. */
#ifndef KWITNESSD_THREAD_H
#define KWITNESSD_THREAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct kwd;

enum {
	KWD_THREAD_EVENTFD = 1 << 0,       /* kwd_thread_init: a wake_fd, for a thread that polls */
	KWD_THREAD_LOOP_PRIORITY = 1 << 1, /* start: loop_priority applies to it too */
};

struct kwd_thread {
	pthread_mutex_t lock; /* the owner's shared state (stop is set under it) */
	pthread_cond_t wake;  /* signalled at stop: for a thread waiting on lock */
	int wake_fd;          /* KWD_THREAD_EVENTFD: an eventfd written at stop, else -1 */
	atomic_bool stop;
	bool inited, running;
	pthread_t id;
};

/* Starts fn(arg) on a thread of its own called name (at most 15 bytes); d
 * is read for loop_priority (flags) and the log. 0 or -errno. */
int kwd_thread_create(pthread_t *id, struct kwd *d, const char *name, unsigned flags,
		      void *(*fn)(void *), void *arg);

/* The lock, the condition and (KWD_THREAD_EVENTFD) wake_fd. 0 or -errno;
 * kwd_thread_destroy undoes it either way. */
int kwd_thread_init(struct kwd_thread *t, unsigned flags);
/* kwd_thread_create, once t is initialised; 0, or -errno with err
 * ("thread NAME: ..."). */
int kwd_thread_start(struct kwd_thread *t, struct kwd *d, const char *name, unsigned flags,
		     void *(*fn)(void *), void *arg, char *err, size_t errlen);
static inline bool kwd_thread_stopping(struct kwd_thread *t)
{
	return atomic_load(&t->stop);
}
/* Writes wake_fd (whatever else it is polled for). */
void kwd_thread_wake(struct kwd_thread *t);
/* Sets stop, wakes the thread (wake and wake_fd) and joins it; nothing
 * when it is not running. */
void kwd_thread_stop(struct kwd_thread *t);
/* After kwd_thread_stop (or a failed start): the lock, wake and wake_fd. */
void kwd_thread_destroy(struct kwd_thread *t);

#endif
