/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness report: the auditor's page of one session (user/estate/report.c)
 * from its files; kwitness estate report: the same from the database.
 * Exit status: 0 the record verifies, 1 it does not (the page says why),
 * 2 usage or input error. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "policy/policy.h"
#include "estate/db.h"
#include "estate/report.h"
#include "estate/report_db.h"
#include "estate/trust.h"
#include "cli_key.h"
#include "lib/options.h"
#include "cli_record.h"
#include "commands.h"
#include "estate_cli.h"

static void report_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness report [--html OUT] RECORD --log LOG --policy BUNDLE [--key JWK]\n\n"
		"Verifies a session's record with its decision log and policy bundle (as\n"
		"`kwitness verify` does) and writes what an auditor reads: the verdict, every\n"
		"hash re-derived beside the record's, the completeness, the policy, a timeline\n"
		"of the decisions, the denials, the decisions per tool and the processes.\n"
		"With --html, one self-contained HTML page (no script, nothing fetched);\n"
		"without, the same as text on stdout. Strings from the log are escaped.\n"
		"Exit status: 0 the record verifies, 1 it does not, 2 usage or input error.\n\n"
		"  --log LOG        the session's decision log (logs/<session>.jsonl)\n"
		"  --policy BUNDLE  the policy bundle (policies/<hex>)\n"
		"  --key JWK        the signer's trusted public key (without it, the record's own\n"
		"                   cnf.jwk: the page then says it shows integrity, not who signed)\n"
		"  --html OUT       write the HTML page to OUT ('-': stdout)\n"
		"  --help           this text\n");
}

static void estate_report_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness estate report [--db URL] [--trust DIR] --session ID [--html OUT]\n\n"
		"The report of `kwitness report` for a session stored in the estate database,\n"
		"built from the database alone: the stored entries go through the decision log\n"
		"check again and the record is verified under the trust folder's key.\n\n"
		"  --db URL        sqlite:PATH or postgresql://... (default %s)\n"
		"  --trust DIR     trusted signer keys (default %s)\n"
		"  --session ID    the session\n"
		"  --html OUT      write the HTML page to OUT ('-': stdout); default: text\n"
		"  --help          this text\n",
		ESTATE_DEFAULT_DB, ESTATE_DEFAULT_TRUST);
}

/* Writes the page or the text; 0, or 2 when OUT cannot be written. */
static int write_report(const char *cmd, const struct report *r, const char *html)
{
	FILE *f = stdout;
	int rc;

	if (html && strcmp(html, "-")) {
		int fd = open(html, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);

		f = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!f) {
			fprintf(stderr, "kwitness %s: cannot write %s: %s\n", cmd, html, strerror(errno));
			if (fd >= 0)
				close(fd);
			return 2;
		}
	}
	rc = html ? report_write_html(r, f) : report_write_text(r, f);
	if (f != stdout ? fclose(f) : fflush(f))
		rc = -EIO;
	if (rc) {
		fprintf(stderr, "kwitness %s: cannot write the report\n", cmd);
		return 2;
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	const char *logpath = NULL, *policypath = NULL, *keypath = NULL, *html = NULL;
	const struct cli_opt opts[] = {
		{ "log", 0, CLI_TEXT, &logpath },
		{ "policy", 0, CLI_TEXT, &policypath },
		{ "key", 0, CLI_TEXT, &keypath },
		{ "html", 0, CLI_TEXT, &html },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness report", .usage = report_usage, .opts = opts };
	struct kw_buf text = { 0 }, bundle = { 0 };
	struct kw_key *key = NULL;
	struct report *r = NULL;
	struct report_source src = { .log_fd = -1, .now = time(NULL), .skew = 300 };
	char err[400];
	int status = 2;

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (optind != argc - 1 || !logpath || !policypath) {
		fprintf(stderr, "kwitness report: give one RECORD, --log LOG and --policy BUNDLE (see --help)\n");
		return 2;
	}
	if (cli_read("report", "record", argv[optind], CLI_RECORD_MAX, &text) ||
	    cli_read("report", "policy bundle", policypath, KW_POLICY_MAX_BYTES, &bundle))
		goto out;
	if (keypath) {
		int e = kw_key_load_public(keypath, &key);

		if (e) {
			cli_key_error("verify", keypath, e);
			goto out;
		}
	}
	src.log_fd = kw_open_regular_at(AT_FDCWD, logpath);
	src.log_path = logpath;
	if (src.log_fd < 0) {
		fprintf(stderr, "kwitness report: cannot read decision log %s: %s\n", logpath,
			strerror(-src.log_fd));
		goto out;
	}
	src.record_text = text.data ? text.data : "";
	src.record_len = text.len;
	src.bundle = bundle.data ? bundle.data : "";
	src.bundle_len = bundle.len;
	src.key = key;
	src.record_name = argv[optind];
	src.log_name = logpath;
	src.policy_name = policypath;
	r = report_build(&src, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "kwitness report: %s\n", err);
		goto out;
	}
	status = write_report("report", r, html);
	if (!status)
		status = report_valid(r) ? 0 : 1;
out:
	if (src.log_fd >= 0)
		close(src.log_fd);
	report_free(r);
	kw_key_free(key);
	kw_buf_free(&text);
	kw_buf_free(&bundle);
	return status;
}

int estate_report_cmd(int argc, char **argv)
{
	const char *url = ESTATE_DEFAULT_DB, *trust_dir = ESTATE_DEFAULT_TRUST, *session = NULL,
		   *html = NULL;
	const struct cli_opt opts[] = {
		{ "db", 0, CLI_TEXT, &url },
		{ "trust", 0, CLI_TEXT, &trust_dir },
		{ "session", 0, CLI_TEXT, &session },
		{ "html", 0, CLI_TEXT, &html },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness estate report", .usage = estate_report_usage, .opts = opts };
	struct estate_trust *trust = NULL;
	struct estate_db *db = NULL;
	struct report *r = NULL;
	char err[600];
	int status = 2;

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (!session || optind != argc) {
		fprintf(stderr, "kwitness estate report: --session ID is required (and no other argument)\n");
		return 2;
	}
	trust = cli_estate_trust("estate report", trust_dir);
	if (!trust)
		return 2;
	db = cli_estate_open("estate report", url, false);
	if (!db)
		goto out;
	r = estate_report_session(db, trust, session, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "kwitness estate report: %s\n", err);
		goto out;
	}
	status = write_report("estate report", r, html);
	if (!status)
		status = report_valid(r) ? 0 : 1;
out:
	report_free(r);
	estate_close(db);
	estate_trust_free(trust);
	return status;
}
