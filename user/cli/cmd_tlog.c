/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness tlog: a C2SP tlog-tiles transparency log in a directory (docs/
 * transparency.md). init, append, checkpoint, proof, request and cosign (the
 * witness exchange, by hand), check (a full audit), vkey. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "cli_key.h"
#include "lib/options.h"
#include "cli_record.h"
#include "cli_tlog.h"
#include "commands.h"
#include "lib/messages.h"
#include "verbs.h"
#include "tlog/anchor.h"
#include "tlog/audit.h"
#include "tlog/log.h"
#include "tlog/proof.h"
#include "tlog/tiles.h"
#include "tlog/witness.h"

static void tlog_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness tlog init DIR --origin ORIGIN --key KEY\n"
		"       kwitness tlog append DIR --key KEY [--record] FILE...\n"
		"       kwitness tlog append DIR --key KEY --lines FILE\n"
		"       kwitness tlog sign DIR --key KEY --signing-key KEY [--witness-at W]...\n"
		"                          [--witness-policy POLICY] --out RECORD UNSIGNED\n"
		"       kwitness tlog sign http://HOST:PORT --log-vkey VKEY --token FILE\n"
		"                          --signing-key KEY --out RECORD UNSIGNED\n"
		"       kwitness tlog serve DIR --listen ADDR:PORT [--append-token FILE --key KEY ...]\n"
		"       kwitness tlog checkpoint DIR\n"
		"       kwitness tlog proof DIR INDEX [--anchor-v1]\n"
		"       kwitness tlog request DIR [--old SIZE]\n"
		"       kwitness tlog cosign DIR --key KEY [FILE]\n"
		"       kwitness tlog check DIR [--vkey VKEY]\n"
		"       kwitness tlog vkey --key KEY --name NAME [--witness]\n\n"
		"A transparency log in C2SP tlog-tiles form: DIR/checkpoint (a signed note),\n"
		"DIR/tile/<L>/<N> hash tiles and DIR/tile/entries/<N> entry bundles, all\n"
		"static files any HTTP server can serve. Every file is written atomically and\n"
		"the checkpoint last; a torn append is undone when the log is next opened.\n\n"
		"  init        create DIR with an empty tree; ORIGIN (e.g. log.example.org/kwitness)\n"
		"              names the log and its key; prints the log's vkey\n"
		"  append      append each FILE (at most 65535 bytes) as an entry and publish a\n"
		"              checkpoint; with --record each FILE is a signed TRACE record and the\n"
		"              entry is its registry-anchor-v1 claim bytes; prints \"index N FILE\";\n"
		"              with --lines each line of FILE is an entry, all in one append\n"
		"  sign        sign the built record UNSIGNED once with its transparency URL,\n"
		"              log it, have the witnesses (W: http://HOST:PORT[/PREFIX] or\n"
		"              local:NAME:KEYFILE:STATEDIR) cosign, and write RECORD and\n"
		"              RECORD.tlog-proof (exit 1, no URI, no proof when a step fails)\n"
		"              To a shared writer (kwitness tlog serve --append-token): the log\n"
		"              is given by its URL and --log-vkey, --token FILE holds the token\n"
		"  serve       serve DIR over HTTP (kwitness tlog serve --help)\n"
		"  checkpoint  print the current checkpoint\n"
		"  proof       print the C2SP tlog-proof of entry INDEX against the current\n"
		"              checkpoint, or with --anchor-v1 {\"audit_path\":[...],\"leaf_index\":N}\n"
		"  request     print a C2SP tlog-witness add-checkpoint body for the current\n"
		"              checkpoint, with the consistency proof from SIZE (default 0)\n"
		"  cosign      add the cosignature lines a witness returned (FILE or stdin) to\n"
		"              the current checkpoint\n"
		"  check       audit DIR: rehash every entry, rebuild every tile, recompute the\n"
		"              root; with --vkey also check the checkpoint's signature\n"
		"  vkey        print the verifier key of KEY under NAME (type 0x01, or with\n"
		"              --witness a cosignature key, type 0x04)\n\n"
		"  --key KEY   the log's (or witness's) Ed25519 private key, PKCS#8 PEM\n"
		"  --help      this text\n");
}

