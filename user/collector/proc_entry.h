/* SPDX-License-Identifier: Apache-2.0 */
/* "proc" entries of the decision log (docs/decision-log.md, "proc"): a
 * session process as it appeared, from a kernel lineage event (fork, exec)
 * or from what the collector read (at open, first seen in a decision). */
#ifndef KWITNESS_COLLECTOR_PROC_ENTRY_H
#define KWITNESS_COLLECTOR_PROC_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kwitness/abi/event.h"
#include "lib/buf.h"

/* One process's facts; NULL strings and has_* false are left out. */
struct kw_proc_facts {
	uint64_t seq;
	int64_t ts_us;
	const char *event; /* "fork", "exec", "open", "seen" */
	uint32_t pid;
	uint64_t start_ns;
	bool has_parent;
	uint32_t ppid;
	uint64_t parent_start_ns;
	bool has_ids;
	uint32_t uid, gid;
	bool has_cgroup;
	uint64_t cgroup;
	const char *comm; /* comm_len bytes, lossy */
	size_t comm_len;
	const char *exe; /* exe_len bytes, lossy */
	size_t exe_len;
	bool exe_truncated;
	const char *argv; /* argv_len bytes: the arguments, each ending in NUL */
	size_t argv_len;
	size_t argv_full;        /* bytes of the whole argv (> argv_len: cut) */
	const char *argv_sha256; /* a cut argv: the whole one's "sha256:<hex>", when known */
	const char *digest;      /* the executed file's "sha256:<hex>", when known */
};

/* "<pid>-<start_ns>" into out; returns its length. */
size_t kw_proc_ref(char out[KW_PROC_REF_MAX], uint32_t pid, uint64_t start_ns);

/* Appends the canonical entry (no newline). 0, -EINVAL, -ENOMEM. */
int kw_proc_facts_entry(const struct kw_proc_facts *f, struct kw_buf *out);

/* The facts of a KW_EV_PROC_FORK/EXEC record of size bytes (pointing into
 * it); 0 or -EINVAL (too short, another kind, a bad time). */
int kw_proc_event_facts(const void *data, size_t size, int64_t boot_to_realtime_ns,
			struct kw_proc_facts *f);

static inline bool kw_is_proc_kind(uint16_t kind)
{
	return kind == KW_EV_PROC_FORK || kind == KW_EV_PROC_EXEC;
}

#endif
