/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness estate push: drains a kwitnessd spool into the estate database.
 * Shipping runs here, outside the privileged collector: kwitnessd only
 * spools (user/kwitnessd/spool.c), so it links no database client, and the
 * SQL clients (libpq with its Kerberos, LDAP and TLS stacks) run in a
 * process that needs no capability. docs/estate.md, "Push from hosts". */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "trace/key.h"
#include "lib/options.h"
#include "client/protocol.h"
#include "trace/record.h"
#include "estate/db.h"
#include "estate/ingest.h"
#include "estate/spool.h"
#include "estate/trust.h"
#include "cli_key.h"
#include "estate_cli.h"
#include "lib/text_safe.h"

#define PUSH_DEFAULT_CONFIG "/etc/kwitness/kwitnessd.conf"
#define BACKOFF_MAX_S 60
/* --follow: the spool is read again this often even without a wakeup. */
#define RESCAN_S 60

static void push_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness estate push [--state DIR] [--db URL] [--config FILE]\n"
		"           [--key PUBLIC | --trust DIR] [--follow] [--quiet]\n\n"
		"Ships the records a kwitnessd spooled (STATE/spool/<session>, made once a\n"
		"session's record is written, when kwitnessd.conf says estate = URL) into the\n"
		"estate database: each is ingested as `kwitness estate ingest` does it (the\n"
		"record verified, the decision log streamed through the log check, the bundle\n"
		"and measurement checked, all in one transaction), and its spool file removed\n"
		"once the database holds the record (stored, already there, or listed in\n"
		"rejected). It needs no capability: read access to the state folder and\n"
		"write access to its spool/ (examples/systemd/kwitness-estate-push.service).\n"
		"Exit status (without --follow): 0 the spool is empty, 1 some record was\n"
		"rejected, 2 usage or database error (what was not shipped stays spooled).\n\n"
		"  --state DIR    the collector's state folder (default %s)\n"
		"  --db URL       sqlite:PATH or postgresql://... (default: the estate = URL of\n"
		"                 --config)\n"
		"  --config FILE  kwitnessd.conf to read estate = URL from (default %s)\n"
		"  --key PUBLIC   the collector's public key (`kwitness key show --jwk`): the\n"
		"                 records are verified under it\n"
		"  --trust DIR    or a folder of trusted keys, as for ingest (default %s)\n"
		"  --follow       keep running: ship each record as it is spooled; when the\n"
		"                 database cannot be reached, try again after 1, 2, 4... s (at\n"
		"                 most %d) and at once when another record is spooled\n"
		"  --quiet        no line per rejected record\n"
		"  --help         this text\n",
		KW_DEFAULT_STATE_DIR, PUSH_DEFAULT_CONFIG, ESTATE_DEFAULT_TRUST, BACKOFF_MAX_S);
}

/* The value of "estate = URL" in a kwitnessd.conf (the same "key = value"
 * lines, '#' comments, blanks trimmed): 1 found, 0 not there, -errno. */
static int conf_estate(const char *path, char *url, size_t len)
{
	char line[4096];
	int found = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *s = line, *eq, *end;

		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '#' || !(eq = strchr(s, '=')))
			continue;
		for (end = eq; end > s && (end[-1] == ' ' || end[-1] == '\t'); end--)
			;
		if (end - s != 6 || strncmp(s, "estate", 6))
			continue;
		for (s = eq + 1; *s == ' ' || *s == '\t'; s++)
			;
		for (end = s + strlen(s); end > s && strchr(" \t\r\n", end[-1]); end--)
			;
		*end = '\0';
		snprintf(url, len, "%s", s);
		found = 1;
	}
	fclose(f);
	return found;
}

struct push_view {
	bool quiet;
};

static void push_rejected(void *ctx, const char *path, const char *reason, const char *message)
{
	struct push_view *v = ctx;

	if (v->quiet)
		return;
	fputs("rejected: ", stdout);
	kw_text_fput(stdout, path);
	printf(": %s: ", reason);
	kw_text_fput(stdout, message);
	putchar('\n');
	fflush(stdout);
}

/* --follow: a watch on the spool folder (-1 when it cannot be watched yet). */
static int spool_watch(int ifd, const char *state)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/" KW_STATE_SPOOL, state);
	return inotify_add_watch(ifd, path, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
}

/* Waits up to secs for something new in the spool (or, without a watch, a
 * second at most, to look for the folder again). */
static void spool_wait(int ifd, int *wd, const char *state, int secs)
{
	struct pollfd p = { .fd = ifd, .events = POLLIN };
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	if (*wd < 0)
		*wd = spool_watch(ifd, state);
	if (*wd < 0 && secs > 1)
		secs = 1;
	if (poll(&p, 1, secs * 1000) > 0) {
		/* Let a burst of closes land, then take them in one pass. */
		usleep(50 * 1000);
		while (read(ifd, buf, sizeof(buf)) > 0)
			;
	}
}

static struct estate_trust *push_trust(const char *key_path, const char *trust_dir)
{
	struct estate_trust *t;
	struct kw_key *key = NULL;
	char err[600];
	int e;

