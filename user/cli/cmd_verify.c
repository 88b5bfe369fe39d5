/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness verify: offline verification of a TRACE v0.2 record, or of every
 * record of a state folder (verify/batch.c). The verifier (verify/verdict.c)
 * decides; this file parses the options and prints its verdict.
 * Exit 0 valid, 1 invalid (reason code on stdout), 2 usage or input error. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jcs/jcs.h"
#include "trace/level.h"
#include "lib/options.h"
#include "trace/record.h"
#include "tpm/tpm.h"
#include "cli_key.h"
#include "cli_record.h"
#include "cmd_verify_commit.h"
#include "cmd_verify_ckpt_tlog.h"
#include "collector/transcript.h"
#include "lib/buf.h"
#include "commands.h"
#include "lib/messages.h"
#include "verify/batch.h"
#include "verify/checkpoint.h"
#include "verify/checkpoint_tlog.h"
#include "verify/transparency.h"
#include "verify/verdict.h"
#include "lib/text_safe.h"

#define DEFAULT_MAX_AGE 86400

static void verify_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness verify --key TRUSTED RECORD [--log LOG | --decisions FILE]\n"
		"           [--policy BUNDLE]\n"
		"           [--image-digest D] [--max-age SECONDS] [--skew SECONDS] [--nonce N]\n"
		"           [--allow-embedded-key] [--allow-incomplete] [--json]\n"
		"           [--evidence FILE --tpm-ca CA.pem --enroll-key KEY [--pcrs-ref FILE]]\n"
		"       kwitness verify --key TRUSTED --log DECISIONS [--checkpoints FILE]\n"
		"           [--transparency POLICY] [--json]\n"
		"       kwitness verify --key TRUSTED --dir STATE_DIR [--jobs N] [options]\n"
		"       kwitness verify --key TRUSTED [--jobs N] [options] RECORD RECORD...\n"
		"       kwitness verify --key TRUSTED --transparency POLICY [--proof FILE] RECORD [...]\n"
		"       kwitness verify --transparency POLICY --consistency OLD NEW\n\n"
		"Verifies a TRACE v0.2 (or v0.3 draft) record offline, in agentrust verify_record order:\n"
		"profile, signature form, schema, trusted key, cnf.jwk thumbprint, freshness, nonce,\n"
		"Ed25519 signature; then the evidence given must reproduce the record's hashes.\n"
		"With --evidence it then appraises the TPM 2.0 evidence in order: with --log, the\n"
		"quote the log's close entry names; EK certificate chain, AK enrollment (for this\n"
		"signing key, and the log's host), quote signature, extraData = thumbprint(cnf.jwk)\n"
		"= runtime.nonce, pcrDigest = runtime.measurement, PCR values; Level 1 only when\n"
		"every step holds. Without --evidence a record is at most Level 0.\n"
		"A decision log is read as a stream: every line must be canonical, the sequence\n"
		"numbers, open and close entries and the trailer's counts must agree, and the\n"
		"log must be complete (every decision of the session in it).\n"
		"With --dir (or several RECORDs in a state folder's records/), every record is\n"
		"verified with its log (logs/<session>.jsonl) and bundle (policies/<hash>):\n"
		"one line per failure, then a summary.\n"
		"Exit status: 0 valid (every record; and Level 1 when --evidence is given), 1\n"
		"invalid (reason code and sentence on stdout), 2 usage error.\n\n"
		"  --key TRUSTED         public JWK file or PEM public key of the signer\n"
		"  --log DECISIONS       the session's decision log (JSON Lines; - for stdin):\n"
		"                        recompute tool_transcript.hash and call_count, check\n"
		"                        the log's structure and completeness\n"
		"  --decisions FILE      instead of --log: the decisions array (or JSON Lines) a\n"
		"                        record was built from (record build --decisions):\n"
		"                        recompute tool_transcript.hash and call_count\n"
		"  --checkpoints FILE    the log's signed checkpoints (default DECISIONS.checkpoints,\n"
		"                        checked when present). Without RECORD: verify a log that\n"
		"                        may be cut (power loss) through its last checkpoint and\n"
		"                        say where the verification stops (docs/decision-log.md)\n"
		"  --policy BUNDLE       policy bundle: recompute policy.bundle_hash and, with the\n"
		"                        image digest, runtime.measurement\n"
		"  --image-digest D      image digest for runtime.measurement (default: the\n"
		"                        record's build_provenance.digest, which the signature binds)\n"
		"  --max-age SECONDS     oldest acceptable record (default %d; 0 disables)\n"
		"  --skew SECONDS        how far iat may be in the future (default %d, TRACE 3.2.2)\n"
		"  --nonce N             runtime.nonce must equal N\n"
		"  --allow-embedded-key  trust the record's own cnf.jwk when no --key is given\n"
		"  --allow-incomplete    an incomplete log (log_incomplete) is a warning, not a failure\n"
		"  --dir STATE_DIR       verify every record of a kwitnessd state folder\n"
		"  --jobs N              records verified at once (default: the number of CPUs)\n"
		"  --evidence FILE       TPM evidence (state/evidence/<digest>.json) to appraise;\n"
		"                        without it, --tpm-ca and --enroll-key appraise the\n"
		"                        evidence a trace-v0.3-draft record carries inline\n"
		"  --commit FILE         with --log and TPM evidence: the session's TPM commitment\n"
		"                        (default: state/commit/<session>.json beside the log's\n"
		"                        folder, checked whenever the open entry names tpm_counter)\n"
		"  --tpm-ca CA.pem       EK CA certificate(s) trusted for step 1\n"
		"  --enroll-key KEY      enrollment key (public JWK or PEM) trusted for step 2\n"
		"  --pcrs-ref FILE       reference PCR values {\"N\": \"hex\", ...} for step 6\n"
		"  --transparency POLICY  check the record's inclusion in a transparency log\n"
		"                        offline against a C2SP tlog-policy file (trusted logs,\n"
		"                        witnesses, quorum), each step with its own reason: 2 the\n"
		"                        record's anchor-v1 leaf (tlog_leaf_mismatch), 3 the log\n"
		"                        and the record's transparency URL (tlog_origin_mismatch),\n"
		"                        4 the log's signature (tlog_checkpoint_signature), 5 the\n"
		"                        witness quorum (tlog_witness_quorum), 6 the inclusion path\n"
		"                        (tlog_inclusion_invalid). Level 2 needs Level 1 too;\n"
		"                        without TPM evidence a logged record is \"level 0, logged\"\n"
		"                        With --log and no RECORD: each checkpoint's proof in\n"
		"                        DECISIONS.checkpoints.tlog-proofs (kwitnessd's\n"
		"                        checkpoint_tlog), present or not, and valid or not\n"
		"  --proof FILE          the C2SP tlog-proof (default RECORD.tlog-proof)\n"
		"  --consistency OLD NEW check that a log grew append-only: OLD a checkpoint, NEW\n"
		"                        the output of kwitness tlog request --old SIZE (tlog_fork,\n"
		"                        tlog_rollback, tlog_inconsistent)\n"
		"  --json                print {\"valid\":...,\"reason\":...,\"message\":...,\"level\":...}, one\n"
		"                        object per record and a summary object with --dir\n"
		"  --help                this text\n"
		"On a terminal (not with --json), long runs show progress on stderr.\n",
		DEFAULT_MAX_AGE, KW_DEFAULT_SKEW);
}

