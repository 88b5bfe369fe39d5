/* SPDX-License-Identifier: Apache-2.0 */
/* The auditor's session report, see report.h.
 *
 * The record is verified the way `kwitness verify` does it (signature, then
 * the log streamed through kw_log_check, then the evidence); the log's lines
 * reach the report through the check's on_entry callback, so what the page
 * shows is exactly what was hashed. The hashes are derived once more here,
 * to be shown beside the record's values. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kwitness/digest.h"
#include "kwitness/jcs.h"
#include "lib/record_internal.h"
#include "lib/text_safe.h"
#include "estate/entry.h"
#include "estate/html.h"
#include "estate/query.h"
#include "estate/report.h"
#include "verify/verdict.h"

#define POLICY_SHOWN_MAX ((size_t)256 << 10)

struct mark {
	int64_t ts;
	uint16_t tool;
	bool deny;
	char object[128];
};

struct denial {
	int64_t ts, pid;
	uint16_t tool;
	char object[REPORT_TEXT_MAX], rule[128], comm[64];
};

struct tool_count {
	char name[64];
	uint64_t permit, deny;
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
	int64_t iat;
	/* the log */
	struct kw_log_check lc;
	bool log_read;
	char session[REPORT_TEXT_MAX], hostname[REPORT_TEXT_MAX], machine_id[REPORT_TEXT_MAX],
		kernel[REPORT_TEXT_MAX];
	int64_t opened_us, closed_us, tmin, tmax;
	uint64_t decisions;
	struct mark *marks;
	size_t nmarks;
	struct denial *denials;
	size_t ndenials;
	struct tool_count tools[REPORT_TOOLS_MAX + 1]; /* the last: every other tool */
	size_t ntools;
	struct proc procs[REPORT_PROCS_MAX];
	size_t nprocs;
	bool procs_more;
	char *policy; /* pretty-printed, or the bundle as text */
	/* the stored level (estate report) */
	bool has_level;
	char level[32], appraisal[400], transparency[600], log_origin[256], checkpoint_root[64];
	int64_t log_index, checkpoint_size;
	char *checkpoint;
};

/* s cut to fit dst, never inside a UTF-8 sequence. */
static void copy(char *dst, size_t n, const char *s)
{
	size_t len = s ? strnlen(s, n) : 0;

	if (len == n) {
		len = n - 1;
		while (len && ((unsigned char)s[len] & 0xc0) == 0x80)
			len--;
	}
	if (len)
		memcpy(dst, s, len);
	dst[len] = '\0';
}

static uint16_t tool_index(struct report *r, const char *name)
{
	for (size_t i = 0; i < r->ntools; i++)
		if (!strcmp(r->tools[i].name, name))
			return (uint16_t)i;
	if (r->ntools < REPORT_TOOLS_MAX && strlen(name) < sizeof(r->tools[0].name)) {
		copy(r->tools[r->ntools].name, sizeof(r->tools[0].name), name);
		return (uint16_t)r->ntools++;
	}
	copy(r->tools[REPORT_TOOLS_MAX].name, sizeof(r->tools[0].name), "(other tools)");
	return REPORT_TOOLS_MAX;
}

static void count_proc(struct report *r, const struct estate_entry *e)
{
	int64_t pid = e->has_pid ? e->pid : -1;
	const char *comm = e->comm ? e->comm : "";

	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid == pid && !strncmp(r->procs[i].comm, comm, sizeof(r->procs[i].comm) - 1)) {
			r->procs[i].decisions++;
			return;
		}
	if (r->nprocs == REPORT_PROCS_MAX) {
		r->procs_more = true;
		return;
	}
	r->procs[r->nprocs].pid = pid;
	copy(r->procs[r->nprocs].comm, sizeof(r->procs[0].comm), comm);
	r->procs[r->nprocs++].decisions = 1;
}

