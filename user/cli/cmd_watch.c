/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness watch: follows the decisions kwitnessd logs, live, over the
 * control socket (docs/kwitnessd.md, "watch"). Each line names the session
 * and the entry's seq, so it can be matched to the signed log later. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client.h"
#include "commands.h"
#include "export/ocsf.h"
#include "lib/buf.h"
#include "lib/text_safe.h"

/* A stream line longer than this is not one kwitnessd sent. */
#define WATCH_LINE_MAX ((size_t)2 * 1024 * 1024)

enum watch_format { WATCH_TEXT, WATCH_JSON, WATCH_OCSF };

struct watch {
	enum watch_format format;
	char hostname[256];
	char machine_id[64];
	bool ended;
	bool started;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: kwitness watch [--session ID | --all] [--denials] [--json | --format ocsf]\n"
		   "                      [--socket PATH]\n\n"
		   "Follows the decisions kwitnessd logs, as it logs them: the sessions of this user\n"
		   "(root: every session). Each line carries the session id and the entry's seq,\n"
		   "the same as in the signed log. A watcher that reads too slowly misses entries\n"
		   "(the log never waits for it) and is told how many. With --session, ends when\n"
		   "the session closes.\n\n"
		   "  --session ID     one session (default: --all)\n"
		   "  --all            every session this user may see\n"
		   "  --denials        deny decisions only\n"
		   "  --json           each stream line as kwitnessd sends it: {\"entry\":…,\"seq\":N,\"session\":…}\n"
		   "  --format F       text (default), json, or ocsf (one OCSF 1.x event per decision)\n"
		   "  --socket PATH    kwitnessd's control socket\n");
}

static int watch_connect(const char *path, const char *req)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	memcpy(a.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || kw_write_all(fd, req, strlen(req)) ||
	    kw_write_all(fd, "\n", 1)) {
		int e = -errno;

		close(fd);
		return e ? e : -EIO;
	}
	/* nothing more to say: kwitnessd only listens for the hang-up */
	return fd;
}

static void print_text(const json_t *line)
{
	const json_t *entry = json_object_get(line, KW_F_ENTRY);
	const json_t *seq = json_object_get(line, KW_F_SEQ);
	const char *fields[] = { "tool", "decision", "rule", "comm", "host", "name", "path", "dev" };

	kw_text_fput(stdout, json_string_value(json_object_get(line, KW_F_SESSION)) ?: "-");
	if (seq)
		printf(" %lld", (long long)json_integer_value(seq));
	else
		fputs(" -", stdout);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const char *v = json_string_value(json_object_get(entry, fields[i]));

		if (!v)
			continue;
		putchar(' ');
		if (i > 2)
			printf("%s=", fields[i]);
		kw_text_fput(stdout, v);
	}
	if (json_object_get(entry, "port"))
		printf(" port=%lld", (long long)json_integer_value(json_object_get(entry, "port")));
	putchar('\n');
}

/* One line of the stream. 0, or 1 when it is not one kwitnessd sends. */
static int watch_line(struct watch *w, const char *text, size_t len)
{
	json_error_t jerr;
	json_t *line = json_loadb(text, len, JSON_ALLOW_NUL, &jerr);
	const json_t *missed;
	int rc = 0;

	if (!json_is_object(line)) {
		json_decref(line);
		fprintf(stderr, "kwitness watch: kwitnessd sent a line that is not a JSON object\n");
		return 1;
	}
	if (!w->started) {
		w->started = true;
		rc = kw_client_reply_ok("watch", line) ? 0 : 1;
	} else if ((missed = json_object_get(line, KW_F_MISSED))) {
		fprintf(stderr, "kwitness watch: missed %lld entries (%lld in all): this watcher read "
				"too slowly; the log has them\n", (long long)json_integer_value(missed),
			(long long)json_integer_value(json_object_get(line, KW_F_MISSED_TOTAL)));
		if (w->format == WATCH_JSON)
			fwrite(text, 1, len, stdout), putchar('\n');
	} else if (json_is_true(json_object_get(line, KW_F_END))) {
		w->ended = true;
		if (w->format == WATCH_JSON)
			fwrite(text, 1, len, stdout), putchar('\n');
	} else if (w->format == WATCH_JSON) {
		fwrite(text, 1, len, stdout);
		putchar('\n');
	} else if (w->format == WATCH_OCSF) {
		const json_t *entry = json_object_get(line, KW_F_ENTRY);
		struct kw_ocsf_context ctx = {
			.session = json_string_value(json_object_get(line, KW_F_SESSION)),
			.hostname = w->hostname[0] ? w->hostname : NULL,
			.machine_id = w->machine_id[0] ? w->machine_id : NULL,
		};

		kw_ocsf_put(kw_ocsf_event(entry, &ctx));
	} else {
		print_text(line);
	}
	json_decref(line);
	return rc;
}

