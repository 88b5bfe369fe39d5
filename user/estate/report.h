/* SPDX-License-Identifier: Apache-2.0 */
/* The auditor's report of one session: the verification result with every
 * hash re-derived beside the record's, the completeness, the policy, a
 * timeline of the decisions (inline SVG), the denials, per-tool counts and
 * the processes involved. One self-contained HTML page (no script, no
 * fetch: a Content-Security-Policy of default-src 'none'), or the same as
 * text. Every string that came from the log or the record is escaped: the
 * sandbox chose some of them. */
#ifndef KWITNESS_ESTATE_REPORT_H
#define KWITNESS_ESTATE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/key.h"
#include "trace/logverify.h"
#include "trace/record.h"

/* Bounds: a report of a million decisions stays a page. */
#define REPORT_MARKS_MAX 10000  /* timeline marks */
#define REPORT_DENIALS_MAX 1000 /* denials listed */
#define REPORT_TOOLS_MAX 64     /* tools counted by name; the rest as "other" */
#define REPORT_PROCS_MAX 256    /* distinct (pid, comm) listed */
#define REPORT_TEXT_MAX 512     /* a string kept from an entry */

/* The level the estate database stored for the record at ingest (its TPM
 * appraisal and transparency-log proof are not checked again here). */
struct report_level {
	const char *name;            /* kw_level_name: "Level 0, logged"... */
	const char *appraisal;       /* why not Level 1 ('' when it is, or no TPM) */
	const char *transparency;    /* why not logged ('' when logged or no URL) */
	const char *log_origin;      /* '' when not logged */
	int64_t log_index, checkpoint_size; /* -1 when not logged */
	const char *checkpoint_root, *checkpoint;
};

/* Where the session comes from. */
struct report_source {
	const char *record_text;     /* the record file's bytes */
	size_t record_len;
	const void *bundle;          /* the policy bundle, or NULL */
	size_t bundle_len;
	const struct kw_key *key;    /* trusted key; NULL: the record's own cnf.jwk */
	int log_fd;                  /* the decision log, or -1 and feed */
	const char *log_path;        /* its path (its segments beside it), or NULL */
	/* Instead of log_fd: gives the log's bytes to kw_log_check_feed. */
	int (*feed)(void *ctx, struct kw_log_check *lc);
	void *feed_ctx;
	const char *record_name, *log_name, *policy_name; /* shown as given */
	int64_t now;
	int64_t skew;
	const struct report_level *level; /* NULL: not judged (files) */
};

struct report;

/* Verifies the session and gathers what the page shows. NULL with err on
 * an internal failure (memory, an unreadable record is a verdict). */
struct report *report_build(const struct report_source *src, char *err, size_t errlen);
void report_free(struct report *r);
/* True when the record verified (complete or not). */
bool report_valid(const struct report *r);
int report_write_html(const struct report *r, FILE *f);
int report_write_text(const struct report *r, FILE *f);

#endif
