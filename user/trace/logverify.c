/* SPDX-License-Identifier: Apache-2.0 */
/* Streaming decision log check, see logverify.h.
 *
 * Lines are checked where they lie in the read buffer: the canonicaliser
 * writes each line's RFC 8785 form to a scratch buffer, which must equal the
 * line byte for byte, and no tree is built. A canonical line's members are
 * then found by a plain scan (the line is known to be valid JSON). Once a
 * buffer's complete lines are checked, their newlines become commas and the
 * whole run goes into the transcript hash in one update. The framing is
 * written out here rather than taken from the collector's transcript code,
 * so that the two derive the hash independently. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jcs/jcs.h"
#include "trace/logverify.h"
#include "trace/logsegment.h"
#include "jcs/jcs_internal.h"

#define BUF_CAP (KW_LOG_LINE_MAX + KW_LOG_READ_CHUNK)

struct span {
	const char *p;
	size_t n;
};

/* What one entry says, as canonical JSON value texts. */
struct entry {
	struct span tool, seq, decision, session, complete, decisions, denials, dropped, next_seq,
		seq_gaps, sealed, sandbox_id, bundle_hash, image_digest, mode, evidence, machine_id,
		kill_failed, tpm_counter;
};

static void set_problem(struct kw_log_check *c, enum kw_verify_reason r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_problem(struct kw_log_check *c, enum kw_verify_reason r, const char *fmt, ...)
{
	va_list ap;

	if (c->problem != KW_VERIFY_OK)
		return;
	c->problem = r;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
}

static void set_inconsistent(struct kw_log_check *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_inconsistent(struct kw_log_check *c, const char *fmt, ...)
{
	va_list ap;

	if (c->inconsistent)
		return;
	c->inconsistent = true;
	va_start(ap, fmt);
	vsnprintf(c->inconsistent_why, sizeof(c->inconsistent_why), fmt, ap);
	va_end(ap);
}

int kw_log_check_init(struct kw_log_check *c)
{
	const char *expect = c->expect_session, *seg_log = c->seg_log;
	int seg_dirfd = c->seg_dirfd;
	void (*progress)(void *, uint64_t) = c->progress;
	void *ctx = c->progress_ctx;
	int (*on_entry)(void *, const char *, size_t) = c->on_entry;
	void *entry_ctx = c->entry_ctx;
	int e;

	memset(c, 0, sizeof(*c));
	c->expect_session = expect;
	c->progress = progress;
	c->progress_ctx = ctx;
	c->on_entry = on_entry;
	c->entry_ctx = entry_ctx;
	c->seg_dirfd = seg_dirfd;
	c->seg_log = seg_log;
	c->t_decisions = c->t_denials = c->t_dropped = c->t_next_seq = c->t_seq_gaps = -1;
	c->t_kill_failed = -1; /* absent in trailers before kill_failed */
	c->buf = malloc(BUF_CAP + 1);
	if (!c->buf)
		return -ENOMEM;
	e = kw_digest_init(&c->digest, KW_SHA256);
	if (!e)
		e = kw_digest_update(&c->digest, "[", 1);
	if (e) {
		kw_digest_free(&c->digest);
		free(c->buf);
		c->buf = NULL;
		return e;
	}
	c->digest_live = true;
	return 0;
}

void kw_log_check_free(struct kw_log_check *c)
{
	if (c->digest_live)
		kw_digest_free(&c->digest);
	c->digest_live = false;
	free(c->buf);
	c->buf = NULL;
	kw_buf_free(&c->canon);
	jcs_scratch_free(&c->scratch);
}

/* p is just past an opening quote; returns the closing quote (or end). */
static const char *skip_string(const char *p, const char *end)
{
	const unsigned char *q = (const unsigned char *)p, *e = (const unsigned char *)end;

	for (;;) {
		q = jcs_scan_plain(q, e);
		if (q >= e)
			return end;
		if (*q == '"')
			return (const char *)q;
		q += *q == '\\' ? 2 : 1;
	}
}

static const char *skip_value(const char *p, const char *end)
{
	int depth = 0;

	if (p < end && *p == '"') {
		p = skip_string(p + 1, end);
		return p < end ? p + 1 : end;
	}
	if (p < end && (*p == '{' || *p == '[')) {
		while (p < end) {
			char ch = *p;

			if (ch == '"') {
				p = skip_string(p + 1, end);
				p += p < end;
				continue;
			}
			if (ch == '{' || ch == '[')
				depth++;
			else if ((ch == '}' || ch == ']') && --depth == 0)
				return p + 1;
			p++;
		}
		return end;
	}
	while (p < end && *p != ',' && *p != '}' && *p != ']')
		p++;
	return p;
}

/* The member named k (n bytes) of interest, or NULL. Constant-size
 * compares, which the compiler turns into a load or two. */
static struct span *wanted(struct entry *e, const char *k, size_t n)
{
#define IS(name) (!memcmp(k, name, sizeof(name) - 1))
	switch (n) {
	case 3: return IS("seq") ? &e->seq : NULL;
	case 4: return IS("tool") ? &e->tool : IS("mode") ? &e->mode : NULL;
	case 6: return IS("sealed") ? &e->sealed : NULL;
	case 7: return IS("session") ? &e->session : IS("denials") ? &e->denials
			: IS("dropped") ? &e->dropped : NULL;
	case 8: return IS("decision") ? &e->decision : IS("complete") ? &e->complete
			: IS("next_seq") ? &e->next_seq : IS("seq_gaps") ? &e->seq_gaps
			: IS("evidence") ? &e->evidence : NULL;
	case 9: return IS("decisions") ? &e->decisions : NULL;
	case 10: return IS("sandbox_id") ? &e->sandbox_id : IS("machine_id") ? &e->machine_id : NULL;
	case 11: return IS("bundle_hash") ? &e->bundle_hash
			: IS("kill_failed") ? &e->kill_failed
			: IS("tpm_counter") ? &e->tpm_counter : NULL;
	case 12: return IS("image_digest") ? &e->image_digest : NULL;
	default: return NULL;
	}
#undef IS
}

void kw_log_members(const char *p, size_t n, kw_log_member_fn fn, void *ctx)
{
	const char *end = p + n, *k, *ke, *v;

	if (!n || *p != '{')
		return;
	p++;
	while (p < end && *p == '"') {
		k = p + 1;
		ke = skip_string(k, end);
		if (ke >= end)
			return;
		p = ke + 2; /* '"' ':' */
		if (p > end)
			return;
		v = p;
		p = skip_value(p, end);
		fn(ctx, k, (size_t)(ke - k), v, (size_t)(p - v));
		if (p < end && *p == ',')
			p++;
		else
			return;
	}
}

static void entry_member(void *ctx, const char *k, size_t kn, const char *v, size_t vn)
{
	struct span *s = wanted(ctx, k, kn);

	if (s) {
		s->p = v;
		s->n = vn;
	}
}

/* Finds the members of interest of a canonical object text. */
static void scan_entry(const char *p, size_t n, struct entry *e)
{
	memset(e, 0, sizeof(*e));
	kw_log_members(p, n, entry_member, e);
}

static bool span_is(struct span v, const char *lit)
{
	size_t n = strlen(lit);

	return v.p && v.n == n && !memcmp(v.p, lit, n);
}

/* A canonical integer literal (at most 2^53 - 1 by the parser's rules). */
static bool span_int(struct span v, int64_t *out)
{
	size_t i = 0;
	bool neg = false;
	uint64_t x = 0;

	if (!v.p)
		return false;
	if (v.n && v.p[0] == '-') {
		neg = true;
		i = 1;
	}
	if (i >= v.n || v.n - i > 16)
		return false;
	for (; i < v.n; i++) {
		if (v.p[i] < '0' || v.p[i] > '9')
			return false;
		x = x * 10 + (uint64_t)(v.p[i] - '0');
	}
	*out = neg ? -(int64_t)x : (int64_t)x;
	return true;
}

static void trailer_int(struct span v, int64_t *out)
{
	int64_t x;

	*out = span_int(v, &x) && x >= 0 ? x : -1;
}

static void keep_field(struct kw_log_field *f, struct span v)
{
	if (!v.p)
		return;
	if (v.n > sizeof(f->text)) {
		f->too_long = true;
		return;
	}
	memcpy(f->text, v.p, v.n);
	f->len = v.n;
}

bool kw_log_field_equals(const struct kw_log_field *f, const char *value)
{
	struct kw_buf b = { 0 };
	bool same;

	if (!f->len || f->too_long || !value)
		return false;
	if (jcs_write_string(&b, value, strlen(value))) {
		kw_buf_free(&b);
		return false;
	}
	same = b.len == f->len && !memcmp(b.data, f->text, f->len);
	kw_buf_free(&b);
	return same;
}

void kw_log_field_string(const struct kw_log_field *f, char *out, size_t outlen)
{
	out[0] = '\0';
	if (f->too_long || f->len < 2 || f->text[0] != '"' || f->text[f->len - 1] != '"' ||
	    f->len - 2 >= outlen || memchr(f->text, '\\', f->len))
		return;
	memcpy(out, f->text + 1, f->len - 2);
	out[f->len - 2] = '\0';
}

/* Gaps are kept sorted and apart; the last one is the newest. */
static void add_gap(struct kw_log_check *c, uint64_t lo, uint64_t hi)
{
	if (c->n_gaps == KW_LOG_GAP_RANGES) {
		c->gaps[c->n_gaps - 1].hi = hi;
		c->gaps_merged = true;
		return;
	}
	c->gaps[c->n_gaps].lo = lo;
	c->gaps[c->n_gaps].hi = hi;
	c->n_gaps++;
}

/* A number below the next expected one: it fills a gap (a late entry) or
 * it was seen before. */
static void fill_gap(struct kw_log_check *c, uint64_t s)
{
	size_t lo = 0, hi = c->n_gaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->gaps[mid].hi <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == c->n_gaps || c->gaps[lo].lo > s) {
		set_inconsistent(c, "line %" PRIu64 ": seq %" PRIu64 " appears twice", c->lines, s);
		return;
	}
	struct kw_log_gap *g = &c->gaps[lo];

	c->seq_missing--;
	c->seq_late++;
	if (g->lo == s) {
		g->lo++;
	} else if (g->hi == s + 1) {
		g->hi--;
	} else if (c->n_gaps < KW_LOG_GAP_RANGES) {
		memmove(g + 1, g, (c->n_gaps - lo) * sizeof(*g));
		c->n_gaps++;
		g->hi = s;
		g[1].lo = s + 1;
	} else {
		c->gaps_merged = true; /* s stays inside the span */
		return;
	}
	if (g->lo == g->hi) {
		memmove(g, g + 1, (c->n_gaps - lo - 1) * sizeof(*g));
		c->n_gaps--;
	}
}

static void follow_seq(struct kw_log_check *c, uint64_t s)
{
	if (s == c->seq_next) {
		c->seq_next++;
	} else if (s > c->seq_next) {
		add_gap(c, c->seq_next, s);
		c->seq_missing += s - c->seq_next;
		c->seq_next = s + 1;
	} else {
		fill_gap(c, s);
	}
}

/* Follows one canonical entry through the log's structure. */
static void follow_entry(struct kw_log_check *c, const char *p, size_t n)
{
	struct entry e;
	int64_t seq;

	scan_entry(p, n, &e);
	if (c->has_close)
		set_inconsistent(c, "line %" PRIu64 ": an entry after the trailer (kwitness.close)",
				 c->lines);
	if (span_is(e.tool, "\"kwitness.open\"")) {
		if (c->lines != 1 || c->has_open) {
			set_inconsistent(c, "line %" PRIu64 ": an open entry that is not the first line",
					 c->lines);
			return;
		}
		c->has_open = true;
		keep_field(&c->session, e.session);
		keep_field(&c->sandbox_id, e.sandbox_id);
		keep_field(&c->bundle_hash, e.bundle_hash);
		keep_field(&c->image_digest, e.image_digest);
		keep_field(&c->mode, e.mode);
		keep_field(&c->machine_id, e.machine_id);
		keep_field(&c->tpm_counter, e.tpm_counter);
		if (c->expect_session && !kw_log_field_equals(&c->session, c->expect_session))
			c->session_mismatch = true;
		return;
	}
	if (span_is(e.tool, "\"kwitness.close\"")) {
		c->has_close = true;
		c->complete_claimed = span_is(e.complete, "true");
		c->sealed = e.sealed.p != NULL;
		keep_field(&c->close_evidence, e.evidence);
		trailer_int(e.decisions, &c->t_decisions);
		trailer_int(e.denials, &c->t_denials);
		trailer_int(e.dropped, &c->t_dropped);
		trailer_int(e.next_seq, &c->t_next_seq);
		trailer_int(e.seq_gaps, &c->t_seq_gaps);
		trailer_int(e.kill_failed, &c->t_kill_failed);
		if (c->has_open && (!e.session.p || e.session.n != c->session.len ||
				    memcmp(e.session.p, c->session.text, c->session.len)))
			set_inconsistent(c, "the trailer names another session than the open entry");
		if (!c->has_open)
			set_inconsistent(c, "a trailer (kwitness.close) without an open entry");
		return;
	}
	if (e.tool.n > 10 && !memcmp(e.tool.p, "\"kwitness.", 10)) {
		/* Collector notes between decisions (kwitness.resume after a
		 * collector restart): part of the transcript, not decisions. */
		if (span_is(e.tool, "\"kwitness.resume\""))
			c->resumes++;
		return;
	}
	/* a process entry is numbered like a decision but is not one */
	if (!span_is(e.tool, "\"proc\"")) {
		c->decisions++;
		if (span_is(e.decision, "\"deny\""))
			c->denials++;
	}
	if (!span_int(e.seq, &seq) || seq < 0) {
		if (c->has_open)
			set_inconsistent(c, "line %" PRIu64 ": a decision entry without a seq number",
					 c->lines);
		return;
	}
	follow_seq(c, (uint64_t)seq);
}

/* Checks one line (without its newline). Returns 0 (a problem, if any, is
 * in c->problem), -ENOMEM, or what the on_entry callback returned. */
static int check_line(struct kw_log_check *c, const char *p, size_t n)
{
	struct jcs_error je = { 0 };
	int rc;

	c->lines++;
	if (n == 0) {
		set_problem(c, KW_VERIFY_LOG_MALFORMED, "line %" PRIu64 " is empty", c->lines);
		return 0;
	}
	kw_buf_reset(&c->canon);
	rc = jcs_canonicalize_with(&c->scratch, p, n, &c->canon, &je);
	if (rc == -ENOMEM)
		return rc;
	if (rc) {
		set_problem(c, KW_VERIFY_LOG_MALFORMED, "line %" PRIu64 " column %zu: %s", c->lines,
			    je.column, je.message);
		return 0;
	}
	if (c->canon.data[0] != '{') {
		set_problem(c, KW_VERIFY_LOG_MALFORMED, "line %" PRIu64 " is JSON but not an object",
			    c->lines);
		return 0;
	}
	if (c->canon.len != n || memcmp(c->canon.data, p, n)) {
		size_t i = 0;

		while (i < n && i < c->canon.len && p[i] == c->canon.data[i])
			i++;
		set_problem(c, KW_VERIFY_LOG_NOT_CANONICAL,
			    "line %" PRIu64 " differs from its RFC 8785 form at column %zu", c->lines,
			    i + 1);
		return 0;
	}
	follow_entry(c, p, n);
	return c->on_entry ? c->on_entry(c->entry_ctx, p, n) : 0;
}

/* Checks every complete line in the buffer, hashes them, keeps the rest. */
static int consume(struct kw_log_check *c)
{
	char *b = c->buf;
	size_t pos = 0, fill = c->fill;
	uint64_t batch = 0;
	int rc;

	while (c->problem == KW_VERIFY_OK) {
		char *nl = memchr(b + pos, '\n', fill - pos);
		size_t n;

		if (!nl)
			break;
		n = (size_t)(nl - (b + pos));
		if (n > KW_LOG_LINE_MAX) {
			set_problem(c, KW_VERIFY_LOG_LINE_TOO_LONG,
				    "line %" PRIu64 " is longer than %zu bytes", c->lines + 1,
				    KW_LOG_LINE_MAX);
			break;
		}
		rc = check_line(c, b + pos, n);
		if (rc)
			return rc;
		*nl = ',';
		pos += n + 1;
		batch++;
	}
	if (c->problem != KW_VERIFY_OK) {
		c->fill = 0;
		return 0;
	}
	if (batch) {
		rc = c->entries ? kw_digest_update(&c->digest, ",", 1) : 0;
		rc = rc ?: kw_digest_update(&c->digest, b, pos - 1);
		if (rc)
			return rc;
		c->entries += batch;
	}
	if (fill - pos > KW_LOG_LINE_MAX) {
		set_problem(c, KW_VERIFY_LOG_LINE_TOO_LONG, "line %" PRIu64 " is longer than %zu bytes",
			    c->lines + 1, KW_LOG_LINE_MAX);
		c->fill = 0;
		return 0;
	}
	memmove(b, b + pos, fill - pos);
	c->fill = fill - pos;
	return 0;
}

int kw_log_check_feed(struct kw_log_check *c, const char *data, size_t len)
{
	while (len && c->problem == KW_VERIFY_OK) {
		size_t room = BUF_CAP - c->fill, n = len < room ? len : room;
		int rc;

		memcpy(c->buf + c->fill, data, n);
		c->fill += n;
		c->bytes += n;
		data += n;
		len -= n;
		rc = consume(c);
		if (rc)
			return rc;
	}
	return 0;
}

int kw_log_check_read(struct kw_log_check *c, int fd, struct kw_digest *also, uint64_t *nbytes)
{
	*nbytes = 0;
	while (c->problem == KW_VERIFY_OK) {
		size_t room = BUF_CAP - c->fill;
		ssize_t r = read(fd, c->buf + c->fill, room < KW_LOG_READ_CHUNK ? room : KW_LOG_READ_CHUNK);
		int rc;

		if (r < 0) {
			if (errno == EINTR)
				continue;
			set_problem(c, KW_VERIFY_LOG_UNREADABLE, "read failed after %" PRIu64 " bytes: %s",
				    c->bytes, strerror(errno));
			break;
		}
		if (r == 0)
			break;
		if (also && kw_digest_update(also, c->buf + c->fill, (size_t)r))
			return -ENOMEM;
		*nbytes += (uint64_t)r;
		c->fill += (size_t)r;
		c->bytes += (uint64_t)r;
		rc = consume(c);
		if (rc)
			return rc;
		if (c->progress)
			c->progress(c->progress_ctx, c->bytes);
	}
	return 0;
}

int kw_log_check_fd(struct kw_log_check *c, int fd)
{
	uint64_t n;
	int rc;

	if (c->seg_log)
		return kw_log_check_segments(c, fd);
	rc = kw_log_check_read(c, fd, NULL, &n);
	return rc ? rc : kw_log_check_end(c);
}

/* The log's structure, once every line has been seen. */
static void judge(struct kw_log_check *c)
{
	uint64_t missing = c->seq_missing;

	if (c->has_close) {
		if (c->t_decisions >= 0 && (uint64_t)c->t_decisions != c->decisions)
			set_inconsistent(c, "the trailer counts %" PRId64 " decisions, the log holds %" PRIu64,
					 c->t_decisions, c->decisions);
		if (c->t_denials >= 0 && (uint64_t)c->t_denials != c->denials)
			set_inconsistent(c, "the trailer counts %" PRId64 " denials, the log holds %" PRIu64,
					 c->t_denials, c->denials);
		if (c->sealed) {
			if (c->complete_claimed)
				set_inconsistent(c, "a sealed trailer says complete");
		} else if (c->t_next_seq < 0) {
			set_inconsistent(c, "the trailer has no next_seq");
		} else if (c->seq_next > (uint64_t)c->t_next_seq) {
			set_inconsistent(c, "seq %" PRIu64 " is at or beyond the trailer's next_seq %" PRId64,
					 c->seq_next - 1, c->t_next_seq);
		} else {
			missing += (uint64_t)c->t_next_seq - c->seq_next;
			if (c->t_seq_gaps >= 0 && (uint64_t)c->t_seq_gaps != missing)
				set_inconsistent(c,
						 "the trailer counts %" PRId64 " seq gaps, the log misses %" PRIu64
						 " numbers below next_seq %" PRId64,
						 c->t_seq_gaps, missing, c->t_next_seq);
			else if (c->t_dropped >= 0 && (uint64_t)c->t_dropped < missing)
				set_inconsistent(c, "the trailer counts %" PRId64 " dropped but %" PRIu64
						 " seq gaps", c->t_dropped, missing);
			else if (c->complete_claimed && c->t_dropped != 0)
				set_inconsistent(c, "the trailer says complete but counts %" PRId64 " dropped",
						 c->t_dropped);
			else if (c->complete_claimed && c->t_kill_failed > 0)
				set_inconsistent(c, "the trailer says complete but counts %" PRId64
						 " processes a kill did not end", c->t_kill_failed);
		}
	}

	c->complete = false;
	if (!c->has_open && !c->has_close) {
		snprintf(c->incomplete_why, sizeof(c->incomplete_why), "%s",
			 c->lines ? "the log has no kwitness.open entry and no trailer: it is not a "
				    "collector's log, so what it leaves out cannot be told"
				  : "the log is empty");
	} else if (!c->has_close) {
		snprintf(c->incomplete_why, sizeof(c->incomplete_why),
			 "the log has no trailer (kwitness.close): the session was not closed, and "
			 "decisions after line %" PRIu64 " are unknown (%" PRIu64 " seq gaps so far)",
			 c->lines, missing);
	} else if (c->sealed) {
		snprintf(c->incomplete_why, sizeof(c->incomplete_why),
			 "the trailer says complete:false: the session was sealed by a later collector, "
			 "its last decisions and the kernel's counters are unknown");
	} else if (!c->complete_claimed || c->t_dropped != 0 || missing || c->t_kill_failed > 0) {
		snprintf(c->incomplete_why, sizeof(c->incomplete_why),
			 "the trailer says complete:%s, %" PRId64 " dropped, %" PRIu64 " seq gaps",
			 c->complete_claimed ? "true" : "false", c->t_dropped, missing);
		if (c->t_kill_failed > 0)
			snprintf(c->incomplete_why + strlen(c->incomplete_why),
				 sizeof(c->incomplete_why) - strlen(c->incomplete_why),
				 ", %" PRId64 " process(es) a kill at close did not end",
				 c->t_kill_failed);
	} else if (!c->inconsistent) {
		c->complete = true;
	} else {
		snprintf(c->incomplete_why, sizeof(c->incomplete_why), "%s", c->inconsistent_why);
	}
	if (c->gaps_merged && !c->complete)
		snprintf(c->incomplete_why + strlen(c->incomplete_why),
			 sizeof(c->incomplete_why) - strlen(c->incomplete_why),
			 "; more than %d separate gaps: late entries inside them are not told from "
			 "duplicates", KW_LOG_GAP_RANGES);
}

int kw_log_check_end(struct kw_log_check *c)
{
	int rc = 0;

	if (c->problem == KW_VERIFY_OK && c->fill)
		set_problem(c, KW_VERIFY_LOG_TRUNCATED,
			    "the log ends inside line %" PRIu64 " (%zu bytes after the last newline)",
			    c->lines + 1, c->fill);
	c->fill = 0;
	if (c->digest_live) {
		c->digest_live = false;
		rc = c->problem == KW_VERIFY_OK ? kw_digest_update(&c->digest, "]", 1) : 0;
		if (c->problem == KW_VERIFY_OK && !rc)
			rc = kw_digest_final(&c->digest, c->hash);
		else
			kw_digest_free(&c->digest);
	}
	kw_buf_free(&c->canon);
	jcs_scratch_free(&c->scratch);
	free(c->buf);
	c->buf = NULL;
	if (c->problem == KW_VERIFY_OK)
		judge(c);
	return rc;
}