static void print_json(const struct verify_verdict *v, const struct kw_commit_result *cr,
		       json_t *extra)
{
	const struct kw_verify_result *res = &v->res;
	bool ok = res->reason == KW_VERIFY_OK;
	json_t *o = json_pack("{s:b, s:s, s:s, s:i}", "valid", ok, "reason",
			      kw_verify_reason_code(res->reason), "message", res->message, "level",
			      kw_level_number(v->level));

	if (o && v->appraised && ok)
		json_object_set_new(o, "appraisal",
				    json_pack("{s:i, s:s, s:s}", "step",
					      kw_appraise_step_number(v->appraisal.step), "reason",
					      kw_appraise_code(v->appraisal.step), "message",
					      v->appraisal.message));
	if (o && (v->completeness == VERIFY_COMPLETE || v->completeness == VERIFY_INCOMPLETE)) {
		bool complete = v->completeness == VERIFY_COMPLETE;

		json_object_set_new(o, "complete", json_boolean(complete));
		if (!complete)
			json_object_set_new(o, "incomplete", json_string(v->incomplete_why));
		json_object_set_new(o, "transcript_hash", json_string(v->transcript_hash));
		json_object_set_new(o, "log_entries", json_integer((json_int_t)v->log_entries));
	}
	if (o && res->warning[0])
		json_object_set_new(o, "warning", json_string(res->warning));
	if (o && v->checkpointed)
		json_object_set_new(o, "checkpoints", json_string(v->checkpoints_text));
	if (o && v->tlog_checked && ok) {
		json_object_set_new(o, "logged", json_boolean(v->logged));
		json_object_set_new(o, "transparency",
				    json_pack("{s:i, s:s, s:s}", "step", v->tlog.step, "reason",
					      v->tlog.code, "message", v->tlog.message));
		if (!v->logged)
			json_object_set_new(o, "valid", json_false());
	}
	if (o && cr) {
		json_object_set_new(o, "commit", json_pack("{s:s, s:s, s:I}", "reason",
							   kw_commit_code(cr->reason), "message",
							   cr->message, "events",
							   (json_int_t)cr->events));
		if (cr->reason != KW_COMMIT_OK)
			json_object_set_new(o, "valid", json_false());
	}
	if (o && extra)
		json_object_update(o, extra);
	if (o)
		cli_print_json(o, false);
	json_decref(o);
}

