/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness verify: offline verification of a TRACE v0.2 record.
 * Exit 0 valid, 1 invalid (reason code on stdout), 2 usage or input error. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kwitness/buf.h"
#include "kwitness/cliopt.h"
#include "kwitness/jcs.h"
#include "kwitness/record.h"
#include "kwitness/tpm.h"
#include "cli_key.h"
#include "cli_record.h"
#include "commands.h"
#include "collector/transcript.h"

#define DEFAULT_MAX_AGE 86400

#define STR_(x) #x
#define STR(x) STR_(x)

enum { O_KEY = 1, O_LOG, O_POLICY, O_IMAGE, O_MAX_AGE, O_SKEW, O_NONCE, O_EMBEDDED, O_JSON,
       O_HELP, O_EVIDENCE, O_TPM_CA, O_ENROLL_KEY, O_PCRS_REF };

static const struct kw_cli_opt verify_opts[] = {
	{ "key", required_argument, O_KEY, "--key TRUSTED",
	  "public JWK file or PEM public key of the signer" },
	{ "log", required_argument, O_LOG, "--log DECISIONS",
	  "decision log (JSON Lines or a JSON array): recompute\n"
	  "tool_transcript.hash and call_count" },
	{ "policy", required_argument, O_POLICY, "--policy BUNDLE",
	  "policy bundle: recompute policy.bundle_hash and, with the\n"
	  "image digest, runtime.measurement" },
	{ "image-digest", required_argument, O_IMAGE, "--image-digest D",
	  "image digest for runtime.measurement (default: the\n"
	  "record's build_provenance.digest, which the signature binds)" },
	{ "max-age", required_argument, O_MAX_AGE, "--max-age SECONDS",
	  "oldest acceptable record (default " STR(DEFAULT_MAX_AGE) "; 0 disables)" },
	{ "skew", required_argument, O_SKEW, "--skew SECONDS",
	  "how far iat may be in the future (default " STR(KW_DEFAULT_SKEW) ", TRACE 3.2.2)" },
	{ "nonce", required_argument, O_NONCE, "--nonce N", "runtime.nonce must equal N" },
	{ "allow-embedded-key", no_argument, O_EMBEDDED, "--allow-embedded-key",
	  "trust the record's own cnf.jwk when no --key is given" },
	{ "evidence", required_argument, O_EVIDENCE, "--evidence FILE",
	  "TPM evidence (state/evidence/<digest>.json) to appraise" },
	{ "tpm-ca", required_argument, O_TPM_CA, "--tpm-ca CA.pem",
	  "EK CA certificate(s) trusted for step 1" },
	{ "enroll-key", required_argument, O_ENROLL_KEY, "--enroll-key KEY",
	  "enrollment key (public JWK or PEM) trusted for step 2" },
	{ "pcrs-ref", required_argument, O_PCRS_REF, "--pcrs-ref FILE",
	  "reference PCR values {\"N\": \"hex\", ...} for step 6" },
	{ "json", no_argument, O_JSON, "--json",
	  "print {\"valid\":...,\"reason\":...,\"message\":...,\"level\":...}" },
	{ 0 },
};

static const struct kw_cli verify_cli = {
	"kwitness verify",
	"usage: kwitness verify --key TRUSTED RECORD [--log DECISIONS] [--policy BUNDLE]\n"
	"           [--image-digest D] [--max-age SECONDS] [--skew SECONDS] [--nonce N]\n"
	"           [--allow-embedded-key] [--json]\n"
	"           [--evidence FILE --tpm-ca CA.pem --enroll-key KEY [--pcrs-ref FILE]]\n\n"
	"Verifies a TRACE v0.2 record offline, in agentrust verify_record order: profile,\n"
	"signature form, schema, trusted key, cnf.jwk thumbprint, freshness, nonce,\n"
	"Ed25519 signature; then the evidence given must reproduce the record's hashes.\n"
	"With --evidence it then appraises the TPM 2.0 evidence in order: EK certificate\n"
	"chain, AK enrollment, quote signature, extraData = thumbprint(cnf.jwk) =\n"
	"runtime.nonce, pcrDigest = runtime.measurement, PCR values; Level 1 only when\n"
	"every step holds. Without --evidence a record is at most Level 0.\n"
	"Exit status: 0 valid (and Level 1 when --evidence is given), 1 invalid (reason\n"
	"code and sentence on stdout), 2 usage error.\n\n",
	22, "", O_HELP, NULL, verify_opts,
};