/* Every line the log check passed. */
static int on_entry(void *ctx, const char *line, size_t len)
{
	struct report *r = ctx;
	struct estate_entry e;
	uint16_t t;
	bool deny;

	if (estate_entry_parse(&e, r->lc.lines, line, len))
		return 0; /* the check judges it; nothing to show */
	if (!strcmp(e.tool, "kwitness.open")) {
		copy(r->session, sizeof(r->session), json_string_value(json_object_get(e.parsed, "session")));
		copy(r->hostname, sizeof(r->hostname), json_string_value(json_object_get(e.parsed, "hostname")));
		copy(r->machine_id, sizeof(r->machine_id),
		     json_string_value(json_object_get(e.parsed, "machine_id")));
		copy(r->kernel, sizeof(r->kernel), json_string_value(json_object_get(e.parsed, "kernel")));
		r->opened_us = e.has_ts ? e.ts_us : 0;
	} else if (!strcmp(e.tool, "kwitness.close")) {
		r->closed_us = e.has_ts ? e.ts_us : 0;
	} else if (e.decision) {
		deny = !strcmp(e.decision, "deny");
		t = tool_index(r, e.tool);
		if (deny)
			r->tools[t].deny++;
		else
			r->tools[t].permit++;
		r->decisions++;
		if (e.has_ts) {
			if (!r->nmarks || e.ts_us < r->tmin)
				r->tmin = e.ts_us;
			if (!r->nmarks || e.ts_us > r->tmax)
				r->tmax = e.ts_us;
		}
		if (r->nmarks < REPORT_MARKS_MAX) {
			struct mark *m = &r->marks[r->nmarks++];

			m->ts = e.has_ts ? e.ts_us : 0;
			m->tool = t;
			m->deny = deny;
			copy(m->object, sizeof(m->object), e.object);
		}
		if (deny && r->ndenials < REPORT_DENIALS_MAX) {
			struct denial *d = &r->denials[r->ndenials++];

			d->ts = e.has_ts ? e.ts_us : 0;
			d->pid = e.has_pid ? e.pid : -1;
			d->tool = t;
			copy(d->object, sizeof(d->object), e.object);
			copy(d->rule, sizeof(d->rule), e.rule);
			copy(d->comm, sizeof(d->comm), e.comm);
		}
		count_proc(r, &e);
	}
	estate_entry_clear(&e);
	return 0;
}

static const char *rec_str(const json_t *rec, const char *a, const char *b)
{
	const json_t *v = json_object_get(rec, a);

	return json_string_value(b ? json_object_get(v, b) : v);
}

static void add_row(struct report *r, const char *what, const char *recorded, const char *derived)
{
	struct hash_row *h = &r->rows[r->nrows++];

	h->what = what;
	copy(h->recorded, sizeof(h->recorded), recorded ? recorded : "(none)");
	copy(h->derived, sizeof(h->derived), derived ? derived : "(not derived)");
	h->match = !derived ? -1 : recorded && !strcmp(recorded, derived);
}

/* The record's values beside the ones derived here from the evidence. */
static void derive(struct report *r, const json_t *rec, const struct report_source *src)
{
	char tp_rec[KW_THUMBPRINT_MAX] = "", tp_key[KW_THUMBPRINT_MAX] = "", bundle[KW_DIGEST_STR_MAX],
	     meas[KW_DIGEST_STR_MAX], count[24];
	const json_t *cc = json_object_get(json_object_get(rec, "tool_transcript"), "call_count");
	const char *image = rec_str(rec, "build_provenance", "digest");
	bool have_bundle = src->bundle && !kw_digest_buf(KW_SHA256, src->bundle, src->bundle_len, bundle);
	bool log_ok = r->log_read && r->lc.problem == KW_VERIFY_OK;
	char recorded_count[24] = "";

	if (kw_jwk_thumbprint(json_object_get(json_object_get(rec, "cnf"), "jwk"), tp_rec))
		tp_rec[0] = '\0';
	if (src->key && kw_key_thumbprint(src->key, tp_key))
		tp_key[0] = '\0';
	add_row(r, "signer key (cnf.jwk thumbprint)", tp_rec[0] ? tp_rec : NULL,
		src->key ? tp_key : NULL);
	add_row(r, "policy.bundle_hash", rec_str(rec, "policy", "bundle_hash"), have_bundle ? bundle : NULL);
	add_row(r, "tool_transcript.hash", rec_str(rec, "tool_transcript", "hash"),
		log_ok ? r->lc.hash : NULL);
	if (json_is_integer(cc))
		snprintf(recorded_count, sizeof(recorded_count), "%" JSON_INTEGER_FORMAT, json_integer_value(cc));
	snprintf(count, sizeof(count), "%" PRIu64, r->lc.entries);
	add_row(r, "tool_transcript.call_count", recorded_count[0] ? recorded_count : NULL,
		log_ok ? count : NULL);
	if (!strcmp(r->platform, "software-only"))
		add_row(r, "runtime.measurement", rec_str(rec, "runtime", "measurement"),
			have_bundle && image && !kw_software_measurement(KW_SHA256, image, bundle, meas)
				? meas : NULL);
}