	if (!key_path) {
		t = estate_trust_load(trust_dir, err, sizeof(err));
		if (!t)
			fprintf(stderr, "kwitness estate push: %s\n", err);
		else if (!estate_trust_count(t)) {
			fprintf(stderr, "kwitness estate push: the trust folder %s holds no key\n",
				trust_dir);
			estate_trust_free(t);
			t = NULL;
		}
		return t;
	}
	e = kw_key_load_public(key_path, &key);
	if (e) {
		cli_key_error("estate push", key_path, e);
		return NULL;
	}
	t = estate_trust_of_key(key, err, sizeof(err));
	if (!t)
		fprintf(stderr, "kwitness estate push: %s\n", err);
	kw_key_free(key);
	return t;
}

/* Passes over the spool until it is empty (or, without follow, once).
 * Returns the exit status. */
static int push_loop(struct estate_ingest *ing, const char *url, const char *state, bool follow)
{
	struct estate_db *db = NULL;
	int backoff = 1, ifd = -1, wd = -1, status = 0;
	uint64_t left = 0, shipped = 0;
	char err[600];

	if (follow && (ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0) {
		fprintf(stderr, "kwitness estate push: inotify: %s\n", strerror(errno));
		return 2;
	}
	for (;;) {
		int rc = -1;
		uint64_t before = ing->stored + ing->already + ing->rejected;

		if (!db && !(db = estate_open(url, err, sizeof(err))))
			snprintf(ing->err, sizeof(ing->err), "%s", err);
		if (db) {
			ing->db = db;
			rc = estate_spool_drain(ing, state, &left);
		}
		shipped = ing->stored + ing->already + ing->rejected - before;
		if (shipped && ing->stored && estate_exec(db, db->analyze))
			fprintf(stderr, "kwitness estate push: warning: statistics not refreshed: %s\n",
				db->err);
		if (follow && shipped)
			printf("pushed %" PRIu64 " records (%" PRIu64 " stored, %" PRIu64
			       " already stored, %" PRIu64 " rejected in all)\n",
			       shipped, ing->stored, ing->already, ing->rejected);
		fflush(stdout);
		if (rc) {
			estate_close(db);
			db = NULL;
			fprintf(stderr, "kwitness estate push: %s%s", ing->err,
				follow ? "" : "\n");
			if (!follow) {
				status = 2;
				break;
			}
			fprintf(stderr, "; %" PRIu64 " records wait; retrying in %d s\n", left, backoff);
			spool_wait(ifd, &wd, state, backoff);
			backoff = backoff * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S : backoff * 2;
			continue;
		}
		backoff = 1;
		if (!follow) {
			status = ing->rejected ? 1 : 0;
			break;
		}
		spool_wait(ifd, &wd, state, RESCAN_S);
	}
	if (!follow)
		printf("summary: %" PRIu64 " records: %" PRIu64 " stored, %" PRIu64
		       " already stored, %" PRIu64 " rejected; %" PRIu64 " still spooled\n",
		       ing->records, ing->stored, ing->already, ing->rejected, left);
	estate_close(db);
	if (ifd >= 0)
		close(ifd);
	return status;
}

int estate_push_cmd(int argc, char **argv)
{
	const char *state = KW_DEFAULT_STATE_DIR, *url = NULL, *config = NULL;
	const char *key_path = NULL, *trust_dir = NULL;
	struct push_view view = { 0 };
	bool follow = false;
	struct estate_ingest ing = { .skew = KW_DEFAULT_SKEW, .rejected_fn = push_rejected,
				     .ctx = &view };
	const struct cli_opt opts[] = {
		{ "state", 0, CLI_TEXT, &state },
		{ "db", 0, CLI_TEXT, &url },
		{ "config", 0, CLI_TEXT, &config },
		{ "key", 0, CLI_TEXT, &key_path },
		{ "trust", 0, CLI_TEXT, &trust_dir },
		{ "follow", 0, CLI_FLAG, &follow },
		{ "quiet", 0, CLI_FLAG, &view.quiet },
		{ "help", 0, CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness estate push", .usage = push_usage, .opts = opts };
	struct estate_trust *trust;
	char conf_url[4096];
	int status;

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (optind != argc) {
		fprintf(stderr, "kwitness estate push: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (key_path && trust_dir) {
		fprintf(stderr, "kwitness estate push: give --key or --trust, not both\n");
		return 2;
	}
	if (!url) {
		const char *c = config ? config : PUSH_DEFAULT_CONFIG;
		int e = conf_estate(c, conf_url, sizeof(conf_url));

		if (e <= 0) {
			fprintf(stderr, "kwitness estate push: no database: give --db URL%s%s%s\n",
				e < 0 ? " (" : " or set estate = URL in ", c,
				e < 0 ? ": cannot be read)" : "");
			return 2;
		}
		url = conf_url;
	}
	trust = push_trust(key_path, trust_dir ? trust_dir : ESTATE_DEFAULT_TRUST);
	if (!trust)
		return 2;
	ing.trust = trust;
	status = push_loop(&ing, url, state, follow);
	estate_trust_free(trust);
	return status;
}
