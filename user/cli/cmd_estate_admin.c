/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness estate verify: every stored session re-derived (user/estate/
 * check.c), the results kept for query and report; kwitness estate roles:
 * the PostgreSQL roles hosts push with (user/estate/roles.c).
 * Exit status: verify 0 every record holds, 1 some are tampered; roles 0;
 * 2 usage or database error. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/options.h"
#include "lib/text_safe.h"
#include "estate/check.h"
#include "estate/db.h"
#include "estate/roles.h"
#include "estate/trust.h"
#include "commands.h"
#include "estate_cli.h"

static void verify_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness estate verify [--db URL] [--trust DIR]\n\n"
		"Re-derives every stored session from what the database holds: the record's\n"
		"signature under the trust folder's key, its entries fed through the decision\n"
		"log check again (transcript hash, call count, session, structure), each entry's\n"
		"columns against its canonical text, the policy bundle, the stored counts, host\n"
		"and signer, and the stored level against what the record and the stored\n"
		"appraisal and log proof allow. A record that fails is TAMPERED: estate query\n"
		"shows its rows with level TAMPERED and estate report refuses its level. The\n"
		"results go to the record_checks table: run it with administrator credentials.\n"
		"Exit status: 0 every record holds, 1 some are tampered, 2 usage or database error.\n\n"
		"  --db URL      sqlite:PATH or postgresql://... (default %s)\n"
		"  --trust DIR   trusted signer keys and their hosts (default %s)\n"
		"  --help        this text\n",
		ESTATE_DEFAULT_DB, ESTATE_DEFAULT_TRUST);
}

static void roles_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness estate roles [--trust DIR] [--db URL --apply]\n\n"
		"Prints the SQL that sets up least-privilege push on PostgreSQL: a group role\n"
		"%s that may SELECT what a push looks up and INSERT records, entries,\n"
		"policies and rejected rows, never UPDATE or DELETE; and for every key file\n"
		"KEY.jwk of the trust folder a login role %sKEY whose row-level security\n"
		"lets it insert only records signed by that key. With --apply the SQL is run on\n"
		"--db, which must be the administrator's connection (the database's owner).\n"
		"Give each host the URL of its own role (docs/estate.md).\n\n"
		"  --trust DIR   trusted signer keys (default %s)\n"
		"  --db URL      postgresql://... of the administrator (with --apply)\n"
		"  --apply       run the SQL instead of printing it\n"
		"  --help        this text\n",
		ESTATE_PUSH_GROUP, ESTATE_PUSH_PREFIX, ESTATE_DEFAULT_TRUST);
}

static void print_tampered(void *ctx, int64_t id, const char *session, const struct estate_check *c)
{
	(void)ctx;
	if (c->ok)
		return;
	printf("tampered: session %s (record %" PRId64 "): ", session, id);
	kw_text_fput(stdout, c->why);
	putchar('\n');
}

int estate_verify_cmd(int argc, char **argv)
{
	const char *url = ESTATE_DEFAULT_DB, *trust_dir = ESTATE_DEFAULT_TRUST;
	const struct cli_opt opts[] = {
		{ "db", 0, CLI_TEXT, &url },
		{ "trust", 0, CLI_TEXT, &trust_dir },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness estate verify", .usage = verify_usage, .opts = opts };
	struct estate_verify_run run = { .each = print_tampered };
	uint64_t gaps = 0;
	struct estate_trust *trust = NULL;
	struct estate_db *db = NULL;
	char err[600];
	int status = 2;

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (optind != argc) {
		fprintf(stderr, "kwitness estate verify: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	trust = cli_estate_trust("estate verify", trust_dir);
	if (!trust || !(db = cli_estate_open("estate verify", url, false)))
		goto out;
	if (estate_verify_all(db, trust, &run, err, sizeof(err))) {
		fprintf(stderr, "kwitness estate verify: %s\n", err);
		goto out;
	}
	printf("summary: %" PRIu64 " records re-derived: %" PRIu64 " hold, %" PRIu64 " tampered\n",
	       run.checked, run.checked - run.tampered, run.tampered);
	status = run.tampered ? 1 : 0;
	/* A session suppressed on its host leaves a hole in its counter. */
	if (cli_estate_print_gaps(db, "estate verify", &gaps))
		status = 2;
	else if (gaps && !status)
		status = 1;
out:
	estate_close(db);
	estate_trust_free(trust);
	return status;
}

int estate_roles_cmd(int argc, char **argv)
{
	const char *url = NULL, *trust_dir = ESTATE_DEFAULT_TRUST;
	bool apply = false;
	const struct cli_opt opts[] = {
		{ "db", 0, CLI_TEXT, &url },
		{ "trust", 0, CLI_TEXT, &trust_dir },
		{ "apply", 0, CLI_FLAG, &apply },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness estate roles", .usage = roles_usage, .opts = opts };
	struct estate_trust *trust = NULL;
	struct estate_db *db = NULL;
	struct kw_buf sql = { 0 };
	char err[600] = "";
	int status = 2;

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (optind != argc || apply != !!url) {
		fprintf(stderr, "kwitness estate roles: --apply and --db go together (no other argument)\n");
		return 2;
	}
	trust = estate_trust_load(trust_dir, err, sizeof(err));
	if (!trust) {
		fprintf(stderr, "kwitness estate roles: %s\n", err);
		return 2;
	}
	if (estate_roles_sql(trust, &sql, err, sizeof(err)) || kw_buf_putc(&sql, '\0')) {
		fprintf(stderr, "kwitness estate roles: %s\n", err[0] ? err : "out of memory");
		goto out;
	}
	if (!apply) {
		fputs(sql.data, stdout);
		status = 0;
		goto out;
	}
	db = estate_open(url, err, sizeof(err));
	if (!db || db->engine != ESTATE_POSTGRES) {
		fprintf(stderr, "kwitness estate roles: %s\n",
			db ? "roles are PostgreSQL's (an SQLite file is guarded by its file mode)" : err);
		goto out;
	}
	if (estate_exec(db, sql.data)) {
		fprintf(stderr, "kwitness estate roles: %s\n", db->err);
		estate_exec(db, "ROLLBACK");
		goto out;
	}
	printf("roles: %zu push roles set up\n", estate_trust_count(trust));
	status = 0;
out:
	kw_buf_free(&sql);
	estate_close(db);
	estate_trust_free(trust);
	return status;
}
