/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel decision events -> canonical decision-log entries. */
#ifndef KWITNESS_COLLECTOR_DECISION_H
#define KWITNESS_COLLECTOR_DECISION_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

/* Appends the RFC 8785 entry for one ring buffer record (no newline).
 * boot_to_realtime_ns converts the event's CLOCK_BOOTTIME stamp to wall time
 * (realtime - boottime, sampled by the collector). Returns 0, -EINVAL for a
 * record that is too short or of an unknown kind, -ENOMEM. */
int kw_event_to_entry(const void *data, size_t size, int64_t boot_to_realtime_ns,
		      struct kw_buf *out);
/* The same, naming via (may be NULL: unknown) as the host name whose DNS
 * answer permitted a KW_EVF_VIA network decision. */
int kw_event_to_entry_via(const void *data, size_t size, int64_t boot_to_realtime_ns,
			  const char *via, struct kw_buf *out);

/* The header's seq of a ring buffer record, or -EINVAL when too short. */
int kw_event_seq(const void *data, size_t size, uint64_t *seq);

#endif
