/* SPDX-License-Identifier: Apache-2.0 */
/* libkwitness, see kwitness/client.h: one request line to kwitnessd's control
 * socket, one reply line back (kwitness/protocol.h names every field). The
 * reply comes from a privileged daemon but is still parsed with bounds: a
 * reply larger than KW_PROTO_MAX_REPLY or not a JSON object is EPROTOCOL. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <jansson.h>

#include "lib/buf.h"
#include "lib/cgroup.h"
#include "kwitness/client.h"
#include "policy/policy.h"
#include "client/protocol.h"
#include "client/client_internal.h"

int kwc_fail(struct kwitness_error *err, int status, int sys_errno, const char *code,
		const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return status;
	err->status = status;
	err->sys_errno = sys_errno;
	snprintf(err->code, sizeof(err->code), "%s", code ? code : "");
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	/* one line, whatever kwitnessd or the system put in it */
	for (char *c = err->message; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	return status;
}

void kwc_clear(struct kwitness_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
}

const char *kwitness_socket_path(const char *socket)
{
	const char *env = getenv(KW_SOCKET_ENV);

	if (socket)
		return socket;
	return env && *env ? env : KW_DEFAULT_SOCKET;
}

const char *kwitness_strstatus(int status)
{
	switch (status) {
	case KWITNESS_OK: return "ok";
	case KWITNESS_EINVAL: return "invalid_argument";
	case KWITNESS_ESYSTEM: return "system_error";
	case KWITNESS_ECONNECT: return "unreachable";
	case KWITNESS_EPROTOCOL: return "protocol_error";
	case KWITNESS_EREFUSED: return "refused";
	default: return "unknown";
	}
}

/* The line and its newline (kw_write_all sends with MSG_NOSIGNAL: a library
 * must not kill its caller with SIGPIPE when kwitnessd has closed the
 * connection). */
static int send_line(int fd, const char *line)
{
	return kw_write_all(fd, line, strlen(line)) ?: kw_write_all(fd, "\n", 1);
}

