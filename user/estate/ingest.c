/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness estate ingest, see ingest.h.
 *
 * Per record, in the order `kwitness verify --dir` uses: read the record
 * (at most CLI-sized, never through a link), skip it when the database
 * already holds it (session + record digest), check it up to its signature
 * under the trusted key its cnf.jwk names, then open a transaction, insert
 * the record row and stream the log through kw_log_check with every line
 * going to the entries table, and check the evidence (transcript hash, call
 * count, log structure, bundle, measurement). Only a record that verifies is
 * committed; any other is rolled back and listed in rejected. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/digest.h"
#include "jcs/jcs.h"
#include "trace/logverify.h"
#include "policy/policy.h"
#include "trace/statedir.h"
#include "estate/entry.h"
#include "estate/ingest.h"
#include "estate/ingest_tx.h"
#include "estate/ingest_pipe.h"
#include "estate/lineage.h"
#include "lib/base64.h"
#include "tlog/record_check.h"
#include "tlog/record_url.h"
#include "tlog/witness.h"
#include "verify/verdict.h"

#define SESSION_ID_LEN KW_SESSION_ID_LEN
#define RECORD_MAX ((size_t)1 << 20)
#define PROGRESS_EVERY 4096
/* Host strings kept from the open entry (kwitnessd cuts them far below). */
#define HOST_FIELD_MAX 512

/* One record on its way in. */
struct item {
	struct estate_ingest *ing;
	const char *path;
	char session[SESSION_ID_LEN + 1];
	char digest[KW_DIGEST_STR_MAX];
	struct kw_verify_result res;
	/* From the log's open and close entries, as the log streams. */
	char hostname[HOST_FIELD_MAX], machine_id[HOST_FIELD_MAX], boot_id[HOST_FIELD_MAX],
		kernel[HOST_FIELD_MAX];
	int64_t opened_us, closed_us;
	char evidence[80];           /* the close entry's evidence name, sha256:<hex> */
	int db_failed;
	uint64_t lines;              /* of the log, so far (the verifying thread's) */
	uint64_t stored_lines;       /* given to the database (the writer's) */
	bool oom;                    /* the verifying thread ran out of memory */
	struct estate_pipe *pipe;
	int logs_dir;                /* the state folder's logs/, for the log's segments */
	const struct kw_state_dir *st; /* its folder: commit/ for the TPM commitment */
	struct estate_lineage *lineage; /* its proc entries, for procs */
};

static void db_error(struct estate_ingest *ing, const char *what)
{
	snprintf(ing->err, sizeof(ing->err), "database: %.60s: %.500s", what, ing->db->err);
}

static const char *member_str(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);

	return json_string_value(b ? json_object_get(v, b) : v);
}

static int64_t member_int(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);

	v = b ? json_object_get(v, b) : v;
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

static void keep(char *dst, size_t n, const json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));

	snprintf(dst, n, "%s", v ? v : "");
}

/* Every canonical line of the log, on the verifying thread: read into its
 * columns and handed to the writer (ingest_pipe.h). */
static int on_entry(void *ctx, const char *line, size_t len)
{
	struct item *it = ctx;
	struct estate_entry *e;
	bool oom = false;

	it->lines++;
	e = estate_pipe_slot(it->pipe, it->lines, line, len, &oom);
	if (!e) {
		it->oom = oom;
		return oom ? -ENOMEM : -EIO;
	}
	if (e->parsed && it->lines == 1 && !strcmp(e->tool, "kwitness.open")) {
		keep(it->hostname, sizeof(it->hostname), e->parsed, "hostname");
		keep(it->machine_id, sizeof(it->machine_id), e->parsed, "machine_id");
		keep(it->boot_id, sizeof(it->boot_id), e->parsed, "boot_id");
		keep(it->kernel, sizeof(it->kernel), e->parsed, "kernel");
		it->opened_us = e->has_ts ? e->ts_us : 0;
	} else if (e->parsed && !strcmp(e->tool, "kwitness.close")) {
		it->closed_us = e->has_ts ? e->ts_us : 0;
		keep(it->evidence, sizeof(it->evidence), e->parsed, "evidence");
	}
	if (estate_lineage_note(&it->lineage, e)) {
		estate_entry_clear(e);
		it->oom = true;
		return -ENOMEM;
	}
	estate_pipe_push(it->pipe);
	return 0;
}

