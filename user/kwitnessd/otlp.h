/* SPDX-License-Identifier: Apache-2.0 */
/* otlp.c: decisions as OpenTelemetry logs (OTLP/HTTP, JSON encoding) to the
 * endpoint of kwitnessd.conf's otlp_endpoint, on a thread of its own fed by
 * the fan-out (fanout.h): batched, retried with backoff, never on the log
 * thread; a queue that fills counts what it missed. docs/kwitnessd.md,
 * "OpenTelemetry". */
#ifndef KWITNESSD_OTLP_H
#define KWITNESSD_OTLP_H

#include <stddef.h>

/* Log records per request, and how long the first one waits for more. */
#define KWD_OTLP_BATCH 512
#define KWD_OTLP_LINGER_MS 200
/* Tries per batch and the backoff between them (doubling, capped). */
#define KWD_OTLP_TRIES 6
#define KWD_OTLP_BACKOFF_MS 250
#define KWD_OTLP_BACKOFF_MAX_MS 8000

struct kwd;

/* Starts the exporter when otlp_endpoint is set (after kwd_watch_start,
 * which makes the fan-out). 0 or -errno with err. */
int kwd_otlp_start(struct kwd *d, char *err, size_t errlen);
/* Sends what is queued (one try per batch) and stops the thread. */
void kwd_otlp_stop(struct kwd *d);

#endif
