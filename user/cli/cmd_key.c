/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness keygen / kwitness key show: the Ed25519 signing key. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jcs/jcs.h"
#include "trace/key.h"
#include "client/protocol.h"
#include "cli_key.h"
#include "lib/options.h"
#include "commands.h"
#include "lib/messages.h"
#include "lib/messages.h"
#include "verbs.h"

void cli_key_error(const char *cmd, const char *what, int err)
{
	switch (err) {
	case -EPERM:
		if (!strcmp(cmd, "verify")) {
			fprintf(stderr, "kwitness %s: refusing %s: the JWK holds private key members; give the public JWK\n",
				cmd, what);
			break;
		}
		fprintf(stderr,
			"kwitness %s: refusing key %s: it is group- or world-accessible or owned by another user (run: chmod 600 %s)\n",
			cmd, what, what);
		break;
	case -EINVAL:
		if (!strcmp(cmd, "verify"))
			fprintf(stderr, "kwitness %s: %s is not an Ed25519 public key (public JWK or PEM)\n",
				cmd, what);
		else
			fprintf(stderr, "kwitness %s: %s is not an unencrypted Ed25519 private key (PKCS#8 PEM)\n",
				cmd, what);
		break;
	case -ENOENT:
		fprintf(stderr, "kwitness %s: %s: no such key\n", cmd, what);
		break;
	case -EFBIG:
		fprintf(stderr, "kwitness %s: %s is too large to be a key\n", cmd, what);
		break;
	case -EEXIST:
		fprintf(stderr, "kwitness %s: %s already exists; refusing to overwrite a key\n", cmd, what);
		break;
	default:
		fprintf(stderr, "kwitness %s: %s: %s\n", cmd, what, strerror(-err));
	}
}

/* --key FILE, else TRACE_PRIVATE_KEY_PEM, else the default path. */
int cli_load_signing_key(const char *cmd, const char *path, struct kw_key **key)
{
	const char *from_env = getenv("TRACE_PRIVATE_KEY_PEM");
	char why[600];
	int ret;

	if (!path && from_env && *from_env) {
		ret = kw_key_load_private(NULL, key);
	} else {
		path = path ? path : KW_DEFAULT_KEY;
		ret = kw_key_load_private(path, key);
	}
	if (ret)
		fprintf(stderr, "kwitness %s: %s\n", cmd,
			kw_msg_signing_key(why, sizeof(why), path, ret,
					   !strncmp(cmd, "tlog", 4) ? "--signing-key" :
					   !strcmp(cmd, "tpm enroll") ? "--enroll-key" : "--key"));
	return ret;
}

/* mkdir -p with mode 0700 for the components that are missing. */
static int make_parent_dirs(const char *path)
{
	char dir[PATH_MAX];
	size_t n = strlen(path);
	char *slash;

	if (n >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, n + 1);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char saved = *p;

			*p = '\0';
			if (mkdir(dir, 0700) < 0 && errno != EEXIST)
				return -errno;
			*p = saved;
			if (!saved)
				break;
		}
	}
	return 0;
}

/* Prints the JWK as canonical JSON on one line. */
static int print_jwk(FILE *f, const struct kw_key *key)
{
	struct kw_buf b = { 0 };
	json_t *jwk = kw_key_public_jwk(key);
	int ret = jwk ? jcs_dump(jwk, &b) : -ENOMEM;

	if (!ret)
		fprintf(f, "%s\n", b.data);
	kw_buf_free(&b);
	json_decref(jwk);
	return ret;
}

static void keygen_usage(FILE *f)
{
	fprintf(f, "usage: kwitness keygen [--out FILE]\n\n"
		   "Generates an Ed25519 signing key and writes it as PKCS#8 PEM, mode 0600.\n"
		   "An existing file is never overwritten. Prints the public JWK and its\n"
		   "RFC 7638 thumbprint.\n\n"
		   "  --out FILE   where to write the key (default " KW_DEFAULT_KEY ");\n"
		   "               a missing parent directory is created with mode 0700\n"
		   "  --help       this text\n");
}

int cmd_keygen(int argc, char **argv)
{
	const char *out = KW_DEFAULT_KEY;
	const struct cli_opt opts[] = {
		{ "out", 'o', CLI_TEXT, &out },
		{ "help", 'h', CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness keygen", .usage = keygen_usage, .opts = opts };
	char tp[KW_THUMBPRINT_MAX];
	struct kw_key *key = NULL;
	int ret;

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (optind != argc) {
		kw_usage_error("kwitness keygen", "unexpected argument '%s'", argv[optind]);
		return 2;
	}
	ret = make_parent_dirs(out);
	if (ret) {
		fprintf(stderr, "kwitness keygen: cannot create the directory of %s: %s\n", out,
			strerror(-ret));
		return 1;
	}
	ret = kw_key_generate(out, &key);
	if (ret) {
		cli_key_error("keygen", out, ret);
		return 1;
	}
	ret = kw_key_thumbprint(key, tp);
	if (!ret) {
		printf("key: %s\njwk: ", out);
		ret = print_jwk(stdout, key);
		printf("thumbprint: %s\n", tp);
	}
	kw_key_free(key);
	return ret ? 1 : 0;
}

static void key_usage(FILE *f)
{
	fprintf(f, "usage: kwitness key show [--key FILE] [--jwk | --thumbprint]\n\n"
		   "Shows the public JWK and RFC 7638 thumbprint of a signing key.\n\n"
		   "  --key FILE     the private key (default: TRACE_PRIVATE_KEY_PEM when set,\n"
		   "                 else " KW_DEFAULT_KEY ")\n"
		   "  --jwk          print only the public JWK, as one JSON object\n"
		   "  --thumbprint   print only the thumbprint\n"
		   "  --help         this text\n");
}

static int key_show(int argc, char **argv)
{
	const char *path = NULL;
	bool only_jwk = false, only_tp = false;
	const struct cli_opt opts[] = {
		{ "key", 'k', CLI_TEXT, &path },
		{ "jwk", 'j', CLI_FLAG, &only_jwk },
		{ "thumbprint", 't', CLI_FLAG, &only_tp },
		{ "help", 'h', CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness key show", .usage = key_usage, .opts = opts };
	char tp[KW_THUMBPRINT_MAX];
	struct kw_key *key = NULL;
	int ret;

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (optind != argc || (only_jwk && only_tp)) {
		kw_usage_error("kwitness key show", "%s",
			optind != argc ? "unexpected argument" : "--jwk and --thumbprint exclude each other");
		return 2;
	}
	if (cli_load_signing_key("key show", path, &key))
		return 1;
	ret = kw_key_thumbprint(key, tp);
	if (!ret) {
		if (only_tp) {
			printf("%s\n", tp);
		} else if (only_jwk) {
			ret = print_jwk(stdout, key);
		} else {
			printf("jwk: ");
			ret = print_jwk(stdout, key);
			printf("thumbprint: %s\n", tp);
		}
	}
	kw_key_free(key);
	return ret ? 1 : 0;
}

int cmd_key(int argc, char **argv)
{
	static const struct cli_verb verbs[] = {
		{ "show", key_show, NULL },
		{ 0 },
	};
	static const struct cli_command key = {
		.name = "key",
		.verbs = verbs,
		.usage = key_usage,
		.unknown = "expected the subcommand 'show'",
		.unknown_usage = true,
		.missing_says = true,
	};

	return cli_dispatch(&key, argc, argv);
}