/* Every entry, on the writer's thread, in log order. */
static int store_entry(void *ctx, struct estate_entry *e)
{
	struct item *it = ctx;
	struct estate_ingest *ing = it->ing;

	if (ing->db->ops->entries_add(ing->db, e)) {
		it->db_failed = 1;
		return -EIO;
	}
	ing->entries++;
	it->stored_lines++;
	if (ing->progress && it->stored_lines % PROGRESS_EVERY == 0)
		ing->progress(ing->ctx, ing);
	return 0;
}

static int reject(struct estate_ingest *ing, struct item *it)
{
	struct estate_val p[6] = { EV_S(it->path), EV_S(it->session), EV_S(it->digest),
				   EV_S(kw_verify_reason_code(it->res.reason)),
				   EV_S(it->res.message), EV_I(ing->now) };

	ing->rejected++;
	if (it->res.reason < KW_VERIFY_REASON_COUNT)
		ing->by_reason[it->res.reason]++;
	if (ing->rejected_fn)
		ing->rejected_fn(ing->ctx, it->path, kw_verify_reason_code(it->res.reason),
				 it->res.message);
	if (estate_query(ing->db,
			 "INSERT INTO rejected (path, session, record_digest, reason, message, rejected_at)"
			 " VALUES ($1, $2, $3, $4, $5, $6)"
			 " ON CONFLICT (path, record_digest, reason) DO NOTHING",
			 p, 6, NULL, NULL)) {
		db_error(ing, "cannot list a rejected record");
		return -1;
	}
	return 0;
}

/* The level of a verified record: 1 when its TPM evidence passes every
 * step of the appraisal `kwitness verify --evidence` makes. why says what
 * held it at 0. */
static int appraise(struct estate_ingest *ing, const struct item *it, const json_t *rec,
		    const char *text, int evidence_dir, char *why, size_t whylen)
{
	const char *platform = member_str(rec, "runtime", "platform");
	struct kw_appraise_result ar = { 0 };
	struct kw_buf ev_text = { 0 };
	json_t *ev = NULL;
	int fd, e, level = 0;

	why[0] = '\0';
	if (!platform || strcmp(platform, "tpm2"))
		return 0;
	if (!ing->tpm) {
		snprintf(why, whylen, "TPM evidence not appraised (no --tpm-ca and --enroll-key)");
		return 0;
	}
	if (strncmp(it->evidence, "sha256:", 7) || strlen(it->evidence) != 71 ||
	    strspn(it->evidence + 7, "0123456789abcdef") != 64) {
		snprintf(why, whylen, "the log's trailer names no TPM evidence");
		return 0;
	}
	{
		char name[80];

		snprintf(name, sizeof(name), "%s.json", it->evidence + 7);
		fd = kw_state_open_file(evidence_dir, name);
	}
	if (fd < 0) {
		snprintf(why, whylen, "the evidence file evidence/%.64s.json cannot be used: %s",
			 it->evidence + 7, kw_state_open_error(fd));
		return 0;
	}
	e = kw_read_fd(fd, KW_TPM_EVIDENCE_MAX, &ev_text);
	close(fd);
	if (!e)
		ev = jcs_parse(ev_text.data ? ev_text.data : "", ev_text.len, NULL);
	if (!ev) {
		snprintf(why, whylen, "the evidence file cannot be read as JSON");
		goto out;
	}
	{
		/* The file's name is no proof: its quote must be the one the log
		 * names, its AK enrolled for the host the log names. */
		struct kw_appraise_opts ao = *ing->tpm;

		ao.logged_evidence = it->evidence;
		ao.logged_machine_id = it->machine_id;
		e = verify_appraise(ev, text, strlen(text), &ao, &ar);
	}
	level = kw_appraise_level(e, &ar, why, whylen);
out:
	json_decref(ev);
	kw_buf_free(&ev_text);
	return level;
}

/* Whether the record is proven logged: 1 when its tlog-proof passes every
 * step of the check `kwitness verify --transparency` makes (v holds what
 * it proved), 0 when not (why says what held it back; '' for a record that
 * names no log), -1 when the run cannot go on. */
static int prove_logged(struct estate_ingest *ing, const json_t *rec, const char *text,
			int proof_fd, const char *proof_name, struct kw_buf *proof,
			struct tlog_verdict *v, char *why, size_t whylen)
{
	int e;