static void keep_policy(struct report *r, const struct report_source *src)
{
	json_t *p;
	size_t n;

	if (!src->bundle)
		return;
	p = json_loadb(src->bundle, src->bundle_len, JSON_DECODE_ANY, NULL);
	if (p) {
		r->policy = json_dumps(p, JSON_INDENT(2) | JSON_ENCODE_ANY);
		json_decref(p);
	}
	if (r->policy)
		return;
	n = src->bundle_len < POLICY_SHOWN_MAX ? src->bundle_len : POLICY_SHOWN_MAX;
	r->policy = malloc(n + 1);
	if (r->policy) {
		memcpy(r->policy, src->bundle, n);
		r->policy[n] = '\0';
	}
}

struct report *report_build(const struct report_source *src, char *err, size_t errlen)
{
	struct report *r = calloc(1, sizeof(*r));
	struct kw_verify_opts o = { .trusted = src->key, .allow_embedded_key = !src->key,
				    .now = src->now, .skew = src->skew, .call_count = -1,
				    .bundle = src->bundle, .bundle_len = src->bundle_len };
	char image[KW_DIGEST_STR_MAX], tp[KW_THUMBPRINT_MAX];
	json_t *rec = NULL;
	int rc;

	if (!r || !(r->marks = calloc(REPORT_MARKS_MAX, sizeof(*r->marks))) ||
	    !(r->denials = calloc(REPORT_DENIALS_MAX, sizeof(*r->denials)))) {
		snprintf(err, errlen, "out of memory");
		report_free(r);
		return NULL;
	}
	copy(r->record_name, sizeof(r->record_name), src->record_name);
	copy(r->log_name, sizeof(r->log_name), src->log_name);
	copy(r->policy_name, sizeof(r->policy_name), src->policy_name);
	if (src->level) {
		const struct report_level *l = src->level;

		r->has_level = true;
		copy(r->level, sizeof(r->level), l->name);
		copy(r->appraisal, sizeof(r->appraisal), l->appraisal);
		copy(r->transparency, sizeof(r->transparency), l->transparency);
		copy(r->log_origin, sizeof(r->log_origin), l->log_origin);
		copy(r->checkpoint_root, sizeof(r->checkpoint_root), l->checkpoint_root);
		r->log_index = l->log_index;
		r->checkpoint_size = l->checkpoint_size;
		if (l->checkpoint && l->checkpoint[0] && !(r->checkpoint = strdup(l->checkpoint))) {
			snprintf(err, errlen, "out of memory");
			report_free(r);
			return NULL;
		}
	}
	if (src->key && !kw_key_thumbprint(src->key, tp))
		snprintf(r->key_source, sizeof(r->key_source), "the trusted key %s", tp);
	else
		snprintf(r->key_source, sizeof(r->key_source),
			 "the record's own cnf.jwk (no trusted key given: this shows the record is "
			 "intact, not who signed it)");

	rc = kw_record_verify_signed(src->record_text, src->record_len, &o, &r->res, &rec);
	if (rc < 0) {
		snprintf(err, errlen, "verification failed: %s", r->res.message);
		report_free(r);
		return NULL;
	}
	r->signed_ok = rc == 0;
	if (!rec) /* not verified: shown as it claims to be */
		rec = jcs_parse(src->record_text, src->record_len, NULL);
	if (json_is_object(rec)) {
		json_t *p = json_object_get(rec, "policy");

		copy(r->subject, sizeof(r->subject), rec_str(rec, "subject", NULL));
		copy(r->mode, sizeof(r->mode), json_string_value(json_object_get(p, "enforcement_mode")));
		copy(r->platform, sizeof(r->platform), rec_str(rec, "runtime", "platform"));
		r->iat = json_is_integer(json_object_get(rec, "iat"))
				 ? (int64_t)json_integer_value(json_object_get(rec, "iat")) : 0;
	}

