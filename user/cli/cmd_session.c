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

static void session_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness session open --cgroup PATH --sandbox-id ID --policy FILE\n"
		"                             --image-digest DIGEST [--model-provider P]\n"
		"                             [--model-id M] [--data-class C] [--socket PATH]\n"
		"       kwitness session close ID [--json] [--socket PATH]\n"
		"       kwitness session list [--json] [--socket PATH]\n\n"
		"open prints the session id; close prints the record path and a summary\n"
		"(--json: kwitnessd's whole reply, record included).\n"
		"The socket is --socket, else $KWITNESS_SOCKET, else " KW_DEFAULT_SOCKET ".\n");
}

static int call(const char *cmd, const char *sock, json_t *req, json_t **reply)
{
	char err[512];
	int e = kw_client_call(kw_client_socket(sock), req, reply, err, sizeof(err));

	json_decref(req);
	if (e) {
		fprintf(stderr, "kwitness %s: %s\n", cmd, err);
		return 1;
	}
	return 0;
}

static void print_json(const json_t *v)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_SORT_KEYS);

	if (s)
		puts(s);
	free(s);
}

static int session_open(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cgroup", required_argument, NULL, 'c' },
		{ "sandbox-id", required_argument, NULL, 'i' },
		{ "policy", required_argument, NULL, 'p' },
		{ "image-digest", required_argument, NULL, 'd' },
		{ "model-provider", required_argument, NULL, 'P' },
		{ "model-id", required_argument, NULL, 'M' },
		{ "data-class", required_argument, NULL, 'C' },
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *cgroup = NULL, *sid = NULL, *pol = NULL, *digest = NULL, *sock = NULL;
	const char *mp = NULL, *mi = NULL, *dc = NULL;
	bool json = false;
	json_t *req, *reply;
	int opt, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': cgroup = optarg; break;
		case 'i': sid = optarg; break;
		case 'p': pol = optarg; break;
		case 'd': digest = optarg; break;
		case 'P': mp = optarg; break;
		case 'M': mi = optarg; break;
		case 'C': dc = optarg; break;
		case 's': sock = optarg; break;
		case 'j': json = true; break;
		case 'h': session_usage(stdout); return 0;
		default: session_usage(stderr); return 2;
		}
	}
	if (!cgroup || !sid || !pol || !digest || optind != argc) {
		fprintf(stderr, "kwitness session open: --cgroup, --sandbox-id, --policy and "
				"--image-digest are required\n");
		return 2;
	}
	req = kw_session_open_request(cgroup, sid, pol, digest, mp, mi, dc);
	if (!req)
		return 1;
	if (call("session open", sock, req, &reply))
		return 1;
	rc = kw_client_reply_ok("session open", reply) ? 0 : 1;
	if (!rc) {
		if (json)
			print_json(reply);
		else
			printf("%s\n", json_string_value(json_object_get(reply, "session")));
	}
	json_decref(reply);
	return rc;
}

static int session_close(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *sock = NULL;
	bool json = false;
	json_t *reply;
	int opt, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 's': sock = optarg; break;
		case 'j': json = true; break;
		case 'h': session_usage(stdout); return 0;
		default: session_usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "kwitness session close: one session id is required\n");
		return 2;
	}
	if (call("session close", sock,
		 json_pack("{s:s, s:s}", "op", "close", "session", argv[optind]), &reply))
		return 1;
	rc = kw_client_reply_ok("session close", reply) ? 0 : 1;
	if (!rc) {
		if (json)
			print_json(reply);
		else
			kw_print_close_summary(stdout, reply);
	}
	json_decref(reply);
	return rc;
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
		long long used = json_integer_value(json_object_get(s, "ringbuf_used"));
		long long size = json_integer_value(json_object_get(s, "ringbuf_size"));
		char ring[24] = "-";

		/* how full the session's ring buffer is right now */
		if (size > 0 && used >= 0)
			snprintf(ring, sizeof(ring), "%lld%%", used * 100 / size);
		printf("%-32s %-8s %10lld %8lld %8lld %5s  %s %s\n",
		       json_string_value(json_object_get(s, "session")),
		       json_string_value(json_object_get(s, "state")),
		       (long long)json_integer_value(json_object_get(s, "decisions")),
		       (long long)json_integer_value(json_object_get(s, "denials")),
		       (long long)json_integer_value(json_object_get(s, "dropped")), ring,
		       json_string_value(json_object_get(s, "sandbox_id")),
		       json_string_value(json_object_get(s, "cgroup")));
	}
}

/* list and status share their options. */
static int simple_request(const char *cmd, const char *op, int argc, char **argv, bool full)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *sock = NULL;
	bool json = false;
	json_t *reply;
	int opt, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 's': sock = optarg; break;
		case 'j': json = true; break;
		case 'h':
			printf("usage: kwitness %s [--json] [--socket PATH]\n", cmd);
			return 0;
		default:
			fprintf(stderr, "usage: kwitness %s [--json] [--socket PATH]\n", cmd);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "kwitness %s: unexpected argument '%s'\n", cmd, argv[optind]);
		return 2;
	}
	if (call(cmd, sock, json_pack("{s:s}", "op", op), &reply))
		return 1;
	rc = kw_client_reply_ok(cmd, reply) ? 0 : 1;
	if (!rc && json) {
		print_json(reply);
	} else if (!rc) {
		if (full) {
			json_t *u = json_object_get(reply, "hooks_unavailable"), *v;
			size_t i;

			printf("kernel:    %s\n", json_string_value(json_object_get(reply, "kernel")));
			printf("state:     %s\n",
			       json_string_value(json_object_get(reply, "state_dir")));
			printf("ringbuf:   %lld bytes per session\n",
			       (long long)json_integer_value(json_object_get(reply, "ringbuf_size")));
			printf("hooks:    ");
			json_array_foreach(json_object_get(reply, "hooks_available"), i, v)
				printf(" %s", json_string_value(v));
			printf("\n");
			json_array_foreach(u, i, v)
				printf("unavailable: %s: %s\n",
				       json_string_value(json_object_get(v, "class")),
				       json_string_value(json_object_get(v, "reason")));
		}
		print_sessions(json_object_get(reply, "sessions"));
	}
	json_decref(reply);
	return rc;
}

int cmd_session(int argc, char **argv)
{
	if (argc < 2) {
		session_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		session_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "open"))
		return session_open(argc - 1, argv + 1);
	if (!strcmp(argv[1], "close"))
		return session_close(argc - 1, argv + 1);
	if (!strcmp(argv[1], "list"))
		return simple_request("session list", "list", argc - 1, argv + 1, false);
	fprintf(stderr, "kwitness session: unknown subcommand '%s'\n", argv[1]);
	session_usage(stderr);
	return 2;
}

int cmd_status(int argc, char **argv)
{
	return simple_request("status", "status", argc, argv, true);
}