	why[0] = '\0';
	if (!json_object_get(rec, "transparency"))
		return 0;
	if (!ing->tlog) {
		snprintf(why, whylen, "transparency not checked (no --transparency POLICY)");
		return 0;
	}
	if (proof_fd < 0) {
		snprintf(why, whylen, "tlog_proof_missing: the proof %.300s cannot be used: %s",
			 proof_name, kw_state_open_error(proof_fd));
		return 0;
	}
	e = kw_read_fd(proof_fd, TLOG_WITNESS_REQUEST_MAX, proof);
	if (e) {
		snprintf(why, whylen, "tlog_proof_malformed: the proof %.300s cannot be read: %s",
			 proof_name, kw_state_open_error(e));
		return 0;
	}
	if (tlog_check_record(ing->tlog, proof->data ? proof->data : "", proof->len, proof_name,
			      text, strlen(text), v)) {
		snprintf(ing->err, sizeof(ing->err), "out of memory");
		return -1;
	}
	if (v->step) {
		snprintf(why, whylen, "%s: transparency step %d: %s", v->code, v->step, v->message);
		return 0;
	}
	return 1;
}

/* The record's row, last, with everything known: a pushing host's role
 * may insert, never update (docs/estate.md). */
static const char insert_record[] =
	"INSERT INTO records (id, session, record_digest, sandbox_id, hostname, machine_id, boot_id,"
	" kernel, signer, bundle_hash, enforcement_mode, platform, level, complete, incomplete_why,"
	" iat, opened_us, closed_us, decisions, denials, transcript_hash, call_count, image_digest,"
	" record_path, record_json, ingested_at, appraisal, trace_level, transparency, log_origin,"
	" log_index, checkpoint_size, checkpoint_root, checkpoint)"
	" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,"
	" $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34)"
	" ON CONFLICT (session, record_digest) DO NOTHING RETURNING id";

struct log_source {
	int fd, dir;
	char name[SESSION_ID_LEN + 8];
};

static int read_log_fd(void *ctx, struct kw_log_check *lc)
{
	const struct log_source *src = ctx;

	lc->seg_dirfd = src->dir; /* segment 1 is logs/<session>.jsonl (logsegment.h) */
	lc->seg_log = src->name;
	return kw_log_check_fd(lc, src->fd);
}

/* The verifier's call, as the verifying thread makes it. */
struct check_call {
	struct verify_request rq;
	struct verify_verdict v;
	char err[500];
};

static int run_verify(void *arg)
{
	struct check_call *c = arg;

	return verify_record(&c->rq, &c->v, c->err, sizeof(c->err));
}

/* The record judged by the one verifier (verify/verdict.h) with its log
 * streamed into its entries as the check reads it (lc: the verifier's log
 * check, left for the row's counts): 0 valid, 1 not (it->res says why), -1
 * when the run cannot go on (ing->err). */
static int check_log(struct estate_ingest *ing, struct item *it, const char *text,
		     const struct kw_key *key, int *log_fd, const struct kw_buf *bundle,
		     struct kw_log_check *lc)
{
	struct log_source src = { .fd = *log_fd, .dir = it->logs_dir };
	struct check_call c = { .rq = {
		.opts = { .trusted = key, .now = ing->now, .skew = ing->skew, .call_count = -1,
			  .allow_incomplete = true },
		.record_text = text, .record_len = strlen(text),
		.bundle = bundle->data ? bundle->data : "", .bundle_len = bundle->len,
		.read_log = read_log_fd, .read_log_ctx = &src,
		.on_entry = on_entry, .entry_ctx = it, .expect_session = it->session,
		.log_check = lc, .state = it->st,
	} };
	int e, store_rc;

	snprintf(src.name, sizeof(src.name), "%s.jsonl", it->session);
	e = estate_pipe_run(it->pipe, run_verify, &c, store_entry, it, &store_rc);
	ing->log_bytes += lc->bytes;
	if (it->db_failed) {
		db_error(ing, "cannot add an entry");
		return -1;
	}
	if (it->oom) {
		snprintf(ing->err, sizeof(ing->err), "out of memory");
		return -1;
	}
	if (e) {
		snprintf(ing->err, sizeof(ing->err), "verification failed: %s",
			 e < 0 && !c.err[0] ? strerror(errno) : c.err);
		return -1;
	}
	it->res = c.v.res;
	return c.v.valid ? 0 : 1;
}

