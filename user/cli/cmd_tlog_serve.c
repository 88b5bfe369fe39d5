/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness tlog serve: the log directory read-only over HTTP (checkpoint,
 * tiles, entry bundles, proofs), and with --append-token a shared writer:
 * POST /add takes a record signed with its transparency URL, logs it, has the
 * witnesses cosign, and answers with its tlog-proof. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "collector/publish.h"
#include "collector/publish_batch.h"
#include "lib/messages.h"
#include "lib/options.h"
#include "cli_record.h"
#include "cli_tlog.h"
#include "tlog/log.h"
#include "tlog/record_url.h"
#include "tlog/tiles.h"
#include "tlog/witness_client.h"

#define TOKEN_MAX 200
/* The largest file served: a full entry bundle. */
#define SERVE_FILE_MAX ((size_t)TLOG_TILE_WIDTH * (TLOG_ENTRY_MAX + 2))

struct log_service {
	const char *dir;
	int dirfd;
	char token[TOKEN_MAX + 1]; /* empty: no appends */
	struct kw_publish pub;
	/* Appends that arrive together are committed together. */
	struct kw_publish_batcher batcher;
};

static void log_serve_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness tlog serve DIR --listen ADDR:PORT\n"
		"                           [--append-token FILE --key KEY [--witness-at W]...\n"
		"                            [--witness-policy POLICY]]\n\n"
		"Serves the log in DIR read-only over HTTP, as any static web server would:\n"
		"/checkpoint (no-cache), /tile/... and /kwitness/*.tlog-proof (immutable).\n"
		"Dot files and anything else are 404. Up to 64 connections at once; put\n"
		"nginx in front for public traffic (docs/transparency.md).\n"
		"With --append-token it is also the shared writer of several hosts: POST /add\n"
		"with \"Authorization: Bearer <token>\" and a record signed with this log's\n"
		"transparency URL for it appends the record, has the witnesses cosign and\n"
		"answers with its tlog-proof (kwitness tlog sign http://ADDR:PORT ...).\n"
		"Appends that arrive together are committed as one batch: one checkpoint,\n"
		"one round of cosignatures, one flush to disk.\n\n"
		"  --listen ADDR:PORT     where to listen (port 0: any free port)\n"
		"  --append-token FILE    the bearer token appenders present (one line, 16 to 200\n"
		"                         characters); --append FILE is the same\n"
		"  --key KEY              the log's private key (for appends)\n"
		"  --witness-at W         a witness to ask for cosignatures (repeat)\n"
		"  --witness-policy FILE  the tlog-policy the cosigned checkpoint must meet\n");
}

/* Only names the log itself writes: no dot files, no "..", no empty parts. */
static bool path_servable(const char *p)
{
	if (strncmp(p, "/checkpoint", 12) && strncmp(p, "/tile/", 6) &&
	    strncmp(p, "/" TLOG_PROOF_DIR "/", strlen(TLOG_PROOF_DIR) + 2))
		return false;
	for (const char *c = p; *c; c++) {
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '/' || *c == '.' || *c == '-' || *c == '_'))
			return false;
		if (*c == '/' && (c[1] == '/' || c[1] == '.' || c[1] == '\0'))
			return false;
	}
	return !strstr(p, ".tmp");
}

static void serve_file(struct log_service *s, const struct http_request *req, int fd)
{
	struct kw_buf b = { 0 };
	bool checkpoint = !strcmp(req->path, "/checkpoint");
	int e;

	if (!path_servable(req->path)) {
		http_respond(fd, 404, "text/plain", NULL, "not found\n", 10);
		return;
	}
	e = tlog_read_at(s->dirfd, req->path + 1, SERVE_FILE_MAX, &b);
	if (e) {
		http_respond(fd, e == -ENOENT || e == -EINVAL ? 404 : 500, "text/plain", NULL,
			     "not found\n", 10);
	} else {
		http_respond(fd, 200,
			     checkpoint || strstr(req->path, ".tlog-proof") ? "text/plain; charset=utf-8" :
			     "application/octet-stream",
			     checkpoint ? "Cache-Control: no-cache\r\n" :
			     "Cache-Control: public, max-age=31536000, immutable\r\n",
			     !strcmp(req->method, "HEAD") ? NULL : b.data,
			     !strcmp(req->method, "HEAD") ? 0 : b.len);
	}
	kw_buf_free(&b);
}

static bool authorized(const struct log_service *s, const char *auth)
{
	char want[TOKEN_MAX + 16];
	size_t n = (size_t)snprintf(want, sizeof(want), "Bearer %s", s->token);

	return s->token[0] && strlen(auth) == n && CRYPTO_memcmp(auth, want, n) == 0;
}

