/* SPDX-License-Identifier: Apache-2.0 */
/* watch.c: `kwitness watch` clients. A control connection that asks to
 * watch is handed to the watch thread, which streams each entry the
 * fan-out gives it (fanout.h) and never runs on the log thread. A watcher
 * that does not read misses entries (its queue is bounded) and is told how
 * many; the log never waits for it. docs/kwitnessd.md, "watch". */
#ifndef KWITNESSD_WATCH_H
#define KWITNESSD_WATCH_H

#include <stddef.h>
#include <jansson.h>

#include "client/protocol.h"
#include "authz.h"

/* Watchers at once, and for one non-root uid. */
#define KWD_WATCHERS_MAX 32
#define KWD_WATCHERS_PER_USER 4
/* Stream bytes the thread formats ahead of what the socket took. */
#define KWD_WATCH_OUT_MAX ((size_t)256 * 1024)

struct kwd;

/* Starts the watch thread (and d->fanout). 0 or -errno with err. */
int kwd_watch_start(struct kwd *d, char *err, size_t errlen);
/* Main thread, a watch request of a control client connected as fd: NULL
 * when the thread took fd over (it answers {"ok":true} after the pending
 * bytes, which the control socket had not yet sent), else the refusal
 * (fd stays the caller's). */
json_t *kwd_watch_request(struct kwd *d, const struct kw_request *req, const struct kwd_peer *peer,
			  int fd, const char *pending, size_t pending_len);
/* Ends every watcher and the thread. */
void kwd_watch_stop(struct kwd *d);

#endif