/* Room for a verdict's message escaped (each byte at most 4). */
#define ESC_CAP (4 * 640 + 1)

static void print_level(const struct verify_verdict *v)
{
	const struct kw_appraise_result *ap = &v->appraisal;
	char m[ESC_CAP];

	kw_text_safe(ap->message, m, sizeof(m));
	if (v->level == KW_LEVEL_2)
		printf("level 2: %s; logged and witnessed\n", m);
	else if (v->level == KW_LEVEL_0_LOGGED)
		printf("level 0, logged: %s\n", v->appraised ?
		       "the TPM appraisal failed, so Level 2 cannot hold" :
		       "no TPM evidence appraised (Level 2 needs Level 1)");
	else if (!v->appraised)
		printf("level 0: no TPM evidence appraised\n");
	else if (v->level == KW_LEVEL_1)
		printf("level 1: %s\n", m);
	else
		printf("level 0: TPM appraisal failed at step %d: %s: %s\n",
		       kw_appraise_step_number(ap->step), kw_appraise_code(ap->step), m);
}

/* The messages quote the record and the log (a sandbox chose its subject,
 * paths and names): every one is printed escaped. */
static void print_text(const struct verify_verdict *v)
{
	const struct kw_verify_result *res = &v->res;
	char a[ESC_CAP], b[ESC_CAP];

	if (res->warning[0])
		printf("warning: %s: %s\n", kw_verify_reason_code(KW_VERIFY_LOG_INCOMPLETE),
		       kw_text_safe(res->warning, a, sizeof(a)));
	if (res->reason == KW_VERIFY_OK && v->tlog_checked && !v->logged) {
		printf("invalid: %s: transparency step %d: %s\n", v->tlog.code, v->tlog.step,
		       kw_text_safe(v->tlog.message, a, sizeof(a)));
		return;
	}
	kw_text_safe(v->completeness_text, b, sizeof(b));
	if (res->reason == KW_VERIFY_OK) {
		printf("valid: record verified (%s)\n", kw_text_safe(v->detail, a, sizeof(a)));
		printf("completeness: %s\n", b);
		if (v->checkpointed)
			printf("checkpoints: %s\n", kw_text_safe(v->checkpoints_text, a, sizeof(a)));
		if (v->logged)
			printf("transparency: logged: %s\n",
			       kw_text_safe(v->tlog.message, a, sizeof(a)));
		print_level(v);
	} else {
		printf("invalid: %s: %s\n", kw_verify_reason_code(res->reason),
		       kw_text_safe(res->message, a, sizeof(a)));
		if ((v->completeness == VERIFY_COMPLETE || v->completeness == VERIFY_INCOMPLETE) &&
		    res->reason != KW_VERIFY_LOG_INCOMPLETE)
			printf("completeness: %s\n", b);
		if (v->checkpointed)
			printf("checkpoints: %s\n", kw_text_safe(v->checkpoints_text, a, sizeof(a)));
	}
}