/* The host the log's open entry names must be one the signer's key may
 * sign for (the trust folder's hosts file): 0, or 1 with it->res set. */
static int check_host(const struct estate_ingest *ing, struct item *it, const char *signer)
{
	if (estate_trust_allows_host(ing->trust, signer, it->hostname, it->machine_id))
		return 0;
	kw_verify_result_set(&it->res, KW_VERIFY_HOST_MISMATCH,
			     "The record names host %.200s (machine id %.100s), which its signer %s "
			     "is not trusted to sign for (the trust folder's hosts file)",
			     it->hostname, it->machine_id, signer);
	return 1;
}

/* A session id the estate holds under another signer is not taken again:
 * 0, 1 with it->res set, -1 when the run cannot go on. */
static int check_session(struct estate_ingest *ing, struct item *it, const char *signer)
{
	struct estate_val p[2] = { EV_S(it->session), EV_S(signer) };
	int64_t n = 0;

	if (estate_query_int(ing->db,
			     "SELECT count(*) FROM records WHERE session = $1 AND signer <> $2", p, 2,
			     &n)) {
		db_error(ing, "lookup");
		return -1;
	}
	if (!n)
		return 0;
	kw_verify_result_set(&it->res, KW_VERIFY_SESSION_CONFLICT,
			     "The estate already holds session %s under another signer; a record "
			     "signed by %s for it is refused", it->session, signer);
	return 1;
}

/* What a stored record's row holds besides the record itself. */
struct finish {
	int64_t id;
	const char *signer;
	const struct kw_log_check *lc;
	enum kw_level level;
	const char *level_why, *tlog_why;
	const struct tlog_verdict *tv; /* NULL: not proven logged */
	const char *root, *checkpoint;
	const struct kw_buf *bundle;
};

/* The record's row and its policy. 0, 1 when another ingest stored the
 * record meanwhile, -1 on a database error. */
static int insert_row(struct estate_ingest *ing, const struct item *it, const json_t *rec,
		      const char *text, const struct finish *f)
{
	const char *digest = member_str(rec, "build_provenance", "digest");
	const struct kw_log_check *lc = f->lc;
	const struct tlog_verdict *tv = f->tv;
	struct estate_val none = { .type = EV_NULL };
	struct estate_val p[34] = {
		EV_I(f->id), EV_S(it->session), EV_S(it->digest), EV_S(member_str(rec, "subject", NULL)),
		EV_S(it->hostname), EV_S(it->machine_id), EV_S(it->boot_id), EV_S(it->kernel),
		EV_S(f->signer), EV_S(member_str(rec, "policy", "bundle_hash")),
		EV_S(member_str(rec, "policy", "enforcement_mode")),
		EV_S(member_str(rec, "runtime", "platform")), EV_I(kw_level_number(f->level)),
		EV_I(lc->complete), EV_S(lc->complete ? "" : lc->incomplete_why),
		EV_I(member_int(rec, "iat", NULL)), EV_I(it->opened_us), EV_I(it->closed_us),
		EV_I(lc->decisions), EV_I(lc->denials), EV_S(member_str(rec, "tool_transcript", "hash")),
		EV_I(member_int(rec, "tool_transcript", "call_count")), EV_S(digest ? digest : ""),
		EV_S(it->path), EV_S(text), EV_I(ing->now), EV_S(f->level_why),
		EV_S(kw_level_name(f->level)), EV_S(f->tlog_why), EV_S(tv ? tv->origin : ""),
		tv ? EV_I(tv->index) : none, tv ? EV_I(tv->size) : none, EV_S(f->root),
		EV_S(f->checkpoint ? f->checkpoint : ""),
	};
	struct estate_val pp[2] = { EV_S(member_str(rec, "policy", "bundle_hash")),
				    EV_S(f->bundle->data ? f->bundle->data : "") };
	int64_t id = -1;

	if (estate_query_int(ing->db, insert_record, p, 34, &id)) {
		db_error(ing, "cannot add a record");
		return -1;
	}
	if (id < 0)
		return 1;
	/* A bundle is JSON text (policy.c refuses anything else), so it fits a
	 * TEXT column as it is. */
	if (estate_query(ing->db,
			 "INSERT INTO policies (bundle_hash, bundle) VALUES ($1, $2)"
			 " ON CONFLICT (bundle_hash) DO NOTHING",
			 pp, 2, NULL, NULL)) {
		db_error(ing, "cannot add a policy");
		return -1;
	}
	return 0;
}

