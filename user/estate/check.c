/* SPDX-License-Identifier: Apache-2.0 */
/* A stored session re-derived, see check.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jcs/jcs.h"
#include "trace/level.h"
#include "trace/logverify.h"
#include "trace/record.h"
#include "estate/check.h"
#include "estate/entry.h"
#include "estate/lineage.h"

#define PAGE_ROWS 10000

/* The stored row's columns, in the order of row_sql. */
enum { C_SESSION, C_SIGNER, C_HOSTNAME, C_MACHINE_ID, C_PLATFORM, C_TRACE_LEVEL, C_LEVEL,
       C_COMPLETE, C_DECISIONS, C_DENIALS, C_RECORD, C_BUNDLE, C_APPRAISAL, C_LOG_ORIGIN,
       C_MODE, C_COUNT };
static const char row_sql[] =
	"SELECT r.session, r.signer, r.hostname, r.machine_id, r.platform, r.trace_level, r.level,"
	" r.complete, r.decisions, r.denials, r.record_json, p.bundle, r.appraisal, r.log_origin,"
	" r.enforcement_mode FROM records r LEFT JOIN policies p ON p.bundle_hash = r.bundle_hash"
	" WHERE r.id = $1";

struct stored {
	bool found;
	char *col[C_COUNT];
};

static int take_row(void *ctx, int ncols, const char *const *cols, const char *const *names)
{
	struct stored *s = ctx;

	(void)names;
	if (ncols < C_COUNT)
		return 1;
	s->found = true;
	for (int i = 0; i < C_COUNT; i++)
		s->col[i] = strdup(cols[i] ? cols[i] : "");
	return 1;
}

static int fail(struct estate_check *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->ok)
		return 1; /* the first reason stays */
	c->ok = false;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	return 1;
}

/* The entries, fed back through the log check, each row's columns against
 * its own text. */
struct feeder {
	struct estate_check *c;
	struct kw_log_check *lc;
	int64_t next_line;
	uint64_t rows;
	int failed;
	char hostname[512], machine_id[512];
	struct estate_lineage *lineage; /* the procs rows the entries derive, as at ingest */
};

static bool same(const char *col, const char *want)
{
	return !strcmp(col ? col : "", want ? want : "");
}

static void check_columns(struct feeder *fd, int64_t line, const char *const *cols)
{
	struct estate_entry e;
	char enforced[4];

	if (estate_entry_parse(&e, (uint64_t)line, cols[1], strlen(cols[1])))
		return; /* not an object: the log check judges it */
	snprintf(enforced, sizeof(enforced), "%d", e.enforced);
	if (!same(cols[2], e.tool) || !same(cols[3], e.decision) ||
	    (e.has_enforced && !same(cols[4], enforced)) || (!e.has_enforced && cols[4]))
		fail(fd->c, "entry %" PRId64 ": its tool, decision or enforced column differs from "
			    "its canonical text", line);
	if (line == 1 && e.parsed && !strcmp(e.tool, "kwitness.open")) {
		const char *h = json_string_value(json_object_get(e.parsed, "hostname"));
		const char *m = json_string_value(json_object_get(e.parsed, "machine_id"));

		snprintf(fd->hostname, sizeof(fd->hostname), "%s", h ? h : "");
		snprintf(fd->machine_id, sizeof(fd->machine_id), "%s", m ? m : "");
	}
	if (estate_lineage_note(&fd->lineage, &e))
		fd->failed = -ENOMEM;
	estate_entry_clear(&e);
}

static int feed_row(void *ctx, int ncols, const char *const *cols, const char *const *names)
{
	struct feeder *fd = ctx;
	int64_t line;

	(void)names;
	if (ncols < 5 || !cols[0] || !cols[1])
		return 1;
	line = strtoll(cols[0], NULL, 10);
	fd->rows++;
	if (line != fd->next_line)
		fail(fd->c, "entries: line %" PRId64 " follows line %" PRId64 " (a line was removed "
			    "or added)", line, fd->next_line - 1);
	fd->next_line = line + 1;
	check_columns(fd, line, cols);
	if (fd->failed || kw_log_check_feed(fd->lc, cols[1], strlen(cols[1])) || kw_log_check_feed(fd->lc, "\n", 1)) {
		fd->failed = -ENOMEM;
		return 1;
	}
	return 0;
}

static int feed_entries(struct estate_db *db, int64_t id, struct feeder *fd)
{
	for (;;) {
		struct estate_val p[2] = { EV_I(id), EV_I(fd->next_line - 1) };
		uint64_t before = fd->rows;

		if (estate_query(db,
				 "SELECT line, entry, tool, decision, enforced FROM entries"
				 " WHERE record_id = $1 AND line > $2 ORDER BY line LIMIT 10000",
				 p, 2, feed_row, fd))
			return -EIO;
		if (fd->failed)
			return fd->failed;
		if (fd->rows - before < PAGE_ROWS)
			return kw_log_check_end(fd->lc);
	}
}