static void print_result(const struct kw_verify_result *res, bool as_json, const char *detail,
			 const struct kw_appraise_result *ap, bool appraised)
{
	int level = res->reason == KW_VERIFY_OK && appraised && ap->step == KW_APPRAISE_OK;

	if (as_json) {
		json_t *o = json_pack("{s:b, s:s, s:s, s:i}", "valid", res->reason == KW_VERIFY_OK,
				      "reason", kw_verify_reason_code(res->reason), "message",
				      res->message, "level", level);

		if (o && appraised && res->reason == KW_VERIFY_OK)
			json_object_set_new(o, "appraisal",
					    json_pack("{s:i, s:s, s:s}", "step",
						      kw_appraise_step_number(ap->step), "reason",
						      kw_appraise_code(ap->step), "message", ap->message));
		if (o)
			cli_print_json(o, false);
		json_decref(o);
		return;
	}
	if (res->reason != KW_VERIFY_OK) {
		printf("invalid: %s: %s\n", kw_verify_reason_code(res->reason), res->message);
		return;
	}
	printf("valid: record verified (%s)\n", detail);
	if (!appraised)
		printf("level 0: no TPM evidence appraised\n");
	else if (level)
		printf("level 1: %s\n", ap->message);
	else
		printf("level 0: TPM appraisal failed at step %d: %s: %s\n",
		       kw_appraise_step_number(ap->step), kw_appraise_code(ap->step), ap->message);
}

/* A one-line summary of what a valid record says and what was checked. */
static void describe(const char *text, size_t len, const struct kw_verify_opts *o,
		     const struct kw_key *trusted, char *out, size_t outlen)
{
	json_t *rec = jcs_parse(text, len, NULL);
	const char *platform = json_string_value(
		json_object_get(json_object_get(rec, "runtime"), "platform"));
	char tp[KW_THUMBPRINT_MAX] = "embedded key";

	if (trusted)
		kw_key_thumbprint(trusted, tp);
	/* A tpm2 measurement is the PCR digest: only --evidence checks it. */
	snprintf(out, outlen, "subject %s, iat %.0f, key %s%s%s%s",
		 json_string_value(json_object_get(rec, "subject")),
		 json_number_value(json_object_get(rec, "iat")), tp,
		 o->transcript_hash ? "; decision log matches" : "",
		 o->bundle ? "; policy bundle matches" : "",
		 o->bundle && o->image_digest && platform && !strcmp(platform, "software-only")
			 ? "; measurement matches" : "");
	json_decref(rec);
}