/* Reads the stream to its end: 0 when a one-session watch ended. */
static int watch_follow(struct watch *w, int fd, bool one_session)
{
	struct kw_buf in = { 0 };
	int rc = 0;

	for (;;) {
		size_t start = 0;
		ssize_t n;
		char *nl;

		if (kw_buf_reserve(&in, 65536)) {
			rc = 1;
			break;
		}
		n = read(fd, in.data + in.len, 65536);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!w->ended) {
				fprintf(stderr, "kwitness watch: kwitnessd ended the stream%s\n",
					n < 0 ? ": read error" : "");
				rc = 1;
			}
			break;
		}
		in.len += (size_t)n;
		while (!rc && (nl = memchr(in.data + start, '\n', in.len - start))) {
			rc = watch_line(w, in.data + start, (size_t)(nl - in.data) - start);
			start = (size_t)(nl - in.data) + 1;
		}
		memmove(in.data, in.data + start, in.len - start);
		in.len -= start;
		fflush(stdout);
		if (rc || (w->ended && one_session) || in.len > WATCH_LINE_MAX) {
			if (in.len > WATCH_LINE_MAX) {
				fprintf(stderr, "kwitness watch: a line longer than %zu bytes\n",
					WATCH_LINE_MAX);
				rc = 1;
			}
			break;
		}
	}
	kw_buf_free(&in);
	return rc;
}

int cmd_watch(int argc, char **argv)
{
	const char *session = NULL, *socket_given = NULL, *format = NULL;
	bool all = false, denials = false, json = false;
	const struct cli_opt opts[] = {
		{ "session", 0, CLI_TEXT, &session },
		{ "all", 0, CLI_FLAG, &all },
		{ "denials", 0, CLI_FLAG, &denials },
		{ "json", 0, CLI_FLAG, &json },
		{ "format", 0, CLI_TEXT, &format },
		{ "socket", 0, CLI_TEXT, &socket_given },
		{ "help", 'h', CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness watch", .usage = usage, .opts = opts };
	struct watch w = { .format = json ? WATCH_JSON : WATCH_TEXT };
	json_t *req;
	char *text;
	int fd, rc;

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (optind != argc || (session && all)) {
		usage(stderr);
		return 2;
	}
	w.format = json ? WATCH_JSON : WATCH_TEXT;
	/* kwitnessd is on this host: its events name this host */
	if (gethostname(w.hostname, sizeof(w.hostname) - 1))
		w.hostname[0] = '\0';
	{
		struct kw_buf mid = { 0 };

		if (!kw_read_file("/etc/machine-id", 4096, &mid) && mid.len >= 32)
			snprintf(w.machine_id, sizeof(w.machine_id), "%.32s", mid.data);
		kw_buf_free(&mid);
	}
	if (format && !strcmp(format, "ocsf"))
		w.format = WATCH_OCSF;
	else if (format && !strcmp(format, "json"))
		w.format = WATCH_JSON;
	else if (format && strcmp(format, "text")) {
		fprintf(stderr, "kwitness watch: --format: text, json or ocsf\n");
		return 2;
	}
	req = json_pack("{s:s, s:b}", KW_F_OP, KW_OP_WATCH, KW_F_DENIALS_ONLY, denials);
	if (req && session)
		json_object_set_new(req, KW_F_SESSION, json_string(session));
	text = req ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	if (!text) {
		fprintf(stderr, "kwitness watch: the request cannot be encoded\n");
		return 1;
	}
	fd = watch_connect(kw_client_socket(socket_given), text);
	free(text);
	if (fd < 0) {
		fprintf(stderr, "kwitness watch: %s: %s\n", kw_client_socket(socket_given),
			strerror(-fd));
		return 1;
	}
	rc = watch_follow(&w, fd, session != NULL);
	close(fd);
	return rc;
}
