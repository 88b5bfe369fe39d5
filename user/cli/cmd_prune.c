/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness prune --older-than DUR: removes closed sessions from a kwitnessd
 * state folder, a session's files together or not at all, and says what it
 * removes. The retention rule (docs/install.md, "Keeping state"):
 *   - a session goes when its record is older than DUR (the record file's
 *     time), with its decision log, the log's *.checkpoints, the record's
 *     tlog-proof and its TPM commitment (commit/<session>.json); never a session still open (its journal in sessions/), nor
 *     one spooled for `kwitness estate push` and not yet shipped, nor a log
 *     without a record (kept and listed: its record may still come);
 *   - TPM evidence and policy bundles are shared: one goes only when no
 *     session left names it.
 * A session's files are first moved into <state>/.prune/ (renames within the
 * folder): when one cannot be moved, those moved go back and the session
 * stays whole. */
#include <dirent.h>
#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "commands.h"
#include "lib/messages.h"
#include "lib/options.h"
#include "trace/logsegment.h"

#define PRUNE_STATE_DEFAULT "/var/lib/kwitness"
#define NAME_MAX_SID 128
#define SCAN_BYTES 65536

static void prune_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness prune --older-than DUR [--state-dir DIR] [--dry-run]\n\n"
		"Removes the closed sessions of a kwitnessd state folder whose record is older\n"
		"than DUR (30d, 12h, 90m, 3600s or seconds): each session's record, decision\n"
		"log, the log's checkpoints, the record's tlog-proof and the session's TPM\n"
		"commitment (commit/) go together or not at all; TPM evidence and policy bundles go when no remaining session names them.\n"
		"Never removed: open sessions, records still spooled for `kwitness estate push`,\n"
		"logs without a record (listed as kept). Every file removed is listed. Ingest\n"
		"records into the estate (or copy the folder) before pruning what you must keep.\n\n"
		"  --older-than DUR  age of the records to remove (required)\n"
		"  --state-dir DIR   the state folder (default " PRUNE_STATE_DEFAULT ")\n"
		"  --dry-run         list what would be removed; remove nothing\n");
}

/* 30d, 12h, 90m, 3600s, 3600: seconds; -1 when not one of these. */
static long long parse_duration(const char *s)
{
	char *end;
	long long n, unit = 1;

	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno || end == s || n < 0)
		return -1;
	if (*end == 'd')
		unit = 86400;
	else if (*end == 'h')
		unit = 3600;
	else if (*end == 'm')
		unit = 60;
	else if (*end == 's' || !*end)
		unit = 1;
	else
		return -1;
	if (*end && end[1])
		return -1;
	return n > (long long)1e12 / unit ? -1 : n * unit;
}

/* A name set (evidence digests, bundle hashes). */
struct names {
	char **v;
	size_t n, cap;
};

static int names_add(struct names *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		char **v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	if (!(s->v[s->n] = strdup(name)))
		return -ENOMEM;
	s->n++;
	return 0;
}

static bool names_has(const struct names *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return true;
	return false;
}

static void names_free(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

/* The evidence digests (hex) a file of a log names in its first and last
 * bytes: "evidence":"sha256:<hex>". */
static int file_evidence(int dfd, const char *log, struct names *out)
{
	char buf[SCAN_BYTES + 1];
	struct stat st;
	int fd = openat(dfd, log, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), e = 0;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -errno;
	}
	for (int part = 0; part < 2 && !e; part++) {
		off_t at = part == 0 ? 0 : (st.st_size > SCAN_BYTES ? st.st_size - SCAN_BYTES : 0);
		ssize_t got = pread(fd, buf, SCAN_BYTES, at);

		if (got < 0) {
			e = -errno;
			break;
		}
		buf[got] = '\0';
		for (char *p = buf; !e && (p = strstr(p, "\"evidence\":\"sha256:")); p++) {
			char hex[65];

			if (sscanf(p + 20, "%64[0-9a-f]", hex) == 1 && strlen(hex) == 64)
				e = names_add(out, hex);
		}
	}
	close(fd);
	return e;
}