static int open_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		fprintf(stderr, "kwitness tlog: %s: %s\n", dir, strerror(errno));
	return fd;
}

/* What a subcommand made, on stdout; exit status 0. */
static int print_out(const struct kw_buf *out)
{
	fwrite(out->data, 1, out->len, stdout);
	return 0;
}

/* The end of a subcommand that read a log's checkpoint into b and made out. */
static int release(int dirfd, struct kw_buf *b, struct kw_buf *out, int status)
{
	close(dirfd);
	kw_buf_free(b);
	kw_buf_free(out);
	return status;
}

/* The checkpoint of DIR; prints why not. */
static int read_cp(int dirfd, const char *dir, struct kw_buf *buf, struct tlog_note *n,
		   struct tlog_checkpoint *cp)
{
	int ret = tlog_read_checkpoint(dirfd, buf, n, cp);

	if (ret)
		fprintf(stderr, "kwitness tlog: %s/checkpoint: %s\n", dir,
			ret == -EBADMSG ? "not a checkpoint" : strerror(-ret));
	return ret;
}

static int open_log(const char *dir, const char *keypath, struct tlog_key *key,
		    struct tlog_log **l)
{
	struct kw_buf b = { 0 };
	struct tlog_note n;
	struct tlog_checkpoint cp;
	int fd = open_dir(dir), ret;

	if (fd < 0)
		return -1;
	ret = read_cp(fd, dir, &b, &n, &cp);
	close(fd);
	kw_buf_free(&b);
	if (ret || cli_tlog_key("tlog", keypath, cp.origin, TLOG_SIG_ED25519, key))
		return -1;
	ret = tlog_log_open(dir, key, l);
	if (ret) {
		fprintf(stderr, "kwitness tlog: %s: %s\n", dir,
			ret == -EKEYREJECTED ? "the checkpoint is not signed by this key" :
			ret == -EBADMSG ? "the tiles do not match the checkpoint (run kwitness tlog check)" :
			strerror(-ret));
		tlog_key_clear(key);
		return -1;
	}
	return 0;
}

/* A signed record's registry-anchor-v1 claim bytes. */
static int record_entry(const char *path, struct kw_buf *out)
{
	struct kw_buf text = { 0 };
	json_t *rec = NULL;
	int ret = cli_read("tlog", "record", path, CLI_RECORD_MAX, &text);

	if (!ret) {
		rec = jcs_parse(text.data, text.len, NULL);
		if (!rec || !json_is_object(rec) || !json_object_get(rec, "signature")) {
			fprintf(stderr, "kwitness tlog: %s is not a signed record\n", path);
			ret = -EINVAL;
		}
	}
	if (!ret && anchor_claim_bytes(rec, out)) {
		fprintf(stderr, "kwitness tlog: %s: outside the anchor-v1 profile\n", path);
		ret = -EINVAL;
	}
	json_decref(rec);
	kw_buf_free(&text);
	return ret;
}

static int do_append(const char *dir, const char *keypath, bool records, char **files, int n)
{
	struct tlog_key key;
	struct tlog_log *l;
	struct kw_buf *bufs = calloc((size_t)n, sizeof(*bufs));
	const void **e = calloc((size_t)n, sizeof(*e));
	size_t *lens = calloc((size_t)n, sizeof(*lens));
	uint64_t first;
	int status = 1, ret;

	if (!bufs || !e || !lens) {
		fprintf(stderr, "kwitness tlog: out of memory\n");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		ret = records ? record_entry(files[i], &bufs[i]) :
			cli_read("tlog", "entry", files[i], CLI_RECORD_MAX, &bufs[i]);
		if (ret)
			goto out;
		if (bufs[i].len > TLOG_ENTRY_MAX) {
			fprintf(stderr, "kwitness tlog: %s: an entry holds at most %d bytes\n", files[i],
				TLOG_ENTRY_MAX);
			goto out;
		}
		e[i] = bufs[i].data ? bufs[i].data : "";
		lens[i] = bufs[i].len;
	}
	if (open_log(dir, keypath, &key, &l))
		goto out;
	ret = tlog_log_append(l, e, lens, (size_t)n, &first);
	if (ret) {
		fprintf(stderr, "kwitness tlog: append to %s: %s\n", dir, strerror(-ret));
	} else {
		for (int i = 0; i < n; i++)
			printf("index %" PRIu64 " %s\n", first + (uint64_t)i, files[i]);
		status = 0;
	}
	tlog_log_close(l);
	tlog_key_clear(&key);
out:
	for (int i = 0; bufs && i < n; i++)
		kw_buf_free(&bufs[i]);
	free(bufs);
	free(e);
	free(lens);
	return status;
}

