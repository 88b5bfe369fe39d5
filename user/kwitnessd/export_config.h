/* SPDX-License-Identifier: Apache-2.0 */
/* export_config.c: kwitnessd.conf's keys for the live stream and the
 * exports (watch_queue, otlp_*): docs/kwitnessd.md, man/kwitnessd.conf.5. */
#ifndef KWITNESSD_EXPORT_CONFIG_H
#define KWITNESSD_EXPORT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define KWD_WATCH_QUEUE_DEFAULT 65536
#define KWD_OTLP_QUEUE_DEFAULT 65536
#define KWD_EXPORT_QUEUE_MIN 16
#define KWD_EXPORT_QUEUE_MAX 1048576
#define KWD_OTLP_URL_MAX 512

struct kwd_export_config {
	unsigned watch_queue;   /* entries one watcher's queue holds (0: the default) */
	char otlp_endpoint[KWD_OTLP_URL_MAX]; /* "": no OTLP export */
	bool otlp_all;          /* every decision; false: denials only */
	unsigned otlp_queue;    /* entries waiting for the exporter (0: the default) */
};

/* True when key is one of these (the prefixes watch_ and otlp_); then *e is
 * 0 or -EINVAL with err ("FILE:LINE: why"). */
bool kwd_export_config_key(struct kwd_export_config *x, const char *key, const char *val, int *e,
			   char *err, size_t errlen, const char *file, unsigned lineno);

#endif
