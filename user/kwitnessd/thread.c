/* SPDX-License-Identifier: Apache-2.0 */
/* Starting and stopping kwitnessd's threads, see thread.h. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "loop_priority.h"
#include "thread.h"

/* What the new thread reads before it says it is ready; on the creator's
 * stack, which waits for that. */
struct start {
	struct kwd *d;
	const char *name;
	unsigned flags;
	void *(*fn)(void *);
	void *arg;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool ready;
};

static void *thread_begin(void *arg)
{
	struct start *s = arg;
	void *(*fn)(void *) = s->fn;
	void *fn_arg = s->arg;

	/* the priority before the name: a thread seen by its name has it */
	if (s->flags & KWD_THREAD_LOOP_PRIORITY)
		kwd_loop_priority_apply(s->d, s->name);
	pthread_setname_np(pthread_self(), s->name);
	pthread_mutex_lock(&s->lock);
	s->ready = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock); /* s is gone after this */
	return fn(fn_arg);
}

int kwd_thread_create(pthread_t *id, struct kwd *d, const char *name, unsigned flags,
		      void *(*fn)(void *), void *arg)
{
	struct start s = { .d = d, .name = name, .flags = flags, .fn = fn, .arg = arg };
	sigset_t all, old;
	int e;

	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.cond, NULL);
	/* the new thread inherits the mask: every signal blocked there */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(id, NULL, thread_begin, &s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!e) {
		pthread_mutex_lock(&s.lock);
		while (!s.ready)
			pthread_cond_wait(&s.cond, &s.lock);
		pthread_mutex_unlock(&s.lock);
	}
	pthread_mutex_destroy(&s.lock);
	pthread_cond_destroy(&s.cond);
	return -e;
}

int kwd_thread_init(struct kwd_thread *t, unsigned flags)
{
	*t = (struct kwd_thread){ .wake_fd = -1 };
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->wake, NULL);
	t->inited = true;
	if (flags & KWD_THREAD_EVENTFD) {
		t->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (t->wake_fd < 0)
			return -errno;
	}
	return 0;
}

int kwd_thread_start(struct kwd_thread *t, struct kwd *d, const char *name, unsigned flags,
		     void *(*fn)(void *), void *arg, char *err, size_t errlen)
{
	int e = kwd_thread_create(&t->id, d, name, flags, fn, arg);

	if (e) {
		snprintf(err, errlen, "thread %s: %s", name, strerror(-e));
		return e;
	}
	t->running = true;
	return 0;
}

void kwd_thread_wake(struct kwd_thread *t)
{
	uint64_t one = 1;

	if (t->wake_fd >= 0 && write(t->wake_fd, &one, sizeof(one)) < 0)
		(void)0; /* EAGAIN: the counter is full, so it is readable anyway */
}

void kwd_thread_stop(struct kwd_thread *t)
{
	if (!t->running)
		return;
	pthread_mutex_lock(&t->lock);
	atomic_store(&t->stop, true);
	pthread_cond_broadcast(&t->wake);
	pthread_mutex_unlock(&t->lock);
	kwd_thread_wake(t);
	pthread_join(t->id, NULL);
	t->running = false;
}

void kwd_thread_destroy(struct kwd_thread *t)
{
	if (!t->inited)
		return;
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->wake);
	if (t->wake_fd >= 0)
		close(t->wake_fd);
	t->wake_fd = -1;
	t->inited = false;
}