/* Every line of FILE (without its newline) as an entry, in one append. */
static int do_append_lines(const char *dir, const char *keypath, const char *file)
{
	struct kw_buf text = { 0 };
	const void **e = NULL;
	size_t *lens = NULL, n = 0, cap = 0;
	struct tlog_key key;
	struct tlog_log *l;
	uint64_t first;
	int status = 1, ret;

	if (cli_read("tlog", "lines", file, (size_t)1 << 30, &text))
		return 1;
	for (size_t pos = 0; pos < text.len;) {
		const char *nl = memchr(text.data + pos, '\n', text.len - pos);
		size_t len = nl ? (size_t)(nl - (text.data + pos)) : text.len - pos;

		if (len > TLOG_ENTRY_MAX) {
			fprintf(stderr, "kwitness tlog: %s: line %zu is longer than %d bytes\n", file, n + 1,
				TLOG_ENTRY_MAX);
			goto out;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			e = realloc(e, cap * sizeof(*e));
			lens = realloc(lens, cap * sizeof(*lens));
			if (!e || !lens) {
				fprintf(stderr, "kwitness tlog: out of memory\n");
				goto out;
			}
		}
		e[n] = text.data + pos;
		lens[n++] = len;
		pos += len + 1;
	}
	if (!n) {
		fprintf(stderr, "kwitness tlog: %s has no lines\n", file);
		goto out;
	}
	if (open_log(dir, keypath, &key, &l))
		goto out;
	ret = tlog_log_append(l, e, lens, n, &first);
	if (ret)
		fprintf(stderr, "kwitness tlog: append to %s: %s\n", dir, strerror(-ret));
	else
		printf("index %" PRIu64 "-%" PRIu64 " %s\n", first, first + n - 1, file), status = 0;
	tlog_log_close(l);
	tlog_key_clear(&key);
out:
	free(e);
	free(lens);
	kw_buf_free(&text);
	return status;
}

static int do_proof(const char *dir, const char *index_s, bool anchor)
{
	struct kw_buf b = { 0 }, out = { 0 };
	struct tlog_note n;
	struct tlog_checkpoint cp;
	struct tlog_proof p;
	long long idx;
	int fd, ret, status = 1;

	if (cli_parse_int(index_s, 0, JCS_MAX_SAFE_INT, &idx)) {
		fprintf(stderr, "kwitness tlog: INDEX must be a number\n");
		return 2;
	}
	fd = open_dir(dir);
	if (fd < 0)
		return 1;
	if (read_cp(fd, dir, &b, &n, &cp))
		goto out;
	ret = tlog_prove(fd, (uint64_t)idx, cp.size, &cp.root, b.data, b.len, &p);
	if (ret) {
		fprintf(stderr, "kwitness tlog: proof of %lld in %s: %s\n", idx, dir,
			ret == -ERANGE ? "no such entry" :
			ret == -EBADMSG ? "the tiles do not lead to the checkpoint's root" :
			strerror(-ret));
		goto out;
	}
	ret = anchor ? anchor_proof_json(p.index, p.path, p.count, &out) :
		       tlog_proof_format(&p, &out);
	if (!ret && anchor)
		ret = kw_buf_putc(&out, '\n');
	if (!ret)
		status = print_out(&out);
out:
	return release(fd, &b, &out, status);
}

