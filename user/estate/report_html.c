/* SPDX-License-Identifier: Apache-2.0 */
/* The session report as one self-contained HTML page, see report.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estate/html.h"
#include "estate/report_internal.h"
#include "trace/lineage.h"

static const char style[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#111;max-width:1100px}"
	"h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}"
	"table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;"
	"vertical-align:top}code,pre,.h{font-family:ui-monospace,monospace;font-size:12px;"
	"word-break:break-all}pre{background:#f6f6f6;padding:8px;overflow:auto;max-height:40em}"
	".valid{color:#0a0;font-weight:bold}.invalid{color:#c00;font-weight:bold}"
	".ok{color:#0a0}.bad{color:#c00;font-weight:bold}.permit{fill:#2a2}.deny{fill:#d22}"
	".warn{color:#b60;font-weight:bold}.notenf{fill:none;stroke:#d22;stroke-width:1.5}"
	".claimed{border-left:4px solid #c00;padding-left:1em}";

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
	bool valid = report_valid(r);

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

		report_time_text(m->ts, ts);
		/* permit: a circle; deny: a square (shape and colour both differ) */
		/* A denial that stopped nothing: a hollow square, "not enforced". */
		if (m->deny)
			fprintf(f, "<rect class=\"mark deny\"%s x=\"%.1f\" y=\"%d\" width=\"8\" height=\"8\">",
				m->unenforced ? " data-enforced=\"no\" style=\"fill:none;stroke:#d22\"" : "",
				x - 4, y - 4);
		else
			/* grey on a page whose record does not verify: no green */
			fprintf(f, "<circle class=\"mark permit\"%s cx=\"%.1f\" cy=\"%d\" r=\"4\">",
				valid ? "" : " style=\"fill:#888\"", x, y);
		fprintf(f, "<title>%s %s ", ts,
			!m->deny ? "permit" : m->unenforced ? "deny (not enforced)" : "deny");
		html_escape(f, m->object);
		fputs(m->deny ? "</title></rect>\n" : "</title></circle>\n", f);
	}
	report_time_text(r->tmin, t0);
	report_time_text(r->tmax, t1);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\">%s</text>"
		   "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%s</text>\n</svg>\n",
		left, height - 4, t0, left + width, height - 4, t1);
	if (r->decisions > r->nmarks)
		fprintf(f, "<p class=\"warn\">The timeline shows the first %zu of %" PRIu64 " decisions.</p>\n",
			r->nmarks, r->decisions);
	fprintf(f, "<p>Circle (%s): permit. Square (red): deny. Hollow square: a denial that was "
		"<strong>not enforced</strong> (logged only; the action went ahead).</p>\n",
		valid ? "green" : "grey");
}