/* The options of one verification (a few are refused with --dir). */
struct args {
	const char *keypath, *logpath, *policypath, *dir;
	const char *evpath, *enrkeypath, *refpath, *commitpath;
	struct kw_appraise_opts ao;   /* --tpm-ca; the key and PCRs once loaded */
	const char *tlog_policy, *tlog_proof, *consistency;
	const char *ckpath;
	bool as_json;
	int64_t jobs;
	const char *decisions;        /* a decisions array (record build --decisions) */
	char decisions_hash[KW_DIGEST_STR_MAX];
};

/* --transparency POLICY --consistency OLD NEW */
static int run_consistency(const struct args *a, const char *new_path)
{
	struct tlog_verdict cv;
	char err[4400];

	if (verify_consistency(a->tlog_policy, a->consistency, new_path, &cv, err, sizeof(err))) {
		fprintf(stderr, "kwitness verify: %s\n", err);
		return 2;
	}
	if (a->as_json) {
		json_t *j = json_pack("{s:b, s:s, s:s}", "valid", cv.step == 0, "reason", cv.code,
				      "message", cv.message);

		if (j)
			cli_print_json(j, false);
		json_decref(j);
	} else {
		char m[ESC_CAP];

		kw_text_safe(cv.message, m, sizeof(m));
		if (cv.step)
			printf("invalid: %s: %s\n", cv.code, m);
		else
			printf("valid: %s\n", m);
	}
	return cv.step ? 1 : 0;
}

/* --dir STATE_DIR, or several RECORDs. */
static int run_batch(const struct args *a, const struct kw_verify_opts *o, char **records, int n)
{
	struct verify_batch b = { .keypath = a->keypath, .verify = *o, .state_dir = a->dir,
				  .records = records, .n_records = n, .jobs = (int)a->jobs,
				  .json = a->as_json };

	if (a->logpath || a->policypath || o->image_digest || a->evpath || a->commitpath ||
	    a->tlog_policy || a->ckpath || a->ao.ca_file) {
		fprintf(stderr, "kwitness verify: --log, --policy, --image-digest, --evidence, --commit, --tpm-ca and --transparency name one "
				"record's evidence; with --dir or several records each record's "
				"own are used\n");
		return 2;
	}
	if (a->dir && n > 0) {
		fprintf(stderr, "kwitness verify: --dir verifies every record of the folder; "
				"give no RECORD with it\n");
		return 2;
	}
	return verify_batch_run(&b);
}

/* --transparency POLICY with --log: the checkpoints' proofs, under key in
 * out (or printed). */
static int ckpt_tlog(const struct args *a, json_t *out, const char *key)
{
	char path[4200];

	if (a->ckpath)
		return cli_verify_ckpt_tlog(a->tlog_policy, a->ckpath, out, key);
	snprintf(path, sizeof(path), "%s%s", a->logpath, KW_CHECKPOINT_SUFFIX);
	return cli_verify_ckpt_tlog(a->tlog_policy, path, out, key);
}

/* With a RECORD, --log and --transparency: its checkpoints' proofs too,
 * when kwitnessd logged them (the proofs file is there). */
static bool ckpt_tlog_wanted(const struct args *a)
{
	char path[4300];

	if (!a->tlog_policy || !a->logpath)
		return false;
	snprintf(path, sizeof(path), "%s%s", a->ckpath ? a->ckpath : a->logpath,
		 a->ckpath ? KW_CKPT_TLOG_PROOFS_SUFFIX : KW_CHECKPOINT_SUFFIX KW_CKPT_TLOG_PROOFS_SUFFIX);
	return access(path, F_OK) == 0;
}

