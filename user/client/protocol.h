/* SPDX-License-Identifier: Apache-2.0 */
/* The control protocol between `kwitness` and kwitnessd, and the default paths
 * both sides assume. One JSON object per line each way over a Unix stream
 * socket: a request names its operation in "op"; every reply carries "ok", and
 * a refusal adds "error" (one of the codes below) and a one-line "message".
 * docs/kwitnessd.md describes each operation's fields. */
#ifndef KWITNESS_PROTOCOL_H
#define KWITNESS_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "kwitness/client.h"

/* ---- default paths ---- */
#define KW_DEFAULT_SOCKET KWITNESS_DEFAULT_SOCKET
#define KW_DEFAULT_KEY "/etc/kwitness/signing-key.pem"
#define KW_DEFAULT_STATE_DIR "/var/lib/kwitness"
/* The client's socket when --socket is not given. */
#define KW_SOCKET_ENV "KWITNESS_SOCKET"

/* ---- limits ---- */
/* A request line longer than this closes the connection. */
#define KW_PROTO_MAX_REQUEST (1024 * 1024)
/* A reply (a close reply carries a whole record) is far below this. */
#define KW_PROTO_MAX_REPLY (64u * 1024 * 1024)
/* Strings of a request (ids, model names) are 1 to this many bytes. */
#define KW_PROTO_MAX_FIELD 1024

/* ---- operations (the "op" of a request) ---- */
#define KW_OP_OPEN "open"     /* tag a cgroup, start a session */
#define KW_OP_CLOSE "close"   /* drain, seal, sign: the reply carries the record */
#define KW_OP_STATUS "status" /* sessions, hooks available, settings */
#define KW_OP_LIST "list"     /* sessions only */
#define KW_OP_PING "ping"
/* follow the decisions as they are logged: after the ok reply the
 * connection carries one line per entry (docs/kwitnessd.md, "watch") */
#define KW_OP_WATCH "watch"

/* ---- fields ---- */
#define KW_F_OP "op"
#define KW_F_OK "ok"
#define KW_F_ERROR "error"
#define KW_F_MESSAGE "message"
/* open request */
#define KW_F_CGROUP "cgroup"
#define KW_F_SANDBOX_ID "sandbox_id"
#define KW_F_IMAGE_DIGEST "image_digest"
#define KW_F_POLICY "policy"
#define KW_F_MODEL_PROVIDER "model_provider"
#define KW_F_MODEL_ID "model_id"
#define KW_F_DATA_CLASS "data_class"
/* open request, optional: the workload the runtime says this is (a pod and
 * its container, from CRI or podman annotations), copied into the log's
 * kwitness.open entry under the same names */
#define KW_F_POD_NAMESPACE "pod_namespace"
#define KW_F_POD_NAME "pod_name"
#define KW_F_POD_UID "pod_uid"
#define KW_F_POD_SANDBOX_ID "pod_sandbox_id"
#define KW_F_CONTAINER_NAME "container_name"
#define KW_F_CONTAINER_ID "container_id"
#define KW_F_CONTAINER_IMAGE "container_image"
enum kw_workload_field { /* sorted by name: the open entry writes them in order */
	KW_WL_CONTAINER_ID, KW_WL_CONTAINER_IMAGE, KW_WL_CONTAINER_NAME,
	KW_WL_POD_NAME, KW_WL_POD_NAMESPACE, KW_WL_POD_SANDBOX_ID, KW_WL_POD_UID, KW_WL_N
};
extern const char *const kw_workload_fields[KW_WL_N];
/* open: seconds between interim checkpoints for this session (0: none by time) */
#define KW_F_CHECKPOINT_INTERVAL "checkpoint_interval"
#define KW_F_LOG_SEGMENT_BYTES "log_segment_bytes"
/* open and close replies, close request */
#define KW_F_SESSION "session"
#define KW_F_LOG_PATH "log_path"
#define KW_F_POLICY_PATH "policy_path"
#define KW_F_BUNDLE_HASH "bundle_hash"
#define KW_F_RECORD "record"
#define KW_F_RECORD_PATH "record_path"
#define KW_F_DECISIONS "decisions"
#define KW_F_DENIALS "denials"
#define KW_F_DROPPED "dropped"
#define KW_F_UNRECORDED "unrecorded"
#define KW_F_UNTRACKED_CGROUPS "untracked_cgroups"
#define KW_F_COMPLETE "complete"
/* close request: kill what is left in the cgroup first (boolean) */
#define KW_F_KILL "kill"
/* close reply: processes killed at close, and left running by a close without kill */
#define KW_F_KILLED "killed"
#define KW_F_STILL_RUNNING "still_running"
/* close reply: processes a close with kill did not end (they run on) */
#define KW_F_KILL_FAILED "kill_failed"
/* status and list replies */
#define KW_F_SESSIONS "sessions"
#define KW_F_HOOKS_AVAILABLE "hooks_available"
#define KW_F_HOOKS_UNAVAILABLE "hooks_unavailable"
#define KW_F_STATE_DIR "state_dir"
/* status: the estate spool (kwitnessd "estate = URL"): records waiting for
 * `kwitness estate push`, and why the spool cannot be read, if it cannot */
