/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness estate query: "which agent, on which machine, did this, under
 * whose authority". One row per stored decision that passes every filter,
 * with its record's host, sandbox, session, policy and signer. */
#ifndef KWITNESS_ESTATE_QUERY_H
#define KWITNESS_ESTATE_QUERY_H

#include <stdbool.h>
#include <stdint.h>

#include "estate/db.h"

enum estate_group { ESTATE_GROUP_NONE, ESTATE_GROUP_HOST, ESTATE_GROUP_SANDBOX, ESTATE_GROUP_TOOL };

struct estate_filter {
	const char *tool, *decision, *sandbox, *host, *signer, *session;
	/* the pod identity of the record's open entry (kwitness oci-hook) */
	const char *pod_namespace, *pod, *container;
	/* A host address or CIDR, a path prefix (starts with '/'), a port
	 * (digits) or a host name. */
	const char *object;
	/* The process that made the decision (the procs table, 0005_lineage.sql):
	 * the program it ran at the decision, by path (exe) or by the exec's
	 * digest ("sha256:<hex>"); ancestor: a substring of the path or of the
	 * arguments (joined by spaces) of a program the process or one of its
	 * ancestors in the session's process tree ran. */
	const char *exe, *digest, *ancestor;
	bool has_since, has_until;
	int64_t since_us, until_us;
	bool incomplete;             /* only sessions whose log is incomplete */
	int64_t limit;               /* rows; 0: all */
};

/* The result columns of a row query, in order. */
enum estate_col {
	EC_TS_US, EC_HOSTNAME, EC_MACHINE_ID, EC_SANDBOX, EC_SESSION, EC_TOOL, EC_OBJECT,
	EC_DECISION, EC_ENFORCED, EC_BUNDLE_HASH, EC_MODE, EC_SIGNER,
	EC_LEVEL,     /* the record's TRACE level by name (kwitness/level.h) */
	EC_LOG_INDEX, /* its leaf index in the transparency log; NULL: not logged */
	EC_RECORD_PATH, EC_COMPLETE,
	EC_LEVEL_WHY, /* why the level is not higher ('' when nothing held it back) */
	EC_NAMESPACE, EC_POD, EC_CONTAINER, /* the pod identity; NULL: not a pod's */
	EC_COUNT
};

/* Runs the query: rows (group NONE, count false), the number of rows
 * (count: one row, one column), or a count per host/sandbox/tool (group:
 * key columns then the count). -1 with a message in err. */
int estate_query_run(struct estate_db *db, const struct estate_filter *f, bool count,
		     enum estate_group group, estate_row_fn fn, void *ctx, char *err, size_t errlen);

/* Parses a time for --since/--until: seconds since the epoch, or UTC
 * "YYYY-MM-DD", "YYYY-MM-DDTHH:MM:SS" with an optional "Z". */
int estate_parse_time(const char *s, int64_t *us);
/* Microseconds since the epoch as "YYYY-MM-DDTHH:MM:SS.uuuuuuZ". */
void estate_format_time(int64_t us, char out[32]);

#endif