/* One RECORD: the keys and evidence loaded, the verifier's verdict printed. */
static int run_one(struct args *a, struct kw_verify_opts *o, const char *recpath)
{
	struct kw_key *trusted = NULL, *enroll_key = NULL;
	json_t *evidence = NULL, *pcrs_ref = NULL;
	struct verify_request rq;
	struct verify_verdict v;
	struct kw_commit_result cr, *crp = NULL;
	json_t *ck_tl = NULL;
	char err[4400];
	int ret, status = 2, tl = 0;

	/* Without --evidence, --tpm-ca appraises the record's inline evidence. */
	if (a->evpath || a->ao.ca_file) {
		if ((a->evpath && !(evidence = cli_read_json("verify", "evidence", a->evpath))) ||
		    (a->refpath && !(pcrs_ref = cli_read_json("verify", "PCR reference", a->refpath))))
			goto out;
		ret = kw_key_load_public(a->enrkeypath, &enroll_key);
		if (ret) {
			cli_key_error("verify", a->enrkeypath, ret);
			goto out;
		}
		a->ao.enroll_key = enroll_key;
		a->ao.pcrs_ref = pcrs_ref;
	}
	if (a->keypath) {
		ret = kw_key_load_public(a->keypath, &trusted);
		if (ret) {
			cli_key_error("verify", a->keypath, ret);
			goto out;
		}
		o->trusted = trusted;
	}
	rq = (struct verify_request){
		.opts = *o, .record_path = recpath, .log_path = a->logpath,
		.bundle_path = a->policypath, .evidence = evidence, .appraise = &a->ao,
		.appraise_inline = !evidence && a->ao.ca_file,
		.tlog_policy = a->tlog_policy, .tlog_proof = a->tlog_proof, .progress = !a->as_json,
		.checkpoints_path = a->ckpath,
	};
	if (verify_record(&rq, &v, err, sizeof(err))) {
		fprintf(stderr, "kwitness verify: %s\n", err);
		goto out;
	}
	/* A committed session's extends must replay (cmd_verify_commit.c). */
	if (v.valid && v.appraised && v.level >= KW_LEVEL_1 && a->logpath) {
		ret = verify_commit(recpath, a->logpath, evidence, a->commitpath, &cr);
		if (ret < 0) {
			fprintf(stderr, "kwitness verify: the TPM commitment cannot be checked: %s\n",
				strerror(-ret));
			goto out;
		}
		crp = ret == 0 ? &cr : NULL;
	} else if (a->commitpath) {
		fprintf(stderr, "kwitness verify: --commit is checked once --evidence appraises to Level 1 with --log\n");
		goto out;
	}
	if (a->as_json) {
		if (v.valid && ckpt_tlog_wanted(a) && (ck_tl = json_object()) &&
		    (tl = ckpt_tlog(a, ck_tl, "checkpoint_transparency")) == 1)
			json_object_set_new(ck_tl, "valid", json_false());
		print_json(&v, crp, tl == 2 ? NULL : ck_tl);
	} else {
		char m[ESC_CAP];

		print_text(&v);
		if (crp)
			printf("commit: %s: %s\n", kw_commit_code(crp->reason),
			       kw_text_safe(crp->message, m, sizeof(m)));
		if (v.valid && ckpt_tlog_wanted(a))
			tl = ckpt_tlog(a, NULL, "checkpoint transparency");
	}
	status = tl == 2 ? 2 : v.valid && !tl && (!crp || crp->reason == KW_COMMIT_OK) ? 0 : 1;
out:
	json_decref(ck_tl);
	json_decref(evidence);
	json_decref(pcrs_ref);
	kw_key_free(enroll_key);
	kw_key_free(trusted);
	return status;
}