/* The last segment of log (1: the log itself is the only one). */
static uint64_t last_segment(int dfd, const char *log)
{
	char name[300];
	struct stat st;
	uint64_t n = 1;

	while (!kw_segment_name(name, sizeof(name), log, n + 1) &&
	       fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		n++;
	return n;
}

/* The evidence digests a log names, from its open entry (its first bytes)
 * and its close entry (the last bytes of its last segment). */
static int log_evidence(int dfd, const char *log, struct names *out)
{
	char name[300];
	uint64_t last = last_segment(dfd, log);
	int e = file_evidence(dfd, log, out);

	if (!e && last > 1 && !kw_segment_name(name, sizeof(name), log, last))
		e = file_evidence(dfd, name, out);
	return e;
}

/* The record's policy.bundle_hash hex, into out (65); false when none. */
static bool record_bundle(int dfd, const char *rec, char out[65])
{
	int fd = openat(dfd, rec, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	json_t *j = f ? json_loadf(f, 0, NULL) : NULL;
	const char *h = json_string_value(json_object_get(json_object_get(j, "policy"), "bundle_hash"));
	bool ok = h && !strncmp(h, "sha256:", 7) && strlen(h + 7) == 64 && !strchr(h + 7, '/');

	if (ok)
		snprintf(out, 65, "%s", h + 7);
	json_decref(j);
	if (f)
		fclose(f);
	else if (fd >= 0)
		close(fd);
	return ok;
}

struct prune {
	int sfd;             /* the state folder */
	const char *state;
	time_t cutoff;
	bool dry_run;
	unsigned removed, kept, failed;
	struct names keep_evidence, drop_evidence, keep_bundles, drop_bundles;
};

static bool exists_at(int sfd, const char *path)
{
	struct stat st;

	return fstatat(sfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Moves segments from..upto of log into .prune/ (back: out of it again).
 * Returns the last one moved (from - 1: none). */
static uint64_t move_segments(struct prune *p, const char *log, uint64_t from, uint64_t upto,
			      bool back)
{
	uint64_t k;

	for (k = from; k <= upto; k++) {
		char seg[300], to[64];

		snprintf(to, sizeof(to), ".prune/segment.%" PRIu64, k);
		if (kw_segment_name(seg, sizeof(seg), log, k) ||
		    (back ? renameat(p->sfd, to, p->sfd, seg) : renameat(p->sfd, seg, p->sfd, to)) < 0) {
			if (back)
				fprintf(stderr, "kwitness prune: cannot put back %s/%s (it is in %s/%s): "
					"%s\n", p->state, seg, p->state, to, strerror(errno));
			else
				break;
		}
	}
	return k - 1;
}

/* Moves the session's files into .prune/ (all or none), then removes them. */
static int remove_session(struct prune *p, const char *sid)
{
	static const char *const forms[] = { "records/%s.json", "records/%s.json.tlog-proof",
					     "logs/%s.jsonl", "logs/%s.jsonl.checkpoints",
					     "logs/%s.checkpoints", "logs/%s.jsonl" KW_SEGMENT_MANIFEST_SUFFIX,
					     "commit/%s.json", NULL };
	char from[8][300], to[8][300], log[300];
	uint64_t segs, moved;
	int n = 0, i;

	snprintf(log, sizeof(log), "logs/%s.jsonl", sid);
	segs = last_segment(p->sfd, log);

	for (i = 0; forms[i]; i++) {
		char path[300];

		snprintf(path, sizeof(path), forms[i], sid);
		if (!exists_at(p->sfd, path))
			continue;
		snprintf(from[n], sizeof(from[n]), "%s", path);
		snprintf(to[n], sizeof(to[n]), ".prune/%d", n);
		n++;
	}
	if (p->dry_run) {
		for (i = 0; i < n; i++)
			printf("would remove %s/%s\n", p->state, from[i]);
		for (uint64_t k = 2; k <= segs; k++)
			printf("would remove %s/logs/%s.jsonl.%" PRIu64 "\n", p->state, sid, k);
		p->removed++;
		return 0;
	}
	if (mkdirat(p->sfd, ".prune", 0700) < 0 && errno != EEXIST)
		return -errno;
	for (i = 0; i < n; i++)
		if (renameat(p->sfd, from[i], p->sfd, to[i]) < 0)
			break;
	moved = i < n ? 1 : move_segments(p, log, 2, segs, false);
	if (i == n && moved < segs) {
		int se = errno ? errno : EIO;

		move_segments(p, log, 2, moved, true);
		errno = se;
	}
	if (i < n || moved < segs) {
		int e = -errno;

		while (i-- > 0)
			if (renameat(p->sfd, to[i], p->sfd, from[i]) < 0)
				fprintf(stderr, "kwitness prune: cannot put back %s/%s (it is in "
					"%s/.prune/%d): %s\n", p->state, from[i], p->state, i, strerror(errno));
		return e;
	}
	for (i = 0; i < n; i++) {
		unlinkat(p->sfd, to[i], 0);
		printf("removed %s/%s\n", p->state, from[i]);
	}
	for (uint64_t k = 2; k <= segs; k++) {
		char to_seg[64];

		snprintf(to_seg, sizeof(to_seg), ".prune/segment.%" PRIu64, k);
		unlinkat(p->sfd, to_seg, 0);
		printf("removed %s/%s.%" PRIu64 "\n", p->state, log, k);
	}
	unlinkat(p->sfd, ".prune", AT_REMOVEDIR);
	p->removed++;
	return 0;
}

/* Whether the session is old enough and nothing still needs it. */
static bool prunable(struct prune *p, int rdfd, const char *sid, const char *rec)
{
	char path[300];
	struct stat st;

	if (fstatat(rdfd, rec, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_mtime > p->cutoff)
		return false;
	snprintf(path, sizeof(path), "sessions/%s.json", sid);
	if (exists_at(p->sfd, path)) {
		printf("kept %s: the session is still open (sessions/%s.json)\n", sid, sid);
		return false;
	}
	snprintf(path, sizeof(path), "spool/%s", sid);
	if (exists_at(p->sfd, path)) {
		printf("kept %s: spooled for kwitness estate push, not yet in the estate\n", sid);
		return false;
	}
	return true;
}

/* Every record: removed, or its evidence and bundle kept. */
static int prune_records(struct prune *p)
{
	int rdfd = openat(p->sfd, "records", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int ldfd = openat(p->sfd, "logs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *dir = rdfd >= 0 ? fdopendir(rdfd) : NULL;
	struct dirent *de;

	if (!dir) {
		fprintf(stderr, "kwitness prune: %s/records: %s (is --state-dir kwitnessd's state "
			"folder?)\n", p->state, strerror(errno));
		if (rdfd >= 0)
			close(rdfd);
		if (ldfd >= 0)
			close(ldfd);
		return -1;
	}
	while ((de = readdir(dir))) {
		size_t len = strlen(de->d_name);
		char sid[NAME_MAX_SID + 1], log[NAME_MAX_SID + 8], bundle[65];
		bool drop;
		int e;
		struct names *ev, *bu;

		if (len <= 5 || len - 5 > NAME_MAX_SID || strcmp(de->d_name + len - 5, ".json") ||
		    de->d_name[0] == '.')
			continue;
		snprintf(sid, sizeof(sid), "%.*s", (int)(len - 5), de->d_name);
		snprintf(log, sizeof(log), "%s.jsonl", sid);
		drop = prunable(p, rdfd, sid, de->d_name);
		ev = drop ? &p->drop_evidence : &p->keep_evidence;
		bu = drop ? &p->drop_bundles : &p->keep_bundles;
		if ((ldfd >= 0 && log_evidence(ldfd, log, ev)) ||
		    (record_bundle(rdfd, de->d_name, bundle) && names_add(bu, bundle))) {
			fprintf(stderr, "kwitness prune: %s: cannot read what it names; kept\n", sid);
			drop = false;
		}
		if (!drop) {
			p->kept++;
			continue;
		}
		e = remove_session(p, sid);

		if (e) {
			fprintf(stderr, "kwitness prune: %s: %s; kept whole\n", sid, strerror(-e));
			p->failed++;
		}
	}
	closedir(dir);
	if (ldfd >= 0)
		close(ldfd);
	return 0;
}

/* Logs whose record is gone or never came: kept, and said; their evidence kept. */
static void logs_without_record(struct prune *p)
{
	int ldfd = openat(p->sfd, "logs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *dir = ldfd >= 0 ? fdopendir(ldfd) : NULL;
	struct dirent *de;

	if (!dir) {
		if (ldfd >= 0)
			close(ldfd);
		return;
	}
	while ((de = readdir(dir))) {
		size_t len = strlen(de->d_name);
		char rec[NAME_MAX_SID + 20];

		if (len <= 6 || len - 6 > NAME_MAX_SID || strcmp(de->d_name + len - 6, ".jsonl"))
			continue;
		snprintf(rec, sizeof(rec), "records/%.*s.json", (int)(len - 6), de->d_name);
		if (exists_at(p->sfd, rec))
			continue;
		log_evidence(ldfd, de->d_name, &p->keep_evidence);
		printf("kept %s/logs/%s: no record (the session is open, or its record was not "
		       "written: kwitness verify --log can still check it)\n", p->state, de->d_name);
	}
	closedir(dir);
}

/* Shared files that only removed sessions named. */
static void prune_shared(struct prune *p, const char *folder, const char *suffix,
			 const struct names *drop, const struct names *keep)
{
	for (size_t i = 0; i < drop->n; i++) {
		char path[300];

		if (names_has(keep, drop->v[i]))
			continue;
		snprintf(path, sizeof(path), "%s/%s%s", folder, drop->v[i], suffix);
		if (!exists_at(p->sfd, path))
			continue;
		if (p->dry_run)
			printf("would remove %s/%s\n", p->state, path);
		else if (unlinkat(p->sfd, path, 0) == 0)
			printf("removed %s/%s\n", p->state, path);
		else
			fprintf(stderr, "kwitness prune: %s/%s: %s\n", p->state, path, strerror(errno));
	}
}

int cmd_prune(int argc, char **argv)
{
	const char *older = NULL, *state = PRUNE_STATE_DEFAULT;
	struct prune p = { 0 };
	const struct cli_opt opts[] = {
		{ "older-than", 0, CLI_TEXT, &older },
		{ "state-dir", 0, CLI_TEXT, &state },
		{ "dry-run", 0, CLI_FLAG, &p.dry_run },
		{ "help", 'h', CLI_HELP },
		{ 0 },
	};
	struct cli_options o = { .cmd = "kwitness prune", .usage = prune_usage, .opts = opts };
	long long age;
	int status;

	if (cli_options_parse(&o, argc, argv))
		return o.status;
	if (!older || optind != argc) {
		kw_usage_error("kwitness prune", "%s", older ? "unexpected argument" :
			       "--older-than DUR is required (e.g. --older-than 90d)");
		return 2;
	}
	age = parse_duration(older);
	if (age < 0) {
		kw_usage_error("kwitness prune", "--older-than %s: want 30d, 12h, 90m, 3600s or seconds",
			       older);
		return 2;
	}
	p.state = state;
	p.cutoff = time(NULL) - (time_t)age;
	p.sfd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p.sfd < 0) {
		fprintf(stderr, "kwitness prune: %s: %s (give kwitnessd's state folder with "
			"--state-dir)\n", state, strerror(errno));
		return 1;
	}
	status = prune_records(&p) ? 1 : 0;
	if (!status) {
		logs_without_record(&p);
		prune_shared(&p, "evidence", ".json", &p.drop_evidence, &p.keep_evidence);
		prune_shared(&p, "policies", "", &p.drop_bundles, &p.keep_bundles);
		printf("summary: %u session(s) %s, %u kept, %u could not be removed\n", p.removed,
		       p.dry_run ? "would be removed" : "removed", p.kept, p.failed);
		status = p.failed ? 1 : 0;
	}
	close(p.sfd);
	names_free(&p.keep_evidence);
	names_free(&p.drop_evidence);
	names_free(&p.keep_bundles);
	names_free(&p.drop_bundles);
	return status;
}
