/* SPDX-License-Identifier: Apache-2.0 */
/* kwitnessd's leaf: its own log (syslog or stderr), its clocks, and the error
 * replies of the control protocol. Every other file of kwitnessd may call
 * these; they call nothing of kwitnessd. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "client/protocol.h"
#include "lib/text_safe.h"
#include "kwd.h"
#include "util.h"

static bool use_syslog;

void kwd_log_to_syslog(void)
{
	use_syslog = true;
}

void kwd_log(struct kwd *d, int level, const char *fmt, ...)
{
	/* a cgroup path is at most PATH_MAX; a line holds one or two */
	char line[3 * 4096], safe[3 * 4096];
	va_list ap;

	if (level >= LOG_INFO && (!d || d->cfg.verbose < (level == LOG_DEBUG ? 2 : 1)))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* Lines name sandbox ids, cgroups, comms and paths a sandbox chose:
	 * escaped, so that none can forge a line or drive a terminal. */
	kw_text_safe(line, safe, sizeof(safe));
	if (use_syslog)
		syslog(level, "%s", safe);
	else
		fprintf(stderr, "kwitnessd: %s\n", safe);
}

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t kwd_now_ms(void)
{
	return clock_ns(CLOCK_MONOTONIC) / 1000000;
}

int64_t kwd_now_us(void)
{
	return clock_ns(CLOCK_REALTIME) / 1000;
}

void kwd_refresh_clock(struct kwd *d)
{
	d->boot_to_realtime_ns = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_BOOTTIME);
}

json_t *kwd_error(const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Messages quote client input; keep them printable ASCII so the reply
	 * is always valid, single-line JSON. */
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '?';
	return json_pack("{s:b, s:s, s:s}", KW_F_OK, 0, KW_F_ERROR, code, KW_F_MESSAGE, msg);
}

bool kwd_path_is_within(const char *inner, const char *outer)
{
	size_t n = strlen(outer);

	return !strncmp(inner, outer, n) && (inner[n] == '/' || inner[n] == '\0');
}
