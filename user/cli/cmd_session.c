/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness session open|close|list and kwitness status: a runtime's view of
 * kwitnessd through its control socket. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "commands.h"
#include "verbs.h"
#include "kwitness/client.h"
#include "lib/buf.h"
#include "policy/policy.h"
#include "lib/text_safe.h"

static void session_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness session open (--cgroup PATH | --pid PID) --sandbox-id ID --policy FILE\n"
		"                             --image-digest DIGEST [--model-provider P]\n"
		"                             [--model-id M] [--data-class C] [--socket PATH]\n"
		"                             [--checkpoint-interval SECONDS]\n"
		"                             [--log-segment-bytes SIZE]\n"
		"       kwitness session close ID|--all [--kill] [--json] [--socket PATH]\n"
		"       kwitness session list [--json] [--socket PATH]\n\n"
		"open prints the session id (--pid: the session is for that process's cgroup2\n"
		"cgroup, read from /proc/PID/cgroup); close prints the record path and a summary\n"
		"(--json: kwitnessd's whole reply, record included). --all closes every open\n"
		"session (stopping kwitnessd does not: sessions stay pinned and enforced);\n"
		"--kill first kills what is still running in the session's cgroup, counted in\n"
		"the trailer.\n"
		"The socket is --socket, else $KWITNESS_SOCKET, else " KW_DEFAULT_SOCKET ".\n");
}

/* Sends req (consumed); on an ok reply prints it whole (--json) or with print.
 * Returns the exit status. */
static int request(const char *cmd, const char *sock, json_t *req, bool json,
		   void (*print)(const json_t *reply))
{
	json_t *reply;
	int rc;

	if (kw_client_request(cmd, sock, req, &reply))
		return 1;
	rc = kw_client_reply_ok(cmd, reply) ? 0 : 1;
	if (!rc) {
		if (json)
			kw_print_json(reply);
		else
			print(reply);
	}
	json_decref(reply);
	return rc;
}

static void list_usage(FILE *f)
{
	fprintf(f, "usage: kwitness session list [--json] [--socket PATH]\n");
}

static void status_usage(FILE *f)
{
	fprintf(f, "usage: kwitness status [--json] [--socket PATH]\n");
}

static void print_session_id(const json_t *reply)
{
	kw_text_fput(stdout, json_string_value(json_object_get(reply, KW_F_SESSION)));
	putchar('\n');
}

static int session_open(int argc, char **argv)
{
	struct kw_open_options o = { 0 };
	const char *cgroup = NULL, *pid = NULL;
	const struct cli_opt opts[] = {
		{ "cgroup", 0, CLI_TEXT, &cgroup },
		{ "pid", 0, CLI_TEXT, &pid },
		KW_OPEN_OPTIONS(&o),
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness session open", .usage = session_usage, .opts = opts,
				 .on_bad = CLI_BAD_USAGE };
	char cgbuf[4200];
	json_t *req;

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (!cgroup == !pid || !o.sandbox_id || !o.policy || !o.image_digest || optind != argc) {
		fprintf(stderr, "kwitness session open: --cgroup or --pid, --sandbox-id, --policy "
				"and --image-digest are required\n");
		return 2;
	}
	if (pid) {
		struct kwitness_error ke;
		char *end;
		long n = strtol(pid, &end, 10);

		if (*end || end == pid || n <= 0 || n > INT_MAX) {
			fprintf(stderr, "kwitness session open: --pid %s: not a process id\n", pid);
			return 2;
		}
		if (kwitness_pid_cgroup((pid_t)n, cgbuf, sizeof(cgbuf), &ke)) {
			fprintf(stderr, "kwitness session open: %s\n", ke.message);
			return 1;
		}
		cgroup = cgbuf;
	}
	req = kw_session_open_request(cgroup, &o);
	if (!req)
		return 1;
	return request("session open", o.socket, req, o.json, print_session_id);
}

static void print_close(const json_t *reply)
{
	kw_print_close_summary(stdout, reply);
}

static json_t *close_request(const char *id, bool kill_left)
{
	json_t *req = json_pack("{s:s, s:s}", KW_F_OP, KW_OP_CLOSE, KW_F_SESSION, id);

	if (req && kill_left)
		json_object_set_new(req, KW_F_KILL, json_true());
	return req;
}

