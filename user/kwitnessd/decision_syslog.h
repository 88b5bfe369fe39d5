/* SPDX-License-Identifier: Apache-2.0 */
/* syslog_decisions = deny|all: each denial (or each decision) also as one
 * line on kwitnessd's own log stream (syslog, or stderr under --foreground,
 * which systemd puts in the journal): a subscriber of the decision fan-out
 * (fanout.c), with its bounded queue and a thread of its own, so a slow
 * syslog or journal never holds up the decision log. */
#ifndef KWITNESSD_DECISION_SYSLOG_H
#define KWITNESSD_DECISION_SYSLOG_H

#include <stddef.h>
#include <stdint.h>

struct kwd;
struct kwd_config;

enum kwd_syslog_decisions { KWD_SYSLOG_OFF, KWD_SYSLOG_DENY, KWD_SYSLOG_ALL };

/* Lines waiting at most (past it a line is dropped and counted). */
#define KWD_SYSLOG_QUEUE 1024
/* A longer entry is not sent (counted as dropped). */
#define KWD_SYSLOG_LINE_MAX 8192

/* config.c and --syslog-decisions: "deny", "all" or "off"; 0 or -EINVAL. */
int kwd_syslog_decisions_parse(const char *v, enum kwd_syslog_decisions *out);
int kwd_decision_syslog_start(struct kwd *d, char *err, size_t errlen);
void kwd_decision_syslog_stop(struct kwd *d);
/* Lines sent and dropped so far (metrics). */
void kwd_decision_syslog_counts(uint64_t *sent, uint64_t *dropped);

#endif
