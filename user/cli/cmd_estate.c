/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness estate: verified records of many hosts in one database.
 *   estate ingest  verify and store records (user/estate/ingest.c)
 *   estate query   who did this (user/estate/query.c)
 *   estate push    a collector's spool into the database (cmd_estate_push.c)
 *   estate report  the auditor's page of a stored session (cmd_report.c)
 * Exit status: 0 success, 1 some record was rejected (ingest) or nothing
 * matched (query), 2 usage or database error. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace/level.h"
#include "trace/record.h"
#include "estate/db.h"
#include "estate/bulk.h"
#include "estate/ingest.h"
#include "estate/query.h"
#include "estate/trust.h"
#include "cli_key.h"
#include "lib/options.h"
#include "cli_record.h"
#include "cli_tlog.h"
#include "commands.h"
#include "estate_cli.h"
#include "lib/text_safe.h"
#include "verbs.h"

#define DEFAULT_LIMIT 1000

static void estate_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness estate init [--db URL]\n"
		"       kwitness estate ingest [--db URL] [--create] [--trust DIR] PATH...\n"
		"       kwitness estate query [--db URL] [filters] [--json | --count | --group-by KEY]\n"
		"       kwitness estate report [--db URL] [--trust DIR] --session ID [--html OUT]\n"
		"       kwitness estate push [--state DIR] [--db URL] [--key PUBLIC] [--follow]\n"
		"       kwitness estate verify [--db URL] [--trust DIR]\n"
		"       kwitness estate roles [--trust DIR] [--db URL --apply]\n"
		"       kwitness estate rejected [--db URL] [--reason CODE] [--json]\n\n"
		"Keeps the verified records of many hosts in one database: SQLite (sqlite:PATH,\n"
		"the default %s) or PostgreSQL (postgresql://...). The database must exist:\n"
		"`estate init` (or `estate ingest --create`) makes it.\n"
		"Run 'kwitness estate ingest --help' (or query, report, push, verify, roles) for\n"
		"the options.\n",
		ESTATE_DEFAULT_DB);
}

static void ingest_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness estate ingest [--db URL] [--create] [--trust DIR] [--skew SECONDS]\n"
		"           [--tpm-ca CA.pem --enroll-key KEY [--pcrs-ref FILE]]\n"
		"           [--transparency POLICY] PATH...\n\n"
		"Verifies every record found in PATH (a kwitnessd state folder, a folder of state\n"
		"folders copied from many hosts, or a record file records/<session>.json) and\n"
		"stores the ones that verify: the record, every entry of its decision log and\n"
		"its policy bundle. A record is verified as `kwitness verify --dir` does it: the\n"
		"signature under a key of the trust folder (the one its cnf.jwk names), the\n"
		"decision log (transcript hash, call count, structure), the bundle and the\n"
		"measurement; the log's completeness is stored with it (an incomplete session\n"
		"is kept, and found by `estate query --incomplete`). A record that fails is not\n"
		"stored: it is listed in the rejected table with its reason code. A record\n"
		"already stored (same session, same record digest) is skipped, so ingesting\n"
		"the same files twice changes nothing. Memory does not grow with a log's size.\n"
		"Exit status: 0 every record stored (or already there), 1 some were rejected,\n"
		"2 usage or database error.\n\n"
		"  --db URL          sqlite:PATH or postgresql://... (default %s)\n"
		"  --create          make the database when it does not exist (else an error)\n"
		"  --trust DIR       folder of trusted signer keys, public JWK or PEM files named\n"
		"                    *.jwk, *.json or *.pem (default %s)\n"
		"  --skew SECONDS    how far iat may be in the future (default %d)\n"
		"  --tpm-ca CA.pem   with --enroll-key: appraise the TPM evidence of tpm2 records\n"
		"                    (state/evidence/, named by the log's trailer) as\n"
		"                    `kwitness verify --evidence` does; Level 1 when every step\n"
		"                    holds, else Level 0 with the failing step stored\n"
		"  --enroll-key KEY  the trusted enrollment key (public JWK or PEM)\n"
		"  --pcrs-ref FILE   reference PCR values {\"N\": \"hex\", ...} for step 6\n"
		"  --transparency POLICY  a C2SP tlog-policy: a record that carries a\n"
		"                    transparency URL has its C2SP tlog-proof (RECORD.tlog-proof,\n"
		"                    beside the record file, as kwitnessd and `kwitness tlog sign`\n"
		"                    write it) checked as `kwitness verify --transparency` does;\n"
		"                    when every step holds, the log's origin, the leaf index and\n"
		"                    the checkpoint are stored and the record is \"Level 0,\n"
		"                    logged\" or, on Level 1, \"Level 2\"; when a step fails (or\n"
		"                    the proof is missing) it keeps its lower level and the\n"
		"                    failing step is stored. Without it no record is logged\n"
		"  --quiet           no line per rejected record, only the summary\n"
		"  --help            this text\n"
		"On a terminal, progress (records, entries per second) is shown on stderr.\n",
		ESTATE_DEFAULT_DB, ESTATE_DEFAULT_TRUST, KW_DEFAULT_SKEW);
}