/* Sends one line and reads one back; *reply is the line without its newline. */
static int exchange(const char *socket_path, const char *line, struct kw_buf *reply,
		    struct kwitness_error *err)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t scanned = 0;
	int fd, e;

	if (strlen(socket_path) >= sizeof(a.sun_path))
		return kwc_fail(err, KWITNESS_EINVAL, ENAMETOOLONG, NULL, "socket path too long: %s",
			    socket_path);
	memcpy(a.sun_path, socket_path, strlen(socket_path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return kwc_fail(err, KWITNESS_ESYSTEM, errno, NULL, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		e = errno;
		close(fd);
		return kwc_fail(err, KWITNESS_ECONNECT, e, NULL, "cannot reach kwitnessd at %s: %s",
			    socket_path, strerror(e));
	}
	e = send_line(fd, line);
	/* a client refused at accept finds the socket closed with the one error
	 * line still to read: read it rather than report the broken pipe */
	if (e && e != -EPIPE && e != -ECONNRESET) {
		close(fd);
		return kwc_fail(err, KWITNESS_ECONNECT, -e, NULL, "sending to kwitnessd: %s",
			    strerror(-e));
	}
	for (;;) {
		char *nl;
		ssize_t n;

		if (reply->len > KW_PROTO_MAX_REPLY || kw_buf_reserve(reply, 65536)) {
			close(fd);
			return kwc_fail(err, KWITNESS_EPROTOCOL, 0, NULL, "reply from kwitnessd too large");
		}
		n = recv(fd, reply->data + reply->len, 65536, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			e = n < 0 ? errno : 0;
			close(fd);
			return kwc_fail(err, KWITNESS_ECONNECT, e, NULL,
				    "kwitnessd closed the connection without a reply%s%s",
				    e ? ": " : "", e ? strerror(e) : "");
		}
		reply->len += (size_t)n;
		nl = memchr(reply->data + scanned, '\n', reply->len - scanned);
		scanned = reply->len;
		if (nl) {
			reply->len = (size_t)(nl - reply->data);
			reply->data[reply->len] = '\0';
			break;
		}
	}
	close(fd);
	return 0;
}

/* Sends req (not consumed) and returns the reply object; a refusal is EREFUSED
 * with kwitnessd's code and message. */
static int call_json(const char *socket, const json_t *req, json_t **reply,
		     struct kwitness_error *err)
{
	struct kw_buf in = { 0 };
	char *text = json_dumps(req, JSON_COMPACT);
	json_error_t jerr;
	int e;

	*reply = NULL;
	if (!text)
		return kwc_fail(err, KWITNESS_ESYSTEM, ENOMEM, NULL, "cannot encode the request");
	e = exchange(kwitness_socket_path(socket), text, &in, err);
	free(text);
	if (e) {
		kw_buf_free(&in);
		return e;
	}
	*reply = json_loadb(in.data, in.len, 0, &jerr);
	kw_buf_free(&in);
	if (!json_is_object(*reply)) {
		json_decref(*reply);
		*reply = NULL;
		return kwc_fail(err, KWITNESS_EPROTOCOL, 0, NULL,
			    "kwitnessd sent a reply that is not a JSON object");
	}
	if (!json_is_true(json_object_get(*reply, KW_F_OK))) {
		e = kwc_fail(err, KWITNESS_EREFUSED, 0,
			 json_string_value(json_object_get(*reply, KW_F_ERROR)) ?: "error", "%s: %s",
			 json_string_value(json_object_get(*reply, KW_F_ERROR)) ?: "error",
			 json_string_value(json_object_get(*reply, KW_F_MESSAGE)) ?: "(no message)");
		json_decref(*reply);
		*reply = NULL;
		return e;
	}
	return 0;
}

int kwitness_call(const char *socket, const char *request_json, char **reply_json,
		  struct kwitness_error *err)
{
	struct kw_buf in = { 0 };
	int e;

	kwc_clear(err);
	*reply_json = NULL;
	if (!request_json || strchr(request_json, '\n'))
		return kwc_fail(err, KWITNESS_EINVAL, 0, NULL, "a request is one line of JSON");
	e = exchange(kwitness_socket_path(socket), request_json, &in, err);
	if (e) {
		kw_buf_free(&in);
		return e;
	}
	*reply_json = in.data ? in.data : strdup("");
	if (!*reply_json)
		return kwc_fail(err, KWITNESS_ESYSTEM, ENOMEM, NULL, "out of memory");
	return 0;
}

int kwitness_pid_cgroup(pid_t pid, char *out, size_t cap, struct kwitness_error *err)
{
	char path[64], mount[4096], line[4096 + 8];
	bool found = false;
	FILE *f;
	int e;

	kwc_clear(err);
	if (pid <= 0)
		return kwc_fail(err, KWITNESS_EINVAL, 0, NULL, "pid %d: not a process id", (int)pid);
	e = kw_cgroup2_mount(mount, sizeof(mount));
	if (e)
		return kwc_fail(err, KWITNESS_ESYSTEM, -e, NULL, "no cgroup2 mount: %s", strerror(-e));
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return kwc_fail(err, KWITNESS_ESYSTEM, errno, NULL, "%s: %s", path, strerror(errno));
	/* the cgroup2 line is "0::/path"; v1 lines have a controller list */
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (strncmp(line, "0::/", 4))
			continue;
		/* a process in another cgroup namespace shows "/.." paths: refuse */
		if (strstr(line + 3, "/..") || strstr(line + 3, " (deleted)")) {
			fclose(f);
			return kwc_fail(err, KWITNESS_EINVAL, 0, NULL,
				    "pid %d: its cgroup is outside this cgroup namespace or deleted",
				    (int)pid);
		}
		if (snprintf(out, cap, "%s%s", mount, !strcmp(line + 3, "/") ? "" : line + 3) >=
		    (int)cap) {
			fclose(f);
			return kwc_fail(err, KWITNESS_EINVAL, ENAMETOOLONG, NULL, "pid %d: cgroup path too long",
				    (int)pid);
		}
		found = true;
		break;
	}
	fclose(f);
	if (!found)
		return kwc_fail(err, KWITNESS_ESYSTEM, ENOENT, NULL, "pid %d: no cgroup2 line in %s",
			    (int)pid, path);
	return 0;
}

/* The bundle as a JSON string (it must be UTF-8 to travel in one). */
static int policy_json(const struct kwitness_open_params *p, json_t **out,
		       struct kwitness_error *err)
{
	struct kw_buf b = { 0 };
	int e;

