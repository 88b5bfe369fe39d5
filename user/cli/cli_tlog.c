/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers of the transparency-log commands, see cli_tlog.h. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "cli_key.h"
#include "cli_record.h"
#include "cli_tlog.h"

int cli_tlog_key(const char *cmd, const char *path, const char *name, uint8_t type,
		 struct tlog_key *out)
{
	struct kw_key *k = NULL;

	if (!path) {
		fprintf(stderr, "kwitness %s: --key KEY is required\n", cmd);
		return -EINVAL;
	}
	if (cli_load_signing_key(cmd, path, &k))
		return -EINVAL;
	if (tlog_key_from(name, type, k, out)) {
		fprintf(stderr, "kwitness %s: '%s' is not a key name (no spaces or '+')\n", cmd, name);
		kw_key_free(k);
		return -EINVAL;
	}
	return 0;
}

struct tlog_policy *cli_tlog_policy_load(const char *cmd, const char *what, const char *path)
{
	struct kw_buf b = { 0 };
	struct tlog_policy *p = calloc(1, sizeof(*p));
	char err[300];

	if (!p || cli_read(cmd, what, path, TLOG_POLICY_FILE_MAX, &b)) {
		free(p);
		kw_buf_free(&b);
		return NULL;
	}
	if (tlog_policy_parse(b.data ? b.data : "", b.len, p, err, sizeof(err))) {
		fprintf(stderr, "kwitness %s: %s: %s\n", cmd, path, err);
		free(p);
		p = NULL;
	}
	kw_buf_free(&b);
	return p;
}

void cli_tlog_policy_free(struct tlog_policy *p)
{
	if (p)
		tlog_policy_free(p);
	free(p);
}

int cli_tlog_witnesses_open(const char *cmd, struct cli_tlog_witnesses *w, char **specs, size_t n,
			    const struct tlog_key *lk, const char *policy_path)
{
	for (; w->opened < n && w->opened < CLI_WITNESSES_MAX; w->opened++) {
		char err[300];

		if (tlog_witness_client_open(specs[w->opened], lk, &w->wc[w->opened], err, sizeof(err))) {
			fprintf(stderr, "kwitness %s: %s\n", cmd, err);
			return -1;
		}
		w->pw[w->opened] = (struct kw_publish_witness){ tlog_witness_client_submit,
								&w->wc[w->opened] };
	}
	if (policy_path && !(w->policy = cli_tlog_policy_load(cmd, "witness policy", policy_path)))
		return -1;
	return 0;
}

void cli_tlog_witnesses_close(struct cli_tlog_witnesses *w)
{
	for (size_t i = 0; i < w->opened; i++)
		tlog_witness_client_close(&w->wc[i]);
	w->opened = 0;
	cli_tlog_policy_free(w->policy);
	w->policy = NULL;
}

int cli_serve(const char *cmd, const char *listen_at, size_t max_body, tlog_server_handler h,
	      void *ctx)
{
	return cli_serve_threads(cmd, listen_at, max_body, h, ctx, 1);
}

int cli_serve_threads(const char *cmd, const char *listen_at, size_t max_body,
		      tlog_server_handler h, void *ctx, unsigned nthreads)
{
	struct tlog_server s;
	char err[400];
	int ret = tlog_server_listen(&s, listen_at, err, sizeof(err));

	if (ret) {
		fprintf(stderr, "kwitness %s: %s\n", cmd, err);
		return ret == -EINVAL ? 2 : 1;
	}
	signal(SIGPIPE, SIG_IGN);
	printf("listening on http://%s%s%s:%s\n", strchr(s.host, ':') ? "[" : "", s.host,
	       strchr(s.host, ':') ? "]" : "", s.port);
	fflush(stdout);
	if (nthreads > 1)
		tlog_server_run_threads(&s, max_body, h, ctx, nthreads, err, sizeof(err));
	else
		tlog_server_run(&s, max_body, h, ctx, err, sizeof(err));
	fprintf(stderr, "kwitness %s: %s\n", cmd, err);
	return 1;
}
