/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness record build / kwitness sign: make a TRACE v0.2 record offline,
 * from the same inputs kwitnessd uses at session close. */
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
#include "kwitness/protocol.h"
#include "kwitness/record.h"
#include "cli_key.h"
#include "cli_record.h"
#include "commands.h"
#include "collector/transcript.h"

int cli_read(const char *cmd, const char *what, const char *path, size_t max, struct kw_buf *out)
{
	int ret = kw_read_file(path, max, out);

	if (ret == -EFBIG)
		fprintf(stderr, "kwitness %s: %s %s is larger than %zu bytes\n", cmd, what, path, max);
	else if (ret)
		fprintf(stderr, "kwitness %s: cannot read %s %s: %s\n", cmd, what, path, strerror(-ret));
	return ret;
}

int cli_print_json(const json_t *v, bool pretty)
{
	struct kw_buf b = { 0 };
	int ret;

	if (pretty) {
		char *s = json_dumps(v, JSON_INDENT(2) | JSON_SORT_KEYS);

		if (!s)
			return -ENOMEM;
		printf("%s\n", s);
		free(s);
		return 0;
	}
	ret = jcs_dump(v, &b);
	if (!ret)
		printf("%s\n", b.data);
	kw_buf_free(&b);
	return ret;
}

/* Strict decimal: the whole string, within [lo, hi]. */
int cli_parse_int(const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

enum { O_SANDBOX = 1, O_IMAGE, O_POLICY, O_DECISIONS, O_MODE, O_PROVIDER, O_MODEL, O_CLASS,
       O_IAT, O_VERIFIER, O_PRETTY, O_HELP };

static const struct kw_cli_opt build_opts[] = {
	{ "sandbox-id", required_argument, O_SANDBOX, "--sandbox-id ID",
	  "subject: spiffe://... or did:..." },
	{ "image-digest", required_argument, O_IMAGE, "--image-digest D",
	  "sha256:<hex> or sha384:<hex> of the sandbox image" },
	{ "policy", required_argument, O_POLICY, "--policy FILE", "policy bundle, hashed byte for byte" },
	{ "decisions", required_argument, O_DECISIONS, "--decisions FILE",
	  "decision log: JSON Lines, or one JSON array ('-': stdin)" },
	{ "enforcement-mode", required_argument, O_MODE, "--enforcement-mode MODE",
	  "enforce | advisory | silent | declared (required)" },
	{ "model-provider", required_argument, O_PROVIDER, "--model-provider P, --model-id M", NULL },
	{ "model-id", required_argument, O_MODEL, NULL, NULL },
	{ "data-class", required_argument, O_CLASS, "--data-class C", "default \"internal\"" },
	{ "iat", required_argument, O_IAT, "--iat N", "issued-at, Unix seconds (default: now)" },
	{ "verifier", required_argument, O_VERIFIER, "--verifier URI",
	  "appraisal.verifier (default " KW_DEFAULT_VERIFIER ")" },
	{ "pretty", no_argument, O_PRETTY, "--pretty", "indented output instead of canonical JSON" },
	{ 0 },
};

static const struct kw_cli build_cli = {
	"kwitness record build",
	"usage: kwitness record build --sandbox-id ID --image-digest D --policy FILE\n"
	"           --decisions FILE --enforcement-mode MODE --model-provider P --model-id M\n"
	"           [--data-class C] [--iat N] [--verifier URI] [--pretty]\n\n"
	"Prints an unsigned TRACE v0.2 record (RFC 8785 JSON and a newline), built with the\n"
	"agentrust sandbox adapter mapping. It has no cnf and no signature yet: it is the\n"
	"input of 'kwitness sign', which sets cnf.jwk to the signing key.\n\n",
	25, "", O_HELP, NULL, build_opts,
};

static int record_build(int argc, char **argv)
{
	struct kw_record_input in = { .data_class = "internal", .iat = (int64_t)time(NULL) };
	const char *policy = NULL, *decisions = NULL;
	struct kw_buf bundle = { 0 }, log = { 0 };
	char hash[KW_DIGEST_STR_MAX], err[320];
	bool pretty = false;
	long long iat;
	json_t *rec = NULL;
	int c, status = 1;

	optind = 1;
	while ((c = kw_cli_next(&build_cli, argc, argv, &status)) > 0) {
		switch (c) {
		case O_SANDBOX: in.sandbox_id = optarg; break;
		case O_IMAGE: in.image_digest = optarg; break;
		case O_POLICY: policy = optarg; break;
		case O_DECISIONS: decisions = optarg; break;
		case O_MODE: in.enforcement_mode = optarg; break;
		case O_PROVIDER: in.model_provider = optarg; break;
		case O_MODEL: in.model_id = optarg; break;
		case O_CLASS: in.data_class = optarg; break;
		case O_VERIFIER: in.verifier = optarg; break;
		case O_PRETTY: pretty = true; break;
		case O_IAT:
			if (cli_parse_int(optarg, 1700000000, JCS_MAX_SAFE_INT, &iat)) {
				fprintf(stderr, "kwitness record build: --iat must be Unix seconds >= 1700000000\n");
				return 2;
			}
			in.iat = iat;
			break;
		}
	}
	if (c < 0)
		return status;
	status = 1;
	if (optind != argc || !in.sandbox_id || !in.image_digest || !policy || !decisions ||
	    !in.enforcement_mode || !in.model_provider || !in.model_id)
		return kw_cli_error(&build_cli, "%s",
				       optind != argc ? "unexpected argument" :
				       "--sandbox-id, --image-digest, --policy, --decisions, "
				       "--enforcement-mode, --model-provider and --model-id are "
				       "required");
	if (cli_read("record build", "policy bundle", policy, CLI_BUNDLE_MAX, &bundle) ||
	    cli_read("record build", "decision log", decisions, CLI_LOG_MAX, &log))
		goto out;
	if (kw_transcript_from_text(log.data ? log.data : "", log.len, hash, &in.call_count, err,
				    sizeof(err))) {
		fprintf(stderr, "kwitness record build: %s: %s\n", decisions, err);
		goto out;
	}
	in.bundle = bundle.data ? bundle.data : "";
	in.bundle_len = bundle.len;
	in.transcript_hash = hash;
	rec = kw_record_build(&in, err, sizeof(err));
	if (!rec) {
		fprintf(stderr, "kwitness record build: %s\n", err);
		goto out;
	}
	status = cli_print_json(rec, pretty) ? 1 : 0;
out:
	json_decref(rec);
	kw_buf_free(&bundle);
	kw_buf_free(&log);
	return status;
}

static void record_usage(FILE *f)
{
	fprintf(f, "usage: kwitness record build [OPTIONS]   (see 'kwitness record build --help')\n");
}

int cmd_record(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "build"))
		return record_build(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		record_usage(stdout);
		kw_cli_usage(stdout, &build_cli);
		return 0;
	}
	fprintf(stderr, "kwitness record: expected the subcommand 'build'\n");
	record_usage(stderr);
	return 2;
}