static void serve_append(struct log_service *s, const struct http_request *req, int fd)
{
	struct kw_buf proof = { 0 };
	char url[TLOG_RECORD_URL_MAX], why[600];
	const char *have;
	json_t *rec;
	int e;

	if (!authorized(s, req->authorization)) {
		http_respond(fd, s->token[0] ? 401 : 404, "text/plain", NULL, "no\n", 3);
		return;
	}
	rec = jcs_parse(req->body, req->body_len, NULL);
	have = rec ? json_string_value(json_object_get(rec, "transparency")) : NULL;
	if (!rec || !json_object_get(rec, "signature") || tlog_record_url(s->pub.log_key->name, rec, url) ||
	    !have || strcmp(have, url)) {
		snprintf(why, sizeof(why), "a signed record whose transparency is this log's URL for it (%s)\n",
			 rec ? url : "not JSON");
		http_respond(fd, 422, "text/plain", NULL, why, strlen(why));
		json_decref(rec);
		return;
	}
	{
		struct kw_publish_job job = { .rec = rec, .url = url, .proof = &proof, .why = why,
					      .whylen = sizeof(why) };

		e = kw_publish_batcher_submit(&s->batcher, &job);
	}
	if (e) {
		strncat(why, "\n", sizeof(why) - strlen(why) - 1);
		http_respond(fd, e == -EPERM ? 503 : 500, "text/plain", NULL, why, strlen(why));
	} else {
		http_respond(fd, 200, "text/plain; charset=utf-8", NULL, proof.data, proof.len);
	}
	kw_buf_free(&proof);
	json_decref(rec);
}

static void serve_log(void *ctx, const struct http_request *req, int fd)
{
	struct log_service *s = ctx;

	if (!strcmp(req->path, "/add") && !strcmp(req->method, "POST"))
		serve_append(s, req, fd);
	else if (!strcmp(req->method, "GET") || !strcmp(req->method, "HEAD"))
		serve_file(s, req, fd);
	else
		http_respond(fd, 405, "text/plain", "Allow: GET, HEAD, POST\r\n", "no\n", 3);
}

int cli_tlog_serve(int argc, char **argv)
{
	const char *listen_at = NULL, *token = NULL, *keypath = NULL, *wpolicy = NULL;
	enum { O_WITNESS_AT = 1 };
	const struct cli_opt opts[] = {
		{ "listen", 0, CLI_TEXT, &listen_at },
		{ "append-token", 0, CLI_TEXT, &token },
		{ "append", 0, CLI_TEXT, &token },
		{ "key", 0, CLI_TEXT, &keypath },
		{ "witness-at", 0, CLI_OWN, .id = O_WITNESS_AT },
		{ "witness-policy", 0, CLI_TEXT, &wpolicy },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness tlog serve", .usage = log_serve_usage, .opts = opts,
				 .on_bad = CLI_BAD_SAY };
	char *wspec[CLI_WITNESSES_MAX];
	size_t nw = 0;
	struct cli_tlog_witnesses wit = { 0 };
	struct log_service s = { .dirfd = -1 };
	struct tlog_key lk = { 0 };
	struct kw_buf b = { 0 };
	struct tlog_note n;
	struct tlog_checkpoint cp;
	int c, status = 2;

	while ((c = cli_next_option(&p, argc, argv)) == O_WITNESS_AT) {
		if (nw == CLI_WITNESSES_MAX) {
			fprintf(stderr, "kwitness tlog serve: at most %d witnesses\n", CLI_WITNESSES_MAX);
			return 2;
		}
		wspec[nw++] = optarg;
	}
	if (c == CLI_OPTIONS_EXIT)
		return p.status;
	if (optind != argc - 1 || !listen_at || (token && !keypath)) {
		kw_usage_error("kwitness tlog serve", "%s", optind != argc - 1 ? "needs one DIR" :
			       !listen_at ? "needs --listen ADDR:PORT" : "--append-token needs --key");
		return 2;
	}
	s.dir = argv[optind];
	s.dirfd = open(s.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	status = 1;
	if (s.dirfd < 0 || tlog_read_checkpoint(s.dirfd, &b, &n, &cp)) {
		fprintf(stderr, "kwitness tlog serve: %s holds no log\n", s.dir);
		goto out;
	}
	if (token) {
		struct kw_buf t = { 0 };

		if (cli_read("tlog", "append token", token, 4096, &t))
			goto out;
		while (t.len && (t.data[t.len - 1] == '\n' || t.data[t.len - 1] == '\r'))
			t.len--;
		if (t.len < 16 || t.len > TOKEN_MAX || memchr(t.data, '\n', t.len)) {
			fprintf(stderr, "kwitness tlog serve: the append token must be one line of 16 to %d characters\n",
				TOKEN_MAX);
			kw_buf_free(&t);
			goto out;
		}
		memcpy(s.token, t.data, t.len);
		OPENSSL_cleanse(t.data, t.len);
		kw_buf_free(&t);
		if (cli_tlog_key("tlog", keypath, cp.origin, TLOG_SIG_ED25519, &lk))
			goto out;
		if (cli_tlog_witnesses_open("tlog serve", &wit, wspec, nw, &lk, wpolicy))
			goto out;
		s.pub = (struct kw_publish){ .log_dir = s.dir, .log_key = &lk, .witnesses = wit.pw,
					     .nwitnesses = nw, .policy = wit.policy };
	}
	if (token && kw_publish_batcher_start(&s.batcher, &s.pub)) {
		fprintf(stderr, "kwitness tlog serve: cannot start the append thread\n");
		goto out;
	}
	/* Connections at once: an append waits for its batch without holding
	 * readers or the appends that make the next batch. */
	status = cli_serve_threads("tlog serve", listen_at, token ? CLI_RECORD_MAX : 0, serve_log,
				   &s, TLOG_SERVER_THREADS_MAX);
	kw_publish_batcher_stop(&s.batcher);
out:
	cli_tlog_witnesses_close(&wit);
	tlog_key_clear(&lk);
	OPENSSL_cleanse(s.token, sizeof(s.token));
	if (s.dirfd >= 0)
		close(s.dirfd);
	kw_buf_free(&b);
	return status;
}