/* The record's log and bundle through the checks, its rows into the
 * database. rec: the record without its signature, verified so far. */
static int store(struct estate_ingest *ing, struct item *it, const json_t *rec, const char *text,
		 const struct kw_key *key, int log_fd, const struct kw_buf *bundle, int evidence_dir,
		 const char *signer,
		 int proof_fd, const char *proof_name)
{
	char level_why[400], tlog_why[600], root[KW_B64_LEN(TLOG_HASH_LEN)] = "";
	char *checkpoint = NULL;
	struct kw_buf proof = { 0 };
	struct tlog_verdict tv;
	enum kw_level level;
	int tpm_level, logged;
	struct kw_log_check lc = { 0 };
	int64_t id = -1;
	bool in_tx = false, in_copy = false;
	int e, ret = -1;

	if (estate_tx_record_begin(ing)) {
		db_error(ing, "begin");
		goto out;
	}
	in_tx = true;
	if (estate_query_int(ing->db, ing->db->next_record_id, NULL, 0, &id) || id < 0) {
		db_error(ing, "cannot number a record");
		goto out;
	}
	if (ing->db->ops->entries_begin(ing->db, id)) {
		db_error(ing, "cannot start the entries");
		goto out;
	}
	in_copy = true;

	e = check_log(ing, it, text, key, &log_fd, bundle, &lc);
	if (e < 0)
		goto out;
	in_copy = false;
	if (ing->db->ops->entries_end(ing->db, e == 0)) {
		db_error(ing, "cannot end the entries");
		goto out;
	}
	/* What the estate refuses of a record that verifies. */
	if (e == 0)
		e = check_session(ing, it, signer);
	if (e == 0)
		e = check_host(ing, it, signer);
	if (e < 0)
		goto out;
	if (e > 0) {
		/* Not evidence: nothing of it stays. */
		in_tx = false;
		ing->entries -= it->stored_lines;
		if (estate_tx_record_drop(ing)) {
			db_error(ing, "rollback");
			goto out;
		}
		ret = reject(ing, it);
		goto out;
	}
	tpm_level = appraise(ing, it, rec, text, evidence_dir, level_why, sizeof(level_why));
	logged = prove_logged(ing, rec, text, proof_fd, proof_name, &proof, &tv, tlog_why,
			      sizeof(tlog_why));
	if (logged < 0)
		goto out;
	if (logged) {
		kw_b64_encode(KW_B64_STD, tv.root.b, TLOG_HASH_LEN, root);
		checkpoint = strndup(tv.checkpoint, tv.checkpoint_len);
		if (!checkpoint) {
			snprintf(ing->err, sizeof(ing->err), "out of memory");
			goto out;
		}
	}
	level = kw_level_of(tpm_level == 1, logged == 1);
	{
		struct finish f = { .id = id, .signer = signer, .lc = &lc, .level = level,
				    .level_why = level_why, .tlog_why = tlog_why,
				    .tv = logged ? &tv : NULL, .root = root, .checkpoint = checkpoint,
				    .bundle = bundle };

		e = insert_row(ing, it, rec, text, &f);
		if (e == 0 && estate_lineage_store(ing->db, id, it->lineage)) {
			db_error(ing, "cannot store the process entries");
			goto out;
		}
		if (e < 0)
			goto out;
		if (e > 0) { /* another ingest stored it meanwhile: its entries stay */
			ing->already++;
			ret = 0;
			goto out;
		}
	}
	in_tx = false;
	ing->stored++;
	ing->incomplete += !lc.complete;
	ing->by_level[level]++;
	if (estate_tx_record_keep(ing, it->stored_lines)) {
		db_error(ing, "commit");
		goto out;
	}
	ret = 0;
out:
	if (in_copy)
		ing->db->ops->entries_end(ing->db, false);
	if (in_tx) {
		ing->entries -= it->stored_lines;
		char why[sizeof(ing->db->err)];

		snprintf(why, sizeof(why), "%s", ing->db->err);
		estate_tx_record_drop(ing);
		snprintf(ing->db->err, sizeof(ing->db->err), "%s", why);
	}
	kw_log_check_free(&lc);
	kw_buf_free(&proof);
	free(checkpoint);
	return ret;
}

