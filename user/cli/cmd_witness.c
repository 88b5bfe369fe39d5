/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness witness: a minimal C2SP witness. add-checkpoint handles one
 * tlog-witness request from a file or stdin (the HTTP status it calls for is
 * printed when it is not 200). */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/options.h"
#include "cli_record.h"
#include "cli_tlog.h"
#include "commands.h"
#include "verbs.h"
#include "tlog/witness.h"

static void witness_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness witness add-checkpoint --key KEY --name NAME --state DIR\n"
		"                                       --log VKEY [--log VKEY...] [REQUEST]\n"
		"       kwitness witness serve --listen ADDR:PORT --key KEY --name NAME --state DIR\n"
		"                              --log VKEY [--log VKEY...]\n\n"
		"A minimal witness (C2SP tlog-witness, tlog-cosignature). It trusts the logs\n"
		"given by their verifier keys, keeps the latest checkpoint it cosigned for\n"
		"each in DIR, and cosigns a new checkpoint only when it is signed by its log\n"
		"and a consistency proof links it to the one before: never a fork (another\n"
		"root for a size it cosigned), never a rollback.\n\n"
		"  add-checkpoint  read one add-checkpoint request body (REQUEST or stdin;\n"
		"                  make one with kwitness tlog request) and print the\n"
		"                  cosignature line; otherwise print the HTTP status the\n"
		"                  protocol calls for (400, 403, 404, 409 with the witness's\n"
		"                  size, 422) and exit 1\n"
		"  serve           answer POST /add-checkpoint over HTTP (tlog-witness), one\n"
		"                  request at a time; prints \"listening on http://ADDR:PORT\"\n\n"
		"  --listen ADDR:PORT  where to listen (port 0: any free port)\n"
		"  --key KEY       the witness's Ed25519 private key, PKCS#8 PEM\n"
		"  --name NAME     the witness's name (its vkey: kwitness tlog vkey --witness)\n"
		"  --state DIR     where the witness keeps its state (created, mode 0700)\n"
		"  --log VKEY      a log the witness trusts (repeat for more)\n"
		"  --help          this text\n");
}

static void serve_witness(void *ctx, const struct http_request *req, int fd)
{
	const struct tlog_witness *w = ctx;
	struct kw_buf resp = { 0 };
	int s;

	if (strcmp(req->path, "/add-checkpoint")) {
		http_respond(fd, 404, "text/plain", NULL, "not found\n", 10);
		return;
	}
	if (strcmp(req->method, "POST")) {
		http_respond(fd, 405, "text/plain", "Allow: POST\r\n", "POST only\n", 10);
		return;
	}
	s = tlog_witness_add_checkpoint(w, req->body, req->body_len, (uint64_t)time(NULL), &resp);
	http_respond(fd, s, s == 409 && resp.len ? "text/x.tlog.size" : "text/plain", NULL,
		     resp.data, resp.len);
	kw_buf_free(&resp);
}

/* What a wrong or missing verb or operand gets. */
#define WITNESS_NEEDS                                                                           \
	"needs add-checkpoint|serve --key KEY --name NAME --state DIR --log VKEY (serve: --listen " \
	"ADDR:PORT)"

/* Both verbs: the options are the same but for serve's --listen. */
static int witness_run(int argc, char **argv, bool serve)
{
	static struct tlog_key logs[TLOG_WITNESS_LOGS_MAX];
	const char *keypath = NULL, *name = NULL, *state = NULL, *listen_at = NULL;
	enum { O_LOG = 1 };
	const struct cli_opt opts[] = {
		{ "key", 0, CLI_TEXT, &keypath },
		{ "name", 0, CLI_TEXT, &name },
		{ "state", 0, CLI_TEXT, &state },
		{ "log", 0, CLI_OWN, .id = O_LOG },
		{ "help", 0, CLI_HELP },
		{ serve ? "listen" : NULL, 0, CLI_TEXT, &listen_at }, /* add-checkpoint: the end */
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness witness", .usage = witness_usage, .opts = opts,
				 .on_bad = CLI_BAD_SAY };
	size_t nlogs = 0;
	struct tlog_witness w = { .statefd = -1 };
	struct kw_buf req = { 0 }, resp = { 0 };
	int c, status = 1, s;

	while ((c = cli_next_option(&p, argc, argv)) == O_LOG) {
		if (nlogs == TLOG_WITNESS_LOGS_MAX ||
		    tlog_key_parse_vkey(optarg, strlen(optarg), &logs[nlogs]) ||
		    logs[nlogs].type != TLOG_SIG_ED25519) {
			if (nlogs < TLOG_WITNESS_LOGS_MAX)
				tlog_key_clear(&logs[nlogs]);
			fprintf(stderr, "kwitness witness: --log %s is not a log verifier key\n", optarg);
			status = 2;
			goto out;
		}
		nlogs++;
	}
	if (c == CLI_OPTIONS_EXIT) {
		status = p.status;
		goto out;
	}
	if (argc - optind > (serve ? 0 : 1) || !name || !state || !nlogs || (serve && !listen_at)) {
		fprintf(stderr, "kwitness witness: " WITNESS_NEEDS "\n");
		status = 2;
		goto out;
	}
	if (cli_tlog_key("witness", keypath, name, TLOG_SIG_COSIGNATURE, &w.key))
		goto out;
	if (mkdir(state, 0700) < 0 && errno != EEXIST) {
		fprintf(stderr, "kwitness witness: %s: %s\n", state, strerror(errno));
		goto out;
	}
	w.statefd = open(state, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (w.statefd < 0) {
		fprintf(stderr, "kwitness witness: %s: %s\n", state, strerror(errno));
		goto out;
	}
	w.logs = logs;
	w.nlogs = nlogs;
	if (serve) {
		status = cli_serve("witness", listen_at, TLOG_WITNESS_REQUEST_MAX, serve_witness, &w);
		goto out;
	}
	if (cli_read("witness", "request", argc - optind ? argv[optind] : "-",
		     TLOG_WITNESS_REQUEST_MAX, &req))
		goto out;
	s = tlog_witness_add_checkpoint(&w, req.data ? req.data : "", req.len, (uint64_t)time(NULL),
					&resp);
	if (s == 200) {
		fwrite(resp.data, 1, resp.len, stdout);
		status = 0;
	} else {
		printf("%d %s\n", s, http_status_text(s));
		if (resp.len)
			fwrite(resp.data, 1, resp.len, stdout);
	}
out:
	if (w.statefd >= 0)
		close(w.statefd);
	tlog_key_clear(&w.key);
	for (size_t i = 0; i < nlogs; i++)
		tlog_key_clear(&logs[i]);
	kw_buf_free(&req);
	kw_buf_free(&resp);
	return status;
}

static int witness_add_checkpoint(int argc, char **argv)
{
	return witness_run(argc, argv, false);
}

static int witness_serve(int argc, char **argv)
{
	return witness_run(argc, argv, true);
}

int cmd_witness(int argc, char **argv)
{
	static const struct cli_verb verbs[] = {
		{ "add-checkpoint", witness_add_checkpoint, NULL },
		{ "serve", witness_serve, NULL },
		{ 0 },
	};
	static const struct cli_command witness = {
		.name = "witness",
		.verbs = verbs,
		.usage = witness_usage,
		.unknown = WITNESS_NEEDS,
	};

	return cli_dispatch(&witness, argc, argv);
}
