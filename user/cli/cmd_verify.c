/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness verify: offline verification of a TRACE v0.2 record, or of every
 * record of a state folder (verify_batch.c).
 * Exit 0 valid, 1 invalid (reason code on stdout), 2 usage or input error. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kwitness/buf.h"
#include "kwitness/jcs.h"
#include "kwitness/level.h"
#include "kwitness/logverify.h"
#include "kwitness/record.h"
#include "kwitness/tpm.h"
#include "cli_key.h"
#include "kwitness/options.h"
#include "cli_record.h"
#include "commands.h"
#include "progress.h"
#include "verify_batch.h"
#include "verify_transparency.h"

#define DEFAULT_MAX_AGE 86400

static void verify_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness verify --key TRUSTED RECORD [--log DECISIONS] [--policy BUNDLE]\n"
		"           [--image-digest D] [--max-age SECONDS] [--skew SECONDS] [--nonce N]\n"
		"           [--allow-embedded-key] [--allow-incomplete] [--json]\n"
		"           [--evidence FILE --tpm-ca CA.pem --enroll-key KEY [--pcrs-ref FILE]]\n"
		"       kwitness verify --key TRUSTED --dir STATE_DIR [--jobs N] [options]\n"
		"       kwitness verify --key TRUSTED [--jobs N] [options] RECORD RECORD...\n"
		"       kwitness verify --key TRUSTED --transparency POLICY [--proof FILE] RECORD [...]\n"
		"       kwitness verify --transparency POLICY --consistency OLD NEW\n\n"
		"Verifies a TRACE v0.2 record offline, in agentrust verify_record order: profile,\n"
		"signature form, schema, trusted key, cnf.jwk thumbprint, freshness, nonce,\n"
		"Ed25519 signature; then the evidence given must reproduce the record's hashes.\n"
		"With --evidence it then appraises the TPM 2.0 evidence in order: EK certificate\n"
		"chain, AK enrollment, quote signature, extraData = thumbprint(cnf.jwk) =\n"
		"runtime.nonce, pcrDigest = runtime.measurement, PCR values; Level 1 only when\n"
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
		"  --evidence FILE       TPM evidence (state/evidence/<digest>.json) to appraise\n"
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
		"  --proof FILE          the C2SP tlog-proof (default RECORD.tlog-proof)\n"
		"  --consistency OLD NEW check that a log grew append-only: OLD a checkpoint, NEW\n"
		"                        the output of kwitness log request --old SIZE (tlog_fork,\n"
		"                        tlog_rollback, tlog_inconsistent)\n"
		"  --json                print {\"valid\":...,\"reason\":...,\"message\":...,\"level\":...}, one\n"
		"                        object per record and a summary object with --dir\n"
		"  --help                this text\n"
		"On a terminal (not with --json), long runs show progress on stderr.\n",
		DEFAULT_MAX_AGE, KW_DEFAULT_SKEW);
}

/* What the log says about completeness, for every human verdict. */
static void completeness_text(const struct kw_log_check *lc, char *out, size_t n)
{
	if (!lc)
		snprintf(out, n, "completeness not checked (no --log)");
	else if (lc->problem != KW_VERIFY_OK)
		snprintf(out, n, "completeness unknown (the log could not be read to its end)");
	else if (lc->complete)
		snprintf(out, n, "complete");
	else
		snprintf(out, n, "INCOMPLETE: %s", lc->incomplete_why);
}

