/* SPDX-License-Identifier: Apache-2.0 */
/* A session's process lineage in the collector: which processes already
 * have a "proc" entry, the digest of each one's last exec decision (for its
 * exec entry), and the "seen" entries of processes a decision names first
 * (docs/decision-log.md, "proc"). Bounded: KWD_LINEAGE_MAX processes are
 * remembered; past that a process may get a second "seen" entry. */
#ifndef KWITNESS_KWITNESSD_LINEAGE_H
#define KWITNESS_KWITNESSD_LINEAGE_H

#include <stddef.h>
#include <stdint.h>

#define KWD_LINEAGE_MAX 8192 /* ~0.8 MB of table at most per session */
/* The kind of a collector-made "proc" entry in the reorder window: like
 * KWD_EV_COLLECTOR (dns_proxy.h) but not a decision (not counted). */
#define KWD_EV_COLLECTOR_PROC 0x8001

struct kwd_session;
struct kwd_lineage;

void kwd_lineage_free(struct kwd_lineage *l);
/* Writes the "proc" entry of a kernel lineage record (emit_event); 0,
 * -EINVAL (a record no entry can be made of), -ENOMEM. */
int kwd_lineage_write(struct kwd_session *s, const void *data, size_t len);
/* Notes a decision record about to be written: its process, and an exec
 * decision's digest. A process with no entry yet gets a "seen" entry,
 * numbered now and queued for kwd_lineage_flush. */
void kwd_lineage_decision(struct kwd_session *s, const void *data, size_t len);
/* A process found by the collector (at open): remembered, and its entry
 * (f, seq taken here) queued for kwd_lineage_flush, unless it has one. */
struct kw_proc_facts;
void kwd_lineage_known(struct kwd_session *s, const struct kw_proc_facts *f);
/* The "open" entries of the processes already in the session's cgroups
 * when it opened (lineage_open.c). */
void kwd_lineage_open(struct kwd_session *s);
/* Pushes queued entries into the session's reorder window (outside its
 * emit callback); returns how many. */
unsigned kwd_lineage_flush(struct kwd_session *s);

#endif