/* A close with --kill that left processes running failed (exit 1), though
 * the record was written. */
static int close_one(const char *sock, const char *id, bool json, bool kill_left)
{
	json_t *reply;
	int rc;

	if (kw_client_request("session close", sock, close_request(id, kill_left), &reply))
		return 1;
	rc = kw_client_reply_ok("session close", reply) ? 0 : 1;
	if (!rc) {
		if (json)
			kw_print_json(reply);
		else
			print_close(reply);
		if (kill_left && json_integer_value(json_object_get(reply, KW_F_KILL_FAILED))) {
			fprintf(stderr, "kwitness session close: session %s: the kill did not end "
					"%lld process(es); they run on, ungoverned\n", id,
				(long long)json_integer_value(json_object_get(reply, KW_F_KILL_FAILED)));
			rc = 1;
		}
	}
	json_decref(reply);
	return rc;
}

/* --all: every session the list names, one close each; the exit status is 1
 * when any failed. */
static int close_all(const char *sock, bool json, bool kill_left)
{
	json_t *reply, *sessions, *s;
	size_t i;
	int rc = 0;

	if (kw_client_request("session close", sock, json_pack("{s:s}", KW_F_OP, KW_OP_LIST), &reply))
		return 1;
	if (!kw_client_reply_ok("session close", reply)) {
		json_decref(reply);
		return 1;
	}
	sessions = json_object_get(reply, KW_F_SESSIONS);
	json_array_foreach(sessions, i, s) {
		const char *id = json_string_value(json_object_get(s, KW_F_SESSION));

		if (!id || strcmp(json_string_value(json_object_get(s, KW_F_STATE)) ?: "", "open"))
			continue;
		if (!json) {
			fputs("session:   ", stdout);
			kw_text_fput(stdout, id);
			putchar('\n');
		}
		if (close_one(sock, id, json, kill_left))
			rc = 1;
	}
	if (!json && !json_array_size(sessions))
		printf("no open session\n");
	json_decref(reply);
	return rc;
}