static void query_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness estate query [--db URL] [filters] [--json | --count | --group-by KEY]\n\n"
		"Which agent, on which machine, took an action, and under whose authority: one\n"
		"row per stored decision that passes every filter, with its time, host and\n"
		"machine id, sandbox id, session, tool, object, decision and whether it was\n"
		"enforced, policy bundle hash and enforcement mode, the signer's key\n"
		"thumbprint, the record's TRACE level (Level 0, Level 0, logged, Level 1 or\n"
		"Level 2, as `kwitness verify` reports it; see `estate ingest --help`), its\n"
		"leaf index in the transparency log when it was proven logged, the record's\n"
		"path, and why its level is not higher (LEVEL_WHY: the TPM appraisal's or the\n"
		"transparency check's failing step, or what ingest was not given), and the\n"
		"pod's namespace, name and container when the sandbox is a pod's. Exit status: 0 rows found, 1 none, 2 usage or database error.\n\n"
		"  --db URL            sqlite:PATH or postgresql://... (default %s)\n"
		"  --tool T            e.g. net.connect, fs.open\n"
		"  --decision D        permit or deny\n"
		"  --object O          an address or CIDR (10.0.0.0/8, ::1), the OBJECT column as\n"
		"                      printed (127.0.0.1:18081/tcp, [::1]:53/udp, host:443,\n"
		"                      port 443), a path prefix (/etc/), a port (443) or a host name\n"
		"  --sandbox ID        the agent: the record's subject\n"
		"  --host H            hostname or machine id\n"
		"  --session ID        one session\n"
		"  --namespace NS, --pod NAME, --container NAME  the pod identity of the\n"
		"                      record's open entry (kwitness oci-hook, docs/oci.md)\n"
		"  --since T, --until T  seconds since the epoch or UTC YYYY-MM-DD[THH:MM:SS[Z]]\n"
		"  --signer THUMBPRINT the signing key's RFC 7638 thumbprint\n"
		"  --incomplete        only sessions whose decision log is incomplete\n"
		"  --exe PATH          decisions of a process running PATH (its exec's file\n"
		"                      name, as the proc entry gives it; a forked child runs its\n"
		"                      parent's program until it execs)\n"
		"  --digest sha256:HEX decisions of a process running the file with this digest\n"
		"                      (the exec decision's, where BPF-LSM governs exec)\n"
		"  --ancestor TEXT     decisions of a process that ran, or descends (in the\n"
		"                      session's process tree) from one that ran, a program whose\n"
		"                      path or arguments (joined by spaces) contain TEXT\n"
		"  --limit N           at most N rows (default %d; 0: all)\n"
		"  --json              one JSON object per row (level: the level's number,\n"
		"                      level_name: its name, log_index: null when not logged)\n"
		"  --wide              every column (the default table fits 120 columns: time,\n"
		"                      host, sandbox, tool, object, decision, level; long cells cut)\n"
		"  --count             only the number of matching decisions\n"
		"  --group-by KEY      decisions per host, sandbox or tool\n"
		"  --help              this text\n",
		ESTATE_DEFAULT_DB, DEFAULT_LIMIT);
}

/* --- ingest -------------------------------------------------------------- */

struct ingest_view {
	bool tty, quiet;
	struct timespec start, last;
	bool drawn;
};