	if (p->policy_file) {
		e = kw_read_file(p->policy_file, KW_POLICY_MAX_BYTES, &b);
		if (e)
			return kwc_fail(err, e == -EFBIG ? KWITNESS_EINVAL : KWITNESS_ESYSTEM, -e, NULL,
				    "policy %s: %s", p->policy_file,
				    e == -EFBIG ? "larger than the bundle limit" : strerror(-e));
		*out = json_stringn(b.data ? b.data : "", b.len);
		kw_buf_free(&b);
	} else {
		if (p->policy_len > KW_POLICY_MAX_BYTES)
			return kwc_fail(err, KWITNESS_EINVAL, 0, NULL, "policy: larger than the bundle limit");
		*out = json_stringn(p->policy, p->policy_len);
	}
	if (!*out)
		return kwc_fail(err, KWITNESS_EINVAL, 0, NULL, "policy: not UTF-8 text");
	return 0;
}

static int set_opt(json_t *req, const char *key, const char *v)
{
	return v ? json_object_set_new(req, key, json_string(v)) : 0;
}

static int set_workload(json_t *req, const struct kwitness_open_params *p)
{
	return set_opt(req, KW_F_POD_NAMESPACE, p->pod_namespace) ||
	       set_opt(req, KW_F_POD_NAME, p->pod_name) || set_opt(req, KW_F_POD_UID, p->pod_uid) ||
	       set_opt(req, KW_F_POD_SANDBOX_ID, p->pod_sandbox_id) ||
	       set_opt(req, KW_F_CONTAINER_NAME, p->container_name) ||
	       set_opt(req, KW_F_CONTAINER_ID, p->container_id) ||
	       set_opt(req, KW_F_CONTAINER_IMAGE, p->container_image);
}

int kwitness_open(const char *socket, const struct kwitness_open_params *p,
		  char session_id[KWITNESS_SESSION_ID_MAX], char *cgroup_out, size_t cgroup_cap,
		  struct kwitness_error *err)
{
	char cgbuf[4200];
	const char *cg, *sid;
	json_t *pol = NULL, *req, *reply;
	int e;

	kwc_clear(err);
	if (!p || !session_id)
		return kwc_fail(err, KWITNESS_EINVAL, 0, NULL, "no parameters");
	session_id[0] = '\0';
	if (!!p->cgroup == (p->pid > 0))
		return kwc_fail(err, KWITNESS_EINVAL, 0, NULL, "give exactly one of cgroup and pid");
	if (!!p->policy_file == !!p->policy)
		return kwc_fail(err, KWITNESS_EINVAL, 0, NULL, "give exactly one of policy and policy_file");
	if (!p->sandbox_id || !p->image_digest)
		return kwc_fail(err, KWITNESS_EINVAL, 0, NULL, "sandbox_id and image_digest are required");
	cg = p->cgroup;
	if (!cg) {
		e = kwitness_pid_cgroup(p->pid, cgbuf, sizeof(cgbuf), err);
		if (e)
			return e;
		cg = cgbuf;
	}
	if (cgroup_out && cgroup_cap && snprintf(cgroup_out, cgroup_cap, "%s", cg) >= (int)cgroup_cap)
		return kwc_fail(err, KWITNESS_EINVAL, ENAMETOOLONG, NULL, "cgroup path too long for the buffer");
	e = policy_json(p, &pol, err);
	if (e)
		return e;
	req = json_pack("{s:s, s:s, s:s, s:o, s:s}", KW_F_OP, KW_OP_OPEN, KW_F_CGROUP, cg,
			KW_F_SANDBOX_ID, p->sandbox_id, KW_F_POLICY, pol, KW_F_IMAGE_DIGEST,
			p->image_digest);
	if (!req || set_opt(req, KW_F_MODEL_PROVIDER, p->model_provider) ||
	    set_opt(req, KW_F_MODEL_ID, p->model_id) || set_opt(req, KW_F_DATA_CLASS, p->data_class) ||
	    set_workload(req, p)) {
		json_decref(req);
		return kwc_fail(err, KWITNESS_EINVAL, 0, NULL,
			    "a field is not UTF-8 text (sandbox id, digest, model or cgroup)");
	}
	e = call_json(socket, req, &reply, err);
	json_decref(req);
	if (e)
		return e;
	sid = json_string_value(json_object_get(reply, KW_F_SESSION));
	if (!sid || !*sid || strlen(sid) >= KWITNESS_SESSION_ID_MAX) {
		json_decref(reply);
		return kwc_fail(err, KWITNESS_EPROTOCOL, 0, NULL, "the open reply has no session id");
	}
	memcpy(session_id, sid, strlen(sid) + 1);
	json_decref(reply);
	return 0;
}

