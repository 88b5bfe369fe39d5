/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness log export: a stored decision log as OCSF events, one per line
 * (docs/decision-log.md, "OCSF"). `kwitness log` with anything else is the
 * old name of `kwitness tlog`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/logsegment.h"
#include "commands.h"
#include "export/ocsf.h"
#include "jcs/jcs.h"
#include "lib/buf.h"
#include "lib/digest.h"
#include "lib/options.h"

/* A log line longer than this is not one kwitnessd wrote. */
#define LOG_LINE_MAX ((size_t)1024 * 1024)
#define RECORD_MAX ((size_t)16 * 1024 * 1024)

static void usage(FILE *f)
{
	fprintf(f, "usage: kwitness log export --format ocsf [--record FILE] LOG\n"
		   "       kwitness log tree LOG   (the session's process tree: kwitness log tree --help)\n\n"
		   "Writes each decision of a stored decision log as one OCSF 1.x event per line\n"
		   "(Network Activity, DNS Activity, File System Activity, Process Activity,\n"
		   "Kernel Activity). Each event names its session, seq and the entry's hash\n"
		   "(raw_data, raw_data_hash, metadata.tags) and, with the record, its hash.\n\n"
		   "  --format ocsf   the only format so far\n"
		   "  --record FILE   the session's signed record: its hash goes into each event\n"
		   "                  (default: records/<session>.json beside logs/, if there)\n");
}

/* "sha256:" of the record's RFC 8785 bytes, into out. 0 or -errno. */
static int record_hash(const char *path, char out[KW_DIGEST_STR_MAX])
{
	struct kw_buf text = { 0 }, canon = { 0 };
	int e = kw_read_file(path, RECORD_MAX, &text);

	if (!e)
		e = jcs_canonicalize(text.data, text.len, &canon, NULL) ? -EINVAL : 0;
	if (!e)
		e = kw_digest_buf(KW_SHA256, canon.data, canon.len, out);
	kw_buf_free(&text);
	kw_buf_free(&canon);
	return e;
}

/* records/<id>.json beside the log's logs/ folder, when it is there. */
static int record_beside(const char *log, const char *session, char out[KW_DIGEST_STR_MAX])
{
	char path[4096];
	const char *slash = strrchr(log, '/');
	int dir_len = slash ? (int)(slash - log) : 0;

	if (!session || snprintf(path, sizeof(path), "%.*s%s../records/%s.json", dir_len, log,
				 slash ? "/" : "", session) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return record_hash(path, out);
}

struct export_state {
	struct kw_ocsf_context ctx;
	char session[33], hostname[256], machine_id[64];
	char rhash[KW_DIGEST_STR_MAX];
	const char *log_path;
	bool record_given;
	unsigned long long events;
};

/* One line of the log. 0, or 1 when it is not a canonical entry. */
static int export_line(struct export_state *st, const char *line, size_t len, size_t lineno)
{
	struct jcs_error jerr;
	json_t *entry = jcs_parse(line, len, &jerr);
	const char *tool = json_string_value(json_object_get(entry, "tool"));

	if (!json_is_object(entry)) {
		fprintf(stderr, "kwitness log export: %s line %zu: not a JSON object\n", st->log_path,
			lineno);
		json_decref(entry);
		return 1;
	}
	if (tool && !strcmp(tool, "kwitness.open")) {
		snprintf(st->session, sizeof(st->session), "%s",
			 json_string_value(json_object_get(entry, "session")) ?: "");
		snprintf(st->hostname, sizeof(st->hostname), "%s",
			 json_string_value(json_object_get(entry, "hostname")) ?: "");
		snprintf(st->machine_id, sizeof(st->machine_id), "%s",
			 json_string_value(json_object_get(entry, "machine_id")) ?: "");
		st->ctx.session = st->session;
		st->ctx.hostname = st->hostname[0] ? st->hostname : NULL;
		st->ctx.machine_id = st->machine_id[0] ? st->machine_id : NULL;
		if (!st->record_given && !record_beside(st->log_path, st->session, st->rhash))
			st->ctx.record_hash = st->rhash;
	}
	if (kw_ocsf_put(kw_ocsf_event(entry, &st->ctx)))
		st->events++;
	json_decref(entry);
	return 0;
}

static int log_export(int argc, char **argv)
{
	const char *format = NULL, *record = NULL;
	const struct cli_opt opts[] = {
		{ "format", 0, CLI_TEXT, &format },
		{ "record", 0, CLI_TEXT, &record },
		{ "help", 'h', CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness log export", .usage = usage, .opts = opts };
	struct export_state st = { 0 };
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	FILE *f;
	int rc = 0;

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (optind + 1 != argc || !format) {
		usage(stderr);
		return 2;
	}
	if (strcmp(format, "ocsf")) {
		fprintf(stderr, "kwitness log export: --format: ocsf\n");
		return 2;
	}
	st.log_path = argv[optind];
	if (record) {
		int e = record_hash(record, st.rhash);

		if (e) {
			fprintf(stderr, "kwitness log export: %s: %s\n", record, strerror(-e));
			return 1;
		}
		st.record_given = true;
		st.ctx.record_hash = st.rhash;
	}
	/* a log cut into segments is read across them */
	f = strcmp(st.log_path, "-") ? kw_log_open_joined(st.log_path) : stdin;
	if (!f) {
		fprintf(stderr, "kwitness log export: %s: %s\n", st.log_path, strerror(errno));
		return 1;
	}
	while (!rc && (n = getline(&line, &cap, f)) > 0) {
		lineno++;
		if ((size_t)n > LOG_LINE_MAX) {
			fprintf(stderr, "kwitness log export: line %zu: longer than %zu bytes\n", lineno,
				LOG_LINE_MAX);
			rc = 1;
			break;
		}
		if (line[n - 1] == '\n')
			n--;
		rc = export_line(&st, line, (size_t)n, lineno);
	}
	free(line);
	if (f != stdin)
		fclose(f);
	if (!rc && fflush(stdout)) {
		fprintf(stderr, "kwitness log export: writing: %s\n", strerror(errno));
		rc = 1;
	}
	return rc;
}

int cmd_log(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "export"))
		return log_export(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "tree"))
		return cmd_log_tree(argc - 1, argv + 1);
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	return cmd_tlog_deprecated(argc, argv);
}
