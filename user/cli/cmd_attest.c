/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness attest --in-toto: a closed session (record, decision log, policy
 * bundle), verified first, stated as an in-toto Statement v1 in a DSSE
 * envelope signed with the record's key; kwitness verify-attestation checks
 * one. The summary and the statement are user/attest/'s; this file reads
 * options and files and prints. docs/attestation.md, "in-toto attestations". */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "attest/dsse.h"
#include "attest/intoto.h"
#include "attest/summary.h"
#include "jcs/jcs.h"
#include "lib/options.h"
#include "lib/text_safe.h"
#include "cli_key.h"
#include "cli_record.h"
#include "commands.h"

#define O_SUBJECT 1
/* An envelope is small: a statement of a few thousand entries. */
#define ATTEST_ENVELOPE_MAX ((size_t)16 << 20)

static void attest_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness attest --in-toto --record RECORD --log DECISIONS --policy BUNDLE\n"
		"           [--key KEY] [--subject FILE]... [--allow-incomplete] [--out FILE]\n"
		"           [--evidence FILE --tpm-ca CA.pem --enroll-key KEY]\n\n"
		"Verifies a closed session's record with its decision log and policy bundle\n"
		"(as kwitness verify does, with KEY's public half as the trusted key), then\n"
		"writes a DSSE envelope (payloadType application/vnd.in-toto+json) holding an\n"
		"in-toto Statement v1: the subjects are each FILE (name as given, SHA-256) and\n"
		"the record; the predicate (" KW_PREDICATE_SESSION_V1 ")\n"
		"states what the session enforced: policy hash, mode, the programs run with the\n"
		"kernel's digests, the destinations reached, the denials, completeness, level.\n"
		"The envelope is signed with KEY, the record's signing key (Ed25519).\n\n"
		"  --in-toto            the format (the only one)\n"
		"  --record RECORD      the session's signed record\n"
		"  --log DECISIONS      its decision log\n"
		"  --policy BUNDLE      its policy bundle\n"
		"  --key KEY            the record's signing key (default: TRACE_PRIVATE_KEY_PEM,\n"
		"                       else /etc/kwitness/signing-key.pem)\n"
		"  --subject FILE       an artifact the session made (repeatable)\n"
		"  --allow-incomplete   attest a session whose log is incomplete (the predicate\n"
		"                       then says complete: false)\n"
		"  --evidence FILE, --tpm-ca CA.pem, --enroll-key KEY\n"
		"                       appraise TPM evidence: the predicate's level is then 1\n"
		"  --out FILE           write there (default: standard output)\n"
		"  --help               this text\n");
}

struct attest_args {
	const char *record, *log, *policy, *key, *out, *evidence, *tpm_ca, *enroll_key;
	const char *subjects[INTOTO_MAX_SUBJECTS - 1];
	size_t n_subjects;
	bool in_toto, allow_incomplete;
};

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* The record verified with its log and bundle, the log summarised. 0, 1
 * (the session does not verify: said on stdout) or 2. */
static int verify_session(const struct attest_args *a, const struct kw_key *key,
			  const struct kw_buf *rec_text, struct attest_summary *s,
			  struct verify_verdict *v)
{
	struct kw_appraise_opts ao = { .ca_file = a->tpm_ca };
	struct verify_request rq = {
		.opts = { .trusted = key, .now = (int64_t)time(NULL), .skew = KW_DEFAULT_SKEW,
			  .call_count = -1, .allow_incomplete = a->allow_incomplete },
		.record_text = rec_text->data, .record_len = rec_text->len, .log_path = a->log,
		.bundle_path = a->policy, .appraise = &ao,
		.on_entry = attest_summary_entry, .entry_ctx = s,
	};
	struct kw_key *enroll = NULL;
	json_t *ev = NULL;
	char err[4400], m[4 * 400 + 1];
	int status = 2, e;

	if (a->evidence) {
		if (!(ev = cli_read_json("attest", "evidence", a->evidence)))
			return 2;
		if ((e = kw_key_load_public(a->enroll_key, &enroll))) {
			cli_key_error("verify", a->enroll_key, e);
			json_decref(ev);
			return 2;
		}
	}
	ao.enroll_key = enroll;
	rq.evidence = ev;
	if (verify_record(&rq, v, err, sizeof(err))) {
		fprintf(stderr, "kwitness attest: %s\n", err);
	} else if (!v->valid) {
		printf("invalid: %s: %s\n", kw_verify_reason_code(v->res.reason),
		       kw_text_safe(v->res.message, m, sizeof(m)));
		status = 1;
	} else if (ev && v->level != KW_LEVEL_1) {
		printf("invalid: %s: %s\n", kw_appraise_code(v->appraisal.step),
		       kw_text_safe(v->appraisal.message, m, sizeof(m)));
		status = 1;
	} else {
		status = 0;
	}
	if (status == 1)
		fprintf(stderr, "kwitness attest: the session does not verify; nothing attested\n");
	json_decref(ev);
	kw_key_free(enroll);
	return status;
}