/* --log DECISIONS without RECORD: the log through its last checkpoint. */
static int run_cut_log(const struct args *a)
{
	struct kw_key *key = NULL;
	struct verify_cut c;
	const struct verify_ckpt *k = &c.ck;
	char err[4400], what[400], m[ESC_CAP];
	const char *stop;
	int ret, tl = 0;

	if (!a->keypath) {
		fprintf(stderr, "kwitness verify: --log without RECORD needs --key TRUSTED\n");
		return 2;
	}
	ret = kw_key_load_public(a->keypath, &key);
	if (ret) {
		cli_key_error("verify", a->keypath, ret);
		return 2;
	}
	ret = verify_log_checkpoints(key, a->logpath, a->ckpath, &c, err, sizeof(err));
	kw_key_free(key);
	if (ret) {
		fprintf(stderr, "kwitness verify: %s\n", err);
		return 2;
	}
	stop = c.stop == KW_VERIFY_OK ? "log_end" : kw_verify_reason_code(c.stop);
	verify_ckpt_describe(k, what, sizeof(what));
	snprintf(err, sizeof(err), "%s", k->problem != KW_VERIFY_OK ? k->why :
		 c.log_problem != KW_VERIFY_OK ? c.log_why :
		 k->beyond_log ? "a checkpoint covers lines past the log's end: the log was cut" :
		 "the log ends");
	if (a->as_json) {
		json_t *j = json_pack("{s:b, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:s}", "valid",
				      c.valid, "reason",
				      kw_verify_reason_code(c.valid ? KW_VERIFY_OK : c.stop), "stop",
				      stop, "message", err, "vouched_lines",
				      (json_int_t)k->vouched_lines, "checkpoint",
				      (json_int_t)k->vouched_n, "checkpoints", (json_int_t)k->chain,
				      "log_lines", (json_int_t)k->log_lines, "unvouched_lines",
				      (json_int_t)(k->log_lines - k->vouched_lines), "vouched", what);

		if (j && a->tlog_policy)
			tl = ckpt_tlog(a, j, "transparency");
		if (j)
			cli_print_json(j, false);
		json_decref(j);
	} else {
		printf("%s: %s\n", c.valid ? "valid" : "invalid", kw_text_safe(what, m, sizeof(m)));
		printf("stops: %s: %s\n", stop, kw_text_safe(err, m, sizeof(m)));
		if (a->tlog_policy)
			tl = ckpt_tlog(a, NULL, "transparency");
	}
	return tl == 2 ? 2 : c.valid && !tl ? 0 : 1;
}

/* The checks of one RECORD's options, before anything is read. */
static int check_one(const struct args *a, const struct kw_verify_opts *o)
{
	const char *why = NULL;

	if (o->image_digest && !a->policypath)
		why = "--image-digest needs --policy (the measurement binds both)";
	else if (o->image_digest && !kw_digest_valid(o->image_digest))
		why = "--image-digest must be sha256:<hex> or sha384:<hex>";
	else if (a->evpath && (!a->ao.ca_file || !a->enrkeypath))
		why = "--evidence needs --tpm-ca (EK CA) and --enroll-key (enrollment key)";
	else if ((a->ao.ca_file || a->enrkeypath || a->refpath) && (!a->ao.ca_file || !a->enrkeypath))
		why = "--tpm-ca, --enroll-key and --pcrs-ref appraise TPM evidence (--evidence FILE, or "
		      "the record's inline runtime.evidence): give both --tpm-ca and --enroll-key";
	if (why)
		fprintf(stderr, "kwitness verify: %s\n", why);
	return why ? 2 : 0;
}

/* --decisions FILE: the transcript hash and call count re-derived from the
 * decisions (a JSON array or JSON Lines, as `record build --decisions` reads
 * them, with the same code), for the verifier to compare with the record.
 * Such a file has no open entry or trailer: completeness is not checked. */
static int set_decisions(struct args *a, struct kw_verify_opts *o)
{
	struct kw_buf text = { 0 };
	uint64_t count = 0;
	char err[320];
	int e;

	if (a->logpath) {
		kw_usage_error("kwitness verify", "--decisions and --log exclude each other (--log "
			       "is kwitnessd's JSON Lines log, --decisions what record build read)");
		return 2;
	}
	if (cli_read("verify", "decisions", a->decisions, CLI_LOG_MAX, &text))
		return 1;
	e = kw_transcript_from_text(text.data ? text.data : "", text.len, a->decisions_hash, &count,
				    err, sizeof(err));
	kw_buf_free(&text);
	if (e) {
		fprintf(stderr, "kwitness verify: %s: %s\n", a->decisions, err);
		return 1;
	}
	o->transcript_hash = a->decisions_hash;
	o->call_count = (int64_t)count;
	if (!a->as_json)
		fprintf(stderr, "decisions: %s hashes to %s (%llu entries); the record must say the same\n",
			a->decisions, a->decisions_hash, (unsigned long long)count);
	return 0;
}

