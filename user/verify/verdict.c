/* SPDX-License-Identifier: Apache-2.0 */
/* One record to one verdict, see verdict.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "trace/logverify.h"
#include "verify/commit.h"
#include "verify/checkpoint.h"
#include "verify/progress.h"
#include "verify/read.h"
#include "verify/transparency.h"
#include "verify/verdict.h"

/* Opens the decision log (or stdin) for streaming. */
static int open_log(const char *path, uint64_t *size, char *err, size_t errlen)
{
	struct stat st;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(STDIN_FILENO);

	*size = 0;
	if (fd < 0) {
		snprintf(err, errlen, "cannot read decision log %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		*size = (uint64_t)st.st_size;
	return fd;
}

static void log_progress(void *ctx, uint64_t bytes)
{
	struct progress *p = ctx;
	uint64_t seen = atomic_load(&p->bytes);

	progress_add(p, bytes > seen ? bytes - seen : 0, 0);
}

/* Streams the log through lc (initialised here: *live) with a progress
 * line, or through the caller's reader. */
static int check_log(const struct verify_request *rq, struct kw_log_check *lc, bool *live, int fd,
		     uint64_t size)
{
	struct progress prog;
	int ret;

	lc->on_entry = rq->on_entry;
	lc->entry_ctx = rq->entry_ctx;
	lc->expect_session = rq->expect_session;
	if (rq->log_path && strcmp(rq->log_path, "-")) {
		lc->seg_dirfd = AT_FDCWD; /* a log cut into segments follows them */
		lc->seg_log = rq->log_path;
	}
	ret = kw_log_check_init(lc);
	if (ret)
		return ret;
	*live = true;
	if (rq->read_log)
		return rq->read_log(rq->read_log_ctx, lc);
	progress_init(&prog, rq->progress, size, 0);
	lc->progress = log_progress;
	lc->progress_ctx = &prog;
	ret = kw_log_check_fd(lc, fd);
	progress_end(&prog);
	lc->progress = NULL;
	return ret;
}

/* What the log says about completeness. */
static void completeness_of(const struct kw_log_check *lc, struct verify_verdict *v)
{
	char *out = v->completeness_text;
	size_t n = sizeof(v->completeness_text);

	if (!lc) {
		v->completeness = VERIFY_NOT_CHECKED;
		snprintf(out, n, "completeness not checked (no --log)");
	} else if (lc->problem != KW_VERIFY_OK) {
		v->completeness = VERIFY_COMPLETENESS_UNKNOWN;
		snprintf(out, n, "completeness unknown (the log could not be read to its end)");
	} else {
		v->completeness = lc->complete ? VERIFY_COMPLETE : VERIFY_INCOMPLETE;
		if (lc->complete)
			snprintf(out, n, "complete");
		else
			snprintf(out, n, "INCOMPLETE: %s", lc->incomplete_why);
		snprintf(v->incomplete_why, sizeof(v->incomplete_why), "%s", lc->incomplete_why);
		snprintf(v->transcript_hash, sizeof(v->transcript_hash), "%s", lc->hash);
		v->log_entries = lc->entries;
	}
}

/* A one-line summary of what a valid record says and what was checked. */
static void describe(const json_t *rec, const struct kw_verify_opts *o, char *out, size_t outlen)
{
	const struct kw_log_check *lc = o->log;
	const char *platform = json_string_value(
		json_object_get(json_object_get(rec, "runtime"), "platform"));
	char tp[KW_THUMBPRINT_MAX] = "embedded key", log[160] = "";

	if (o->trusted)
		kw_key_thumbprint(o->trusted, tp);
	if (lc)
		snprintf(log, sizeof(log),
			 "; decision log matches (%" PRIu64 " entries: %" PRIu64 " decisions, %" PRIu64
			 " denials%s)",
			 lc->entries, lc->decisions, lc->denials,
			 lc->resumes ? ", collector resumed" : "");
	snprintf(out, outlen, "subject %s, iat %.0f, key %s%s%s%s",
		 json_string_value(json_object_get(rec, "subject")),
		 json_number_value(json_object_get(rec, "iat")), tp, log,
		 o->bundle ? "; policy bundle matches" : "",
		 /* A tpm2 measurement is the PCR digest: only appraisal checks it. */
		 o->bundle && o->image_digest && platform && !strcmp(platform, "software-only")
			 ? "; measurement matches" : "");
}

const char *verify_image_digest(const json_t *rec, char out[KW_DIGEST_STR_MAX])
{
	const char *d = json_string_value(
		json_object_get(json_object_get(rec, "build_provenance"), "digest"));

	if (!d || !kw_digest_valid(d))
		return NULL;
	snprintf(out, KW_DIGEST_STR_MAX, "%s", d);
	return out;
}

int verify_appraise(const json_t *evidence, const char *text, size_t len,
		    const struct kw_appraise_opts *ao, struct kw_appraise_result *res)
{
	/* The record as signed: the parsed copy a verification keeps has no
	 * signature. */
	json_t *whole = jcs_parse(text, len, NULL);
	int a = kw_appraise(evidence, whole, ao, res);

	json_decref(whole);
	return a;
}

/* With --log, the evidence must be the one the log's close entry names,
 * for the host its open entry names. */
static int appraise(const struct verify_request *rq, const struct kw_buf *text,
		    const struct kw_log_check *lc, struct verify_verdict *v, char *err,
		    size_t errlen)
{
	struct kw_appraise_opts ao = *rq->appraise;
	char evidence[KW_DIGEST_STR_MAX], machine_id[128];
	int a;

	if (lc) {
		kw_log_field_string(&lc->close_evidence, evidence, sizeof(evidence));
		kw_log_field_string(&lc->machine_id, machine_id, sizeof(machine_id));
		ao.logged_evidence = evidence;
		ao.logged_machine_id = machine_id;
	}
	a = rq->evidence ? verify_appraise(rq->evidence, text->data, text->len, &ao, &v->appraisal)
			 : verify_appraise_inline(text->data, text->len, &ao, &v->appraisal);

	if (a < 0) {
		snprintf(err, errlen, "appraisal: %s", strerror(-a));
		return -1;
	}
	v->appraised = true;
	return 0;
}

static int transparency(const struct verify_request *rq, const struct kw_buf *text,
			struct verify_verdict *v, char *err, size_t errlen)
{
	char proof[4096];

	if (!rq->tlog_proof && !rq->record_path) {
		snprintf(err, errlen, "a record given as bytes needs the path of its tlog proof");
		return -1;
	}
	snprintf(proof, sizeof(proof), "%s.tlog-proof", rq->record_path ? rq->record_path : "");
	if (verify_transparency(rq->tlog_policy, rq->tlog_proof ? rq->tlog_proof : proof, text->data,
				text->len, &v->tlog, err, errlen))
		return -1;
	v->tlog_checked = true;
	return 0;
}

/* The level and the exit status, from the checks made. */
static void conclude(const struct verify_request *rq, int ret, struct verify_verdict *v)
{
	bool ok = v->res.reason == KW_VERIFY_OK;
	bool tpm_ok = ok && v->appraised && v->appraisal.step == KW_APPRAISE_OK;

	v->logged = ok && v->tlog_checked && v->tlog.step == 0;
	v->level = kw_level_of(tpm_ok, v->logged);
	v->valid = ret == 0 &&
		   (!(rq->evidence || rq->appraise_inline) || v->appraisal.step == KW_APPRAISE_OK) &&
		   (!v->tlog_checked || v->tlog.step == 0);
}

/* The log's lines to the checkpoint chain and to the caller's on_entry. */
struct entry_fanout {
	struct verify_ckpt ck;
	const struct verify_request *rq;
};

static int fanout_entry(void *ctx, const char *line, size_t len)
{
	struct entry_fanout *f = ctx;

	verify_ckpt_entry(&f->ck, line, len);
	return f->rq->on_entry ? f->rq->on_entry(f->rq->entry_ctx, line, len) : 0;
}

/* Opens the log's checkpoints for the key the record is checked under (the
 * trusted one, else its own cnf.jwk). false: none to check. */
static bool checkpoints_begin(const struct verify_request *rq, const struct kw_verify_opts *o,
			      const json_t *rec, struct entry_fanout *f, struct kw_key **own)
{
	const char *p = rq->checkpoints_path;
	const struct kw_key *key;
	int e;

	if (!p && (!rq->log_path || !strcmp(rq->log_path, "-")))
		return false;
	if (!o->trusted &&
	    kw_key_from_jwk(json_object_get(json_object_get(rec, "cnf"), "jwk"), own))
		return false;
	f->rq = rq;
	key = o->trusted ? o->trusted : *own;
	e = p ? verify_ckpt_init(&f->ck, key, p) : verify_ckpt_init_beside(&f->ck, key, rq->log_path);
	/* no file: the close entry must name no checkpoint */
	return e == 0 || e == -ENOENT;
}

/* The chain against the log and the close entry: a problem makes the
 * record invalid (it outranks an incomplete log: it says what was changed). */
static int checkpoints_end(struct entry_fanout *f, int ret, struct verify_verdict *v)
{
	enum kw_verify_reason r;

	verify_ckpt_end(&f->ck);
	r = verify_ckpt_bound(&f->ck);
	verify_ckpt_free(&f->ck);
	v->checkpointed = f->ck.chain || f->ck.close_chain >= 0 || r != KW_VERIFY_OK;
	if (v->checkpointed)
		verify_ckpt_describe(&f->ck, v->checkpoints_text, sizeof(v->checkpoints_text));
	if (r != KW_VERIFY_OK && (ret == 0 || v->res.reason == KW_VERIFY_LOG_INCOMPLETE ||
				  v->res.reason == KW_VERIFY_LOG_INCONSISTENT)) {
		kw_verify_result_set(&v->res, r, "%s", f->ck.why);
		v->res.warning[0] = '\0';
		return 1;
	}
	return ret;
}

/* The record, then its log, bundle and measurement: kw_record_verify's
 * steps with the log streamed. ret as kw_record_verify's. */
static int verify_evidence(const struct verify_request *rq, const struct kw_buf *text,
			   int log_fd, uint64_t log_size, const struct kw_buf *bundle,
			   struct kw_log_check *lc, bool *lc_live, struct verify_verdict *v)
{
	struct kw_verify_opts o = rq->opts;
	struct verify_request fan_rq = *rq;
	struct entry_fanout fan = { 0 };
	struct kw_key *own = NULL;
	bool ck = false;
	char image[KW_DIGEST_STR_MAX];
	json_t *rec = NULL;
	int ret;

	if (rq->bundle_path) {
		o.bundle = bundle->data ? bundle->data : "";
		o.bundle_len = bundle->len;
	} else if (rq->bundle) {
		o.bundle = rq->bundle;
		o.bundle_len = rq->bundle_len;
	}
	ret = kw_record_verify_signed(text->data ? text->data : "", text->len, &o, &v->res, &rec);
	if (ret == 0 && (log_fd >= 0 || rq->read_log)) {
		ck = checkpoints_begin(rq, &o, rec, &fan, &own);
		if (ck) {
			fan_rq.on_entry = fanout_entry;
			fan_rq.entry_ctx = &fan;
		}
		ret = check_log(&fan_rq, lc, lc_live, log_fd, log_size);
		if (ret == 0)
			o.log = lc;
	}
	if (ret == 0 && o.bundle && !o.image_digest)
		o.image_digest = verify_image_digest(rec, image);
	if (ret == 0)
		ret = kw_record_verify_evidence(rec, &o, &v->res);
	if (ret == 0 && rq->state && o.log)
		ret = verify_state_commitment(rq->state, rec, lc, &v->res);
	if (ck && ret >= 0 && lc->problem == KW_VERIFY_OK)
		ret = checkpoints_end(&fan, ret, v);
	else if (ck)
		verify_ckpt_free(&fan.ck);
	kw_key_free(own);
	if (ret == 0)
		describe(rec, &o, v->detail, sizeof(v->detail));
	completeness_of(o.log, v);
	json_decref(rec);
	return ret;
}

int verify_record(const struct verify_request *rq, struct verify_verdict *v, char *err,
		  size_t errlen)
{
	struct kw_buf text = { 0 }, bundle = { 0 };
	struct kw_log_check own = { 0 }, *lcp = rq->log_check ? rq->log_check : &own;
	uint64_t log_size = 0;
	bool lc_live = false;
	int ret, status = -1, log_fd = -1;

	memset(v, 0, sizeof(*v));
	if (!rq->record_path) {
		text.data = (char *)rq->record_text; /* borrowed: not freed below */
		text.len = rq->record_len;
	} else if (verify_read("record", rq->record_path, VERIFY_RECORD_MAX, &text, err, errlen)) {
		goto out;
	}
	if (rq->log_path && (log_fd = open_log(rq->log_path, &log_size, err, errlen)) < 0)
		goto out;
	if (rq->bundle_path &&
	    verify_read("policy bundle", rq->bundle_path, VERIFY_BUNDLE_MAX, &bundle, err, errlen))
		goto out;
	ret = verify_evidence(rq, &text, log_fd, log_size, &bundle, lcp, &lc_live, v);
	if (ret < 0) {
		snprintf(err, errlen, "%s", ret == -ENOMEM ? "out of memory" : v->res.message);
		goto out;
	}
	if (ret == 0 && (rq->evidence || rq->appraise_inline) &&
	    appraise(rq, &text, lc_live && rq->log_path ? lcp : NULL, v, err, errlen))
		goto out;
	if (ret == 0 && rq->tlog_policy && transparency(rq, &text, v, err, errlen))
		goto out;
	conclude(rq, ret, v);
	status = 0;
out:
	if (lc_live && !rq->log_check)
		kw_log_check_free(&own);
	if (log_fd >= 0)
		close(log_fd);
	if (rq->record_path)
		kw_buf_free(&text);
	kw_buf_free(&bundle);
	return status;
}