	r->lc.on_entry = on_entry;
	r->lc.entry_ctx = r;
	rc = kw_log_check_init(&r->lc);
	if (!rc && src->log_fd >= 0)
		rc = kw_log_check_fd(&r->lc, src->log_fd);
	else if (!rc && src->feed)
		rc = src->feed(src->feed_ctx, &r->lc) ?: kw_log_check_end(&r->lc);
	r->log_read = !rc && (src->log_fd >= 0 || src->feed);
	if (rc) {
		snprintf(err, errlen, "reading the log failed: %s", strerror(-rc));
		json_decref(rec);
		report_free(r);
		return NULL;
	}
	if (r->signed_ok) {
		if (verify_image_digest(rec, image))
			o.image_digest = image;
		o.log = r->log_read ? &r->lc : NULL;
		o.allow_incomplete = true;
		rc = kw_record_verify_evidence(rec, &o, &r->res);
		if (rc < 0) {
			snprintf(err, errlen, "verification failed: %s", r->res.message);
			json_decref(rec);
			report_free(r);
			return NULL;
		}
		r->evidence_ok = rc == 0;
	}
	if (json_is_object(rec))
		derive(r, rec, src);
	keep_policy(r, src);
	json_decref(rec);
	return r;
}

void report_free(struct report *r)
{
	if (!r)
		return;
	kw_log_check_free(&r->lc);
	free(r->marks);
	free(r->denials);
	free(r->policy);
	free(r->checkpoint);
	free(r);
}

bool report_valid(const struct report *r)
{
	return r->signed_ok && r->evidence_ok;
}

/* --- output -------------------------------------------------------------- */

static const char *verdict_code(const struct report *r)
{
	return kw_verify_reason_code(r->res.reason);
}

static void completeness(const struct report *r, char *out, size_t n)
{
	if (!r->log_read)
		snprintf(out, n, "not checked (no decision log)");
	else if (r->lc.problem != KW_VERIFY_OK)
		snprintf(out, n, "unknown: the log could not be read to its end (%s: %s)",
			 kw_verify_reason_code(r->lc.problem), r->lc.why);
	else if (r->lc.complete)
		snprintf(out, n, "complete: every decision of the session is in the log");
	else
		snprintf(out, n, "INCOMPLETE: %s", r->lc.incomplete_why);
}

static void time_text(int64_t us, char out[32])
{
	if (us > 0)
		estate_format_time(us, out);
	else
		snprintf(out, 32, "-");
}

static const char style[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#111;max-width:1100px}"
	"h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}"
	"table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;"
	"vertical-align:top}code,pre,.h{font-family:ui-monospace,monospace;font-size:12px;"
	"word-break:break-all}pre{background:#f6f6f6;padding:8px;overflow:auto;max-height:40em}"
	".valid{color:#0a0;font-weight:bold}.invalid{color:#c00;font-weight:bold}"
	".ok{color:#0a0}.bad{color:#c00;font-weight:bold}.permit{fill:#2a2}.deny{fill:#d22}"
	".warn{color:#b60;font-weight:bold}";

static void html_head(const struct report *r, FILE *f)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'\">\n<title>kwitness session report ", f);
	html_escape(f, r->session);
	fprintf(f, "</title>\n<style>%s</style></head><body>\n", style);
}

static void html_kv(FILE *f, const char *k, const char *v, bool mono)
{
	fprintf(f, "<tr><th>%s</th><td%s>", k, mono ? " class=\"h\"" : "");
	html_escape(f, v);
	fputs("</td></tr>\n", f);
}

