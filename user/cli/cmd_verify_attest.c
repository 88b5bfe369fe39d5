/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness verify-attestation: checks a DSSE envelope that kwitness attest
 * wrote: the signature over its PAE by the trusted key, the payload type,
 * the in-toto statement's shape, and that each --subject FILE and the
 * --record are among its subjects with the digests they have now.
 * Exit 0 valid, 1 invalid (reason code and sentence on stdout), 2 usage. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "attest/dsse.h"
#include "attest/intoto.h"
#include "jcs/jcs.h"
#include "lib/options.h"
#include "lib/text_safe.h"
#include "cli_key.h"
#include "cli_record.h"
#include "commands.h"

#define O_SUBJECT 1
#define ENVELOPE_MAX ((size_t)16 << 20)

static void va_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness verify-attestation --key TRUSTED ENVELOPE [--subject FILE]...\n"
		"           [--record RECORD] [--json]\n\n"
		"Checks a DSSE envelope from kwitness attest --in-toto: a signature over\n"
		"PAE(payloadType, payload) by TRUSTED (Ed25519, public JWK or PEM), payloadType\n"
		"application/vnd.in-toto+json, an in-toto Statement v1 with the predicate\n"
		KW_PREDICATE_SESSION_V1 ", and that each FILE's SHA-256 is a\n"
		"subject's. With --record, the record's SHA-256 must be the predicate's record\n"
		"digest and a subject. Prints the predicate's session, level and completeness.\n"
		"Exit status: 0 valid, 1 invalid (reason code and sentence), 2 usage error.\n\n"
		"  --key TRUSTED    public key of the record's signer\n"
		"  --subject FILE   an artifact that must be a subject (repeatable)\n"
		"  --record RECORD  the record the attestation must name\n"
		"  --json           print {\"valid\",\"reason\",\"message\",\"predicate\"}\n"
		"  --help           this text\n");
}

struct va {
	const char *key, *record;
	const char *subjects[INTOTO_MAX_SUBJECTS];
	size_t n_subjects;
	bool json;
	const char *reason;
	char why[512];
	json_t *st;
};

static int fail(struct va *a, const char *reason, const char *fmt, const char *arg)
{
	a->reason = reason;
	snprintf(a->why, sizeof(a->why), fmt, arg);
	return 1;
}

/* Each FILE (and the record) against the statement's subjects. */
static int check_subjects(struct va *a)
{
	const json_t *pred = json_object_get(a->st, "predicate");
	char d[KW_DIGEST_STR_MAX];
	struct kw_buf text = { 0 };
	const char *want;
	int e;

	for (size_t i = 0; i < a->n_subjects; i++) {
		if ((e = kw_digest_file(KW_SHA256, a->subjects[i], d))) {
			fprintf(stderr, "kwitness verify-attestation: --subject %s: %s\n",
				a->subjects[i], strerror(-e));
			return 2;
		}
		if (!intoto_subject_with(a->st, d))
			return fail(a, "subject_mismatch", "%s is not a subject (no subject has its SHA-256)",
				    a->subjects[i]);
	}
	if (a->record) {
		if (cli_read("verify-attestation", "record", a->record, CLI_RECORD_MAX, &text) ||
		    kw_digest_buf(KW_SHA256, text.data ?: "", text.len, d)) {
			kw_buf_free(&text);
			return 2;
		}
		want = json_string_value(json_object_get(json_object_get(json_object_get(pred, "record"),
									 "digest"), "sha256"));
		if (!want || strcmp(want, d + 7) || !intoto_subject_with(a->st, d)) {
			kw_buf_free(&text);
			return fail(a, "record_mismatch", "%s is not the record the attestation names",
				    a->record);
		}
	}
	kw_buf_free(&text);
	return 0;
}

