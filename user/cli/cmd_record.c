/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness record build / kwitness sign: make a TRACE v0.2 record offline,
 * from the same inputs kwitnessd uses at session close. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "client/protocol.h"
#include "trace/record.h"
#include "cli_key.h"
#include "lib/options.h"
#include "cli_record.h"
#include "commands.h"
#include "lib/messages.h"
#include "verbs.h"
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

static void build_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness record build --sandbox-id ID --image-digest D --policy FILE\n"
		"           (--decisions FILE | --transcript-hash H --call-count N)\n"
		"           --enforcement-mode MODE --model-provider P --model-id M\n"
		"           [--data-class C] [--iat N] [--verifier URI] [--record-profile P] [--pretty]\n\n"
		"Prints an unsigned TRACE v0.2 record (RFC 8785 JSON and a newline), built with the\n"
		"agentrust sandbox adapter mapping. It has no cnf and no signature yet: it is the\n"
		"input of 'kwitness sign', which sets cnf.jwk to the signing key.\n\n"
		"  --sandbox-id ID          subject: spiffe://... or did:...\n"
		"  --image-digest D         sha256:<hex> or sha384:<hex> of the sandbox image\n"
		"  --policy FILE            policy bundle, hashed byte for byte\n"
		"  --decisions FILE         decision log: JSON Lines, or one JSON array ('-': stdin)\n"
		"  --transcript-hash H      instead of --decisions: a transcript hash computed\n"
		"  --call-count N           elsewhere (a collector's), and its number of entries\n"
		"  --enforcement-mode MODE  enforce | advisory | silent | declared (required)\n"
		"  --model-provider P, --model-id M\n"
		"  --data-class C           default \"internal\"\n"
		"  --iat N                  issued-at, Unix seconds (default: now)\n"
		"  --verifier URI           appraisal.verifier (default " KW_DEFAULT_VERIFIER ")\n"
		"  --record-profile P       trace-v0.2 (default) or trace-v0.3-draft (the draft's\n"
		"                           eat_profile; software-only here: no TPM evidence)\n"
		"  --pretty                 indented output instead of canonical JSON\n"
		"  --help                   this text\n");
}

static int record_build(int argc, char **argv)
{
	struct kw_record_input in = { .data_class = "internal", .iat = (int64_t)time(NULL) };
	const char *policy = NULL, *decisions = NULL, *thash = NULL, *profile = NULL;
	int64_t call_count = -1;
	bool pretty = false;
	const struct cli_opt opts[] = {
		{ "sandbox-id", 0, CLI_TEXT, &in.sandbox_id },
		{ "image-digest", 0, CLI_TEXT, &in.image_digest },
		{ "policy", 0, CLI_TEXT, &policy },
		{ "decisions", 0, CLI_TEXT, &decisions },
		{ "enforcement-mode", 0, CLI_TEXT, &in.enforcement_mode },
		{ "model-provider", 0, CLI_TEXT, &in.model_provider },
		{ "model-id", 0, CLI_TEXT, &in.model_id },
		{ "data-class", 0, CLI_TEXT, &in.data_class },
		{ "iat", 0, CLI_NUMBER, &in.iat, .min = 1700000000, .max = JCS_MAX_SAFE_INT,
		  .bad = "must be Unix seconds >= 1700000000" },
		{ "verifier", 0, CLI_TEXT, &in.verifier },
		{ "record-profile", 0, CLI_TEXT, &profile },
		{ "pretty", 0, CLI_FLAG, &pretty },
		{ "transcript-hash", 0, CLI_TEXT, &thash },
		{ "call-count", 0, CLI_NUMBER, &call_count, .min = 0, .max = JCS_MAX_SAFE_INT,
		  .bad = "needs a number >= 0" },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness record build", .usage = build_usage, .opts = opts };
	struct kw_buf bundle = { 0 }, log = { 0 };
	char hash[KW_DIGEST_STR_MAX], err[320];
	json_t *rec = NULL;
	int status = 1;

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (profile && kw_record_profile_parse(profile, &in.profile)) {
		fprintf(stderr, "kwitness record build: --record-profile: trace-v0.2 or trace-v0.3-draft\n");
		return 2;
	}
	if (decisions && (thash || call_count >= 0)) {
		fprintf(stderr, "kwitness record build: --decisions or --transcript-hash with "
				"--call-count, not both\n");
		return 2;
	}
	if (!decisions && (!thash || call_count < 0 || !kw_digest_valid(thash))) {
		fprintf(stderr, "kwitness record build: %s\n",
			thash || call_count >= 0 ? "--transcript-hash needs sha256:<hex> and --call-count N"
						 : "--decisions FILE (or --transcript-hash and --call-count) is required");
		return 2;
	}
	if (optind != argc || !in.sandbox_id || !in.image_digest || !policy ||
	    !in.enforcement_mode || !in.model_provider || !in.model_id) {
		kw_usage_error("kwitness record build", "%s",
			optind != argc ? "unexpected argument" :
			"--sandbox-id, --image-digest, --policy, --decisions, --enforcement-mode, "
			"--model-provider and --model-id are required");
		return 2;
	}
	if (cli_read("record build", "policy bundle", policy, CLI_BUNDLE_MAX, &bundle))
		goto out;
	if (!decisions) {
		snprintf(hash, sizeof(hash), "%s", thash);
		in.call_count = (uint64_t)call_count;
	} else if (cli_read("record build", "decision log", decisions, CLI_LOG_MAX, &log)) {
		goto out;
	} else if (kw_transcript_from_text(log.data ? log.data : "", log.len, hash, &in.call_count, err,
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

/* --help: the verb list and build's options. */
static void record_help(FILE *f)
{
	record_usage(f);
	build_usage(f);
}

int cmd_record(int argc, char **argv)
{
	static const struct cli_verb verbs[] = {
		{ "build", record_build, NULL },
		{ 0 },
	};
	static const struct cli_command record = {
		.name = "record",
		.verbs = verbs,
		.usage = record_usage,
		.help = record_help,
		.unknown = "expected the subcommand 'build'",
		.unknown_usage = true,
		.missing_says = true,
	};

	return cli_dispatch(&record, argc, argv);
}

static void sign_usage(FILE *f)
{
	fprintf(f, "usage: kwitness sign [--key FILE] [--pretty] RECORD\n\n"
		   "Signs a TRACE v0.2 record with an Ed25519 key: sets cnf.jwk to the key's public\n"
		   "JWK, signs the RFC 8785 bytes of the record without \"signature\", writes the\n"
		   "signature (base64url, no padding), verifies it, and prints the signed record.\n"
		   "RECORD may be '-' for stdin.\n\n"
		   "  --key FILE   PKCS#8 PEM private key, mode 0600 (default: TRACE_PRIVATE_KEY_PEM\n"
		   "               when set, else " KW_DEFAULT_KEY ")\n"
		   "  --pretty     indented output instead of canonical JSON\n"
		   "  --help       this text\n");
}

int cmd_sign(int argc, char **argv)
{
	const char *keypath = NULL;
	bool pretty = false;
	const struct cli_opt opts[] = {
		{ "key", 'k', CLI_TEXT, &keypath },
		{ "pretty", 'p', CLI_FLAG, &pretty },
		{ "help", 'h', CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness sign", .usage = sign_usage, .opts = opts };
	struct kw_buf text = { 0 };
	struct jcs_error jerr = { 0 };
	struct kw_key *key = NULL;
	char err[320];
	json_t *rec = NULL;
	int status = 1;

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (optind != argc - 1) {
		kw_usage_error("kwitness sign", "expected exactly one RECORD argument");
		return 2;
	}
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