static double since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void ingest_progress(void *ctx, const struct estate_ingest *ing)
{
	struct ingest_view *v = ctx;
	struct timespec now;
	double secs;

	if (!v->tty)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (v->drawn && since(&v->last, &now) < 0.2)
		return;
	v->last = now;
	secs = since(&v->start, &now);
	fprintf(stderr,
		"\r\033[Kkwitness estate ingest: %" PRIu64 " records (%" PRIu64 " stored, %" PRIu64
		" rejected), %" PRIu64 " entries, %.0f entries/s",
		ing->records, ing->stored, ing->rejected, ing->entries,
		secs > 0 ? (double)ing->entries / secs : 0.0);
	fflush(stderr);
	v->drawn = true;
}

static void clear_progress(struct ingest_view *v)
{
	if (v->drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		v->drawn = false;
	}
}

static void ingest_rejected(void *ctx, const char *path, const char *reason, const char *message)
{
	struct ingest_view *v = ctx;

	if (v->quiet)
		return;
	clear_progress(v);
	fputs("rejected: ", stdout);
	kw_text_fput(stdout, path);
	printf(": %s: ", reason);
	kw_text_fput(stdout, message);
	putchar('\n');
}

/* The last line of estate ingest: what became of the records found. */
static void print_ingest_summary(const struct estate_ingest *ing, bool tlog, double secs)
{
	printf("summary: %" PRIu64 " records: %" PRIu64 " stored (%" PRIu64 " incomplete, %" PRIu64
	       " at level 1), %" PRIu64 " already stored, %" PRIu64 " rejected",
	       ing->records, ing->stored, ing->incomplete, ing->by_level[KW_LEVEL_1], ing->already,
	       ing->rejected);
	for (int r = 0; r < KW_VERIFY_REASON_COUNT; r++)
		if (ing->by_reason[r])
			printf("%s %s %" PRIu64, r == 0 ? "" : ",", kw_verify_reason_code(r),
			       ing->by_reason[r]);
	if (tlog)
		printf("; logged: %" PRIu64 " (%" PRIu64 " at level 2, %" PRIu64 " at level 0, logged)",
		       ing->by_level[KW_LEVEL_2] + ing->by_level[KW_LEVEL_0_LOGGED],
		       ing->by_level[KW_LEVEL_2], ing->by_level[KW_LEVEL_0_LOGGED]);
	printf("; %" PRIu64 " entries in %.2f s (%.0f entries/s)\n", ing->entries, secs,
	       secs > 0 ? (double)ing->entries / secs : 0.0);
}

