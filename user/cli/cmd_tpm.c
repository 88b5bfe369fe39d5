/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness tpm enroll | quote: the enrolling side of TPM attestation, and a
 * one-off quote for a key (what kwitnessd --tpm does at start). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jcs/jcs.h"
#include "tpm/tpm.h"
#include "tpm/binding.h"
#include "cli_key.h"
#include "lib/options.h"
#include "cli_record.h"
#include "commands.h"
#include "verbs.h"

static void tpm_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness tpm enroll --tpm TCTI --tpm-ca CA.pem --enroll-key KEY.pem --key KEY...\n"
		"                           --ak-out AKFILE [--machine-id ID] [--out FILE]\n"
		"       kwitness tpm quote --tpm TCTI --ak AKFILE --key KEY [--pcrs SEL] [--enrollment FILE]\n"
		"                          [--out FILE]\n\n"
		"enroll: makes a new attestation key (AK) in the TPM with a random authorisation\n"
		"  value and writes it to AKFILE (mode 0600: whoever reads it can quote with the\n"
		"  AK; give it to kwitnessd --tpm-ak). Checks the TPM's EK certificate against\n"
		"  CA.pem, makes a credential for the EK's public key and the AK's name (in\n"
		"  software), has the TPM activate it, and writes an enrollment record naming the\n"
		"  host (ID, default /etc/machine-id) and the record-signing keys (--key, once per\n"
		"  key), signed by the enrollment key (kwitness verify --enroll-key).\n"
		"quote: quotes the PCRs with the AK of AKFILE and qualifyingData = KEY's RFC 7638\n"
		"  thumbprint, and writes the evidence kwitness verify --evidence reads.\n\n"
		"  --tpm TCTI          device:/dev/tpmrm0 or swtpm:host=H,port=P\n"
		"  --tpm-ca CA.pem     EK CA certificate(s) the enroller trusts\n"
		"  --enroll-key KEY    enrollment signing key (Ed25519 PEM)\n"
		"  --key KEY           a record-signing key (private or public)\n"
		"  --ak-out AKFILE     enroll: where the new AK goes (mode 0600)\n"
		"  --ak AKFILE         quote: the AK to quote with\n"
		"  --machine-id ID     enroll: the host the AK vouches for (32 hex digits)\n"
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

#define TPM_ENROLL_KEYS_MAX 8

struct tpm_args {
	const char *tcti, *ca, *ekey, *enrpath, *out, *ak, *ak_out, *machine_id;
	const char *pcrs;
	const char *keys[TPM_ENROLL_KEYS_MAX];
	size_t n_keys;
};

/* The host's machine id, as systemd keeps it. */
static int read_machine_id(char out[64])
{
	struct kw_buf text = { 0 };
	int e = kw_read_file("/etc/machine-id", 128, &text);

	if (!e && (text.len < 32 || text.len > 33))
		e = -EINVAL;
	if (!e) {
		memcpy(out, text.data, 32);
		out[32] = '\0';
	}
	kw_buf_free(&text);
	return e;
}

static int tpm_enroll(struct kw_tpm *tpm, const struct tpm_args *a)
{
	const char *tps[TPM_ENROLL_KEYS_MAX];
	char tpbuf[TPM_ENROLL_KEYS_MAX][KW_THUMBPRINT_MAX], mid[64], err[512];
	struct kw_enroll_subject subj = { .keys = tps, .n_keys = a->n_keys };
	struct kw_key *ekey = NULL, *k;
	json_t *enr = NULL, *ak = NULL;
	int status = 1;

	if (a->machine_id) {
		snprintf(mid, sizeof(mid), "%s", a->machine_id);
	} else if (read_machine_id(mid)) {
		fprintf(stderr, "kwitness tpm enroll: cannot read /etc/machine-id: give --machine-id\n");
		return 1;
	}
	subj.machine_id = mid;
	for (size_t i = 0; i < a->n_keys; i++) {
		int e = kw_key_load_public(a->keys[i], &k);

		if (e) {
			cli_key_error("tpm enroll", a->keys[i], e);
			return 1;
		}
		e = kw_key_thumbprint(k, tpbuf[i]);
		kw_key_free(k);
		if (e)
			return 1;
		tps[i] = tpbuf[i];
	}
	if (cli_load_signing_key("tpm enroll", a->ekey, &ekey))
		return 1;
	enr = kw_tpm_enroll(tpm, a->ca, ekey, &subj, &ak, err, sizeof(err));
	if (!enr) {
		fprintf(stderr, "kwitness tpm enroll: %s\n", err);
	} else if (kw_tpm_ak_write(a->ak_out, ak, err, sizeof(err))) {
		fprintf(stderr, "kwitness tpm enroll: %s\n", err);
	} else {
		status = write_out(a->out, enr);
	}
	json_decref(ak);
	json_decref(enr);
	kw_key_free(ekey);
	return status;
}