static int seen_before(struct estate_ingest *ing, struct item *it, bool *seen)
{
	struct estate_val p[2] = { EV_S(it->session), EV_S(it->digest) };
	int64_t n = 0;

	if (estate_query_int(ing->db,
			     "SELECT count(*) FROM records WHERE session = $1 AND record_digest = $2", p,
			     2, &n)) {
		db_error(ing, "lookup");
		return -1;
	}
	*seen = n > 0;
	return 0;
}

/* A record whose files cannot be found, judged by itself (the verifier
 * without log or bundle): it->res keeps the files' reason when the record
 * holds. 0, or -1 when the run cannot go on. */
static int judge_alone(struct estate_ingest *ing, struct item *it, const char *text, size_t len,
		       const struct kw_key *key)
{
	struct verify_request rq = {
		.opts = { .trusted = key, .now = ing->now, .skew = ing->skew, .call_count = -1 },
		.record_text = text, .record_len = len,
	};
	struct verify_verdict v;
	char err[500];

	if (verify_record(&rq, &v, err, sizeof(err))) {
		snprintf(ing->err, sizeof(ing->err), "verification failed: %s", err);
		return -1;
	}
	if (!v.valid)
		it->res = v.res;
	return 0;
}

/* One record file (rec_fd, or a negative errno) of state folder st. */
/* proof_path: where the record's tlog-proof is (a record file given by
 * itself); NULL: records/<session>.json.tlog-proof of the state folder. */
static int ingest_record(struct estate_ingest *ing, const struct kw_state_dir *st, const char *path,
			 const char *session, int rec_fd, const char *proof_path)
{
	char proof_name[4300] = "";
	int proof_fd = -ENOENT;
	struct item it = { .ing = ing, .path = path, .logs_dir = st->logs, .st = st,
			   .pipe = ing->pipe };
	struct kw_buf text = { 0 }, bundle = { 0 };
	char signer[KW_THUMBPRINT_MAX] = "";
	const struct kw_key *key = NULL;
	json_t *rec = NULL;
	bool seen;
	int e, ret = -1, log_fd = -1;

	ing->records++;
	snprintf(it.session, sizeof(it.session), "%s", session ? session : "");
	e = rec_fd < 0 ? rec_fd : kw_read_fd(rec_fd, RECORD_MAX, &text);
	if (e) {
		kw_verify_result_set(&it.res, KW_VERIFY_RECORD_UNREADABLE,
				     "The record file cannot be read: %s", kw_state_open_error(e));
		ret = reject(ing, &it);
		goto out;
	}
	if (kw_digest_buf(KW_SHA256, text.data ? text.data : "", text.len, it.digest)) {
		snprintf(ing->err, sizeof(ing->err), "cannot hash a record");
		goto out;
	}
	if (seen_before(ing, &it, &seen))
		goto out;
	if (seen) {
		ing->already++;
		ret = 0;
		goto out;
	}
	/* The key the record names, if the estate trusts it; the files it names
	 * (the verifier judges the record and checks them). */
	rec = jcs_parse(text.data ? text.data : "", text.len, NULL);
	if (json_is_object(rec) &&
	    !kw_jwk_thumbprint(json_object_get(json_object_get(rec, "cnf"), "jwk"), signer))
		key = estate_trust_find(ing->trust, signer);
	if (!json_is_object(rec) ||
	    kw_state_find_evidence(st, session, rec, &log_fd, &bundle, &it.res)) {
		/* A record that fails on its own is refused for that first. */
		if (judge_alone(ing, &it, text.data ? text.data : "", text.len, key))
			goto out;
		ret = reject(ing, &it);
		goto out;
	}
	if (ing->tlog && json_object_get(rec, "transparency")) {
		if (proof_path) {
			snprintf(proof_name, sizeof(proof_name), "%s", proof_path);
			proof_fd = kw_open_regular_at(AT_FDCWD, proof_path);
		} else {
			snprintf(proof_name, sizeof(proof_name), "records/%s.json%s", session,
				 TLOG_PROOF_EXT);
			proof_fd = kw_state_open_file(st->records, proof_name + 8);
		}
	}
	ret = store(ing, &it, rec, text.data ? text.data : "", key, log_fd, &bundle, st->evidence,
		    signer, proof_fd, proof_name);
out:
	if (proof_fd >= 0)
		close(proof_fd);
	if (ing->progress)
		ing->progress(ing->ctx, ing);
	if (log_fd >= 0)
		close(log_fd);
	json_decref(rec);
	kw_buf_free(&text);
	kw_buf_free(&bundle);
	estate_lineage_free(it.lineage);
	return ret;
}

