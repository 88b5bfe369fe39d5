/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness session open|close|list and kwitness status: a runtime's view of
 * kwitnessd through its control socket. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "commands.h"
#include "kwitness/buf.h"
#include "kwitness/policy.h"

#define SESSION_HEAD                                                                     \
	"usage: kwitness session open --cgroup PATH --sandbox-id ID --policy FILE\n"       \
	"                             --image-digest DIGEST [--model-provider P]\n"        \
	"                             [--model-id M] [--data-class C] [--socket PATH]\n"   \
	"       kwitness session close ID [--json] [--socket PATH]\n"                      \
	"       kwitness session list [--json] [--socket PATH]\n\n"                        \
	"open prints the session id; close prints the record path and a summary\n"         \
	"(--json: kwitnessd's whole reply, record included).\n"                            \
	"The socket is --socket, else $KWITNESS_SOCKET, else " KW_DEFAULT_SOCKET ".\n"

static const struct kw_cli_opt open_opts[] = {
	{ "cgroup", required_argument, 'c', NULL, NULL },
	KW_OPEN_OPTIONS,
	{ 0 },
};

/* --socket and --json, all that close, list and status take */
static const struct kw_cli_opt socket_json_opts[] = {
	{ "socket", required_argument, 's', NULL, NULL },
	{ "json", no_argument, 'j', NULL, NULL },
	{ 0 },
};

static const struct kw_cli open_cli = { "kwitness session open", SESSION_HEAD, 0, "h", 'h', NULL,
					open_opts };
static const struct kw_cli close_cli = { "kwitness session close", SESSION_HEAD, 0, "h", 'h',
					 NULL, socket_json_opts };
static const struct kw_cli list_cli = { "kwitness session list",
					"usage: kwitness session list [--json] [--socket PATH]\n",
					0, "h", 'h', NULL, socket_json_opts };
static const struct kw_cli status_cli = { "kwitness status",
					  "usage: kwitness status [--json] [--socket PATH]\n", 0,
					  "h", 'h', NULL, socket_json_opts };

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

/* --socket and --json. Returns -1 to go on, else the exit status (after
 * --help or a bad option). */
static int socket_json_options(const struct kw_cli *c, int argc, char **argv, const char **sock,
			       bool *json)
{
	int opt, status;

	optind = 1;
	while ((opt = kw_cli_next(c, argc, argv, &status)) > 0) {
		if (opt == 's')
			*sock = optarg;
		*json |= opt == 'j';
	}
	return opt < 0 ? status : -1;
}

static void print_session_id(const json_t *reply)
{
	printf("%s\n", json_string_value(json_object_get(reply, KW_F_SESSION)));
}

static int session_open(int argc, char **argv)
{
	struct kw_open_options o = { 0 };
	const char *cgroup = NULL;
	json_t *req;
	int opt, status;

	optind = 1;
	while ((opt = kw_cli_next(&open_cli, argc, argv, &status)) > 0)
		if (!kw_open_option(opt, optarg, &o))
			cgroup = optarg; /* --cgroup */
	if (opt < 0)
		return status;
	if (!cgroup || !o.sandbox_id || !o.policy || !o.image_digest || optind != argc) {
		fprintf(stderr, "kwitness session open: --cgroup, --sandbox-id, --policy and "
				"--image-digest are required\n");
		return 2;
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

static int session_close(int argc, char **argv)
{
	const char *sock = NULL;
	bool json = false;
	int rc = socket_json_options(&close_cli, argc, argv, &sock, &json);

	if (rc >= 0)
		return rc;
	if (optind != argc - 1) {
		fprintf(stderr, "kwitness session close: one session id is required\n");
		return 2;
	}
	return request("session close", sock,
		       json_pack("{s:s, s:s}", KW_F_OP, KW_OP_CLOSE, KW_F_SESSION, argv[optind]), json,
		       print_close);
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
		char ring[24] = "-";

		/* how full the session's ring buffer is right now */
		if (size > 0 && used >= 0)
			snprintf(ring, sizeof(ring), "%lld%%", used * 100 / size);
		printf("%-32s %-8s %10lld %8lld %8lld %5s  %s %s\n",
		       json_string_value(json_object_get(s, KW_F_SESSION)),
		       json_string_value(json_object_get(s, KW_F_STATE)),
		       (long long)json_integer_value(json_object_get(s, KW_F_DECISIONS)),
		       (long long)json_integer_value(json_object_get(s, KW_F_DENIALS)),
		       (long long)json_integer_value(json_object_get(s, KW_F_DROPPED)), ring,
		       json_string_value(json_object_get(s, KW_F_SANDBOX_ID)),
		       json_string_value(json_object_get(s, KW_F_CGROUP)));
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
static int simple_request(const struct kw_cli *c, const char *cmd, const char *op, int argc,
			  char **argv, void (*print)(const json_t *reply))
{
	const char *sock = NULL;
	bool json = false;
	int rc = socket_json_options(c, argc, argv, &sock, &json);

	if (rc >= 0)
		return rc;
	if (optind != argc) {
		fprintf(stderr, "kwitness %s: unexpected argument '%s'\n", cmd, argv[optind]);
		return 2;
	}
	return request(cmd, sock, json_pack("{s:s}", KW_F_OP, op), json, print);
}

int cmd_session(int argc, char **argv)
{
	if (argc < 2) {
		kw_cli_usage(stderr, &open_cli);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		kw_cli_usage(stdout, &open_cli);
		return 0;
	}
	if (!strcmp(argv[1], "open"))
		return session_open(argc - 1, argv + 1);
	if (!strcmp(argv[1], "close"))
		return session_close(argc - 1, argv + 1);
	if (!strcmp(argv[1], "list"))
		return simple_request(&list_cli, "session list", KW_OP_LIST, argc - 1, argv + 1,
				      print_list);
	fprintf(stderr, "kwitness session: unknown subcommand '%s'\n", argv[1]);
	kw_cli_usage(stderr, &open_cli);
	return 2;
}

int cmd_status(int argc, char **argv)
{
	return simple_request(&status_cli, "status", KW_OP_STATUS, argc, argv, print_status);
}