/* The stored level may claim no more than the signed record and the stored
 * appraisal and log columns allow. */
static void check_level(struct estate_check *c, const struct stored *s, const json_t *rec)
{
	int lvl = kw_level_parse(s->col[C_TRACE_LEVEL]);
	const char *platform = json_string_value(json_object_get(json_object_get(rec, "runtime"), "platform"));
	bool tpm = lvl == KW_LEVEL_1 || lvl == KW_LEVEL_2;
	bool logged = lvl == KW_LEVEL_0_LOGGED || lvl == KW_LEVEL_2;

	if (lvl < 0 || kw_level_number(lvl) != atoi(s->col[C_LEVEL]))
		fail(c, "the stored level (%.40s, %.10s) is not a level", s->col[C_TRACE_LEVEL],
		     s->col[C_LEVEL]);
	else if (tpm && (!platform || strcmp(platform, "tpm2") || s->col[C_APPRAISAL][0]))
		fail(c, "the stored level %s needs a tpm2 record whose appraisal held; this record's "
			"platform is %.40s", s->col[C_TRACE_LEVEL], platform ? platform : "(none)");
	else if (logged && (!json_object_get(rec, "transparency") || !s->col[C_LOG_ORIGIN][0]))
		fail(c, "the stored level %s needs a record that names a transparency log and a "
			"stored proof of it", s->col[C_TRACE_LEVEL]);
}

/* The columns ingest derived, against this derivation. */
static void check_stored(struct estate_check *c, const struct stored *s, const struct feeder *fd,
			 const struct estate_trust *trust, const json_t *rec)
{
	const struct kw_log_check *lc = fd->lc;
	const char *mode = json_string_value(json_object_get(json_object_get(rec, "policy"),
							     "enforcement_mode"));
	char n[3][24];

	snprintf(n[0], sizeof(n[0]), "%" PRIu64, lc->decisions);
	snprintf(n[1], sizeof(n[1]), "%" PRIu64, lc->denials);
	snprintf(n[2], sizeof(n[2]), "%d", lc->complete);
	if (strcmp(n[0], s->col[C_DECISIONS]) || strcmp(n[1], s->col[C_DENIALS]) ||
	    strcmp(n[2], s->col[C_COMPLETE]))
		fail(c, "the stored counts (%.20s decisions, %.20s denials, complete %.4s) are not the "
			"entries' (%s, %s, %s)", s->col[C_DECISIONS], s->col[C_DENIALS],
		     s->col[C_COMPLETE], n[0], n[1], n[2]);
	if (strcmp(fd->hostname, s->col[C_HOSTNAME]) || strcmp(fd->machine_id, s->col[C_MACHINE_ID]))
		fail(c, "the stored host (%.100s, %.100s) is not the one the log names (%.100s, %.100s)",
		     s->col[C_HOSTNAME], s->col[C_MACHINE_ID], fd->hostname, fd->machine_id);
	if (!same(s->col[C_MODE], mode))
		fail(c, "the stored enforcement mode %.40s is not the record's", s->col[C_MODE]);
	if (!estate_trust_allows_host(trust, s->col[C_SIGNER], fd->hostname, fd->machine_id))
		fail(c, "host_mismatch: the signer is not trusted to sign for host %.100s",
		     fd->hostname);
	check_level(c, s, rec);
}

/* The record under its key, its entries and policy: rec on success. */
static int derive(const struct stored *s, const struct estate_trust *trust, struct feeder *fd,
		  struct estate_db *db, int64_t id, char *err, size_t errlen)
{
	struct estate_check *c = fd->c;
	char tp[KW_THUMBPRINT_MAX] = "";
	struct kw_verify_opts o = { .now = time(NULL), .skew = INT64_MAX / 4, .call_count = -1 };
	struct kw_verify_result res;
	json_t *whole, *rec = NULL;
	char why[sizeof(c->why)];
	int rc, ret = 0;