static int estate_ingest(int argc, char **argv)
{
	const char *url = ESTATE_DEFAULT_DB, *trust_dir = ESTATE_DEFAULT_TRUST;
	bool create = false;
	struct ingest_view view = { .tty = isatty(STDERR_FILENO) };
	struct estate_ingest ing = { .now = (int64_t)time(NULL), .skew = KW_DEFAULT_SKEW };
	struct estate_trust *trust = NULL;
	struct estate_db *db = NULL;
	struct kw_appraise_opts tpm = { 0 };
	struct kw_key *enroll_key = NULL;
	const char *enroll_path = NULL, *pcrs_path = NULL, *tlog_path = NULL;
	const struct cli_opt opts[] = {
		{ "db", 0, CLI_TEXT, &url },
		{ "tpm-ca", 0, CLI_TEXT, &tpm.ca_file },
		{ "enroll-key", 0, CLI_TEXT, &enroll_path },
		{ "pcrs-ref", 0, CLI_TEXT, &pcrs_path },
		{ "transparency", 0, CLI_TEXT, &tlog_path },
		{ "trust", 0, CLI_TEXT, &trust_dir },
		{ "create", 0, CLI_FLAG, &create },
		{ "skew", 0, CLI_NUMBER, &ing.skew, .min = 0, .max = 1LL << 40,
		  .bad = "needs a number of seconds >= 0" },
		{ "quiet", 0, CLI_FLAG, &view.quiet },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness estate ingest", .usage = ingest_usage, .opts = opts };
	struct estate_bulk bulk = { 0 };
	struct tlog_policy *tlog = NULL;
	json_t *pcrs_ref = NULL;
	int status = 2;
	double secs;
	uint64_t gaps = 0;

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (optind == argc) {
		fprintf(stderr, "kwitness estate ingest: give at least one PATH (state folder or record)\n");
		return 2;
	}
	if (!tpm.ca_file != !enroll_path || (pcrs_path && !tpm.ca_file)) {
		fprintf(stderr, "kwitness estate ingest: --tpm-ca and --enroll-key go together "
				"(and --pcrs-ref needs them)\n");
		return 2;
	}
	if (enroll_path) {
		int e = kw_key_load_public(enroll_path, &enroll_key);

		if (e) {
			cli_key_error("verify", enroll_path, e);
			return 2;
		}
		tpm.enroll_key = enroll_key;
		if (pcrs_path && !(pcrs_ref = cli_read_json("estate ingest", "PCR reference", pcrs_path)))
			goto out;
		tpm.pcrs_ref = pcrs_ref;
		ing.tpm = &tpm;
	}
	if (tlog_path) {
		tlog = cli_tlog_policy_load("estate ingest", "transparency policy", tlog_path);
		if (!tlog)
			goto out;
		ing.tlog = tlog;
	}
	trust = cli_estate_trust("estate ingest", trust_dir);
	if (!trust)
		goto out;
	if (!estate_trust_count(trust)) {
		fprintf(stderr, "kwitness estate ingest: the trust folder %s holds no key\n", trust_dir);
		goto out;
	}
	db = cli_estate_open("estate ingest", url, create);
	if (!db)
		goto out;
	ing.db = db;
	ing.trust = trust;
	ing.progress = ingest_progress;
	ing.rejected_fn = ingest_rejected;
	ing.ctx = &view;
	clock_gettime(CLOCK_MONOTONIC, &view.start);
	if (estate_bulk_begin(db, &bulk)) {
		fprintf(stderr, "kwitness estate ingest: database: %s\n", db->err);
		goto out;
	}
	for (int i = optind; i < argc; i++) {
		if (estate_ingest_path(&ing, argv[i])) {
			clear_progress(&view);
			fprintf(stderr, "kwitness estate ingest: %s\n", ing.err);
			goto out;
		}
	}
	clear_progress(&view);
	if (estate_bulk_end(db, &bulk)) {
		fprintf(stderr, "kwitness estate ingest: database: cannot build the indexes: %s\n",
			db->err);
		goto out;
	}
	/* The planner's statistics, for the queries that follow. */
	if (ing.stored && estate_exec(db, db->analyze))
		fprintf(stderr, "kwitness estate ingest: warning: statistics not refreshed: %s\n", db->err);
	clock_gettime(CLOCK_MONOTONIC, &view.last);
	secs = since(&view.start, &view.last);
	print_ingest_summary(&ing, tlog != NULL, secs);
	status = ing.rejected ? 1 : 0;
	/* Best effort: a pushing host's role may insert, not read (the
	 * estate's estate verify reports the gaps then). */
	cli_estate_print_gaps(db, "estate ingest: warning", &gaps);
out:
	/* What was stored before an error keeps its indexes; a first load
	 * into PostgreSQL (one transaction) stores nothing then. */
	if (db && estate_bulk_stop(db, &bulk))
		fprintf(stderr, "kwitness estate ingest: database: cannot build the indexes: %s\n",
			db->err);
	estate_close(db);
	estate_trust_free(trust);
	kw_key_free(enroll_key);
	json_decref(pcrs_ref);
	cli_tlog_policy_free(tlog);
	return status;
}

/* --- query --------------------------------------------------------------- */

struct table {
	bool json;
	bool wide;  /* every column; else the ones that fit 120 columns (estate_narrow_*) */
	uint64_t rows;
	/* buffered rows for column widths (at most the limit) */
	char **cells;
	size_t n, cap;
	int ncols;
	bool grouped;
	const char *names[EC_COUNT + 2];
};

static const char *const heads[EC_COUNT] = {
	[EC_TS_US] = "TIME", [EC_HOSTNAME] = "HOST", [EC_MACHINE_ID] = "MACHINE",
	[EC_SANDBOX] = "SANDBOX", [EC_SESSION] = "SESSION", [EC_TOOL] = "TOOL",
	[EC_OBJECT] = "OBJECT", [EC_DECISION] = "DECISION", [EC_ENFORCED] = "ENFORCED",
	[EC_BUNDLE_HASH] = "BUNDLE", [EC_MODE] = "MODE", [EC_SIGNER] = "SIGNER",
	[EC_LEVEL] = "LEVEL", [EC_LOG_INDEX] = "LOG_INDEX", [EC_RECORD_PATH] = "RECORD", [EC_COMPLETE] = "COMPLETE",
	[EC_LEVEL_WHY] = "LEVEL_WHY",
	[EC_NAMESPACE] = "NAMESPACE", [EC_POD] = "POD", [EC_CONTAINER] = "CONTAINER",
};
static const char *const json_names[EC_COUNT] = {
	[EC_TS_US] = "time", [EC_HOSTNAME] = "host", [EC_MACHINE_ID] = "machine_id",
	[EC_SANDBOX] = "sandbox_id", [EC_SESSION] = "session", [EC_TOOL] = "tool",
	[EC_OBJECT] = "object", [EC_DECISION] = "decision", [EC_ENFORCED] = "enforced",
	[EC_BUNDLE_HASH] = "bundle_hash", [EC_MODE] = "enforcement_mode", [EC_SIGNER] = "signer",
	[EC_LEVEL] = "level_name", [EC_LOG_INDEX] = "log_index", [EC_RECORD_PATH] = "record", [EC_COMPLETE] = "complete",
	[EC_LEVEL_WHY] = "level_why",
	[EC_NAMESPACE] = "pod_namespace", [EC_POD] = "pod_name", [EC_CONTAINER] = "container_name",
};

static char *cell_text(int col, const char *v, bool grouped)
{
	char t[32];

	if (!grouped && col == EC_TS_US && v) {
		estate_format_time(strtoll(v, NULL, 10), t);
		return strdup(t);
	}
	if (!grouped && (col == EC_ENFORCED || col == EC_COMPLETE) && v)
		return strdup(strcmp(v, "0") ? "yes" : "no");
	return strdup(v ? v : "-");
}

static int json_row(struct table *t, int ncols, const char *const *cols, const char *const *names)
{
	json_t *o = json_object();

	for (int i = 0; o && i < ncols; i++) {
		const char *v = cols[i];
		json_t *j;

		if (t->grouped) {
			j = i == ncols - 1 ? json_integer(strtoll(v ? v : "0", NULL, 10))
					   : v ? json_string(v) : json_null();
			json_object_set_new(o, names[i], j);
			continue;
		}
		if (!v) {
			j = json_null();
		} else if (i == EC_TS_US) {
			char ts[32];

			estate_format_time(strtoll(v, NULL, 10), ts);
			json_object_set_new(o, "ts_us", json_integer(strtoll(v, NULL, 10)));
			j = json_string(ts);
		} else if (i == EC_ENFORCED || i == EC_COMPLETE) {
			j = json_boolean(strcmp(v, "0"));
		} else if (i == EC_LEVEL) {
			int l = kw_level_parse(v);

			json_object_set_new(o, "level", l < 0 ? json_null()
							      : json_integer(kw_level_number(l)));
			j = json_string(v);
		} else if (i == EC_LOG_INDEX) {
			j = json_integer(strtoll(v, NULL, 10));
		} else {
			/* Text a sandbox chose may not be valid UTF-8 after the
			 * database; jansson refuses it rather than pass it on. */
			j = json_string(v);
			if (!j)
				j = json_string("(invalid UTF-8)");
		}
		json_object_set_new(o, json_names[i < EC_COUNT ? i : 0], j);
	}
	if (o)
		cli_print_json(o, false);
	json_decref(o);
	return 0;
}

static int table_row(void *ctx, int ncols, const char *const *cols, const char *const *names)
{
	struct table *t = ctx;

	t->rows++;
	if (t->json)
		return json_row(t, ncols, cols, names);
	if (!t->ncols) {
		t->ncols = ncols;
		for (int i = 0; i < ncols && i < EC_COUNT + 2; i++)
			t->names[i] = t->grouped ? NULL : i < EC_COUNT ? heads[i] : "";
	}
	if (t->n + (size_t)ncols > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		char **c;

		while (cap < t->n + (size_t)ncols)
			cap *= 2;
		c = realloc(t->cells, cap * sizeof(*c));
		if (!c)
			return 1;
		t->cells = c;
		t->cap = cap;
	}
	for (int i = 0; i < ncols; i++) {
		char *c = cell_text(i, cols[i], t->grouped);

		t->cells[t->n++] = t->wide || t->grouped ? c : estate_narrow_cell(i, c);
	}
	return 0;
}

/* Whether the table prints column i: all with --wide or grouped. */
static bool shown(const struct table *t, int i)
{
	return t->wide || t->grouped || estate_narrow_shown(i);
}

static void table_print(struct table *t, const char *const *group_heads)
{
	size_t w[EC_COUNT + 2] = { 0 };
	int nc = t->ncols;

	if (!nc)
		return;
	for (int i = 0; i < nc; i++) {
		const char *h = t->grouped ? group_heads[i] : heads[i];

		w[i] = strlen(h);
	}
	for (size_t k = 0; k < t->n; k++)
		if (t->cells[k] && kw_text_safe_len(t->cells[k]) > w[k % nc])
			w[k % nc] = kw_text_safe_len(t->cells[k]);
	int last = nc - 1;

	while (last > 0 && !shown(t, last))
		last--;
	for (int i = 0; i < nc; i++)
		if (shown(t, i))
			printf("%-*s%s", i == last ? 0 : (int)w[i], t->grouped ? group_heads[i] : heads[i],
			       i == last ? "\n" : "  ");
	for (size_t k = 0; k < t->n; k++) {
		int i = (int)(k % nc);
		const char *s = t->cells[k] ? t->cells[k] : "?";

		if (!shown(t, i))
			continue;
		/* A sandbox chose some of these strings: no terminal controls. */
		kw_text_fput(stdout, s);
		if (i == last)
			putchar('\n');
		else
			printf("%*s  ", (int)(w[i] - kw_text_safe_len(s)), "");
	}
}

static void table_free(struct table *t)
{
	for (size_t k = 0; k < t->n; k++)
		free(t->cells[k]);
	free(t->cells);
}

static int count_row(void *ctx, int ncols, const char *const *cols, const char *const *names)
{
	(void)names;
	if (ncols > 0 && cols[0])
		*(int64_t *)ctx = strtoll(cols[0], NULL, 10);
	return 1;
}

/* Rows of a record that failed estate verify show TAMPERED as their level;
 * a count or a row that is gone cannot, so the query says so. */
static void warn_tampered(struct estate_db *db)
{
	int64_t n = 0;

	if (!estate_query_int(db, "SELECT count(*) FROM record_checks WHERE ok = 0", NULL, 0, &n) &&
	    n > 0)
		fprintf(stderr, "kwitness estate query: warning: %" PRId64 " stored records failed "
				"estate verify (TAMPERED): rows of them may be changed, added or missing; "
				"see kwitness estate verify\n", n);
}

enum { O_DECISION = 1, O_SINCE, O_UNTIL, O_GROUP };

/* estate query's options that need checking: 0, or -EINVAL after saying why. */
static int query_option(int c, struct estate_filter *f, enum estate_group *group)
{
	switch (c) {
	case O_DECISION:
		if (strcmp(optarg, "permit") && strcmp(optarg, "deny")) {
			fprintf(stderr, "kwitness estate query: --decision is permit or deny\n");
			return -EINVAL;
		}
		f->decision = optarg;
		break;
	case O_SINCE:
	case O_UNTIL:
		if (estate_parse_time(optarg, c == O_SINCE ? &f->since_us : &f->until_us)) {
			fprintf(stderr, "kwitness estate query: --%s: want seconds since the epoch or "
					"YYYY-MM-DD[THH:MM:SS[Z]] (UTC)\n",
				c == O_SINCE ? "since" : "until");
			return -EINVAL;
		}
		if (c == O_SINCE)
			f->has_since = true;
		else
			f->has_until = true;
		break;
	case O_GROUP:
		if (!strcmp(optarg, "host"))
			*group = ESTATE_GROUP_HOST;
		else if (!strcmp(optarg, "sandbox"))
			*group = ESTATE_GROUP_SANDBOX;
		else if (!strcmp(optarg, "tool"))
			*group = ESTATE_GROUP_TOOL;
		else {
			fprintf(stderr, "kwitness estate query: --group-by is host, sandbox or tool\n");
			return -EINVAL;
		}
		break;
	}
	return 0;
}

static int estate_query_cmd(int argc, char **argv)
{
	static const char *const group_heads[][3] = {
		[ESTATE_GROUP_HOST] = { "HOST", "MACHINE", "DECISIONS" },
		[ESTATE_GROUP_SANDBOX] = { "SANDBOX", "DECISIONS" },
		[ESTATE_GROUP_TOOL] = { "TOOL", "DECISIONS" },
	};
	struct estate_filter f = { .limit = DEFAULT_LIMIT };
	enum estate_group group = ESTATE_GROUP_NONE;
	const char *url = ESTATE_DEFAULT_DB;
	struct table t = { 0 };
	struct estate_db *db = NULL;
	bool count = false;
	const struct cli_opt opts[] = {
		{ "db", 0, CLI_TEXT, &url },
		{ "tool", 0, CLI_TEXT, &f.tool },
		{ "decision", 0, CLI_OWN, .id = O_DECISION },
		{ "object", 0, CLI_TEXT, &f.object },
		{ "sandbox", 0, CLI_TEXT, &f.sandbox },
		{ "host", 0, CLI_TEXT, &f.host },
		{ "session", 0, CLI_TEXT, &f.session },
		{ "namespace", 0, CLI_TEXT, &f.pod_namespace },
		{ "pod", 0, CLI_TEXT, &f.pod },
		{ "container", 0, CLI_TEXT, &f.container },
		{ "since", 0, CLI_OWN, .id = O_SINCE },
		{ "until", 0, CLI_OWN, .id = O_UNTIL },
		{ "signer", 0, CLI_TEXT, &f.signer },
		{ "incomplete", 0, CLI_FLAG, &f.incomplete },
		{ "exe", 0, CLI_TEXT, &f.exe },
		{ "digest", 0, CLI_TEXT, &f.digest },
		{ "ancestor", 0, CLI_TEXT, &f.ancestor },
		{ "limit", 0, CLI_NUMBER, &f.limit, .min = 0, .max = 1LL << 40,
		  .bad = "needs a number >= 0" },
		{ "json", 0, CLI_FLAG, &t.json },
		{ "wide", 0, CLI_FLAG, &t.wide },
		{ "count", 0, CLI_FLAG, &count },
		{ "group-by", 0, CLI_OWN, .id = O_GROUP },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness estate query", .usage = query_usage, .opts = opts };
	int64_t n = 0;
	char err[600];
	int c, status = 2;

	while ((c = cli_next_option(&p, argc, argv)) > 0) {
		if (query_option(c, &f, &group))
			return 2;
	}
	if (c == CLI_OPTIONS_EXIT)
		return p.status;
	if (optind != argc) {
		fprintf(stderr, "kwitness estate query: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (count && group != ESTATE_GROUP_NONE) {
		fprintf(stderr, "kwitness estate query: --count and --group-by exclude each other\n");
		return 2;
	}
	db = cli_estate_open("estate query", url, false);
	if (!db)
		return 2;
	t.grouped = group != ESTATE_GROUP_NONE;
	if (estate_query_run(db, &f, count, group, count ? count_row : table_row,
			     count ? (void *)&n : (void *)&t, err, sizeof(err))) {
		fprintf(stderr, "kwitness estate query: %s\n", err);
		goto out;
	}
	warn_tampered(db);
	if (count) {
		if (t.json)
			printf("{\"count\":%" PRId64 "}\n", n);
		else
			printf("%" PRId64 "\n", n);
		status = n ? 0 : 1;
		goto out;
	}
	if (!t.json)
		table_print(&t, t.grouped ? group_heads[group] : NULL);
	status = t.rows ? 0 : 1;
out:
	table_free(&t);
	estate_close(db);
	return status;
}

int cmd_estate(int argc, char **argv)
{
	static const struct cli_verb verbs[] = {
		{ "ingest", estate_ingest, NULL },
		{ "query", estate_query_cmd, NULL },
		{ "report", estate_report_cmd, NULL },
		{ "push", estate_push_cmd, NULL },
		{ "verify", estate_verify_cmd, NULL },
		{ "roles", estate_roles_cmd, NULL },
		{ "init", estate_init_cmd, NULL },
		{ "rejected", estate_rejected_cmd, NULL },
		{ 0 },
	};
	static const struct cli_command estate = {
		.name = "estate",
		.verbs = verbs,
		.usage = estate_usage,
		.unknown = "unknown subcommand '%s' (ingest, query, report, push, verify, roles, init, rejected)",
	};

	return cli_dispatch(&estate, argc, argv);
}
