/* SPDX-License-Identifier: Apache-2.0 */
/* The estate's first-hour edges (issue 38): a database that must exist
 * unless it is being created (a mistyped sqlite: path is an error naming
 * it, not a new empty database), `estate init`, `estate rejected`, a
 * missing trust folder that names --trust, and the default table's
 * narrow cells. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "estate/db.h"
#include "estate/query.h"
#include "estate/trust.h"
#include "lib/messages.h"
#include "lib/options.h"
#include "lib/text_safe.h"
#include "estate_cli.h"

struct estate_db *cli_estate_open(const char *cmd, const char *url, bool create)
{
	struct estate_db *db;
	struct stat st;
	char err[600];

	if (!create && !strncmp(url, "sqlite:", 7) && lstat(url + 7, &st) < 0 && errno == ENOENT) {
		fprintf(stderr, "kwitness %s: no estate database at %s: give the right --db URL, or "
			"create it with `kwitness estate init --db %s` (or `estate ingest --create`)\n",
			cmd, url + 7, url);
		return NULL;
	}
	db = estate_open(url, err, sizeof(err));
	if (!db)
		fprintf(stderr, "kwitness %s: %s\n", cmd, err);
	return db;
}

struct estate_trust *cli_estate_trust(const char *cmd, const char *dir)
{
	struct estate_trust *trust;
	struct stat st;
	char err[600];

	if (stat(dir, &st) < 0 && errno == ENOENT) {
		fprintf(stderr, "kwitness %s: cannot open the trust folder %s: no such folder (give "
			"the folder of the signers' public keys with --trust DIR; `kwitness key show "
			"--jwk` prints a key's)\n", cmd, dir);
		return NULL;
	}
	trust = estate_trust_load(dir, err, sizeof(err));
	if (!trust)
		fprintf(stderr, "kwitness %s: %s\n", cmd, err);
	return trust;
}

/* The default table's widths (0: the column is left out; --wide shows all). */
static const unsigned narrow_width[EC_COUNT] = {
	[EC_TS_US] = 20, [EC_HOSTNAME] = 12, [EC_SANDBOX] = 20, [EC_TOOL] = 11,
	[EC_OBJECT] = 22, [EC_DECISION] = 8, [EC_LEVEL] = 15,
};

bool estate_narrow_shown(int col)
{
	return col >= 0 && col < EC_COUNT && narrow_width[col];
}

char *estate_narrow_cell(int col, char *text)
{
	size_t n = text ? strlen(text) : 0, w = estate_narrow_shown(col) ? narrow_width[col] : 0;

	if (!text || n <= w || w < 4)
		return text;
	if (col == EC_TS_US && n >= 19) {
		/* to the second: 2026-12-02T04:25:58Z */
		text[19] = 'Z';
		text[20] = '\0';
	} else if (col == EC_SANDBOX) {
		/* its end tells sandboxes apart: ...run/1234 */
		memmove(text + 3, text + n - (w - 3), w - 3 + 1);
		memcpy(text, "...", 3);
	} else {
		memcpy(text + w - 3, "...", 4);
	}
	return text;
}

/* --- estate init ---------------------------------------------------------- */

static void init_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness estate init [--db URL]\n\n"
		"Creates the estate database (an SQLite file made with mode 0600, or the schema in\n"
		"an existing PostgreSQL database) at its newest schema version. Every other\n"
		"estate command needs an existing database (or `estate ingest --create`).\n\n"
		"  --db URL   sqlite:PATH or postgresql://... (default %s)\n", ESTATE_DEFAULT_DB);
}

int estate_init_cmd(int argc, char **argv)
{
	const char *url = ESTATE_DEFAULT_DB;
	const struct cli_opt opts[] = {
		{ "db", 0, CLI_TEXT, &url },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness estate init", .usage = init_usage, .opts = opts };
	struct estate_db *db;

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (optind != argc) {
		kw_usage_error("kwitness estate init", "unexpected argument '%s'", argv[optind]);
		return 2;
	}
	db = cli_estate_open("estate init", url, true);
	if (!db)
		return 2;
	printf("estate database ready: %s (schema version %d)\n", url, estate_schema_version());
	estate_close(db);
	return 0;
}

/* --- estate rejected ------------------------------------------------------ */

static void rejected_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness estate rejected [--db URL] [--reason CODE] [--json]\n\n"
		"The records ingest refused, with the verify reason code and message of each,\n"
		"oldest first. Exit status: 0 some listed, 1 none, 2 usage or database error.\n\n"
		"  --db URL       sqlite:PATH or postgresql://... (default %s)\n"
		"  --reason CODE  only those refused for CODE (e.g. signature_invalid)\n"
		"  --json         one JSON object per record\n", ESTATE_DEFAULT_DB);
}

struct rejected_view {
	bool json;
	uint64_t rows;
};

static int rejected_row(void *ctx, int ncols, const char *const *cols, const char *const *names)
{
	struct rejected_view *v = ctx;
	char when[32];

	(void)names;
	if (ncols != 5)
		return 1;
	v->rows++;
	estate_format_time(strtoll(cols[4] ? cols[4] : "0", NULL, 10) * 1000000, when);
	if (v->json) {
		json_t *o = json_pack("{s:s?, s:s?, s:s?, s:s?, s:s}", "path", cols[0], "session",
				      cols[1], "reason", cols[2], "message", cols[3], "rejected_at", when);
		char *s = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

		if (s)
			puts(s);
		free(s);
		json_decref(o);
		return 0;
	}
	/* paths and messages may quote what a host sent: escaped */
	fputs(when, stdout);
	fputs("  ", stdout);
	kw_text_fput(stdout, cols[2] ? cols[2] : "?");
	fputs("  ", stdout);
	kw_text_fput(stdout, cols[0] ? cols[0] : "?");
	fputs("\n    ", stdout);
	kw_text_fput(stdout, cols[3] ? cols[3] : "");
	fputc('\n', stdout);
	return 0;
}

int estate_rejected_cmd(int argc, char **argv)
{
	const char *url = ESTATE_DEFAULT_DB, *reason = NULL;
	struct rejected_view v = { 0 };
	const struct cli_opt opts[] = {
		{ "db", 0, CLI_TEXT, &url },
		{ "reason", 0, CLI_TEXT, &reason },
		{ "json", 0, CLI_FLAG, &v.json },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness estate rejected", .usage = rejected_usage,
				 .opts = opts };
	struct estate_db *db;
	int e;

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (optind != argc) {
		kw_usage_error("kwitness estate rejected", "unexpected argument '%s'", argv[optind]);
		return 2;
	}
	db = cli_estate_open("estate rejected", url, false);
	if (!db)
		return 2;
	if (reason)
		e = estate_query(db, "SELECT path, session, reason, message, rejected_at FROM rejected "
				 "WHERE reason = $1 ORDER BY id", &EV_S(reason), 1, rejected_row, &v);
	else
		e = estate_query(db, "SELECT path, session, reason, message, rejected_at FROM rejected "
				 "ORDER BY id", NULL, 0, rejected_row, &v);
	if (e)
		fprintf(stderr, "kwitness estate rejected: %s\n", db->err);
	estate_close(db);
	return e ? 2 : v.rows ? 0 : 1;
}
