/* SPDX-License-Identifier: Apache-2.0 */
/* The auditor's session report, see report.h.
 *
 * The record is verified the way `kwitness verify` does it (signature, then
 * the log streamed through kw_log_check, then the evidence); the log's lines
 * reach the report through the check's on_entry callback, so what the page
 * shows is exactly what was hashed. The hashes are derived once more here,
 * to be shown beside the record's values. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/digest.h"
#include "jcs/jcs.h"
#include "trace/record_internal.h"
#include "lib/text_safe.h"
#include "estate/entry.h"
#include "estate/query.h"
#include "estate/report.h"
#include "verify/verdict.h"

#define POLICY_SHOWN_MAX ((size_t)256 << 10)

#include "estate/report_internal.h"
#include "trace/lineage.h"
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
	bool deny, unenforced;

	if (estate_entry_parse(&e, r->lc.lines, line, len))
		return 0; /* the check judges it; nothing to show */
	if (r->lineage && kw_lineage_add(r->lineage, e.parsed) == -ENOMEM) {
		kw_lineage_free(r->lineage); /* no tree rather than part of one */
		r->lineage = NULL;
	}
	if (!strcmp(e.tool, "kwitness.open")) {
		copy(r->session, sizeof(r->session), json_string_value(json_object_get(e.parsed, "session")));
		copy(r->hostname, sizeof(r->hostname), json_string_value(json_object_get(e.parsed, "hostname")));
		copy(r->machine_id, sizeof(r->machine_id),
		     json_string_value(json_object_get(e.parsed, "machine_id")));
		copy(r->kernel, sizeof(r->kernel), json_string_value(json_object_get(e.parsed, "kernel")));
		copy(r->log_mode, sizeof(r->log_mode), json_string_value(json_object_get(e.parsed, "mode")));
		r->opened_us = e.has_ts ? e.ts_us : 0;
	} else if (!strcmp(e.tool, "kwitness.close")) {
		r->closed_us = e.has_ts ? e.ts_us : 0;
	} else if (e.decision) {
		deny = !strcmp(e.decision, "deny");
		t = tool_index(r, e.tool);
		unenforced = deny && !report_enforced(r, e.has_enforced, e.enforced);
		r->unenforced += unenforced;
		r->tools[t].unenforced += unenforced;
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
			m->unenforced = unenforced;
			copy(m->object, sizeof(m->object), e.object);
		}
		if (deny && r->ndenials < REPORT_DENIALS_MAX) {
			struct denial *d = &r->denials[r->ndenials++];

			d->ts = e.has_ts ? e.ts_us : 0;
			d->pid = e.has_pid ? e.pid : -1;
			d->unenforced = unenforced;
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

/* The log, from the file or the database, through the verifier's check. */
static int read_log(void *ctx, struct kw_log_check *lc)
{
	const struct report_source *src = ctx;

	if (src->log_fd >= 0) {
		if (src->log_path) {
			lc->seg_dirfd = AT_FDCWD; /* a log cut into segments follows them */
			lc->seg_log = src->log_path;
		}
		return kw_log_check_fd(lc, src->log_fd);
	}
	return src->feed(src->feed_ctx, lc) ?: kw_log_check_end(lc);
}

struct report *report_build(const struct report_source *src, char *err, size_t errlen)
{
	struct report *r = calloc(1, sizeof(*r));
	struct kw_verify_opts o = { .trusted = src->key, .allow_embedded_key = !src->key,
				    .now = src->now, .skew = src->skew, .call_count = -1, .allow_incomplete = true,
				    .bundle = src->bundle, .bundle_len = src->bundle_len };
	char tp[KW_THUMBPRINT_MAX];
	struct verify_request rq;
	struct verify_verdict v;
	json_t *rec = NULL;

	if (!r || !(r->marks = calloc(REPORT_MARKS_MAX, sizeof(*r->marks))) ||
	    !(r->denials = calloc(REPORT_DENIALS_MAX, sizeof(*r->denials))) ||
	    !(r->lineage = kw_lineage_new())) {
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

	/* What decides "not enforced" while the log streams: the record's mode. */
	rec = jcs_parse(src->record_text, src->record_len, NULL);
	copy(r->mode, sizeof(r->mode), json_string_value(json_object_get(
		json_object_get(rec, "policy"), "enforcement_mode")));
	json_decref(rec);
	/* The one verifier judges (verify/verdict.h); the log's lines reach the
	 * page through its on_entry, so the page shows what was hashed. */
	rq = (struct verify_request){
		.opts = o, .record_text = src->record_text, .record_len = src->record_len,
		.bundle = src->bundle, .bundle_len = src->bundle_len,
		.read_log = src->log_fd >= 0 || src->feed ? read_log : NULL, .read_log_ctx = (void *)src,
		.on_entry = on_entry, .entry_ctx = r, .log_check = &r->lc,
	};
	if (verify_record(&rq, &v, err, errlen)) {
		report_free(r);
		return NULL;
	}
	r->res = v.res;
	r->signed_ok = r->evidence_ok = v.valid;
	r->log_read = v.completeness != VERIFY_NOT_CHECKED;
	/* Shown as the record claims to be, whether or not it verified. */
	rec = jcs_parse(src->record_text, src->record_len, NULL);
	if (json_is_object(rec)) {
		json_t *p = json_object_get(rec, "policy");

		copy(r->subject, sizeof(r->subject), rec_str(rec, "subject", NULL));
		copy(r->mode, sizeof(r->mode), json_string_value(json_object_get(p, "enforcement_mode")));
		copy(r->platform, sizeof(r->platform), rec_str(rec, "runtime", "platform"));
		copy(r->model_provider, sizeof(r->model_provider), rec_str(rec, "model", "provider"));
		copy(r->model_id, sizeof(r->model_id), rec_str(rec, "model", "model_id"));
		copy(r->data_class, sizeof(r->data_class), rec_str(rec, "data_class", NULL));
		r->iat = json_is_integer(json_object_get(rec, "iat"))
				 ? (int64_t)json_integer_value(json_object_get(rec, "iat")) : 0;
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
	kw_lineage_free(r->lineage);
	free(r->marks);
	free(r->denials);
	free(r->policy);
	free(r->checkpoint);
	free(r);
}

bool report_valid(const struct report *r)
{
	return r->signed_ok && r->evidence_ok && !r->tampered[0];
}

/* --- output -------------------------------------------------------------- */

const char *report_verdict_code(const struct report *r)
{
	return kw_verify_reason_code(r->res.reason);
}

const char *report_failed_step(const struct report *r)
{
	enum kw_verify_reason why = r->res.reason;

	if (r->tampered[0])
		return "the estate's re-derivation of the stored session";
	if (why >= KW_VERIFY_LOG_MISSING && why <= KW_VERIFY_LOG_INCOMPLETE)
		return "the decision log";
	if (why == KW_VERIFY_TRANSCRIPT_MISMATCH)
		return "the decision log against the record's transcript hash";
	if (why == KW_VERIFY_BUNDLE_MISMATCH || why == KW_VERIFY_POLICY_MISSING ||
	    why == KW_VERIFY_POLICY_UNREADABLE)
		return "the policy bundle";
	if (why == KW_VERIFY_MEASUREMENT_MISMATCH)
		return "the measurement";
	return "the record and its signature";
}

bool report_enforced(const struct report *r, bool has_enforced, bool enforced)
{
	return has_enforced ? enforced : !strcmp(r->mode, "enforce");
}

void report_completeness(const struct report *r, char *out, size_t n)
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

void report_time_text(int64_t us, char out[32])
{
	if (us > 0)
		estate_format_time(us, out);
	else
		snprintf(out, 32, "-");
}


int report_write_text(const struct report *r, FILE *f)
{
	char buf[400];

	if (report_valid(r))
		fprintf(f, "verdict: valid\n");
	else if (r->tampered[0]) {
		fputs("verdict: TAMPERED: ", f);
		kw_text_fput(f, r->tampered);
		fputc('\n', f);
	} else {
		fprintf(f, "verdict: invalid: %s: ", report_verdict_code(r));
		kw_text_fput(f, r->res.message);
		fputc('\n', f);
	}
	fputs("signature: checked under ", f);
	kw_text_fput(f, r->key_source);
	if (r->has_level && !report_valid(r)) {
		fputs("; no level: the record does not hold\n", f);
	} else if (r->has_level) {
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
	report_completeness(r, buf, sizeof(buf));
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
	if (r->unenforced)
		fprintf(f, " (%" PRIu64 " denials not enforced)", r->unenforced);
	fputs("\nmodel: ", f);
	kw_text_fput(f, r->model_provider);
	fputc(' ', f);
	kw_text_fput(f, r->model_id);
	fputs("\ndata class: ", f);
	kw_text_fput(f, r->data_class);
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

		report_time_text(d->ts, ts);
		fprintf(f, "denied%s: %s ", d->unenforced ? " (not enforced)" : "", ts);
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
	if (r->lineage) {
		fputs("process tree (proc entries):\n", f);
		kw_lineage_print(r->lineage, f);
	}
	return ferror(f) ? -EIO : 0;
}