static int ingest_state(struct estate_ingest *ing, const char *dirpath, struct kw_state_dir *st)
{
	int dfd = dup(st->records), ret = 0;
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		snprintf(ing->err, sizeof(ing->err), "cannot read %s/records: %s", dirpath,
			 strerror(errno));
		return -1;
	}
	while (ret == 0 && (de = readdir(d))) {
		char path[4200], id[SESSION_ID_LEN + 1];

		if (!kw_is_record_name(de->d_name))
			continue;
		memcpy(id, de->d_name, SESSION_ID_LEN);
		id[SESSION_ID_LEN] = '\0';
		snprintf(path, sizeof(path), "%s/records/%s", dirpath, de->d_name);
		ret = ingest_record(ing, st, path, id, kw_state_open_file(st->records, de->d_name),
				    NULL);
	}
	closedir(d);
	return ret;
}

static int ingest_path(struct estate_ingest *ing, const char *path);

/* What a path held is committed when its ingest ends, also when it stops
 * at an error: the records stored before it stay. */
int estate_ingest_path(struct estate_ingest *ing, const char *path)
{
	int ret;

	ing->pipe = estate_pipe_new();
	if (!ing->pipe) {
		snprintf(ing->err, sizeof(ing->err), "out of memory");
		return -1;
	}
	ret = ingest_path(ing, path);
	estate_pipe_free(ing->pipe);
	ing->pipe = NULL;

	if (estate_tx_end(ing) && !ret) {
		db_error(ing, "commit");
		ret = -1;
	}
	return ret;
}

static int ingest_path(struct estate_ingest *ing, const char *path)
{
	struct kw_state_dir st;
	struct stat sb;
	int ret;

	if (stat(path, &sb)) {
		snprintf(ing->err, sizeof(ing->err), "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(sb.st_mode)) {
		DIR *d;
		struct dirent *de;

		if (kw_state_dir_open(path, &st) == 0) {
			ret = ingest_state(ing, path, &st);
			kw_state_dir_close(&st);
			return ret;
		}
		kw_state_dir_close(&st);
		/* A folder of state folders, one per host. */
		d = opendir(path);
		if (!d) {
			snprintf(ing->err, sizeof(ing->err), "cannot read %s: %s", path, strerror(errno));
			return -1;
		}
		ret = 0;
		while (ret == 0 && (de = readdir(d))) {
			char sub[4200];
			struct stat ls;

			if (de->d_name[0] == '.')
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
			if (lstat(sub, &ls) || !S_ISDIR(ls.st_mode))
				continue;
			if (kw_state_dir_open(sub, &st) == 0)
				ret = ingest_state(ing, sub, &st);
			kw_state_dir_close(&st);
		}
		closedir(d);
		return ret;
	}
	/* A record file: records/<session>.json of a state folder. */
	{
		char copy[4200], parent[4300], proof[4300], *base;
		bool named;

		snprintf(copy, sizeof(copy), "%s", path);
		base = basename(copy);
		named = kw_is_record_name(base);
		char session[SESSION_ID_LEN + 1];

		snprintf(session, sizeof(session), "%.32s", base);
		snprintf(copy, sizeof(copy), "%s", path);
		snprintf(parent, sizeof(parent), "%s/..", dirname(copy));
		/* The log and bundle folders beside records/, where they are. */
		kw_state_dir_open(parent, &st);
		snprintf(proof, sizeof(proof), "%s%s", path, TLOG_PROOF_EXT);
		ret = ingest_record(ing, &st, path, named ? session : NULL,
				    kw_open_regular_at(AT_FDCWD, path), proof);
		kw_state_dir_close(&st);
		return ret;
	}
}