/* The subjects: each FILE, then the record. */
static int subjects_of(const struct attest_args *a, const struct attest_record *r,
		       struct intoto_subject *subj)
{
	size_t i;
	int e;

	for (i = 0; i < a->n_subjects; i++) {
		subj[i].name = a->subjects[i];
		if ((e = kw_digest_file(KW_SHA256, a->subjects[i], subj[i].digest))) {
			fprintf(stderr, "kwitness attest: --subject %s: %s\n", a->subjects[i],
				strerror(-e));
			return 2;
		}
	}
	subj[i].name = r->name;
	memcpy(subj[i].digest, r->digest, sizeof(r->digest));
	return 0;
}

static int write_envelope(const char *out, const json_t *env)
{
	struct kw_buf text = { 0 };
	int e = jcs_dump(env, &text) ?: kw_buf_putc(&text, '\n');

	if (!e)
		e = out ? kw_write_file_atomic(out, text.data, text.len, 0644)
			: kw_write_all(1, text.data, text.len);
	if (e)
		fprintf(stderr, "kwitness attest: %s: %s\n", out ? out : "stdout", strerror(-e));
	kw_buf_free(&text);
	return e ? 2 : 0;
}

static int attest_run(const struct attest_args *a, const struct kw_key *key)
{
	struct intoto_subject subj[INTOTO_MAX_SUBJECTS];
	struct attest_record r = { .name = base_name(a->record) };
	struct kw_buf rec_text = { 0 }, payload = { 0 };
	struct attest_summary s;
	struct verify_verdict v;
	json_t *rec = NULL, *st = NULL, *env = NULL;
	int status = 2;

	if (cli_read("attest", "record", a->record, CLI_RECORD_MAX, &rec_text))
		return 2;
	if (attest_summary_init(&s)) {
		kw_buf_free(&rec_text);
		return 2;
	}
	status = verify_session(a, key, &rec_text, &s, &v);
	if (status)
		goto out;
	status = 2;
	rec = jcs_parse(rec_text.data, rec_text.len, NULL);
	if (!rec || kw_digest_buf(KW_SHA256, rec_text.data, rec_text.len, r.digest) ||
	    kw_key_thumbprint(key, r.signer) || subjects_of(a, &r, subj))
		goto out;
	r.rec = rec;
	st = intoto_statement(subj, a->n_subjects + 1, attest_predicate(&s, &v, &r));
	if (!st || jcs_dump(st, &payload) ||
	    !(env = dsse_sign(DSSE_INTOTO_PAYLOAD_TYPE, payload.data, payload.len, key))) {
		fprintf(stderr, "kwitness attest: cannot build the statement\n");
		goto out;
	}
	status = write_envelope(a->out, env);
out:
	json_decref(env);
	json_decref(st);
	json_decref(rec);
	kw_buf_free(&payload);
	kw_buf_free(&rec_text);
	attest_summary_free(&s);
	return status;
}

static const char *attest_args_check(const struct attest_args *a)
{
	if (!a->in_toto)
		return "--in-toto is required (the only format)";
	if (!a->record || !a->log || !a->policy)
		return "--record, --log and --policy are required: the session is verified first";
	if (!a->evidence != !a->tpm_ca || !a->evidence != !a->enroll_key)
		return "--evidence, --tpm-ca and --enroll-key go together";
	return NULL;
}

int cmd_attest(int argc, char **argv)
{
	struct attest_args a = { 0 };
	const struct cli_opt opts[] = {
		{ "in-toto", 0, CLI_FLAG, &a.in_toto },
		{ "record", 0, CLI_TEXT, &a.record },
		{ "log", 0, CLI_TEXT, &a.log },
		{ "policy", 0, CLI_TEXT, &a.policy },
		{ "key", 0, CLI_TEXT, &a.key },
		{ "subject", 0, CLI_OWN, .id = O_SUBJECT },
		{ "allow-incomplete", 0, CLI_FLAG, &a.allow_incomplete },
		{ "evidence", 0, CLI_TEXT, &a.evidence },
		{ "tpm-ca", 0, CLI_TEXT, &a.tpm_ca },
		{ "enroll-key", 0, CLI_TEXT, &a.enroll_key },
		{ "out", 0, CLI_TEXT, &a.out },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness attest", .usage = attest_usage, .opts = opts };
	struct kw_key *key = NULL;
	const char *why;
	int opt, status;

	while ((opt = cli_next_option(&p, argc, argv)) == O_SUBJECT) {
		if (a.n_subjects == INTOTO_MAX_SUBJECTS - 1) {
			fprintf(stderr, "kwitness attest: at most %d --subject\n", INTOTO_MAX_SUBJECTS - 1);
			return 2;
		}
		a.subjects[a.n_subjects++] = optarg;
	}
	if (opt == CLI_OPTIONS_EXIT)
		return p.status;
	if ((why = attest_args_check(&a)) || optind != argc) {
		fprintf(stderr, "kwitness attest: %s\n", why ?: "takes no operand");
		return 2;
	}
	if (cli_load_signing_key("attest", a.key, &key))
		return 2;
	status = attest_run(&a, key);
	kw_key_free(key);
	return status;
}