int cmd_verify(int argc, char **argv)
{
	struct kw_verify_opts o = { .now = (int64_t)time(NULL), .max_age = DEFAULT_MAX_AGE,
				    .skew = KW_DEFAULT_SKEW, .call_count = -1 };
	const char *keypath = NULL, *logpath = NULL, *policypath = NULL, *recpath;
	struct kw_buf text = { 0 }, log = { 0 }, bundle = { 0 };
	struct kw_verify_result res = { 0 };
	char hash[KW_DIGEST_STR_MAX], err[320], detail[400] = "";
	char image[KW_DIGEST_STR_MAX];
	struct kw_key *trusted = NULL, *enroll_key = NULL;
	const char *evpath = NULL, *enrkeypath = NULL, *refpath = NULL;
	struct kw_appraise_opts ao = { 0 };
	struct kw_appraise_result ar = { 0 };
	json_t *evidence = NULL, *pcrs_ref = NULL;
	bool as_json = false, appraised = false;
	uint64_t count = 0;
	long long v;
	int c, ret, status = 2;

	optind = 1;
	while ((c = kw_cli_next(&verify_cli, argc, argv, &status)) > 0) {
		switch (c) {
		case O_KEY: keypath = optarg; break;
		case O_LOG: logpath = optarg; break;
		case O_POLICY: policypath = optarg; break;
		case O_IMAGE: o.image_digest = optarg; break;
		case O_NONCE: o.nonce = optarg; break;
		case O_EMBEDDED: o.allow_embedded_key = true; break;
		case O_JSON: as_json = true; break;
		case O_EVIDENCE: evpath = optarg; break;
		case O_TPM_CA: ao.ca_file = optarg; break;
		case O_ENROLL_KEY: enrkeypath = optarg; break;
		case O_PCRS_REF: refpath = optarg; break;
		case O_MAX_AGE:
		case O_SKEW:
			if (cli_parse_int(optarg, 0, JCS_MAX_SAFE_INT, &v)) {
				fprintf(stderr, "kwitness verify: --%s needs a number of seconds >= 0\n",
					c == O_SKEW ? "skew" : "max-age");
				return 2;
			}
			if (c == O_SKEW)
				o.skew = v;
			else
				o.max_age = v;
			break;
		}
	}
	if (c < 0)
		return status;
	status = 2;
	if (optind != argc - 1)
		return kw_cli_error(&verify_cli, "expected exactly one RECORD argument");
	recpath = argv[optind];
	if (!keypath && !o.allow_embedded_key)
		return kw_cli_error(&verify_cli, "--key TRUSTED is required (or --allow-embedded-key)");
	if (o.image_digest && !policypath) {
		fprintf(stderr, "kwitness verify: --image-digest needs --policy (the measurement binds both)\n");
		return 2;
	}
	if (o.image_digest && !kw_digest_valid(o.image_digest)) {
		fprintf(stderr, "kwitness verify: --image-digest must be sha256:<hex> or sha384:<hex>\n");
		return 2;
	}
	if (!evpath && (ao.ca_file || enrkeypath || refpath)) {
		fprintf(stderr, "kwitness verify: --tpm-ca, --enroll-key and --pcrs-ref need --evidence\n");
		return 2;
	}
	if (evpath && (!ao.ca_file || !enrkeypath)) {
		fprintf(stderr, "kwitness verify: --evidence needs --tpm-ca (EK CA) and --enroll-key (enrollment key)\n");
		return 2;
	}
	if (evpath) {
		if (!(evidence = cli_read_json("verify", "evidence", evpath)) ||
		    (refpath && !(pcrs_ref = cli_read_json("verify", "PCR reference", refpath))))
			goto out;
		ret = kw_key_load_public(enrkeypath, &enroll_key);
		if (ret) {
			cli_key_error("verify", enrkeypath, ret);
			goto out;
		}
		ao.enroll_key = enroll_key;
		ao.pcrs_ref = pcrs_ref;
	}
	if (keypath) {
		ret = kw_key_load_public(keypath, &trusted);
		if (ret) {
			cli_key_error("verify", keypath, ret);
			goto out;
		}
		o.trusted = trusted;
	}
	if (cli_read("verify", "record", recpath, CLI_RECORD_MAX, &text))
		goto out;
	if (logpath) {
		if (cli_read("verify", "decision log", logpath, CLI_LOG_MAX, &log))
			goto out;
		if (kw_transcript_from_text(log.data ? log.data : "", log.len, hash, &count, err,
					    sizeof(err))) {
			fprintf(stderr, "kwitness verify: %s: %s\n", logpath, err);
			goto out;
		}
		o.transcript_hash = hash;
		o.call_count = (int64_t)count;
	}
	if (policypath) {
		if (cli_read("verify", "policy bundle", policypath, CLI_BUNDLE_MAX, &bundle))
			goto out;
		o.bundle = bundle.data ? bundle.data : "";
		o.bundle_len = bundle.len;
		if (!o.image_digest) {
			/* The record's own digest: the signature binds it, and the
			 * measurement still has to match it and the bundle. */
			json_t *rec = jcs_parse(text.data ? text.data : "", text.len, NULL);
			const char *d = json_string_value(
				json_object_get(json_object_get(rec, "build_provenance"), "digest"));

			if (d && kw_digest_valid(d)) {
				snprintf(image, sizeof(image), "%s", d);
				o.image_digest = image;
			}
			json_decref(rec);
		}
	}
	ret = kw_record_verify(text.data ? text.data : "", text.len, &o, &res);
	if (ret < 0) {
		fprintf(stderr, "kwitness verify: %s\n", res.message);
		goto out;
	}
	if (ret == 0)
		describe(text.data, text.len, &o, trusted, detail, sizeof(detail));
	if (ret == 0 && evidence) {
		json_t *rec = jcs_parse(text.data, text.len, NULL);
		int a = kw_appraise(evidence, rec, &ao, &ar);

		json_decref(rec);
		if (a < 0) {
			fprintf(stderr, "kwitness verify: appraisal: %s\n", strerror(-a));
			goto out;
		}
		appraised = true;
	}
	print_result(&res, as_json, detail, &ar, appraised);
	status = ret == 0 && (!evidence || ar.step == KW_APPRAISE_OK) ? 0 : 1;
out:
	json_decref(evidence);
	json_decref(pcrs_ref);
	kw_key_free(enroll_key);
	kw_key_free(trusted);
	kw_buf_free(&text);
	kw_buf_free(&log);
	kw_buf_free(&bundle);
	return status;
}