static void html_timeline(const struct report *r, FILE *f)
{
	const int left = 170, width = 900, row = 22, top = 10;
	int rows = (int)r->ntools + (r->tools[REPORT_TOOLS_MAX].permit + r->tools[REPORT_TOOLS_MAX].deny ? 1 : 0);
	int height = top * 2 + row * (rows ? rows : 1) + 20;
	double span = r->tmax > r->tmin ? (double)(r->tmax - r->tmin) : 1.0;
	char t0[32], t1[32];

	fprintf(f, "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "role=\"img\" aria-label=\"decisions over time\">\n",
		left + width + 20, height);
	for (int i = 0; i < rows; i++) {
		int idx = i < (int)r->ntools ? i : REPORT_TOOLS_MAX;
		int y = top + row * i + row / 2;

		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>"
			   "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"12\">",
			left, y, left + width, y, left - 8, y + 4);
		html_escape(f, r->tools[idx].name);
		fputs("</text>\n", f);
	}
	for (size_t i = 0; i < r->nmarks; i++) {
		const struct mark *m = &r->marks[i];
		int row_i = m->tool < r->ntools ? m->tool : (int)r->ntools;
		double x = left + (m->ts >= r->tmin ? (double)(m->ts - r->tmin) / span : 0) * width;
		int y = top + row * row_i + row / 2;
		char ts[32];

		time_text(m->ts, ts);
		/* permit: a circle; deny: a square (shape and colour both differ) */
		if (m->deny)
			fprintf(f, "<rect class=\"mark deny\" x=\"%.1f\" y=\"%d\" width=\"8\" height=\"8\">", x - 4, y - 4);
		else
			fprintf(f, "<circle class=\"mark permit\" cx=\"%.1f\" cy=\"%d\" r=\"4\">", x, y);
		fprintf(f, "<title>%s %s ", ts, m->deny ? "deny" : "permit");
		html_escape(f, m->object);
		fputs(m->deny ? "</title></rect>\n" : "</title></circle>\n", f);
	}
	time_text(r->tmin, t0);
	time_text(r->tmax, t1);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\">%s</text>"
		   "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%s</text>\n</svg>\n",
		left, height - 4, t0, left + width, height - 4, t1);
	if (r->decisions > r->nmarks)
		fprintf(f, "<p class=\"warn\">The timeline shows the first %zu of %" PRIu64 " decisions.</p>\n",
			r->nmarks, r->decisions);
	fputs("<p>Circle (green): permit. Square (red): deny.</p>\n", f);
}

/* The level stored at ingest, with what the log proof showed. */
static void html_level(const struct report *r, FILE *f)
{
	char buf[64];

	fputs("<h2>Level</h2>\n<p id=\"level\">", f);
	html_escape(f, r->level);
	fputs("</p>\n<table id=\"transparency\">\n", f);
	html_kv(f, "TPM appraisal", r->appraisal[0] ? r->appraisal : "-", false);
	if (r->log_origin[0]) {
		html_kv(f, "transparency log", r->log_origin, false);
		snprintf(buf, sizeof(buf), "%" PRId64, r->log_index);
		html_kv(f, "leaf index", buf, false);
		snprintf(buf, sizeof(buf), "%" PRId64, r->checkpoint_size);
		html_kv(f, "checkpoint size", buf, false);
		html_kv(f, "checkpoint root hash", r->checkpoint_root, true);
		fputs("<tr><th>checkpoint</th><td><pre>", f);
		html_escape(f, r->checkpoint ? r->checkpoint : "");
		fputs("</pre></td></tr>\n", f);
	} else {
		html_kv(f, "transparency log", r->transparency[0] ? r->transparency
								   : "not logged (the record names no log)",
			false);
	}
	fputs("</table>\n", f);
}

