/* SPDX-License-Identifier: Apache-2.0 */
/* What a session report holds, shared by the builder (report.c) and its
 * writers (report.c: text, report_html.c: the page). Not an API. */
#ifndef KWITNESS_ESTATE_REPORT_INTERNAL_H
#define KWITNESS_ESTATE_REPORT_INTERNAL_H

#include "estate/report.h"

struct mark {
	int64_t ts;
	uint16_t tool;
	bool deny, unenforced;
	char object[128];
};

struct denial {
	int64_t ts, pid;
	uint16_t tool;
	bool unenforced;
	char object[REPORT_TEXT_MAX], rule[128], comm[64];
};

struct tool_count {
	char name[64];
	uint64_t permit, deny, unenforced;
};

struct proc {
	int64_t pid;
	char comm[64];
	uint64_t decisions;
};

struct hash_row {
	const char *what;
	char recorded[200], derived[200];
	int match; /* 1, 0, or -1 when not derived */
};

struct report {
	/* the verdict */
	struct kw_verify_result res;
	bool signed_ok, evidence_ok;
	char key_source[160];
	struct hash_row rows[6];
	int nrows;
	/* the record */
	char subject[REPORT_TEXT_MAX], mode[64], platform[64], record_name[REPORT_TEXT_MAX],
		log_name[REPORT_TEXT_MAX], policy_name[REPORT_TEXT_MAX];
	char model_provider[REPORT_TEXT_MAX], model_id[REPORT_TEXT_MAX], data_class[REPORT_TEXT_MAX];
	int64_t iat;
	/* the log */
	struct kw_log_check lc;
	bool log_read;
	char session[REPORT_TEXT_MAX], hostname[REPORT_TEXT_MAX], machine_id[REPORT_TEXT_MAX],
		kernel[REPORT_TEXT_MAX];
	int64_t opened_us, closed_us, tmin, tmax;
	char log_mode[64];           /* the open entry's mode */
	uint64_t decisions, unenforced; /* unenforced: denials that stopped nothing */
	struct mark *marks;
	size_t nmarks;
	struct denial *denials;
	size_t ndenials;
	struct tool_count tools[REPORT_TOOLS_MAX + 1]; /* the last: every other tool */
	size_t ntools;
	struct proc procs[REPORT_PROCS_MAX];
	size_t nprocs;
	bool procs_more;
	struct kw_lineage *lineage; /* the process tree of the log's proc entries */
	char *policy; /* pretty-printed, or the bundle as text */
	/* the stored level (estate report) */
	bool has_level;
	char level[32], appraisal[400], transparency[600], log_origin[256], checkpoint_root[64];
	int64_t log_index, checkpoint_size;
	char *checkpoint;
	/* Why the estate's re-derivation of the stored session failed ('' when
	 * it held or was not made): the page then shows it as tampered. */
	char tampered[600];
	/* Sessions missing right before this one in its host's TPM counter
	 * sequence (estate/gaps.h); "" when none. */
	char counter_gap[300];
};

/* Whether a denial stopped what it names: the entry's enforced member, or
 * when it has none, the session's enforcement mode. */
bool report_enforced(const struct report *r, bool has_enforced, bool enforced);
/* The reason code of the verdict. */
const char *report_verdict_code(const struct report *r);
/* Which step of the verification a reason belongs to, in words. */
const char *report_failed_step(const struct report *r);
/* The log's completeness in one sentence. */
void report_completeness(const struct report *r, char *out, size_t n);
/* A time as text, "-" when unknown. */
void report_time_text(int64_t us, char out[32]);

#endif
