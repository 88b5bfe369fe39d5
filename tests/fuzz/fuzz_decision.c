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

#include "kwitness/buf.h"
#include "collector/decision.h"
#include "kwitness/abi/event.h"
#include "kwitness/jcs.h"

static const uint16_t kinds[] = {
	KW_EV_NET_CONNECT, KW_EV_NET_SEND, KW_EV_NET_BIND, KW_EV_NET_SOCKET, KW_EV_DEV,
	KW_EV_SYSCTL, KW_EV_CGROUP_UNTRACKED, KW_EV_FS_OPEN, KW_EV_FS_EXEC, KW_EV_FS_PATHOP, KW_EV_MOUNT,
	KW_EV_PROC_KILL, KW_EV_PROC_PTRACE, KW_EV_NET_UNIX,
};

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