static void html_denials(const struct report *r, FILE *f)
{
	fprintf(f, "<h2>Denials (%" PRIu64 ")</h2>\n", r->lc.denials);
	fputs("<table id=\"denials\"><tr><th>time</th><th>tool</th><th>object</th><th>rule</th>"
	      "<th>pid</th><th>process</th></tr>\n", f);
	for (size_t i = 0; i < r->ndenials; i++) {
		const struct denial *d = &r->denials[i];
		char ts[32];

		time_text(d->ts, ts);
		fprintf(f, "<tr><td>%s</td><td>", ts);
		html_escape(f, r->tools[d->tool].name);
		fputs("</td><td class=\"h\">", f);
		html_escape(f, d->object);
		fputs("</td><td>", f);
		html_escape(f, d->rule);
		fprintf(f, "</td><td>%" PRId64 "</td><td>", d->pid);
		html_escape(f, d->comm);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	if (r->lc.denials > r->ndenials)
		fprintf(f, "<p class=\"warn\">The first %zu denials are listed.</p>\n", r->ndenials);
}

int report_write_html(const struct report *r, FILE *f)
{
	char buf[400];
	bool valid = report_valid(r);

	html_head(r, f);
	fputs("<h1>kwitness session report</h1>\n<h2>Verification</h2>\n", f);
	fprintf(f, "<p id=\"verdict\" class=\"%s\">%s</p>\n<p>", valid ? "valid" : "invalid",
		valid ? "VALID: the record verifies with its decision log and policy bundle"
		      : "INVALID: the record does not verify");
	if (!valid) {
		fprintf(f, "<code id=\"reason\">%s</code>: ", verdict_code(r));
		html_escape(f, r->res.message);
	} else {
		fputs("Signature, decision log, policy bundle and measurement checked.", f);
	}
	fputs("</p>\n<p>Signature checked under ", f);
	html_escape(f, r->key_source);
	if (r->has_level)
		fputs(".</p>\n", f);
	else
		fputs(". Level 0: no TPM evidence appraised.</p>\n", f);
	if (r->res.warning[0]) {
		fputs("<p class=\"warn\">", f);
		html_escape(f, r->res.warning);
		fputs("</p>\n", f);
	}
	fputs("<table id=\"hashes\"><tr><th>value</th><th>in the record</th><th>derived here</th>"
	      "<th></th></tr>\n", f);
	for (int i = 0; i < r->nrows; i++) {
		const struct hash_row *h = &r->rows[i];

		fprintf(f, "<tr><td>%s</td><td class=\"h recorded\">", h->what);
		html_escape(f, h->recorded);
		fputs("</td><td class=\"h derived\">", f);
		html_escape(f, h->derived);
		fprintf(f, "</td><td class=\"%s\">%s</td></tr>\n",
			h->match > 0 ? "ok" : h->match == 0 ? "bad" : "",
			h->match > 0 ? "match" : h->match == 0 ? "DIFFERS" : "-");
	}
	fputs("</table>\n", f);
	if (r->has_level)
		html_level(r, f);
	fputs("<h2>Completeness</h2>\n", f);
	completeness(r, buf, sizeof(buf));
	fprintf(f, "<p id=\"completeness\" class=\"%s\">", r->lc.complete ? "ok" : "warn");
	html_escape(f, buf);
	fputs("</p>\n<table>", f);
	snprintf(buf, sizeof(buf), "%" PRIu64, r->lc.decisions);
	html_kv(f, "decisions", buf, false);
	snprintf(buf, sizeof(buf), "%" PRIu64, r->lc.denials);
	html_kv(f, "denials", buf, false);
	if (r->lc.t_dropped >= 0)
		snprintf(buf, sizeof(buf), "%" PRId64, r->lc.t_dropped);
	else
		snprintf(buf, sizeof(buf), "unknown (no trailer count)");
	html_kv(f, "dropped", buf, false);
	snprintf(buf, sizeof(buf), "%" PRIu64, r->lc.seq_missing);
	html_kv(f, "sequence gaps", buf, false);
	snprintf(buf, sizeof(buf), "%" PRIu64, r->lc.resumes);
	html_kv(f, "collector resumes", buf, false);
	fputs("</table>\n<h2>Session</h2>\n<table>\n", f);
	html_kv(f, "session", r->session, true);
	html_kv(f, "sandbox (subject)", r->subject, true);
	html_kv(f, "host", r->hostname, false);
	html_kv(f, "machine id", r->machine_id, true);
	html_kv(f, "kernel", r->kernel, false);
	time_text(r->opened_us, buf);
	html_kv(f, "opened", buf, false);
	time_text(r->closed_us, buf);
	html_kv(f, "closed", buf, false);
	html_kv(f, "enforcement mode", r->mode, false);
	html_kv(f, "runtime platform", r->platform, false);
	html_kv(f, "record", r->record_name, true);
	html_kv(f, "decision log", r->log_name, true);
	html_kv(f, "policy bundle", r->policy_name, true);
	fputs("</table>\n<h2>Timeline</h2>\n", f);
	html_timeline(r, f);
	html_denials(r, f);
	fputs("<h2>Decisions per tool</h2>\n<table id=\"tools\"><tr><th>tool</th><th>permit</th>"
	      "<th>deny</th></tr>\n", f);
	for (size_t i = 0; i <= REPORT_TOOLS_MAX; i++) {
		const struct tool_count *t = &r->tools[i];

		if (i >= r->ntools && (i != REPORT_TOOLS_MAX || !(t->permit + t->deny)))
			continue;
		fputs("<tr><td>", f);
		html_escape(f, t->name);
		fprintf(f, "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td></tr>\n", t->permit, t->deny);
	}
	fputs("</table>\n<h2>Processes</h2>\n<table id=\"procs\"><tr><th>pid</th><th>process "
	      "(comm)</th><th>decisions</th></tr>\n", f);
	for (size_t i = 0; i < r->nprocs; i++) {
		fprintf(f, "<tr><td>%" PRId64 "</td><td>", r->procs[i].pid);
		html_escape(f, r->procs[i].comm);
		fprintf(f, "</td><td>%" PRIu64 "</td></tr>\n", r->procs[i].decisions);
	}
	fputs("</table>\n", f);
	if (r->procs_more)
		fprintf(f, "<p class=\"warn\">Only the first %d processes are listed.</p>\n", REPORT_PROCS_MAX);
	fputs("<h2>Policy</h2>\n<pre id=\"policy\">", f);
	html_escape(f, r->policy ? r->policy : "(no policy bundle given)");
	fputs("</pre>\n</body></html>\n", f);
	return ferror(f) ? -EIO : 0;
}

int report_write_text(const struct report *r, FILE *f)
{
	char buf[400];

	if (report_valid(r))
		fprintf(f, "verdict: valid\n");
	else {
		fprintf(f, "verdict: invalid: %s: ", verdict_code(r));
		kw_text_fput(f, r->res.message);
		fputc('\n', f);
	}
	fputs("signature: checked under ", f);
	kw_text_fput(f, r->key_source);
	if (r->has_level) {
		fputs("; ", f);
		kw_text_fput(f, r->level);
		fputc('\n', f);
		if (r->appraisal[0]) {
			fputs("appraisal: ", f);
			kw_text_fput(f, r->appraisal);
			fputc('\n', f);
		}
		if (r->log_origin[0]) {
			fprintf(f, "logged: entry %" PRId64 " of ", r->log_index);
			kw_text_fput(f, r->log_origin);
			fprintf(f, " (checkpoint of %" PRId64 " entries, root ", r->checkpoint_size);
			kw_text_fput(f, r->checkpoint_root);
			fputs(")\n", f);
		} else if (r->transparency[0]) {
			fputs("not logged: ", f);
			kw_text_fput(f, r->transparency);
			fputc('\n', f);
		}
	} else {
		fputs("; level 0\n", f);
	}
	for (int i = 0; i < r->nrows; i++) {
		const struct hash_row *h = &r->rows[i];

		fprintf(f, "%s: %s (record ", h->what,
			h->match > 0 ? "match" : h->match == 0 ? "DIFFERS" : "not derived");
		kw_text_fput(f, h->recorded);
		fputs(", derived ", f);
		kw_text_fput(f, h->derived);
		fputs(")\n", f);
	}
	completeness(r, buf, sizeof(buf));
	fputs("completeness: ", f);
	kw_text_fput(f, buf);
	fprintf(f, "\ndecisions: %" PRIu64 ", denials %" PRIu64 ", sequence gaps %" PRIu64
		   ", resumes %" PRIu64 "\n", r->lc.decisions, r->lc.denials, r->lc.seq_missing,
		r->lc.resumes);
	fputs("session: ", f);
	kw_text_fput(f, r->session);
	fputs("\nsandbox: ", f);
	kw_text_fput(f, r->subject);
	fputs("\nhost: ", f);
	kw_text_fput(f, r->hostname);
	fputs(" (machine id ", f);
	kw_text_fput(f, r->machine_id);
	fputs(")\nmode: ", f);
	kw_text_fput(f, r->mode);
	fputc('\n', f);
	for (size_t i = 0; i <= REPORT_TOOLS_MAX; i++) {
		const struct tool_count *t = &r->tools[i];

		if (i >= r->ntools && (i != REPORT_TOOLS_MAX || !(t->permit + t->deny)))
			continue;
		fputs("tool ", f);
		kw_text_fput(f, t->name);
		fprintf(f, ": %" PRIu64 " permit, %" PRIu64 " deny\n", t->permit, t->deny);
	}
	for (size_t i = 0; i < r->ndenials; i++) {
		const struct denial *d = &r->denials[i];
		char ts[32];

		time_text(d->ts, ts);
		fprintf(f, "denied: %s ", ts);
		kw_text_fput(f, r->tools[d->tool].name);
		fputc(' ', f);
		kw_text_fput(f, d->object);
		fprintf(f, " pid %" PRId64 " ", d->pid);
		kw_text_fput(f, d->comm);
		fputc('\n', f);
	}
	for (size_t i = 0; i < r->nprocs; i++) {
		fprintf(f, "process: pid %" PRId64 " ", r->procs[i].pid);
		kw_text_fput(f, r->procs[i].comm);
		fprintf(f, ": %" PRIu64 " decisions\n", r->procs[i].decisions);
	}
	return ferror(f) ? -EIO : 0;
}