int cmd_verify(int argc, char **argv)
{
	struct kw_verify_opts o = { .now = (int64_t)time(NULL), .max_age = DEFAULT_MAX_AGE,
				    .skew = KW_DEFAULT_SKEW, .call_count = -1 };
	struct args a = { 0 };
	const struct cli_opt opts[] = {
		{ "key", 0, CLI_TEXT, &a.keypath },
		{ "log", 0, CLI_TEXT, &a.logpath },
		{ "decisions", 0, CLI_TEXT, &a.decisions },
		{ "policy", 0, CLI_TEXT, &a.policypath },
		{ "image-digest", 0, CLI_TEXT, &o.image_digest },
		{ "max-age", 0, CLI_NUMBER, &o.max_age, .min = 0, .max = JCS_MAX_SAFE_INT,
		  .bad = "needs a number of seconds >= 0" },
		{ "skew", 0, CLI_NUMBER, &o.skew, .min = 0, .max = JCS_MAX_SAFE_INT,
		  .bad = "needs a number of seconds >= 0" },
		{ "nonce", 0, CLI_TEXT, &o.nonce },
		{ "allow-embedded-key", 0, CLI_FLAG, &o.allow_embedded_key },
		{ "allow-incomplete", 0, CLI_FLAG, &o.allow_incomplete },
		{ "dir", 0, CLI_TEXT, &a.dir },
		{ "jobs", 0, CLI_NUMBER, &a.jobs, .min = 1, .max = 1024,
		  .bad = "needs a number from 1 to 1024" },
		{ "json", 0, CLI_FLAG, &a.as_json },
		{ "evidence", 0, CLI_TEXT, &a.evpath },
		{ "commit", 0, CLI_TEXT, &a.commitpath },
		{ "tpm-ca", 0, CLI_TEXT, &a.ao.ca_file },
		{ "enroll-key", 0, CLI_TEXT, &a.enrkeypath },
		{ "pcrs-ref", 0, CLI_TEXT, &a.refpath },
		{ "transparency", 0, CLI_TEXT, &a.tlog_policy },
		{ "proof", 0, CLI_TEXT, &a.tlog_proof },
		{ "consistency", 0, CLI_TEXT, &a.consistency },
		{ "checkpoints", 0, CLI_TEXT, &a.ckpath },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness verify", .usage = verify_usage, .opts = opts };

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (a.consistency) {
		if (!a.tlog_policy || optind != argc - 1) {
			fprintf(stderr, "kwitness verify: --consistency OLD NEW needs --transparency POLICY and NEW\n");
			return 2;
		}
		return run_consistency(&a, argv[optind]);
	}
	if (a.tlog_proof && !a.tlog_policy) {
		fprintf(stderr, "kwitness verify: --proof needs --transparency POLICY\n");
		return 2;
	}
	if (!a.keypath && !o.allow_embedded_key) {
		kw_usage_error("kwitness verify", "--key TRUSTED is required (or --allow-embedded-key)");
		return 2;
	}
	if (a.decisions && (a.dir || argc - optind > 1)) {
		kw_usage_error("kwitness verify", "--decisions is for one RECORD");
		return 2;
	}
	if (a.logpath && optind == argc && !a.dir)
		return run_cut_log(&a);
	if (a.dir || argc - optind > 1)
		return run_batch(&a, &o, argv + optind, argc - optind);
	if (optind != argc - 1) {
		kw_usage_error("kwitness verify", "expected exactly one RECORD argument (or --dir)");
		return 2;
	}
	if (check_one(&a, &o))
		return 2;
	if (a.decisions) {
		int e = set_decisions(&a, &o);

		if (e)
			return e;
	}
	return run_one(&a, &o, argv[optind]);
}