#define KW_F_ESTATE "estate"
/* status: the transparency thread's queue and counters (with log = DIR) */
#define KW_F_TRANSPARENCY "transparency"
/* status: the session quotas (kwitnessd.conf) */
#define KW_F_QUOTA "quota"
#define KW_F_ESTATE_BACKLOG "backlog"
#define KW_F_ESTATE_ERROR "error"
#define KW_F_RINGBUF_SIZE "ringbuf_size"
#define KW_F_RINGBUF_USED "ringbuf_used"
#define KW_F_DNS "dns" /* a session's resolver: queries, refused, servfail, malformed, open_addresses, not_opened */
#define KW_F_KERNEL "kernel"
#define KW_F_PROGRAMS "programs"
#define KW_F_CLASS "class"       /* hooks_unavailable[]: the class ... */
#define KW_F_REASON "reason"     /* ... and why */
/* each entry of "sessions" */
#define KW_F_STATE "state"       /* "open" or "closing" */
#define KW_F_SLOT "slot"
#define KW_F_OPENED_US "opened_us"
#define KW_F_MODE "mode"
#define KW_F_HOOKS "hooks"
#define KW_F_NEXT_SEQ "next_seq"
#define KW_F_PENDING "pending"
#define KW_F_GAPS_MARKED "gaps_marked" /* numbers given up at once: the kernel marked them dropped */
#define KW_F_GAPS_UNMARKED "gaps_unmarked" /* numbers given up without a mark (after waiting, or too far behind) */
#define KW_F_LOG_BYTES "log_bytes"

/* watch request: deny decisions only (boolean); its "session" is optional
 * (absent: every session the client may see) */
#define KW_F_DENIALS_ONLY "denials_only"
/* watch stream lines: an entry ("entry", "session", "seq" when it has one),
 * entries this watcher missed ("missed": since the last notice,
 * "missed_total"), and the end of a one-session watch ("end": true) */
#define KW_F_ENTRY "entry"
#define KW_F_SEQ "seq"
#define KW_F_MISSED "missed"
#define KW_F_MISSED_TOTAL "missed_total"
#define KW_F_END "end"

/* ---- error codes (the "error" of a refusal) ---- */
/* request framing */
#define KW_ERR_MALFORMED_JSON "malformed_json"
#define KW_ERR_MALFORMED_REQUEST "malformed_request"
#define KW_ERR_MESSAGE_TOO_LARGE "message_too_large"
#define KW_ERR_UNKNOWN_OP "unknown_op"
#define KW_ERR_MISSING_FIELD "missing_field"
#define KW_ERR_INVALID_FIELD "invalid_field"
#define KW_ERR_UNKNOWN_FIELD "unknown_field"
/* connection */
#define KW_ERR_BUSY "busy"
#define KW_ERR_PERMISSION_DENIED "permission_denied"
/* the client runs inside an open session (by cgroup or task tag) */
#define KW_ERR_FORBIDDEN_FROM_SESSION "forbidden_from_session"
/* open */
#define KW_ERR_POLICY_INVALID "policy_invalid"
#define KW_ERR_HOOKS_UNAVAILABLE "hooks_unavailable"
#define KW_ERR_HOOKS_FAILED "hooks_failed"
#define KW_ERR_CGROUP_NOT_FOUND "cgroup_not_found"
#define KW_ERR_INVALID_CGROUP "invalid_cgroup"
#define KW_ERR_CGROUP_TAGGED "cgroup_tagged"
/* a non-root client that neither owns nor was granted the cgroup */
#define KW_ERR_FORBIDDEN_CGROUP "forbidden_cgroup"
#define KW_ERR_TOO_MANY_SESSIONS "too_many_sessions"
/* close */
#define KW_ERR_UNKNOWN_SESSION "unknown_session"
#define KW_ERR_SESSION_CLOSING "session_closing"
/* a non-root client closing another user's session */
#define KW_ERR_FORBIDDEN_SESSION "forbidden_session"
#define KW_ERR_RECORD_FAILED "record_failed"
/* any */
#define KW_ERR_STORAGE "storage"
#define KW_ERR_STOPPING "stopping"
#define KW_ERR_INTERNAL "internal"

/* ---- parsing a request ---- */
/* Parsing and field validation are plain functions of the line, so the
 * collector, the tests and the fuzzer share one parser. Lines are hostile
 * input: every string is bounded and checked before the collector acts. */
enum kw_request_op { KW_REQ_OPEN, KW_REQ_CLOSE, KW_REQ_STATUS, KW_REQ_LIST, KW_REQ_PING,
		       KW_REQ_WATCH };

struct kw_request {
	enum kw_request_op op;
	json_t *doc; /* owns every string below */
	/* open: required */
	const char *cgroup;
	const char *sandbox_id;   /* spiffe:// or did: */
	const char *image_digest; /* sha256:<64 hex> or sha384:<96 hex> */
	const char *policy;       /* bundle text, at most KW_POLICY_MAX_BYTES */
	size_t policy_len;
	/* open: optional (NULL when absent) */
	const char *model_provider;
	const char *model_id;
	const char *data_class;
	const char *workload[KW_WL_N]; /* kw_workload_fields, NULL when absent */
	int64_t checkpoint_interval; /* -1 when absent */
	int64_t log_segment_bytes;   /* -1 when absent; 0: one file */
	/* close; watch: optional */
	const char *session;
	bool kill; /* "kill": true: kill what is left in the cgroup first */
	bool denials_only; /* watch */
};

struct kw_request_error {
	char code[32];     /* one of the KW_ERR_* request codes */
	char message[256]; /* one line, printable ASCII */
};

/* Parses and validates one request line (without its newline). Returns 0 with
 * req filled (release with kw_request_free), or -EINVAL with err filled. */
int kw_request_parse(const char *line, size_t len, struct kw_request *req,
		     struct kw_request_error *err);
void kw_request_free(struct kw_request *req);

#endif
