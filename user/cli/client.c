/* SPDX-License-Identifier: Apache-2.0 */
/* Control socket client, see client.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "kwitness/client.h"
#include "lib/buf.h"
#include "trace/logsegment.h"
#include "lib/messages.h"
#include "policy/policy.h"
#include "lib/text_safe.h"


const char *kw_client_socket(const char *given)
{
	return kwitness_socket_path(given);
}

int kw_client_call(const char *socket_path, json_t *req, json_t **reply, char *err,
		   size_t errlen)
{
	struct kwitness_error ke;
	json_error_t jerr;
	char *text, *line = NULL;
	int e;

	*reply = NULL;
	text = json_dumps(req, JSON_COMPACT);
	if (!text) {
		snprintf(err, errlen, "request: cannot encode");
		return -EINVAL;
	}
	/* libkwitness carries the line both ways */
	e = kwitness_call(socket_path, text, &line, &ke);
	free(text);
	if (e) {
		if (ke.status == KWITNESS_ECONNECT && !strncmp(ke.message, "cannot reach", 12))
			kw_msg_unreachable(err, errlen, socket_path, ke.sys_errno);
		else
			snprintf(err, errlen, "%s", ke.message);
		return ke.sys_errno ? -ke.sys_errno : -EPROTO;
	}
	*reply = json_loads(line, 0, &jerr);
	free(line);
	if (!*reply || !json_is_object(*reply)) {
		json_decref(*reply);
		*reply = NULL;
		snprintf(err, errlen, "kwitnessd sent a reply that is not a JSON object");
		return -EPROTO;
	}
	return 0;
}

int kw_client_request(const char *cmd, const char *socket_given, json_t *req, json_t **reply)
{
	char err[512];
	int e = kw_client_call(kw_client_socket(socket_given), req, reply, err, sizeof(err));

	json_decref(req);
	if (e)
		fprintf(stderr, "kwitness %s: %s\n", cmd, err);
	return e;
}

int kw_client_reply_ok(const char *cmd, const json_t *reply)
{
	if (json_is_true(json_object_get(reply, KW_F_OK)))
		return 1;
	/* a refusal may quote what a client sent: escaped */
	fprintf(stderr, "kwitness %s: ", cmd);
	kw_text_fput(stderr, json_string_value(json_object_get(reply, KW_F_ERROR)) ?: "error");
	fputs(": ", stderr);
	kw_text_fput(stderr, json_string_value(json_object_get(reply, KW_F_MESSAGE)) ?: "(no message)");
	fputc('\n', stderr);
	return 0;
}

void kw_print_json(const json_t *v)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_SORT_KEYS);

	if (s)
		puts(s);
	free(s);
}

/* Reads the bundle exactly as given; it must be UTF-8 to travel as a JSON string. */
static json_t *policy_string(const char *path)
{
	struct kw_buf b = { 0 };
	json_t *s;
	int e = kw_read_file(path, KW_POLICY_MAX_BYTES, &b);

	if (e) {
		fprintf(stderr, "kwitness: policy %s: %s\n", path,
			e == -EFBIG ? "larger than the bundle limit" : strerror(-e));
		return NULL;
	}
	s = json_stringn(b.data ? b.data : "", b.len);
	if (!s)
		fprintf(stderr, "kwitness: policy %s: not UTF-8 text\n", path);
	kw_buf_free(&b);
	return s;
}

