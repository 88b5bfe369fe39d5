/* SPDX-License-Identifier: Apache-2.0 */
/* The collector's side of KW_EVENT_TABLE (kwitness/abi/events.h): for each
 * event kind, its formatter, its record's size and its "tool". */
#ifndef KWITNESS_COLLECTOR_EVENT_FORMAT_H
#define KWITNESS_COLLECTOR_EVENT_FORMAT_H

#include <stddef.h>

#include "collector/entry.h"
#include "kwitness/abi/event.h"

struct kw_event_format;
/* Adds the kind's own members of rec (at least k->record_size bytes; h is
 * its header, copied) to e. via: the host name a KW_EVF_VIA decision's DNS
 * answer gave (NULL: unknown). 0 or -EINVAL. */
typedef int (*kw_event_formatter)(struct entry *e, const struct kw_event_hdr *h, const void *rec,
				  const struct kw_event_format *k, const char *via);

struct kw_event_format {
	kw_event_formatter format; /* NULL: no such kind */
	size_t record_size;
	const char *tool; /* the table's tool column, and its length */
	size_t tool_len;
};

/* Indexed by kw_event_hdr.kind. */
extern const struct kw_event_format kw_event_formats[KW_EV_LIMIT];

#endif