static char *dup_member(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? strdup(s) : NULL;
}

static uint64_t u64_member(const json_t *o, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(o, key));

	return v > 0 ? (uint64_t)v : 0;
}

void kwitness_close_result_free(struct kwitness_close_result *r)
{
	if (!r)
		return;
	free(r->record_path);
	free(r->log_path);
	free(r->policy_path);
	free(r->record_json);
	free(r->reply_json);
	memset(r, 0, sizeof(*r));
}

int kwc_close(const char *socket, const char *session_id, bool kill,
	      struct kwitness_close_result *out, struct kwitness_error *err)
{
	json_t *req, *reply, *rec;
	int e;

	kwc_clear(err);
	if (!out)
		return kwc_fail(err, KWITNESS_EINVAL, 0, NULL, "no result");
	memset(out, 0, sizeof(*out));
	if (!session_id || !*session_id)
		return kwc_fail(err, KWITNESS_EINVAL, 0, NULL, "no session id");
	req = json_pack("{s:s, s:s}", KW_F_OP, KW_OP_CLOSE, KW_F_SESSION, session_id);
	if (req && kill && json_object_set_new(req, KW_F_KILL, json_true())) {
		json_decref(req);
		req = NULL;
	}
	if (!req)
		return kwc_fail(err, KWITNESS_EINVAL, 0, NULL, "session id: not UTF-8 text");
	e = call_json(socket, req, &reply, err);
	json_decref(req);
	if (e)
		return e;
	rec = json_object_get(reply, KW_F_RECORD);
	out->record_path = dup_member(reply, KW_F_RECORD_PATH);
	out->log_path = dup_member(reply, KW_F_LOG_PATH);
	out->policy_path = dup_member(reply, KW_F_POLICY_PATH);
	out->record_json = json_is_object(rec) ? json_dumps(rec, JSON_COMPACT) : NULL;
	out->reply_json = json_dumps(reply, JSON_COMPACT);
	out->decisions = u64_member(reply, KW_F_DECISIONS);
	out->denials = u64_member(reply, KW_F_DENIALS);
	out->dropped = u64_member(reply, KW_F_DROPPED);
	out->unrecorded = u64_member(reply, KW_F_UNRECORDED);
	out->untracked_cgroups = u64_member(reply, KW_F_UNTRACKED_CGROUPS);
	out->complete = json_is_true(json_object_get(reply, KW_F_COMPLETE));
	json_decref(reply);
	if (!out->record_path || !out->log_path || !out->record_json || !out->reply_json) {
		kwitness_close_result_free(out);
		return kwc_fail(err, KWITNESS_EPROTOCOL, 0, NULL,
			    "the close reply lacks the record, its path or the log path");
	}
	return 0;
}

int kwitness_close(const char *socket, const char *session_id, struct kwitness_close_result *out,
		   struct kwitness_error *err)
{
	return kwc_close(socket, session_id, false, out, err);
}

/* The members of a session in a status or list reply. */
struct session_member {
	const char *key;
	size_t off; /* in struct kwitness_session_info */
};
#define SESSION_MEMBER(x, off, type) (*(type *)((char *)(x) + (off)))
static const struct session_member session_text[] = {
	{ KW_F_SESSION, offsetof(struct kwitness_session_info, session) },
	{ KW_F_SANDBOX_ID, offsetof(struct kwitness_session_info, sandbox_id) },
	{ KW_F_CGROUP, offsetof(struct kwitness_session_info, cgroup) },
	{ KW_F_STATE, offsetof(struct kwitness_session_info, state) },
	{ KW_F_MODE, offsetof(struct kwitness_session_info, mode) },
	{ KW_F_HOOKS, offsetof(struct kwitness_session_info, hooks) },
};
static const struct session_member session_count[] = {
	{ KW_F_DECISIONS, offsetof(struct kwitness_session_info, decisions) },
	{ KW_F_DENIALS, offsetof(struct kwitness_session_info, denials) },
	{ KW_F_DROPPED, offsetof(struct kwitness_session_info, dropped) },
	{ KW_F_RINGBUF_USED, offsetof(struct kwitness_session_info, ringbuf_used) },
	{ KW_F_RINGBUF_SIZE, offsetof(struct kwitness_session_info, ringbuf_size) },
};
#define N_SESSION_TEXT (sizeof(session_text) / sizeof(session_text[0]))
#define N_SESSION_COUNT (sizeof(session_count) / sizeof(session_count[0]))