/* The level stored at ingest, with what the log proof showed. */
static void html_level(const struct report *r, FILE *f)
{
	char buf[64];

	fputs("<h2>Level</h2>\n<p id=\"level\">", f);
	if (r->tampered[0]) {
		fputs("<span class=\"bad\">TAMPERED</span>: the stored level (", f);
		html_escape(f, r->level);
		fputs(") does not hold: ", f);
		html_escape(f, r->tampered);
		fputs("</p>\n", f);
		return;
	}
	if (!report_valid(r)) {
		fputs("none: the record does not verify (the estate stored ", f);
		html_escape(f, r->level);
		fputs(")</p>\n", f);
		return;
	}
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

static void html_denials(const struct report *r, FILE *f, const char *claimed)
{
	fprintf(f, "<h2>%sDenials (%" PRIu64 "%s)</h2>\n", claimed, r->lc.denials,
		r->unenforced == r->lc.denials && r->unenforced ? ", not enforced"
		: r->unenforced ? ", some not enforced" : "");
	fputs("<table id=\"denials\"><tr><th>time</th><th>tool</th><th>object</th><th>rule</th>"
	      "<th>pid</th><th>process</th><th>enforced</th></tr>\n", f);
	for (size_t i = 0; i < r->ndenials; i++) {
		const struct denial *d = &r->denials[i];
		char ts[32];

		report_time_text(d->ts, ts);
		fprintf(f, "<tr><td>%s</td><td>", ts);
		html_escape(f, r->tools[d->tool].name);
		fputs("</td><td class=\"h\">", f);
		html_escape(f, d->object);
		fputs("</td><td>", f);
		html_escape(f, d->rule);
		fprintf(f, "</td><td>%" PRId64 "</td><td>", d->pid);
		html_escape(f, d->comm);
		fprintf(f, "</td><td class=\"%s\">%s</td></tr>\n", d->unenforced ? "warn" : "",
			d->unenforced ? "not enforced" : "enforced");
	}
	fputs("</table>\n", f);
	if (r->lc.denials > r->ndenials)
		fprintf(f, "<p class=\"warn\">The first %zu denials are listed.</p>\n", r->ndenials);
}

/* The verdict first: VALID, or INVALID (or TAMPERED) with the step that
 * failed; then the enforcement mode, which says what a denial meant. */
static void html_verdict(const struct report *r, FILE *f)
{
	bool valid = report_valid(r);

	fputs("<h1>kwitness session report</h1>\n", f);
	if (valid) {
		fputs("<p id=\"verdict\" class=\"valid\">VALID: the record verifies with its decision "
		      "log and policy bundle</p>\n<p>Signature, decision log, policy bundle and "
		      "measurement checked.", f);
	} else {
		fprintf(f, "<p id=\"verdict\" class=\"invalid\">%s: the record does not verify</p>\n"
			   "<p id=\"failed\">Failed step: %s: <code id=\"reason\">%s</code>: ",
			r->tampered[0] ? "INVALID (TAMPERED)" : "INVALID", report_failed_step(r),
			r->tampered[0] ? "tampered" : report_verdict_code(r));
		html_escape(f, r->tampered[0] ? r->tampered : r->res.message);
	}
	fputs("</p>\n<p id=\"mode\">Enforcement mode: <strong>", f);
	html_escape(f, r->mode[0] ? r->mode : "unknown");
	fputs("</strong>. ", f);
	if (!strcmp(r->mode, "enforce") && !r->unenforced)
		fputs("Denials were enforced: the actions they name were stopped.", f);
	else
		fprintf(f, "<span class=\"warn\">%" PRIu64 " denials were <strong>not enforced</strong>"
			   ": logged only, the actions they name went ahead.</span>", r->unenforced);
	fputs("</p>\n<h2>Verification</h2>\n<p>Signature checked under ", f);
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
}

/* The record's hashes beside the derived ones; nothing green on a page
 * whose record does not verify. */
static void html_hashes(const struct report *r, FILE *f)
{
	bool valid = report_valid(r);

	fputs("<table id=\"hashes\"><tr><th>value</th><th>in the record</th><th>derived here</th>"
	      "<th></th></tr>\n", f);
	for (int i = 0; i < r->nrows; i++) {
		const struct hash_row *h = &r->rows[i];

		fprintf(f, "<tr><td>%s</td><td class=\"h recorded\">", h->what);
		html_escape(f, h->recorded);
		fputs("</td><td class=\"h derived\">", f);
		html_escape(f, h->derived);
		fprintf(f, "</td><td class=\"%s\">%s</td></tr>\n",
			h->match > 0 ? (valid ? "ok" : "") : h->match == 0 ? "bad" : "",
			h->match > 0 ? "match" : h->match == 0 ? "DIFFERS" : "-");
	}
	fputs("</table>\n", f);
}

static void html_completeness(const struct report *r, FILE *f)
{
	char buf[400];

	fputs("<h2>Completeness</h2>\n", f);
	report_completeness(r, buf, sizeof(buf));
	fprintf(f, "<p id=\"completeness\" class=\"%s\">",
		r->lc.complete && report_valid(r) ? "ok" : "warn");
	html_escape(f, buf);
	fputs("</p>\n<table>", f);
	snprintf(buf, sizeof(buf), "%" PRIu64, r->lc.decisions);
	html_kv(f, "decisions", buf, false);
	snprintf(buf, sizeof(buf), "%" PRIu64 " (%" PRIu64 " not enforced)", r->lc.denials,
		 r->unenforced);
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
	fputs("</table>\n", f);
}

static void html_session(const struct report *r, FILE *f, const char *claimed)
{
	char buf[32];

	fprintf(f, "<h2>%sSession</h2>\n<table id=\"session\">\n", claimed);
	html_kv(f, "session", r->session, true);
	html_kv(f, "sandbox (subject)", r->subject, true);
	html_kv(f, "host", r->hostname, false);
	html_kv(f, "machine id", r->machine_id, true);
	html_kv(f, "kernel", r->kernel, false);
	report_time_text(r->opened_us, buf);
	html_kv(f, "opened", buf, false);
	report_time_text(r->closed_us, buf);
	html_kv(f, "closed", buf, false);
	html_kv(f, "enforcement mode", r->mode, false);
	html_kv(f, "model provider", r->model_provider[0] ? r->model_provider : "(none)", false);
	html_kv(f, "model id", r->model_id[0] ? r->model_id : "(none)", false);
	html_kv(f, "data class", r->data_class[0] ? r->data_class : "(none)", false);
	html_kv(f, "runtime platform", r->platform, false);
	if (r->counter_gap[0])
		html_kv(f, "TPM counter gap", r->counter_gap, false);
	html_kv(f, "record", r->record_name, true);
	html_kv(f, "decision log", r->log_name, true);
	html_kv(f, "policy bundle", r->policy_name, true);
	fputs("</table>\n", f);
}

static void html_proc_tree(const struct report *r, FILE *f, const char *claimed);

static void html_tools(const struct report *r, FILE *f, const char *claimed)
{
	fprintf(f, "<h2>%sDecisions per tool</h2>\n<table id=\"tools\"><tr><th>tool</th>"
		   "<th>permit</th><th>deny</th><th>of them not enforced</th></tr>\n", claimed);
	for (size_t i = 0; i <= REPORT_TOOLS_MAX; i++) {
		const struct tool_count *t = &r->tools[i];

		if (i >= r->ntools && (i != REPORT_TOOLS_MAX || !(t->permit + t->deny)))
			continue;
		fputs("<tr><td>", f);
		html_escape(f, t->name);
		fprintf(f, "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td%s>%" PRIu64 "%s</td></tr>\n",
			t->permit, t->deny, t->unenforced ? " class=\"warn\"" : "", t->unenforced,
			t->unenforced ? " not enforced" : "");
	}
	fprintf(f, "</table>\n<h2>%sProcesses</h2>\n<table id=\"procs\"><tr><th>pid</th>"
		   "<th>process (comm)</th><th>decisions</th></tr>\n", claimed);
	for (size_t i = 0; i < r->nprocs; i++) {
		fprintf(f, "<tr><td>%" PRId64 "</td><td>", r->procs[i].pid);
		html_escape(f, r->procs[i].comm);
		fprintf(f, "</td><td>%" PRIu64 "</td></tr>\n", r->procs[i].decisions);
	}
	fputs("</table>\n", f);
	if (r->procs_more)
		fprintf(f, "<p class=\"warn\">Only the first %d processes are listed.</p>\n", REPORT_PROCS_MAX);
	html_proc_tree(r, f, claimed);
}

/* The process tree of the log's proc entries, as kwitness log tree prints it. */
static void html_proc_tree(const struct report *r, FILE *f, const char *claimed)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	if (!r->lineage || !(m = open_memstream(&text, &len)))
		return;
	kw_lineage_print(r->lineage, m);
	if (fclose(m) == 0 && len) {
		fprintf(f, "<h2>%sProcess tree</h2>\n<pre id=\"proctree\">", claimed);
		html_escape(f, text);
		fputs("</pre>\n", f);
	}
	free(text);
}

int report_write_html(const struct report *r, FILE *f)
{
	/* What a record that does not verify says is only its claim. */
	const char *claimed = report_valid(r) ? "" : "Claimed by the record: ";

	html_head(r, f);
	html_verdict(r, f);
	html_hashes(r, f);
	if (r->has_level)
		html_level(r, f);
	html_completeness(r, f);
	if (claimed[0])
		fputs("<div id=\"claimed\" class=\"claimed\"><p class=\"invalid\">Everything below is "
		      "claimed by the record: it does not verify, so none of it is evidence.</p>\n", f);
	html_session(r, f, claimed);
	fprintf(f, "<h2>%sTimeline</h2>\n", claimed);
	html_timeline(r, f);
	html_denials(r, f, claimed);
	html_tools(r, f, claimed);
	fprintf(f, "<h2>%sPolicy</h2>\n<pre id=\"policy\">", claimed);
	html_escape(f, r->policy ? r->policy : "(no policy bundle given)");
	fputs("</pre>\n", f);
	if (claimed[0])
		fputs("</div>\n", f);
	fputs("</body></html>\n", f);
	return ferror(f) ? -EIO : 0;
}