json_t *kw_session_open_request(const char *cgroup, const struct kw_open_options *o)
{
	json_t *pol = policy_string(o->policy), *req;

	if (!pol)
		return NULL;
	req = json_pack("{s:s, s:s, s:s, s:o, s:s}", KW_F_OP, KW_OP_OPEN, KW_F_CGROUP, cgroup, KW_F_SANDBOX_ID,
			o->sandbox_id, KW_F_POLICY, pol, KW_F_IMAGE_DIGEST, o->image_digest);
	if (req && o->model_provider)
		json_object_set_new(req, KW_F_MODEL_PROVIDER, json_string(o->model_provider));
	if (req && o->model_id)
		json_object_set_new(req, KW_F_MODEL_ID, json_string(o->model_id));
	if (req && o->data_class)
		json_object_set_new(req, KW_F_DATA_CLASS, json_string(o->data_class));
	if (req && o->checkpoint_interval) {
		char *end;
		unsigned long long n = strtoull(o->checkpoint_interval, &end, 10);

		if (*end || end == o->checkpoint_interval || *o->checkpoint_interval == '-' ||
		    n > 1000000000ull) {
			fprintf(stderr, "kwitness: --checkpoint-interval: seconds, 0 to 1000000000\n");
			json_decref(req);
			return NULL;
		}
		json_object_set_new(req, KW_F_CHECKPOINT_INTERVAL, json_integer((json_int_t)n));
	}
	if (req && o->log_segment_bytes) {
		uint64_t n;

		if (kw_segment_bytes_parse(o->log_segment_bytes, &n)) {
			fprintf(stderr, "kwitness: --log-segment-bytes: 0 or a size from 4096 to 1T "
				"(K, M, G, T suffixes)\n");
			json_decref(req);
			return NULL;
		}
		json_object_set_new(req, KW_F_LOG_SEGMENT_BYTES, json_integer((json_int_t)n));
	}
	return req;
}

/* label, then text from kwitnessd's reply, escaped, on one line. */
static void print_line(FILE *f, const char *label, const char *text)
{
	fputs(label, f);
	kw_text_fput(f, text);
	fputc('\n', f);
}

void kw_print_close_summary(FILE *f, const json_t *reply)
{
	json_int_t dropped = json_integer_value(json_object_get(reply, KW_F_DROPPED));
	json_int_t untracked = json_integer_value(json_object_get(reply, KW_F_UNTRACKED_CGROUPS));
	json_int_t killed = json_integer_value(json_object_get(reply, KW_F_KILLED));
	json_int_t running = json_integer_value(json_object_get(reply, KW_F_STILL_RUNNING));
	json_int_t kill_failed = json_integer_value(json_object_get(reply, KW_F_KILL_FAILED));

	print_line(f, "record:    ", json_string_value(json_object_get(reply, KW_F_RECORD_PATH)));
	print_line(f, "log:       ", json_string_value(json_object_get(reply, KW_F_LOG_PATH)));
	print_line(f, "policy:    ", json_string_value(json_object_get(reply, KW_F_POLICY_PATH)));
	fprintf(f, "decisions: %lld, denials: %lld, dropped: %lld\n",
		(long long)json_integer_value(json_object_get(reply, KW_F_DECISIONS)),
		(long long)json_integer_value(json_object_get(reply, KW_F_DENIALS)),
		(long long)dropped);
	if (json_is_true(json_object_get(reply, KW_F_COMPLETE)))
		fprintf(f, "complete:  yes (every decision is in the log)\n");
	else
		fprintf(f, "complete:  NO (INCOMPLETE: %lld decision(s) dropped, %lld cgroup(s) "
			"untracked, %lld process(es) not killed: see the log's kwitness.close "
			"entry)\n",
			(long long)dropped, (long long)untracked, (long long)kill_failed);
	if (untracked)
		fprintf(f, "untracked: %lld cgroup(s) made in the session could not be tracked\n",
			(long long)untracked);
	if (killed)
		fprintf(f, "killed:    %lld process(es) still in the cgroup at close\n",
			(long long)killed);
	if (kill_failed)
		fprintf(f, "kill_failed: %lld process(es) the kill did not end (kwitnessd's log says "
			"why)\n", (long long)kill_failed);
	if (running)
		fprintf(f, "WARNING:   %lld process(es) still run in the cgroup, no longer watched\n",
			(long long)running);
}
