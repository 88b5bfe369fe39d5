/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness estate report: the report page of a stored session, built from
 * the database alone. The stored entries are fed back through the same log
 * check as a file would be (a page of rows at a time), so the page derives
 * the transcript hash again from what the database holds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jcs/jcs.h"
#include "estate/check.h"
#include "estate/gaps.h"
#include "estate/report_db.h"
#include "estate/report_internal.h"

#define PAGE_ROWS 10000

struct stored {
	int64_t id;
	char *record, *path, *bundle_hash;
	/* the level stored at ingest */
	char *text[6]; /* trace_level, appraisal, transparency, log_origin, root, checkpoint */
	int64_t log_index, checkpoint_size;
};

static int take_record(void *ctx, int ncols, const char *const *cols, const char *const *names)
{
	struct stored *s = ctx;

	(void)names;
	if (ncols < 12 || !cols[0] || !cols[1])
		return 1;
	s->id = strtoll(cols[0], NULL, 10);
	s->record = strdup(cols[1]);
	s->path = strdup(cols[2] ? cols[2] : "");
	s->bundle_hash = strdup(cols[3] ? cols[3] : "");
	for (int i = 0; i < 6; i++)
		s->text[i] = strdup(cols[4 + i] ? cols[4 + i] : "");
	s->log_index = cols[10] ? strtoll(cols[10], NULL, 10) : -1;
	s->checkpoint_size = cols[11] ? strtoll(cols[11], NULL, 10) : -1;
	return 1;
}

static int take_text(void *ctx, int ncols, const char *const *cols, const char *const *names)
{
	(void)names;
	if (ncols > 0 && cols[0])
		*(char **)ctx = strdup(cols[0]);
	return 1;
}

struct feeder {
	struct estate_db *db;
	int64_t id, last_line;
	uint64_t rows;
	int failed;
	struct kw_log_check *lc;
};

static int feed_row(void *ctx, int ncols, const char *const *cols, const char *const *names)
{
	struct feeder *fd = ctx;

	(void)names;
	if (ncols < 2 || !cols[0] || !cols[1])
		return 1;
	fd->last_line = strtoll(cols[0], NULL, 10);
	fd->rows++;
	if (kw_log_check_feed(fd->lc, cols[1], strlen(cols[1])) || kw_log_check_feed(fd->lc, "\n", 1)) {
		fd->failed = -ENOMEM;
		return 1;
	}
	return 0;
}

static int feed_entries(void *ctx, struct kw_log_check *lc)
{
	struct feeder *fd = ctx;

	fd->lc = lc;
	for (;;) {
		struct estate_val p[2] = { EV_I(fd->id), EV_I(fd->last_line) };
		uint64_t before = fd->rows;

		if (estate_query(fd->db,
				 "SELECT line, entry FROM entries WHERE record_id = $1 AND line > $2"
				 " ORDER BY line LIMIT 10000", p, 2, feed_row, fd))
			return -EIO;
		if (fd->failed)
			return fd->failed;
		if (fd->rows - before < PAGE_ROWS)
			return 0;
	}
}

struct signers {
	char text[600];
	int n;
};

static int take_signer(void *ctx, int ncols, const char *const *cols, const char *const *names)
{
	struct signers *s = ctx;
	size_t len = strlen(s->text);

	(void)names;
	if (ncols < 3)
		return 1;
	if (s->n++ < 4)
		snprintf(s->text + len, sizeof(s->text) - len, "%s%.60s (host %.60s, record %.20s)",
			 len ? "; " : "", cols[0] ? cols[0] : "", cols[1] ? cols[1] : "",
			 cols[2] ? cols[2] : "");
	return 0;
}

/* A session id held under more than one signer names no one session: the
 * page is refused, with the signers listed. 0 when it is not ambiguous. */
static int ambiguous(struct estate_db *db, const char *session, char *err, size_t errlen)
{
	struct estate_val p[1] = { EV_S(session) };
	struct signers s = { .n = 0 };

	if (estate_query(db,
			 "SELECT signer, min(hostname), min(id) FROM records WHERE session = $1"
			 " GROUP BY signer ORDER BY min(id)", p, 1, take_signer, &s)) {
		snprintf(err, errlen, "database: %s", db->err);
		return -1;
	}
	if (s.n < 2)
		return 0;
	snprintf(err, errlen, "session %.64s is ambiguous: the estate holds it under %d signers: "
		 "%s; no report is made (session_conflict)", session, s.n, s.text);
	return -1;
}