void kwitness_status_free(struct kwitness_status_info *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->session_count; i++)
		for (size_t f = 0; f < N_SESSION_TEXT; f++)
			free(SESSION_MEMBER(&s->sessions[i], session_text[f].off, char *));
	free(s->sessions);
	for (size_t i = 0; i < s->hooks_count; i++)
		free(s->hooks_available[i]);
	free(s->hooks_available);
	free(s->kernel);
	free(s->state_dir);
	free(s->reply_json);
	memset(s, 0, sizeof(*s));
}

static int fill_status(const json_t *reply, struct kwitness_status_info *out,
		       struct kwitness_error *err)
{
	const json_t *sessions = json_object_get(reply, KW_F_SESSIONS);
	const json_t *hooks = json_object_get(reply, KW_F_HOOKS_AVAILABLE);
	size_t i;
	json_t *v;

	if (!json_is_array(sessions))
		return kwc_fail(err, KWITNESS_EPROTOCOL, 0, NULL, "the reply has no session list");
	out->reply_json = json_dumps(reply, JSON_COMPACT);
	out->kernel = dup_member(reply, KW_F_KERNEL);
	out->state_dir = dup_member(reply, KW_F_STATE_DIR);
	out->ringbuf_size = u64_member(reply, KW_F_RINGBUF_SIZE);
	out->sessions = calloc(json_array_size(sessions) + 1, sizeof(*out->sessions));
	out->hooks_available = calloc(json_array_size(hooks) + 1, sizeof(char *));
	if (!out->reply_json || !out->sessions || !out->hooks_available)
		return kwc_fail(err, KWITNESS_ESYSTEM, ENOMEM, NULL, "out of memory");
	json_array_foreach(sessions, i, v) {
		struct kwitness_session_info *x = &out->sessions[out->session_count++];
		size_t f;

		for (f = 0; f < N_SESSION_TEXT; f++)
			SESSION_MEMBER(x, session_text[f].off, char *) = dup_member(v, session_text[f].key);
		for (f = 0; f < N_SESSION_COUNT; f++)
			SESSION_MEMBER(x, session_count[f].off, uint64_t) =
				u64_member(v, session_count[f].key);
		if (!x->session)
			return kwc_fail(err, KWITNESS_EPROTOCOL, 0, NULL, "a session without an id");
	}
	json_array_foreach(hooks, i, v)
		if (json_is_string(v) &&
		    !(out->hooks_available[out->hooks_count++] = strdup(json_string_value(v))))
			return kwc_fail(err, KWITNESS_ESYSTEM, ENOMEM, NULL, "out of memory");
	return 0;
}

static int status_op(const char *socket, const char *op, struct kwitness_status_info *out,
		     struct kwitness_error *err)
{
	json_t *req, *reply;
	int e;

	kwc_clear(err);
	if (!out)
		return kwc_fail(err, KWITNESS_EINVAL, 0, NULL, "no result");
	memset(out, 0, sizeof(*out));
	req = json_pack("{s:s}", KW_F_OP, op);
	if (!req)
		return kwc_fail(err, KWITNESS_ESYSTEM, ENOMEM, NULL, "out of memory");
	e = call_json(socket, req, &reply, err);
	json_decref(req);
	if (e)
		return e;
	e = fill_status(reply, out, err);
	json_decref(reply);
	if (e)
		kwitness_status_free(out);
	return e;
}

int kwitness_status(const char *socket, struct kwitness_status_info *out,
		    struct kwitness_error *err)
{
	return status_op(socket, KW_OP_STATUS, out, err);
}

int kwitness_list(const char *socket, struct kwitness_status_info *out, struct kwitness_error *err)
{
	return status_op(socket, KW_OP_LIST, out, err);
}