static void print_result(const struct kw_verify_result *res, bool as_json, const char *detail,
			 const struct kw_log_check *lc, const struct kw_appraise_result *ap,
			 bool appraised, const struct tlog_verdict *tl)
{
	bool tpm_ok = res->reason == KW_VERIFY_OK && appraised && ap->step == KW_APPRAISE_OK;
	bool logged = res->reason == KW_VERIFY_OK && tl && tl->step == 0;
	enum kw_level lv = kw_level_of(tpm_ok, logged);
	int level = kw_level_number(lv);
	char completeness[400];

	if (as_json) {
		json_t *o = json_pack("{s:b, s:s, s:s, s:i}", "valid", res->reason == KW_VERIFY_OK,
				      "reason", kw_verify_reason_code(res->reason), "message",
				      res->message, "level", level);

		if (o && appraised && res->reason == KW_VERIFY_OK)
			json_object_set_new(o, "appraisal",
					    json_pack("{s:i, s:s, s:s}", "step",
						      kw_appraise_step_number(ap->step), "reason",
						      kw_appraise_code(ap->step), "message", ap->message));

		if (o && lc && lc->problem == KW_VERIFY_OK) {
			json_object_set_new(o, "complete", json_boolean(lc->complete));
			if (!lc->complete)
				json_object_set_new(o, "incomplete", json_string(lc->incomplete_why));
			json_object_set_new(o, "transcript_hash", json_string(lc->hash));
			json_object_set_new(o, "log_entries", json_integer((json_int_t)lc->entries));
		}
		if (o && res->warning[0])
			json_object_set_new(o, "warning", json_string(res->warning));
		if (o && tl && res->reason == KW_VERIFY_OK) {
			json_object_set_new(o, "logged", json_boolean(logged));
			json_object_set_new(o, "transparency",
					    json_pack("{s:i, s:s, s:s}", "step", tl->step, "reason",
						      tl->code, "message", tl->message));
			if (!logged)
				json_object_set_new(o, "valid", json_false());
		}
		if (o)
			cli_print_json(o, false);
		json_decref(o);
		return;
	}
	completeness_text(lc, completeness, sizeof(completeness));
	if (res->warning[0])
		printf("warning: %s: %s\n", kw_verify_reason_code(KW_VERIFY_LOG_INCOMPLETE), res->warning);
	if (res->reason == KW_VERIFY_OK && tl && !logged) {
		printf("invalid: %s: transparency step %d: %s\n", tl->code, tl->step, tl->message);
		return;
	}
	if (res->reason == KW_VERIFY_OK) {
		printf("valid: record verified (%s)\n", detail);
		printf("completeness: %s\n", completeness);
		if (logged)
			printf("transparency: logged: %s\n", tl->message);
		if (lv == KW_LEVEL_2)
			printf("level 2: %s; logged and witnessed\n", ap->message);
		else if (lv == KW_LEVEL_0_LOGGED)
			printf("level 0, logged: %s\n", appraised ?
			       "the TPM appraisal failed, so Level 2 cannot hold" :
			       "no TPM evidence appraised (Level 2 needs Level 1)");
		else if (!appraised)
			printf("level 0: no TPM evidence appraised\n");
		else if (lv == KW_LEVEL_1)
			printf("level 1: %s\n", ap->message);
		else
			printf("level 0: TPM appraisal failed at step %d: %s: %s\n",
			       kw_appraise_step_number(ap->step), kw_appraise_code(ap->step), ap->message);
	} else {
		printf("invalid: %s: %s\n", kw_verify_reason_code(res->reason), res->message);
		if (lc && lc->problem == KW_VERIFY_OK && res->reason != KW_VERIFY_LOG_INCOMPLETE)
			printf("completeness: %s\n", completeness);
	}
}

/* A one-line summary of what a valid record says and what was checked. */
static void describe(const json_t *rec, const struct kw_verify_opts *o, const struct kw_key *trusted,
		     const struct kw_log_check *lc, char *out, size_t outlen)
{
	const char *platform = json_string_value(
		json_object_get(json_object_get(rec, "runtime"), "platform"));
	char tp[KW_THUMBPRINT_MAX] = "embedded key", log[160] = "";

	if (trusted)
		kw_key_thumbprint(trusted, tp);
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
		 /* A tpm2 measurement is the PCR digest: only --evidence checks it. */
		 o->bundle && o->image_digest && platform && !strcmp(platform, "software-only")
			 ? "; measurement matches" : "");
}

