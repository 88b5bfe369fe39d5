/* SPDX-License-Identifier: Apache-2.0 */
/* Ring buffer records -> decision-log entries. The kernel writes these
 * records, but the collector must survive any bytes: a short record, an
 * unknown kind, lengths that claim more than the buffer holds, strings without
 * NUL. The first input byte picks the kind (so every kind is reached often);
 * the rest is the record. An entry that is produced must be canonical JSON. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "collector/decision.h"
#include "kwitness/abi/event.h"
#include "jcs/jcs.h"

/* every kind of KW_EVENT_TABLE, in its order (a new kind is fuzzed too) */
#define KIND_(id, value, record, format, tool, rules, section, single) KW_EV_##id,
static const uint16_t kinds[] = { KW_EVENT_TABLE(KIND_) };
#undef KIND_

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kw_buf entry = { 0 }, canon = { 0 };
	uint8_t *rec;
	size_t n;
	uint64_t seq;
	int rc;

	if (size < 1)
		return 0;
	n = size - 1;
	/* Its own allocation, exactly n bytes, so ASan sees any overread. */
	rec = malloc(n ? n : 1);
	if (!rec)
		return 0;
	memcpy(rec, data + 1, n);
	if (data[0] < 2 * sizeof(kinds) / sizeof(kinds[0]) &&
	    n >= offsetof(struct kw_event_hdr, kind) + sizeof(uint16_t)) {
		/* Even first bytes keep the fuzzed kind, odd ones force a known one. */
		if (data[0] & 1) {
			uint16_t k = kinds[data[0] / 2];

			memcpy(rec + offsetof(struct kw_event_hdr, kind), &k, sizeof(k));
		}
	}
	kw_event_seq(rec, n, &seq);
	rc = kw_event_to_entry(rec, n, 1700000000LL * 1000000000LL, &entry);
	if (rc == 0) {
		struct jcs_error err;

		if (jcs_canonicalize(entry.data, entry.len, &canon, &err) ||
		    canon.len != entry.len || memcmp(canon.data, entry.data, entry.len))
			abort(); /* the entry is not canonical JSON */
	} else if (rc != -EINVAL && rc != -ENOMEM) {
		abort();
	}
	free(rec);
	kw_buf_free(&entry);
	kw_buf_free(&canon);
	return 0;
}