static int do_request(const char *dir, long long old)
{
	struct kw_buf b = { 0 }, out = { 0 };
	struct tlog_note n;
	struct tlog_checkpoint cp;
	struct tlog_hash proof[TLOG_PROOF_MAX];
	struct tlog_tiles t;
	size_t count = 0;
	int fd = open_dir(dir), ret, status = 1;

	if (fd < 0)
		return 1;
	if (read_cp(fd, dir, &b, &n, &cp))
		goto out;
	if ((uint64_t)old > cp.size) {
		fprintf(stderr, "kwitness tlog: --old %lld is past the log's size %" PRIu64 "\n", old, cp.size);
		goto out;
	}
	tlog_tiles_init(&t, fd, cp.size);
	ret = tlog_consistency_proof(tlog_tiles_read_node, &t, (uint64_t)old, cp.size, proof, &count);
	if (!ret)
		ret = tlog_witness_request((uint64_t)old, proof, count, b.data, b.len, &out);
	if (ret) {
		fprintf(stderr, "kwitness tlog: consistency proof from %lld: %s\n", old, strerror(-ret));
		goto out;
	}
	status = print_out(&out);
out:
	return release(fd, &b, &out, status);
}

static int do_cosign(const char *dir, const char *keypath, const char *file)
{
	struct tlog_key key;
	struct tlog_log *l;
	struct kw_buf lines = { 0 };
	struct tlog_note n;
	int status = 1, ret;

	if (cli_read("tlog", "cosignatures", file ? file : "-", TLOG_NOTE_MAX, &lines))
		return 1;
	if (open_log(dir, keypath, &key, &l))
		goto out;
	ret = tlog_note_parse(tlog_log_checkpoint(l)->data, tlog_log_checkpoint(l)->len, &n);
	if (!ret)
		ret = tlog_log_add_signatures(l, n.text, n.text_len, lines.data ? lines.data : "",
					      lines.len);
	if (ret)
		fprintf(stderr, "kwitness tlog: cosign: %s\n",
			ret == -EINVAL ? "the input is not signature lines" : strerror(-ret));
	else
		status = 0;
	tlog_log_close(l);
	tlog_key_clear(&key);
out:
	kw_buf_free(&lines);
	return status;
}

static int do_check(const char *dir, const char *vkey)
{
	struct kw_buf b = { 0 };
	struct tlog_note n;
	struct tlog_checkpoint cp;
	struct tlog_key k = { 0 };
	char why[400] = "";
	int fd = open_dir(dir), ret, status = 1;

	if (fd < 0)
		return 1;
	if (read_cp(fd, dir, &b, &n, &cp))
		goto out;
	if (vkey) {
		if (tlog_key_parse_vkey(vkey, strlen(vkey), &k) || k.type != TLOG_SIG_ED25519) {
			fprintf(stderr, "kwitness tlog: --vkey is not a log verifier key\n");
			status = 2;
			goto out;
		}
		if (strcmp(k.name, cp.origin) || tlog_note_verify(&n, &k, NULL)) {
			printf("invalid: the checkpoint is not signed by %s\n", k.name);
			goto out;
		}
	}
	ret = tlog_audit(fd, cp.size, &cp.root, why, sizeof(why));
	if (ret) {
		printf("invalid: %s\n", ret == -EBADMSG ? why : strerror(-ret));
		goto out;
	}
	printf("valid: %s, %" PRIu64 " entries, every tile and the root recomputed\n", cp.origin, cp.size);
	status = 0;
out:
	tlog_key_clear(&k);
	close(fd);
	kw_buf_free(&b);
	return status;
}

/* A verb's options: messages begin "kwitness tlog", --help is the whole usage. */
#define TLOG_OPTIONS(o) { .cmd = "kwitness tlog", .usage = tlog_usage, .opts = (o), .on_bad = CLI_BAD_SAY }

/* A verb's operands after its options (DIR first): their count, or -1
 * with the exit status in p->status (no DIR; operands(): --help or a bad
 * option too). */
static int dir_operands(struct cli_options *p, int argc, char **argv)
{
	if (optind == argc) {
		fprintf(stderr, "kwitness tlog %s: needs DIR\n", argv[0]);
		p->status = 2;
		return -1;
	}
	return argc - optind;
}

static int operands(struct cli_options *p, int argc, char **argv)
{
	return cli_options_parse(p, argc, argv) ? -1 : dir_operands(p, argc, argv);
}

/* operands(), and -1 (status 2, as for an unknown verb) unless there are
 * min to max of them. */
static int operands_in(struct cli_options *p, int argc, char **argv, int min, int max)
{
	int n = operands(p, argc, argv);

	if (n >= 0 && (n < min || n > max)) {
		kw_usage_error("kwitness tlog", "unknown subcommand or wrong arguments: %s", argv[0]);
		p->status = 2;
		return -1;
	}
	return n;
}