/* Opens the decision log (or stdin) for streaming; prints why not. */
static int open_log(const char *path, uint64_t *size)
{
	struct stat st;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(STDIN_FILENO);

	*size = 0;
	if (fd < 0) {
		fprintf(stderr, "kwitness verify: cannot read decision log %s: %s\n", path,
			strerror(errno));
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

/* TPM evidence to appraise after the record verified (--evidence). */
struct tpm_check {
	json_t *evidence;
	struct kw_appraise_opts ao;
};

/* --transparency POLICY [--proof FILE] */
struct tl_check {
	const char *policy;
	const char *proof;
};

static int verify_one(struct kw_verify_opts *o, const struct kw_key *trusted, const char *recpath,
		      const char *logpath, const char *policypath, const struct tpm_check *tpm,
		      const struct tl_check *tlc, bool as_json)
{
	struct tlog_verdict tl = { 0 };
	bool tl_done = false;
	struct kw_appraise_result ar = { 0 };
	bool appraised = false;
	struct kw_buf text = { 0 }, bundle = { 0 };
	struct kw_verify_result res = { 0 };
	struct kw_log_check lc = { 0 };
	struct progress prog;
	char detail[640] = "", image[KW_DIGEST_STR_MAX];
	uint64_t log_size = 0;
	json_t *rec = NULL;
	bool lc_live = false;
	int ret, status = 2, log_fd = -1;

	if (cli_read("verify", "record", recpath, CLI_RECORD_MAX, &text))
		goto out;
	if (logpath && (log_fd = open_log(logpath, &log_size)) < 0)
		goto out;
	if (policypath) {
		if (cli_read("verify", "policy bundle", policypath, CLI_BUNDLE_MAX, &bundle))
			goto out;
		o->bundle = bundle.data ? bundle.data : "";
		o->bundle_len = bundle.len;
	}
	/* The record first: a long log is read only for a record that holds. */
	ret = kw_record_verify_signed(text.data ? text.data : "", text.len, o, &res, &rec);
	if (ret == 0 && log_fd >= 0) {
		ret = kw_log_check_init(&lc);
		lc_live = ret == 0;
		if (ret == 0) {
			progress_init(&prog, !as_json, log_size, 0);
			lc.progress = log_progress;
			lc.progress_ctx = &prog;
			ret = kw_log_check_fd(&lc, log_fd);
			progress_end(&prog);
			o->log = &lc;
		}
	}
	if (ret == 0 && o->bundle && !o->image_digest) {
		/* The record's own digest: the signature binds it, and the
		 * measurement still has to match it and the bundle. */
		const char *d = json_string_value(
			json_object_get(json_object_get(rec, "build_provenance"), "digest"));

		if (d && kw_digest_valid(d)) {
			snprintf(image, sizeof(image), "%s", d);
			o->image_digest = image;
		}
	}
	if (ret == 0)
		ret = kw_record_verify_evidence(rec, o, &res);
	if (ret < 0) {
		fprintf(stderr, "kwitness verify: %s\n", ret == -ENOMEM ? "out of memory" : res.message);
		goto out;
	}
	if (ret == 0)
		describe(rec, o, trusted, o->log, detail, sizeof(detail));
	if (ret == 0 && tpm->evidence) {
		/* The record as signed (the parsed copy has no signature). */
		json_t *whole = jcs_parse(text.data, text.len, NULL);
		int a = kw_appraise(tpm->evidence, whole, &tpm->ao, &ar);

		json_decref(whole);
		if (a < 0) {
			fprintf(stderr, "kwitness verify: appraisal: %s\n", strerror(-a));
			status = 2;
			goto out;
		}
		appraised = true;
	}
	if (ret == 0 && tlc->policy) {
		char proof[4096];

		snprintf(proof, sizeof(proof), "%s.tlog-proof", recpath);
		if (verify_transparency(tlc->policy, tlc->proof ? tlc->proof : proof, text.data,
					text.len, &tl)) {
			status = 2;
			goto out;
		}
		tl_done = true;
	}
	print_result(&res, as_json, detail, o->log, &ar, appraised, tl_done ? &tl : NULL);
	status = ret == 0 && (!tpm->evidence || ar.step == KW_APPRAISE_OK) &&
		 (!tl_done || tl.step == 0) ? 0 : 1;
out:
	if (lc_live)
		kw_log_check_free(&lc);
	if (log_fd >= 0)
		close(log_fd);
	json_decref(rec);
	kw_buf_free(&text);
	kw_buf_free(&bundle);
	return status;
}

int cmd_verify(int argc, char **argv)
{
	struct kw_verify_opts o = { .now = (int64_t)time(NULL), .max_age = DEFAULT_MAX_AGE,
				    .skew = KW_DEFAULT_SKEW, .call_count = -1 };
	const char *keypath = NULL, *logpath = NULL, *policypath = NULL, *dir = NULL;
	const char *evpath = NULL, *enrkeypath = NULL, *refpath = NULL;
	struct kw_key *trusted = NULL, *enroll_key = NULL;
	struct tpm_check tpm = { 0 };
	struct tl_check tlc = { 0 };
	const char *consistency = NULL;
	json_t *pcrs_ref = NULL;
	bool as_json = false;
	int64_t jobs = 0;
	const struct cli_opt opts[] = {
		{ "key", 0, CLI_TEXT, &keypath },
		{ "log", 0, CLI_TEXT, &logpath },
		{ "policy", 0, CLI_TEXT, &policypath },
		{ "image-digest", 0, CLI_TEXT, &o.image_digest },
		{ "max-age", 0, CLI_NUMBER, &o.max_age, .min = 0, .max = JCS_MAX_SAFE_INT,
		  .bad = "needs a number of seconds >= 0" },
		{ "skew", 0, CLI_NUMBER, &o.skew, .min = 0, .max = JCS_MAX_SAFE_INT,
		  .bad = "needs a number of seconds >= 0" },
		{ "nonce", 0, CLI_TEXT, &o.nonce },
		{ "allow-embedded-key", 0, CLI_FLAG, &o.allow_embedded_key },
		{ "allow-incomplete", 0, CLI_FLAG, &o.allow_incomplete },
		{ "dir", 0, CLI_TEXT, &dir },
		{ "jobs", 0, CLI_NUMBER, &jobs, .min = 1, .max = 1024,
		  .bad = "needs a number from 1 to 1024" },
		{ "json", 0, CLI_FLAG, &as_json },
		{ "evidence", 0, CLI_TEXT, &evpath },
		{ "tpm-ca", 0, CLI_TEXT, &tpm.ao.ca_file },
		{ "enroll-key", 0, CLI_TEXT, &enrkeypath },
		{ "pcrs-ref", 0, CLI_TEXT, &refpath },
		{ "transparency", 0, CLI_TEXT, &tlc.policy },
		{ "proof", 0, CLI_TEXT, &tlc.proof },
		{ "consistency", 0, CLI_TEXT, &consistency },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness verify", .usage = verify_usage, .opts = opts };
	int ret, status;

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (consistency) {
		struct tlog_verdict cv;

		if (!tlc.policy || optind != argc - 1) {
			fprintf(stderr, "kwitness verify: --consistency OLD NEW needs --transparency POLICY and NEW\n");
			return 2;
		}
		if (verify_consistency(tlc.policy, consistency, argv[optind], &cv))
			return 2;
		if (as_json) {
			json_t *j = json_pack("{s:b, s:s, s:s}", "valid", cv.step == 0, "reason", cv.code,
					      "message", cv.message);

			if (j)
				cli_print_json(j, false);
			json_decref(j);
		} else if (cv.step) {
			printf("invalid: %s: %s\n", cv.code, cv.message);
		} else {
			printf("valid: %s\n", cv.message);
		}
		return cv.step ? 1 : 0;
	}
	if (tlc.proof && !tlc.policy) {
		fprintf(stderr, "kwitness verify: --proof needs --transparency POLICY\n");
		return 2;
	}
	if (!keypath && !o.allow_embedded_key) {
		fprintf(stderr, "kwitness verify: --key TRUSTED is required (or --allow-embedded-key)\n");
		verify_usage(stderr);
		return 2;
	}
	if (dir || argc - optind > 1) {
		struct verify_batch b = { .keypath = keypath, .verify = o, .state_dir = dir,
					  .records = argv + optind, .n_records = argc - optind,
					  .jobs = (int)jobs, .json = as_json };

		if (logpath || policypath || o.image_digest || evpath || tlc.policy) {
			fprintf(stderr, "kwitness verify: --log, --policy, --image-digest, --evidence and --transparency name one "
					"record's evidence; with --dir or several records each record's "
					"own are used\n");
			return 2;
		}
		if (dir && argc - optind > 0) {
			fprintf(stderr, "kwitness verify: --dir verifies every record of the folder; "
					"give no RECORD with it\n");
			return 2;
		}
		return verify_batch_run(&b);
	}
	if (optind != argc - 1) {
		fprintf(stderr, "kwitness verify: expected exactly one RECORD argument (or --dir)\n");
		verify_usage(stderr);
		return 2;
	}
	if (o.image_digest && !policypath) {
		fprintf(stderr, "kwitness verify: --image-digest needs --policy (the measurement binds both)\n");
		return 2;
	}
	if (o.image_digest && !kw_digest_valid(o.image_digest)) {
		fprintf(stderr, "kwitness verify: --image-digest must be sha256:<hex> or sha384:<hex>\n");
		return 2;
	}
	if (!evpath && (tpm.ao.ca_file || enrkeypath || refpath)) {
		fprintf(stderr, "kwitness verify: --tpm-ca, --enroll-key and --pcrs-ref need --evidence\n");
		return 2;
	}
	if (evpath && (!tpm.ao.ca_file || !enrkeypath)) {
		fprintf(stderr, "kwitness verify: --evidence needs --tpm-ca (EK CA) and --enroll-key (enrollment key)\n");
		return 2;
	}
	status = 2;
	if (evpath) {
		if (!(tpm.evidence = cli_read_json("verify", "evidence", evpath)) ||
		    (refpath && !(pcrs_ref = cli_read_json("verify", "PCR reference", refpath))))
			goto out;
		ret = kw_key_load_public(enrkeypath, &enroll_key);
		if (ret) {
			cli_key_error("verify", enrkeypath, ret);
			goto out;
		}
		tpm.ao.enroll_key = enroll_key;
		tpm.ao.pcrs_ref = pcrs_ref;
	}
	if (keypath) {
		ret = kw_key_load_public(keypath, &trusted);
		if (ret) {
			cli_key_error("verify", keypath, ret);
			goto out;
		}
		o.trusted = trusted;
	}
	status = verify_one(&o, trusted, argv[optind], logpath, policypath, &tpm, &tlc, as_json);
out:
	json_decref(tpm.evidence);
	json_decref(pcrs_ref);
	kw_key_free(enroll_key);
	kw_key_free(trusted);
	return status;
}
