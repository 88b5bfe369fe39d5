/* SPDX-License-Identifier: Apache-2.0 */
#ifndef KWITNESSD_UTIL_H
#define KWITNESSD_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

struct kwd;

/* util.c: the leaf every other file may call. */
void kwd_log(struct kwd *d, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* kwd_log goes to syslog from now on (a daemon without a terminal). */
void kwd_log_to_syslog(void);
int64_t kwd_now_ms(void);
int64_t kwd_now_us(void);
void kwd_refresh_clock(struct kwd *d);
/* An {"ok":false,"error":code,"message":...} reply (new reference). */
json_t *kwd_error(const char *code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* inner is outer or lies below it (paths without a trailing slash). */
bool kwd_path_is_within(const char *inner, const char *outer);

#endif