/* A hole in the host's TPM counter right before this session. */
static int counter_gap(struct estate_db *db, const char *session, struct report *r, char *err,
		       size_t errlen)
{
	struct estate_counted before;
	uint64_t missing;

	if (estate_gap_before(db, session, &missing, &before, err, errlen))
		return -1;
	if (missing)
		snprintf(r->counter_gap, sizeof(r->counter_gap),
			 "%llu session%s missing before this one: the host's previous stored session %s took TPM counter value %llu",
			 (unsigned long long)missing, missing == 1 ? "" : "s", before.session,
			 (unsigned long long)before.counter);
	return 0;
}

struct report *estate_report_session(struct estate_db *db, const struct estate_trust *trust,
				     const char *session, char *err, size_t errlen)
{
	struct stored s = { .id = -1 };
	struct estate_val p[1] = { EV_S(session) };
	struct feeder fd = { .db = db };
	struct report_source src = { .log_fd = -1, .now = time(NULL), .skew = 300 };
	char tp[KW_THUMBPRINT_MAX] = "", log_name[200];
	char *bundle = NULL;
	struct report *r = NULL;
	struct report_level level;
	json_t *rec;

	if (ambiguous(db, session, err, errlen))
		goto out;
	if (estate_query(db,
			 "SELECT id, record_json, record_path, bundle_hash, trace_level, appraisal,"
			 " transparency, log_origin, checkpoint_root, checkpoint, log_index,"
			 " checkpoint_size FROM records WHERE session = $1"
			 " ORDER BY id DESC LIMIT 1", p, 1, take_record, &s)) {
		snprintf(err, errlen, "database: %s", db->err);
		goto out;
	}
	if (s.id >= 0 && (!s.text[0] || !s.text[1] || !s.text[2] || !s.text[3] || !s.text[4] ||
			  !s.text[5])) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (s.id < 0 || !s.record || !s.path || !s.bundle_hash) {
		snprintf(err, errlen, "no stored record of session %s", session);
		goto out;
	}
	p[0] = EV_S(s.bundle_hash);
	if (estate_query(db, "SELECT bundle FROM policies WHERE bundle_hash = $1", p, 1, take_text,
			 &bundle)) {
		snprintf(err, errlen, "database: %s", db->err);
		goto out;
	}
	/* The key the record names, if the trust folder holds it. */
	rec = jcs_parse(s.record, strlen(s.record), NULL);
	if (kw_jwk_thumbprint(json_object_get(json_object_get(rec, "cnf"), "jwk"), tp))
		tp[0] = '\0';
	json_decref(rec);
	src.key = estate_trust_find(trust, tp);
	if (!src.key) {
		snprintf(err, errlen, "the record's signer %s is not in the trust folder", tp[0] ? tp : "(none)");
		goto out;
	}
	fd.id = s.id;
	snprintf(log_name, sizeof(log_name), "the database's entries of record %lld", (long long)s.id);
	src.record_text = s.record;
	src.record_len = strlen(s.record);
	src.bundle = bundle;
	src.bundle_len = bundle ? strlen(bundle) : 0;
	src.feed = feed_entries;
	src.feed_ctx = &fd;
	src.record_name = s.path;
	src.log_name = log_name;
	src.policy_name = "the database's policies table";
	level = (struct report_level){ .name = s.text[0], .appraisal = s.text[1],
				       .transparency = s.text[2], .log_origin = s.text[3],
				       .checkpoint_root = s.text[4], .checkpoint = s.text[5],
				       .log_index = s.log_index, .checkpoint_size = s.checkpoint_size };
	src.level = &level;
	r = report_build(&src, err, errlen);
	if (r) {
		/* The stored row re-derived as estate verify does: a row changed
		 * after ingest is shown tampered, never at its stored level. */
		struct estate_check c;

		if (estate_check_record(db, trust, s.id, &c, err, errlen)) {
			report_free(r);
			r = NULL;
		} else if (!c.ok) {
			snprintf(r->tampered, sizeof(r->tampered), "%s", c.why);
		}
	}
	if (r && counter_gap(db, session, r, err, errlen)) {
		report_free(r);
		r = NULL;
	}
out:
	free(s.record);
	free(s.path);
	free(s.bundle_hash);
	for (int i = 0; i < 6; i++)
		free(s.text[i]);
	free(bundle);
	return r;
}
