/* SPDX-License-Identifier: Apache-2.0 */
/* ocsf.c: a decision log entry as an OCSF 1.x event (docs/decision-log.md,
 * "OCSF"). A view of the signed log that points back to it: each event names
 * the session, the entry's seq, the entry's bytes and their hash
 * (raw_data, raw_data_hash) and, when known, the record's hash. */
#ifndef KWITNESS_EXPORT_OCSF_H
#define KWITNESS_EXPORT_OCSF_H

#include <jansson.h>
#include <stdbool.h>

/* The OCSF schema version the events follow (tests/vectors/ocsf/). */
#define KW_OCSF_VERSION "1.9.0-dev"

/* Where the events come from: the session and host they belong to. */
struct kw_ocsf_context {
	const char *session;     /* the session id */
	const char *record_hash; /* "sha256:…" of the record, or NULL */
	const char *hostname;    /* the host that witnessed (open entry), or NULL */
	const char *machine_id;  /* its /etc/machine-id, or NULL */
};

/* The OCSF event for one decision entry (a parsed canonical log line), or
 * NULL for an entry that is not a decision (open, close, resume) or when out
 * of memory. */
json_t *kw_ocsf_event(const json_t *entry, const struct kw_ocsf_context *ctx);
/* Writes ev (may be NULL: nothing) to stdout as one JSON line and releases
 * it; true when a line was written. */
bool kw_ocsf_put(json_t *ev);
/* The class kw_ocsf_event gives a tool's decisions (4001, 4003, 1001, 1007,
 * 1003), or 0 for a tool it does not know. */
int kw_ocsf_class(const char *tool);

#endif
