/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness tpm enroll | quote: the enrolling side of TPM attestation, and a
 * one-off quote for a key (what kwitnessd --tpm does at start). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kwitness/jcs.h"
#include "kwitness/tpm.h"
#include "kwitness/tpm_binding.h"
#include "cli_key.h"
#include "kwitness/options.h"
#include "cli_record.h"
#include "commands.h"
#include "verbs.h"

static void tpm_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness tpm enroll --tpm TCTI --tpm-ca CA.pem --enroll-key KEY.pem [--out FILE]\n"
		"       kwitness tpm quote --tpm TCTI --key KEY [--pcrs SEL] [--enrollment FILE] [--out FILE]\n\n"
		"enroll: checks the TPM's EK certificate against CA.pem, makes a credential for\n"
		"  the EK's public key and the attestation key's name (in software), has the TPM\n"
		"  activate it, and writes an enrollment record signed by the enrollment key\n"
		"  (an Ed25519 key the verifier trusts: kwitness verify --enroll-key).\n"
		"quote: quotes the PCRs with qualifyingData = KEY's RFC 7638 thumbprint and\n"
		"  writes the evidence kwitness verify --evidence reads.\n\n"
		"  --tpm TCTI          device:/dev/tpmrm0 or swtpm:host=H,port=P\n"
		"  --tpm-ca CA.pem     EK CA certificate(s) the enroller trusts\n"
		"  --enroll-key KEY    enrollment signing key (Ed25519 PEM)\n"
		"  --key KEY           the record-signing key (private or public)\n"
		"  --pcrs SEL          PCR selection (default " KW_TPM_DEFAULT_PCRS ")\n"
		"  --enrollment FILE   enrollment record to carry in the evidence\n"
		"  --out FILE          write there (default: standard output)\n"
		"  --help              this text\n");
}

static int write_out(const char *path, const json_t *v)
{
	struct kw_buf text = { 0 };
	int ret = jcs_dump(v, &text) ?: kw_buf_putc(&text, '\n');

	if (!ret)
		ret = path ? kw_write_file_atomic(path, text.data, text.len, 0644)
			   : kw_write_all(1, text.data, text.len);
	if (ret)
		fprintf(stderr, "kwitness tpm: %s: %s\n", path ? path : "stdout", strerror(-ret));
	kw_buf_free(&text);
	return ret ? 1 : 0;
}

json_t *cli_read_json(const char *cmd, const char *what, const char *path)
{
	struct kw_buf text = { 0 };
	json_t *v = NULL;

	if (!cli_read(cmd, what, path, KW_TPM_EVIDENCE_MAX, &text)) {
		v = jcs_parse(text.data ? text.data : "", text.len, NULL);
		if (!json_is_object(v)) {
			fprintf(stderr, "kwitness %s: %s: the %s is not a JSON object\n", cmd, path, what);
			json_decref(v);
			v = NULL;
		}
	}
	kw_buf_free(&text);
	return v;
}

/* Both verbs (argv[0]): they share the options and the TPM. */
static int tpm_verb(int argc, char **argv)
{
	const char *tcti = NULL, *ca = NULL, *ekey = NULL, *keypath = NULL, *enrpath = NULL;
	const char *out = NULL, *pcrs = KW_TPM_DEFAULT_PCRS, *sub;
	const struct cli_opt opts[] = {
		{ "tpm", 0, CLI_TEXT, &tcti },
		{ "tpm-ca", 0, CLI_TEXT, &ca },
		{ "enroll-key", 0, CLI_TEXT, &ekey },
		{ "key", 0, CLI_TEXT, &keypath },
		{ "pcrs", 0, CLI_TEXT, &pcrs },
		{ "enrollment", 0, CLI_TEXT, &enrpath },
		{ "out", 0, CLI_TEXT, &out },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness tpm", .usage = tpm_usage, .opts = opts };
	struct kw_pcr_selection sel;
	struct kw_tpm_binding b;
	struct kw_tpm *tpm = NULL;
	struct kw_key *key = NULL;
	json_t *enr = NULL;
	char err[512];
	bool changed;
	int status = 2;

	sub = argv[0];
	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (optind != argc || !tcti) {
		fprintf(stderr, "kwitness tpm %s: --tpm TCTI is required and takes no other argument\n", sub);
		return 2;
	}
	if (!strcmp(sub, "enroll")) {
		if (!ca || !ekey) {
			fprintf(stderr, "kwitness tpm enroll: --tpm-ca and --enroll-key are required\n");
			return 2;
		}
		if (cli_load_signing_key("tpm enroll", ekey, &key))
			return 1;
	} else {
		if (!keypath) {
			fprintf(stderr, "kwitness tpm quote: --key is required\n");
			return 2;
		}
		if (kw_pcr_selection_parse(pcrs, &sel, err, sizeof(err))) {
			fprintf(stderr, "kwitness tpm quote: %s\n", err);
			return 2;
		}
		int e = kw_key_load_public(keypath, &key);

		if (e) {
			cli_key_error("verify", keypath, e);
			return 1;
		}
		if (enrpath && !(enr = cli_read_json("tpm quote", "enrollment", enrpath))) {
			status = 1;
			goto out;
		}
	}
	status = 1;
	if (kw_tpm_open(tcti, &tpm, err, sizeof(err))) {
		fprintf(stderr, "kwitness tpm %s: %s\n", sub, err);
		goto out;
	}
	if (!strcmp(sub, "enroll")) {
		enr = kw_tpm_enroll(tpm, ca, key, err, sizeof(err));
		if (!enr) {
			fprintf(stderr, "kwitness tpm enroll: %s\n", err);
			goto out;
		}
		status = write_out(out, enr);
		goto out;
	}
	if (kw_binding_init(&b, tpm, &sel, NULL, enr, err, sizeof(err)) ||
	    kw_binding_refresh(&b, tpm, key, &changed, err, sizeof(err))) {
		enr = NULL; /* owned by b */
		kw_binding_free(&b);
		fprintf(stderr, "kwitness tpm quote: %s\n", err);
		goto out;
	}
	enr = NULL;
	status = out ? (kw_write_file_atomic(out, b.last_evidence.data, b.last_evidence.len, 0644) ? 1 : 0)
		     : (kw_write_all(1, b.last_evidence.data, b.last_evidence.len) ? 1 : 0);
	if (status)
		fprintf(stderr, "kwitness tpm quote: cannot write %s\n", out ? out : "stdout");
	kw_binding_free(&b);
out:
	json_decref(enr);
	kw_key_free(key);
	kw_tpm_close(tpm);
	return status;
}

int cmd_tpm(int argc, char **argv)
{
	static const struct cli_verb verbs[] = {
		{ "enroll", tpm_verb, NULL },
		{ "quote", tpm_verb, NULL },
		{ 0 },
	};
	static const struct cli_command tpm = {
		.name = "tpm",
		.verbs = verbs,
		.usage = tpm_usage,
		.unknown = "expected 'enroll' or 'quote'",
		.unknown_usage = true,
		.missing_says = true,
	};

	return cli_dispatch(&tpm, argc, argv);
}
