/* SPDX-License-Identifier: Apache-2.0 */
/* What the files of libkwitness share; hidden from the library's users
 * (-fvisibility=hidden: only kwitness_* is exported). */
#ifndef KWITNESS_CLIENT_INTERNAL_H
#define KWITNESS_CLIENT_INTERNAL_H

#include <stdbool.h>

#include "kwitness/client.h"

/* Fills err (one line) and returns status. */
int kwc_fail(struct kwitness_error *err, int status, int sys_errno, const char *code,
	     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void kwc_clear(struct kwitness_error *err);
/* kwitness_close; with kill, kwitnessd first kills what is left in the
 * session's cgroup (counted in the log's trailer). */
int kwc_close(const char *socket, const char *session_id, bool kill,
	      struct kwitness_close_result *out, struct kwitness_error *err);

#endif