	whole = jcs_parse(s->col[C_RECORD], strlen(s->col[C_RECORD]), NULL);
	if (!json_is_object(whole) ||
	    kw_jwk_thumbprint(json_object_get(json_object_get(whole, "cnf"), "jwk"), tp))
		tp[0] = '\0';
	json_decref(whole);
	if (strcmp(tp, s->col[C_SIGNER])) {
		fail(c, "the stored signer %.60s is not the key the record names (%s)",
		     s->col[C_SIGNER], tp[0] ? tp : "none");
		return 0;
	}
	o.trusted = estate_trust_find(trust, tp);
	rc = kw_record_verify_signed(s->col[C_RECORD], strlen(s->col[C_RECORD]), &o, &res, &rec);
	if (rc) {
		fail(c, "%s: %s", kw_verify_reason_code(res.reason), res.message);
		return rc < 0 ? -1 : 0;
	}
	fd->lc->expect_session = s->col[C_SESSION];
	rc = feed_entries(db, id, fd);
	if (rc) {
		snprintf(err, errlen, "the entries cannot be read: %s", rc == -EIO ? db->err : strerror(-rc));
		ret = -1;
		goto out;
	}
	o.log = fd->lc;
	o.allow_incomplete = true;
	o.bundle = s->col[C_BUNDLE];
	o.bundle_len = strlen(s->col[C_BUNDLE]);
	if (kw_record_verify_evidence(rec, &o, &res))
		fail(c, "%s: %s", kw_verify_reason_code(res.reason), res.message);
	check_stored(c, s, fd, trust, rec);
	rc = estate_lineage_check(db, id, fd->lineage, why, sizeof(why));
	if (rc < 0) {
		snprintf(err, errlen, "the procs rows cannot be read: %s", db->err);
		ret = -1;
	} else if (rc) {
		fail(c, "%s", why);
	}
out:
	json_decref(rec);
	return ret;
}

int estate_check_record(struct estate_db *db, const struct estate_trust *trust, int64_t id,
			struct estate_check *c, char *err, size_t errlen)
{
	struct estate_val p[1] = { EV_I(id) };
	struct stored s = { .found = false };
	struct kw_log_check lc = { 0 };
	struct feeder fd = { .c = c, .lc = &lc, .next_line = 1 };
	int ret = -1;

	c->ok = true;
	c->why[0] = '\0';
	if (estate_query(db, row_sql, p, 1, take_row, &s)) {
		snprintf(err, errlen, "database: %s", db->err);
		goto out;
	}
	if (!s.found) {
		snprintf(err, errlen, "no stored record %" PRId64, id);
		goto out;
	}
	for (int i = 0; i < C_COUNT; i++)
		if (!s.col[i]) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
	if (kw_log_check_init(&lc)) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	ret = derive(&s, trust, &fd, db, id, err, errlen);
	kw_log_check_free(&lc);
	estate_lineage_free(fd.lineage);
out:
	for (int i = 0; i < C_COUNT; i++)
		free(s.col[i]);
	return ret;
}

struct ids {
	int64_t *v;
	size_t n, cap;
	char **sessions;
};

static int take_id(void *ctx, int ncols, const char *const *cols, const char *const *names)
{
	struct ids *ids = ctx;

	(void)names;
	if (ncols < 2 || !cols[0])
		return 1;
	if (ids->n == ids->cap) {
		size_t cap = ids->cap ? ids->cap * 2 : 64;
		int64_t *v = realloc(ids->v, cap * sizeof(*v));
		char **s = v ? realloc(ids->sessions, cap * sizeof(*s)) : NULL;

		if (v)
			ids->v = v;
		if (!s)
			return 1;
		ids->sessions = s;
		ids->cap = cap;
	}
	ids->sessions[ids->n] = strdup(cols[1] ? cols[1] : "");
	ids->v[ids->n++] = strtoll(cols[0], NULL, 10);
	return 0;
}

int estate_verify_all(struct estate_db *db, const struct estate_trust *trust,
		      struct estate_verify_run *run, char *err, size_t errlen)
{
	struct ids ids = { 0 };
	int ret = -1;

	if (estate_query(db, "SELECT id, session FROM records ORDER BY id", NULL, 0, take_id, &ids)) {
		snprintf(err, errlen, "database: %s", db->err);
		goto out;
	}
	for (size_t i = 0; i < ids.n; i++) {
		struct estate_check c;
		struct estate_val p[4];

		if (estate_check_record(db, trust, ids.v[i], &c, err, errlen))
			goto out;
		p[0] = EV_I(ids.v[i]);
		p[1] = EV_I(c.ok);
		p[2] = EV_S(c.why);
		p[3] = EV_I(time(NULL));
		if (estate_query(db,
				 "INSERT INTO record_checks (record_id, ok, why, checked_at)"
				 " VALUES ($1, $2, $3, $4) ON CONFLICT (record_id) DO UPDATE SET"
				 " ok = excluded.ok, why = excluded.why, checked_at = excluded.checked_at",
				 p, 4, NULL, NULL)) {
			snprintf(err, errlen, "database: cannot store a check: %s", db->err);
			goto out;
		}
		run->checked++;
		run->tampered += !c.ok;
		if (run->each)
			run->each(run->ctx, ids.v[i], ids.sessions[i] ? ids.sessions[i] : "", &c);
	}
	ret = 0;
out:
	for (size_t i = 0; i < ids.n; i++)
		free(ids.sessions[i]);
	free(ids.sessions);
	free(ids.v);
	return ret;
}