static int tlog_vkey(int argc, char **argv)
{
	const char *keypath = NULL, *name = NULL;
	bool witness = false;
	const struct cli_opt opts[] = {
		{ "key", 0, CLI_TEXT, &keypath },
		{ "name", 0, CLI_TEXT, &name },
		{ "witness", 0, CLI_FLAG, &witness },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = TLOG_OPTIONS(opts);
	struct tlog_key k;
	char vk[TLOG_VKEY_MAX];

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (optind != argc || !name) {
		fprintf(stderr, "kwitness tlog vkey: needs --key KEY --name NAME\n");
		return 2;
	}
	if (cli_tlog_key("tlog", keypath, name, witness ? TLOG_SIG_COSIGNATURE : TLOG_SIG_ED25519, &k))
		return 1;
	tlog_key_vkey(&k, vk);
	printf("%s\n", vk);
	tlog_key_clear(&k);
	return 0;
}

static int tlog_init(int argc, char **argv)
{
	const char *keypath = NULL, *origin = NULL;
	const struct cli_opt opts[] = {
		{ "key", 0, CLI_TEXT, &keypath },
		{ "origin", 0, CLI_TEXT, &origin },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = TLOG_OPTIONS(opts);
	struct tlog_key k;
	char vk[TLOG_VKEY_MAX];
	int nargs, ret;

	if ((nargs = operands(&p, argc, argv)) < 0)
		return p.status;
	if (nargs != 1 || !origin) {
		fprintf(stderr, "kwitness tlog init: needs DIR --origin ORIGIN --key KEY\n");
		return 2;
	}
	if (cli_tlog_key("tlog", keypath, origin, TLOG_SIG_ED25519, &k))
		return 1;
	ret = tlog_log_create(argv[optind], &k);
	if (ret)
		fprintf(stderr, "kwitness tlog init: %s: %s\n", argv[optind],
			ret == -EEXIST ? "already holds a log" : strerror(-ret));
	else
		tlog_key_vkey(&k, vk), printf("%s\n", vk);
	tlog_key_clear(&k);
	return ret ? 1 : 0;
}

static int tlog_sign(int argc, char **argv)
{
	const char *keypath = NULL, *signkey = NULL, *wpolicy = NULL, *out = NULL;
	const char *log_vkey = NULL, *token = NULL;
	char *witness_at[CLI_WITNESSES_MAX];
	size_t nwitness = 0;
	enum { O_WITNESS_AT = 1 };
	const struct cli_opt opts[] = {
		{ "key", 0, CLI_TEXT, &keypath },
		{ "signing-key", 0, CLI_TEXT, &signkey },
		{ "witness-at", 0, CLI_OWN, .id = O_WITNESS_AT },
		{ "witness-policy", 0, CLI_TEXT, &wpolicy },
		{ "out", 0, CLI_TEXT, &out },
		{ "log-vkey", 0, CLI_TEXT, &log_vkey },
		{ "token", 0, CLI_TEXT, &token },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = TLOG_OPTIONS(opts);
	char **args;
	int c, nargs;

	while ((c = cli_next_option(&p, argc, argv)) == O_WITNESS_AT) {
		if (nwitness == CLI_WITNESSES_MAX) {
			fprintf(stderr, "kwitness tlog: at most %d --witness-at\n", CLI_WITNESSES_MAX);
			return 2;
		}
		witness_at[nwitness++] = optarg;
	}
	if (c == CLI_OPTIONS_EXIT)
		return p.status;
	if ((nargs = dir_operands(&p, argc, argv)) < 0)
		return p.status;
	args = argv + optind;
	if (nargs != 2 || !out) {
		kw_usage_error("kwitness tlog sign", "needs DIR, UNSIGNED and --out RECORD");
		return 2;
	}
	if (!strncmp(args[0], "http://", 7))
		return cli_tlog_sign_remote(args[0], log_vkey, token, signkey, out, args[1]);
	return cli_tlog_sign(args[0], keypath, signkey, witness_at, nwitness, wpolicy, out, args[1]);
}

static int tlog_append(int argc, char **argv)
{
	const char *keypath = NULL, *lines = NULL;
	bool records = false;
	const struct cli_opt opts[] = {
		{ "key", 0, CLI_TEXT, &keypath },
		{ "record", 0, CLI_FLAG, &records },
		{ "lines", 0, CLI_TEXT, &lines },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = TLOG_OPTIONS(opts);
	int nargs;

	if ((nargs = operands(&p, argc, argv)) < 0)
		return p.status;
	if (lines && nargs == 1 && !records)
		return do_append_lines(argv[optind], keypath, lines);
	if (nargs < 2 || lines) {
		fprintf(stderr, "kwitness tlog append: needs DIR --key KEY FILE...\n");
		return 2;
	}
	return do_append(argv[optind], keypath, records, argv + optind + 1, nargs - 1);
}

static int tlog_checkpoint(int argc, char **argv)
{
	const struct cli_opt opts[] = {
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = TLOG_OPTIONS(opts);
	struct kw_buf b = { 0 };
	struct tlog_note n;
	struct tlog_checkpoint cp;
	int fd, ret = 1;

	if (operands_in(&p, argc, argv, 1, 1) < 0)
		return p.status;
	fd = open_dir(argv[optind]);
	if (fd >= 0 && !read_cp(fd, argv[optind], &b, &n, &cp)) {
		fwrite(b.data, 1, b.len, stdout);
		ret = 0;
	}
	if (fd >= 0)
		close(fd);
	kw_buf_free(&b);
	return ret;
}

static int tlog_proof(int argc, char **argv)
{
	bool anchor = false;
	const struct cli_opt opts[] = {
		{ "anchor-v1", 0, CLI_FLAG, &anchor },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = TLOG_OPTIONS(opts);

	if (operands_in(&p, argc, argv, 2, 2) < 0)
		return p.status;
	return do_proof(argv[optind], argv[optind + 1], anchor);
}

static int tlog_request(int argc, char **argv)
{
	int64_t old = 0;
	const struct cli_opt opts[] = {
		{ "old", 0, CLI_NUMBER, &old, .min = 0, .max = JCS_MAX_SAFE_INT, .bad = "needs a tree size" },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = TLOG_OPTIONS(opts);

	if (operands_in(&p, argc, argv, 1, 1) < 0)
		return p.status;
	return do_request(argv[optind], old);
}

static int tlog_cosign(int argc, char **argv)
{
	const char *keypath = NULL;
	const struct cli_opt opts[] = {
		{ "key", 0, CLI_TEXT, &keypath },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = TLOG_OPTIONS(opts);
	int nargs;

	if ((nargs = operands_in(&p, argc, argv, 1, 2)) < 0)
		return p.status;
	return do_cosign(argv[optind], keypath, nargs == 2 ? argv[optind + 1] : NULL);
}

static int tlog_check(int argc, char **argv)
{
	const char *vkey = NULL;
	const struct cli_opt opts[] = {
		{ "vkey", 0, CLI_TEXT, &vkey },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = TLOG_OPTIONS(opts);

	if (operands_in(&p, argc, argv, 1, 1) < 0)
		return p.status;
	return do_check(argv[optind], vkey);
}

int cmd_tlog(int argc, char **argv)
{
	static const struct cli_verb verbs[] = {
		{ "init", tlog_init, NULL },
		{ "append", tlog_append, NULL },
		{ "sign", tlog_sign, NULL },
		{ "serve", cli_tlog_serve, NULL },
		{ "checkpoint", tlog_checkpoint, NULL },
		{ "proof", tlog_proof, NULL },
		{ "request", tlog_request, NULL },
		{ "cosign", tlog_cosign, NULL },
		{ "check", tlog_check, NULL },
		{ "vkey", tlog_vkey, NULL },
		{ 0 },
	};
	static const struct cli_command tlog = {
		.name = "tlog",
		.verbs = verbs,
		.usage = tlog_usage,
		.unknown = "unknown subcommand or wrong arguments: %s",
		.unknown_usage = true,
	};

	return cli_dispatch(&tlog, argc, argv);
}

int cmd_tlog_deprecated(int argc, char **argv)
{
	fprintf(stderr, "kwitness: 'log' is deprecated, use 'tlog'\n");
	return cmd_tlog(argc, argv);
}