static int va_check(struct va *a, const char *path, const struct kw_key *key)
{
	struct kw_buf text = { 0 }, body = { 0 };
	json_t *env = NULL;
	int r, status = 2;

	if (cli_read("verify-attestation", "envelope", path, ENVELOPE_MAX, &text))
		return 2;
	status = 1;
	if (!json_is_object(env = jcs_parse(text.data ?: "", text.len, NULL))) {
		fail(a, "envelope_malformed", "%s is not a JSON object", path);
		goto out;
	}
	r = dsse_verify(env, DSSE_INTOTO_PAYLOAD_TYPE, key, &body, a->why, sizeof(a->why));
	if (r < 0) {
		status = 2;
		goto out;
	}
	if (r) {
		a->reason = dsse_reason_code((enum dsse_reason)r);
		goto out;
	}
	a->st = jcs_parse(body.data ?: "", body.len, NULL);
	if (!a->st) {
		fail(a, "statement_invalid", "the payload is not JSON%s", "");
		goto out;
	}
	if (intoto_check(a->st, a->why, sizeof(a->why))) {
		a->reason = "statement_invalid";
		goto out;
	}
	status = check_subjects(a);
out:
	json_decref(env);
	kw_buf_free(&text);
	kw_buf_free(&body);
	return status;
}

static void va_print(const struct va *a, int status)
{
	const json_t *pred = json_object_get(a->st, "predicate");
	char m[4 * 512 + 1];

	if (a->json) {
		json_t *o = json_pack("{s:b, s:s, s:s}", "valid", status == 0, "reason",
				      status ? a->reason : "ok", "message", status ? a->why : "");

		if (o && !status)
			json_object_set(o, "predicate", (json_t *)pred);
		if (o)
			cli_print_json(o, false);
		json_decref(o);
		return;
	}
	if (status) {
		printf("invalid: %s: %s\n", a->reason, kw_text_safe(a->why, m, sizeof(m)));
		return;
	}
	printf("valid: in-toto attestation of session %s: %zu subjects, level %lld, %s, "
	       "%zu executables, %zu destinations, %lld denials\n",
	       kw_text_safe(json_string_value(json_object_get(pred, "session")) ?: "?", m, sizeof(m)),
	       json_array_size(json_object_get(a->st, "subject")),
	       (long long)json_integer_value(json_object_get(pred, "level")),
	       json_is_true(json_object_get(json_object_get(pred, "completeness"), "complete")) ?
		       "complete" : "INCOMPLETE",
	       json_array_size(json_object_get(pred, "executables")),
	       json_array_size(json_object_get(pred, "network")),
	       (long long)json_integer_value(json_object_get(pred, "denials_total")));
}

int cmd_verify_attestation(int argc, char **argv)
{
	struct va a = { 0 };
	const struct cli_opt opts[] = {
		{ "key", 0, CLI_TEXT, &a.key },
		{ "record", 0, CLI_TEXT, &a.record },
		{ "subject", 0, CLI_OWN, .id = O_SUBJECT },
		{ "json", 0, CLI_FLAG, &a.json },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness verify-attestation", .usage = va_usage,
				 .opts = opts };
	struct kw_key *key = NULL;
	int opt, status, e;

	while ((opt = cli_next_option(&p, argc, argv)) == O_SUBJECT) {
		if (a.n_subjects == INTOTO_MAX_SUBJECTS) {
			fprintf(stderr, "kwitness verify-attestation: at most %d --subject\n",
				INTOTO_MAX_SUBJECTS);
			return 2;
		}
		a.subjects[a.n_subjects++] = optarg;
	}
	if (opt == CLI_OPTIONS_EXIT)
		return p.status;
	if (!a.key || optind != argc - 1) {
		fprintf(stderr, "kwitness verify-attestation: --key TRUSTED and one ENVELOPE are required\n");
		return 2;
	}
	if ((e = kw_key_load_public(a.key, &key))) {
		cli_key_error("verify", a.key, e);
		return 2;
	}
	status = va_check(&a, argv[optind], key);
	if (status != 2)
		va_print(&a, status);
	json_decref(a.st);
	kw_key_free(key);
	return status;
}
