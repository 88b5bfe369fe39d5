/* SPDX-License-Identifier: Apache-2.0 */
/* What a session did, read from its decision log entry by entry while the
 * verifier checks it (verify_request.on_entry): the programs run with the
 * digests the kernel computed, the destinations reached, the names
 * resolved, the denials, and the open entry's settings. Every list is
 * bounded; past a bound the summary says it was cut. */
#ifndef KWITNESS_ATTEST_SUMMARY_H
#define KWITNESS_ATTEST_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* Distinct executables, destinations and names kept; denials listed. */
#define ATTEST_MAX_ITEMS 4096
#define ATTEST_MAX_DENIALS 1024

struct attest_summary {
	json_t *open;          /* the kwitness.open entry (NULL until read) */
	json_t *close;         /* the kwitness.close entry */
	json_t *executables;   /* [{path, digest | digest_unavailable}] in log order */
	json_t *network;       /* [{host, port, proto[, via]}] */
	json_t *dns_names;     /* [name] permitted */
	json_t *denials;       /* [{seq, tool, rule, enforced, object members}] */
	json_t *seen;          /* keys of what the lists hold, for de-duplication */
	uint64_t n_denials;
	bool truncated;        /* a list reached its bound */
	bool exec_undigested;  /* a permitted exec the kernel gave no digest for */
	int error;             /* -ENOMEM / -EBADMSG from an entry: stops the check */
};

int attest_summary_init(struct attest_summary *s);
void attest_summary_free(struct attest_summary *s);
/* The on_entry callback: ctx is the summary. 0, or -errno to stop. */
int attest_summary_entry(void *ctx, const char *line, size_t len);

#endif