static int session_close(int argc, char **argv)
{
	const char *sock = NULL;
	bool json = false, all = false, kill_left = false;
	const struct cli_opt opts[] = {
		{ "socket", 0, CLI_TEXT, &sock },
		{ "json", 0, CLI_FLAG, &json },
		{ "all", 0, CLI_FLAG, &all },
		{ "kill", 0, CLI_FLAG, &kill_left },
		{ "help", 'h', CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness session close", .usage = session_usage, .opts = opts,
				 .on_bad = CLI_BAD_USAGE };

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (all ? optind != argc : optind != argc - 1) {
		fprintf(stderr, "kwitness session close: one session id, or --all, is required\n");
		return 2;
	}
	if (all)
		return close_all(sock, json, kill_left);
	return close_one(sock, argv[optind], json, kill_left);
}

static void print_sessions(const json_t *sessions)
{
	size_t i;
	json_t *s;

	if (!json_array_size(sessions)) {
		printf("no open sessions\n");
		return;
	}
	printf("%-32s %-8s %10s %8s %8s %5s  %s\n", "SESSION", "STATE", "DECISIONS", "DENIALS",
	       "DROPPED", "RING", "SANDBOX / CGROUP");
	json_array_foreach(sessions, i, s) {
		long long used = json_integer_value(json_object_get(s, KW_F_RINGBUF_USED));
		long long size = json_integer_value(json_object_get(s, KW_F_RINGBUF_SIZE));
		char ring[24] = "-", id[160], state[64];

		/* how full the session's ring buffer is right now */
		if (size > 0 && used >= 0)
			snprintf(ring, sizeof(ring), "%lld%%", used * 100 / size);
		/* a sandbox chose its id and its cgroup's name: escaped */
		printf("%-32s %-8s %10lld %8lld %8lld %5s  ",
		       kw_text_safe(json_string_value(json_object_get(s, KW_F_SESSION)), id,
				    sizeof(id)),
		       kw_text_safe(json_string_value(json_object_get(s, KW_F_STATE)), state,
				    sizeof(state)),
		       (long long)json_integer_value(json_object_get(s, KW_F_DECISIONS)),
		       (long long)json_integer_value(json_object_get(s, KW_F_DENIALS)),
		       (long long)json_integer_value(json_object_get(s, KW_F_DROPPED)), ring);
		kw_text_fput(stdout, json_string_value(json_object_get(s, KW_F_SANDBOX_ID)));
		putchar(' ');
		kw_text_fput(stdout, json_string_value(json_object_get(s, KW_F_CGROUP)));
		putchar('\n');
	}
}

static void print_list(const json_t *reply)
{
	print_sessions(json_object_get(reply, KW_F_SESSIONS));
}

static void print_status(const json_t *reply)
{
	json_t *u = json_object_get(reply, KW_F_HOOKS_UNAVAILABLE), *v;
	size_t i;

	printf("kernel:    %s\n", json_string_value(json_object_get(reply, KW_F_KERNEL)));
	printf("state:     %s\n", json_string_value(json_object_get(reply, KW_F_STATE_DIR)));
	printf("ringbuf:   %lld bytes per session\n",
	       (long long)json_integer_value(json_object_get(reply, KW_F_RINGBUF_SIZE)));
	v = json_object_get(reply, KW_F_ESTATE);
	if (v) {
		const char *e = json_string_value(json_object_get(v, KW_F_ESTATE_ERROR));

		/* The shipper (`kwitness estate push`) reports what it pushed;
		 * the collector knows what waits. */
		printf("estate:    %lld waiting in the spool for `kwitness estate push`%s%s\n",
		       (long long)json_integer_value(json_object_get(v, KW_F_ESTATE_BACKLOG)),
		       e && *e ? "; spool error: " : "", e && *e ? e : "");
	}
	v = json_object_get(reply, KW_F_TRANSPARENCY);
	if (v)
		printf("tlog:      %lld logged, %lld without Level 2 (%lld waiting for a retry), "
		       "%lld queued\n",
		       (long long)json_integer_value(json_object_get(v, "logged")),
		       (long long)json_integer_value(json_object_get(v, "unlogged")),
		       (long long)json_integer_value(json_object_get(v, "retry_waiting")),
		       (long long)json_integer_value(json_object_get(v, "queued")));
	v = json_object_get(reply, KW_F_QUOTA);
	if (v)
		printf("quota:     %lld sessions per non-root user, %lld slots kept for root\n",
		       (long long)json_integer_value(json_object_get(v, "max_sessions_per_user")),
		       (long long)json_integer_value(json_object_get(v, "root_reserved_sessions")));
	printf("hooks:    ");
	json_array_foreach(json_object_get(reply, KW_F_HOOKS_AVAILABLE), i, v)
		printf(" %s", json_string_value(v));
	printf("\n");
	json_array_foreach(u, i, v)
		printf("unavailable: %s: %s\n", json_string_value(json_object_get(v, KW_F_CLASS)),
		       json_string_value(json_object_get(v, KW_F_REASON)));
	print_list(reply);
}

/* list and status: no arguments besides --socket and --json. */
static int simple_request(const char *cmd, void (*usage)(FILE *f), const char *op, int argc,
			  char **argv, void (*print)(const json_t *reply))
{
	const char *sock = NULL;
	bool json = false;
	const struct cli_opt opts[] = {
		{ "socket", 0, CLI_TEXT, &sock },
		{ "json", 0, CLI_FLAG, &json },
		{ "help", 'h', CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = cmd, .usage = usage, .opts = opts, .on_bad = CLI_BAD_USAGE };

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (optind != argc) {
		fprintf(stderr, "kwitness %s: unexpected argument '%s'\n", cmd, argv[optind]);
		return 2;
	}
	return request(cmd, sock, json_pack("{s:s}", KW_F_OP, op), json, print);
}

static int session_list(int argc, char **argv)
{
	return simple_request("session list", list_usage, KW_OP_LIST, argc, argv, print_list);
}

int cmd_session(int argc, char **argv)
{
	static const struct cli_verb verbs[] = {
		{ "open", session_open, NULL },
		{ "close", session_close, NULL },
		{ "list", session_list, NULL },
		{ 0 },
	};
	static const struct cli_command session = {
		.name = "session",
		.verbs = verbs,
		.usage = session_usage,
		.unknown = "unknown subcommand '%s'",
		.unknown_usage = true,
	};

	return cli_dispatch(&session, argc, argv);
}

int cmd_status(int argc, char **argv)
{
	return simple_request("status", status_usage, KW_OP_STATUS, argc, argv, print_status);
}