static const struct kw_cli_opt sign_opts[] = {
	{ "key", required_argument, 'k', "--key FILE",
	  "PKCS#8 PEM private key, mode 0600 (default: TRACE_PRIVATE_KEY_PEM\n"
	  "when set, else " KW_DEFAULT_KEY ")" },
	{ "pretty", no_argument, 'p', "--pretty", "indented output instead of canonical JSON" },
	{ 0 },
};

static const struct kw_cli sign_cli = {
	"kwitness sign",
	"usage: kwitness sign [--key FILE] [--pretty] RECORD\n\n"
	"Signs a TRACE v0.2 record with an Ed25519 key: sets cnf.jwk to the key's public\n"
	"JWK, signs the RFC 8785 bytes of the record without \"signature\", writes the\n"
	"signature (base64url, no padding), verifies it, and prints the signed record.\n"
	"RECORD may be '-' for stdin.\n\n",
	13, "k:ph", 'h', NULL, sign_opts,
};

int cmd_sign(int argc, char **argv)
{
	const char *keypath = NULL;
	struct kw_buf text = { 0 };
	struct jcs_error jerr = { 0 };
	struct kw_key *key = NULL;
	char err[320];
	bool pretty = false;
	json_t *rec = NULL;
	int c, status = 1;

	optind = 1;
	while ((c = kw_cli_next(&sign_cli, argc, argv, &status)) > 0) {
		if (c == 'k')
			keypath = optarg;
		pretty |= c == 'p';
	}
	if (c < 0)
		return status;
	status = 1;
	if (optind != argc - 1)
		return kw_cli_error(&sign_cli, "expected exactly one RECORD argument");
	if (cli_read("sign", "record", argv[optind], CLI_RECORD_MAX, &text))
		goto out;
	rec = jcs_parse(text.data ? text.data : "", text.len, &jerr);
	if (!rec || !json_is_object(rec)) {
		if (rec)
			fprintf(stderr, "kwitness sign: %s: not a JSON object\n", argv[optind]);
		else
			fprintf(stderr, "kwitness sign: %s: line %zu column %zu: %s\n", argv[optind],
				jerr.line, jerr.column, jerr.message);
		goto out;
	}
	if (cli_load_signing_key("sign", keypath, &key))
		goto out;
	if (kw_record_sign(rec, key, err, sizeof(err))) {
		fprintf(stderr, "kwitness sign: %s\n", err);
		goto out;
	}
	status = cli_print_json(rec, pretty) ? 1 : 0;
out:
	kw_key_free(key);
	json_decref(rec);
	kw_buf_free(&text);
	return status;
}