static int tpm_quote(struct kw_tpm *tpm, const struct tpm_args *a, const struct kw_pcr_selection *sel)
{
	struct kw_tpm_binding b;
	struct kw_key *key = NULL;
	json_t *enr = NULL, *ak;
	char err[512];
	bool changed;
	int status = 1, e;

	if (!(ak = kw_tpm_ak_read(a->ak, err, sizeof(err)))) {
		fprintf(stderr, "kwitness tpm quote: %s\n", err);
		return 1;
	}
	e = kw_key_load_public(a->keys[0], &key);
	if (e) {
		cli_key_error("tpm quote", a->keys[0], e);
		json_decref(ak);
		return 1;
	}
	if (a->enrpath && !(enr = cli_read_json("tpm quote", "enrollment", a->enrpath))) {
		json_decref(ak);
		kw_key_free(key);
		return 1;
	}
	/* b owns enr and ak from here. */
	if (kw_binding_init(&b, tpm, sel, NULL, enr, ak, err, sizeof(err)) ||
	    kw_binding_refresh(&b, tpm, key, &changed, err, sizeof(err))) {
		fprintf(stderr, "kwitness tpm quote: %s\n", err);
		goto out;
	}
	status = a->out ? (kw_write_file_atomic(a->out, b.last_evidence.data, b.last_evidence.len, 0644) ? 1 : 0)
			: (kw_write_all(1, b.last_evidence.data, b.last_evidence.len) ? 1 : 0);
	if (status)
		fprintf(stderr, "kwitness tpm quote: cannot write %s\n", a->out ? a->out : "stdout");
out:
	kw_binding_free(&b);
	kw_key_free(key);
	return status;
}

/* What each subcommand needs; 0, or the usage exit status 2. */
static int tpm_args_check(const char *sub, const struct tpm_args *a, struct kw_pcr_selection *sel)
{
	char err[256];

	if (!strcmp(sub, "enroll")) {
		if (!a->ca || !a->ekey || !a->n_keys || !a->ak_out) {
			fprintf(stderr, "kwitness tpm enroll: --tpm-ca, --enroll-key, --key and --ak-out are required\n");
			return 2;
		}
		return 0;
	}
	if (a->n_keys != 1 || !a->ak) {
		fprintf(stderr, "kwitness tpm quote: --ak and one --key are required\n");
		return 2;
	}
	if (kw_pcr_selection_parse(a->pcrs, sel, err, sizeof(err))) {
		fprintf(stderr, "kwitness tpm quote: %s\n", err);
		return 2;
	}
	return 0;
}

/* Both verbs (argv[0]): they share the options and the TPM. */
static int tpm_verb(int argc, char **argv)
{
	enum { O_KEY = 1 };
	struct tpm_args a = { .pcrs = KW_TPM_DEFAULT_PCRS };
	const struct cli_opt opts[] = {
		{ "tpm", 0, CLI_TEXT, &a.tcti },
		{ "tpm-ca", 0, CLI_TEXT, &a.ca },
		{ "enroll-key", 0, CLI_TEXT, &a.ekey },
		{ "key", 0, CLI_OWN, .id = O_KEY },
		{ "pcrs", 0, CLI_TEXT, &a.pcrs },
		{ "enrollment", 0, CLI_TEXT, &a.enrpath },
		{ "ak", 0, CLI_TEXT, &a.ak },
		{ "ak-out", 0, CLI_TEXT, &a.ak_out },
		{ "machine-id", 0, CLI_TEXT, &a.machine_id },
		{ "out", 0, CLI_TEXT, &a.out },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness tpm", .usage = tpm_usage, .opts = opts };
	struct kw_pcr_selection sel;
	struct kw_tpm *tpm = NULL;
	const char *sub;
	char err[512];
	int status, opt;

	sub = argv[0];
	while ((opt = cli_next_option(&p, argc, argv)) == O_KEY) {
		if (a.n_keys == TPM_ENROLL_KEYS_MAX) {
			fprintf(stderr, "kwitness tpm %s: at most %d --key\n", sub, TPM_ENROLL_KEYS_MAX);
			return 2;
		}
		a.keys[a.n_keys++] = optarg;
	}
	if (opt == CLI_OPTIONS_EXIT)
		return p.status;
	if (optind != argc || !a.tcti) {
		fprintf(stderr, "kwitness tpm %s: --tpm TCTI is required and takes no other argument\n", sub);
		return 2;
	}
	if ((status = tpm_args_check(sub, &a, &sel)))
		return status;
	if (kw_tpm_open(a.tcti, &tpm, err, sizeof(err))) {
		fprintf(stderr, "kwitness tpm %s: %s\n", sub, err);
		return 1;
	}
	status = !strcmp(sub, "enroll") ? tpm_enroll(tpm, &a) : tpm_quote(tpm, &a, &sel);
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
