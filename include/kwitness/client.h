/* SPDX-License-Identifier: Apache-2.0 */
/* libkwitness: the client side of kwitnessd's control socket, for sandbox
 * runtimes. Open a session for a cgroup (or a process's cgroup) before the
 * workload runs, close it when the workload is gone, and get back where the
 * signed TRACE record and the decision log were written, with the counts.
 *
 * Every call connects, sends one request line, reads one reply line and
 * disconnects; nothing is kept between calls, so the functions are safe to
 * call from several threads. Each returns 0 (KWITNESS_OK) or one of the
 * KWITNESS_E* codes below, and on failure fills *err (when err is not NULL)
 * with the code, kwitnessd's own error code when it refused, and a one-line
 * message. Strings handed back are owned by the result and released by its
 * _free function. Link with `pkg-config --cflags --libs kwitness`. */
#ifndef KWITNESS_CLIENT_H
#define KWITNESS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KWITNESS_API __attribute__((visibility("default")))
#else
#define KWITNESS_API
#endif

#define KWITNESS_CLIENT_VERSION 1

/* The socket used when NULL is passed: $KWITNESS_SOCKET, else this. */
#define KWITNESS_DEFAULT_SOCKET "/run/kwitness/kwitnessd.sock"

enum kwitness_status {
	KWITNESS_OK = 0,
	KWITNESS_EINVAL = 1,    /* a bad argument (the message says which) */
	KWITNESS_ESYSTEM = 2,   /* a local error: reading the policy, /proc, memory */
	KWITNESS_ECONNECT = 3,  /* kwitnessd cannot be reached on the socket */
	KWITNESS_EPROTOCOL = 4, /* kwitnessd's reply is not what the protocol says */
	KWITNESS_EREFUSED = 5,  /* kwitnessd refused: see kwitness_error.code */
};

struct kwitness_error {
	int status;        /* enum kwitness_status */
	int sys_errno;     /* the errno behind ESYSTEM / ECONNECT, else 0 */
	char code[48];     /* EREFUSED: kwitnessd's code, e.g. "cgroup_tagged" */
	char message[512]; /* one line */
};

/* What a session is opened with. Exactly one of cgroup and pid: the cgroup2
 * directory (a path under the cgroup2 mount), or a process whose cgroup2
 * cgroup is read from /proc/PID/cgroup. Exactly one of policy (the bundle's
 * bytes, policy_len of them) and policy_file (read as is). */
struct kwitness_open_params {
	const char *cgroup;
	pid_t pid;
	const char *policy;
	size_t policy_len;
	const char *policy_file;
	const char *sandbox_id;   /* spiffe://... or did:... */
	const char *image_digest; /* sha256:<64 hex> or sha384:<96 hex> */
	/* optional (NULL: kwitnessd's configured defaults) */
	const char *model_provider;
	const char *model_id;
	const char *data_class;
	/* optional: the workload, as its runtime names it (the log's open entry
	 * carries each one given; kwitness oci-hook fills them from CRI or podman
	 * annotations) */
	const char *pod_namespace, *pod_name, *pod_uid, *pod_sandbox_id;
	const char *container_name, *container_id, *container_image;
};

#define KWITNESS_SESSION_ID_MAX 128

/* Opens a session; writes its id (NUL-terminated) to session_id. When cgroup
 * was NULL, the cgroup path found for pid is written to cgroup_out if given
 * (cgroup_cap bytes). socket: NULL for the default. */
KWITNESS_API int kwitness_open(const char *socket, const struct kwitness_open_params *p,
			       char session_id[KWITNESS_SESSION_ID_MAX], char *cgroup_out,
			       size_t cgroup_cap, struct kwitness_error *err);

struct kwitness_close_result {
	char *record_path; /* the signed TRACE record kwitnessd wrote */
	char *log_path;    /* the decision log (JSON Lines) */
	char *policy_path; /* the policy bundle, byte for byte */
	char *record_json; /* the signed record itself, JSON text */
	char *reply_json;  /* kwitnessd's whole close reply, JSON text */
	uint64_t decisions, denials, dropped, unrecorded, untracked_cgroups;
	bool complete;     /* nothing dropped, every cgroup tracked */
};

/* Closes a session: kwitnessd drains it, writes the log's trailer and signs
 * the record. Release out with kwitness_close_result_free. */
KWITNESS_API int kwitness_close(const char *socket, const char *session_id,
				struct kwitness_close_result *out, struct kwitness_error *err);
KWITNESS_API void kwitness_close_result_free(struct kwitness_close_result *r);

struct kwitness_session_info {
	char *session, *sandbox_id, *cgroup;
	char *state; /* "open" or "closing" */
	char *mode;  /* enforce, advisory, silent */
	char *hooks; /* the hook classes attached, comma-separated */
	uint64_t decisions, denials, dropped;
	uint64_t ringbuf_used, ringbuf_size;
};

struct kwitness_status_info {
	size_t session_count;
	struct kwitness_session_info *sessions;
	/* status only (NULL / 0 from kwitness_list) */
	char *kernel, *state_dir;
	uint64_t ringbuf_size;
	size_t hooks_count;
	char **hooks_available; /* the hook classes this kwitnessd can enforce */
	char *reply_json;       /* kwitnessd's whole reply, JSON text */
};

/* kwitnessd's sessions, hooks and settings. */
KWITNESS_API int kwitness_status(const char *socket, struct kwitness_status_info *out,
				 struct kwitness_error *err);
/* Only the sessions. */
KWITNESS_API int kwitness_list(const char *socket, struct kwitness_status_info *out,
			       struct kwitness_error *err);
KWITNESS_API void kwitness_status_free(struct kwitness_status_info *s);

/* The cgroup2 directory of a process: <cgroup2 mount><path in /proc/PID/cgroup>. */
KWITNESS_API int kwitness_pid_cgroup(pid_t pid, char *out, size_t cap,
				     struct kwitness_error *err);

/* A sandbox: what `kwitness run` does, for a runtime's own workloads. Open
 * makes a cgroup under parent (NULL: <cgroup2 mount>/kwitness, found in
 * /proc/self/mountinfo, so hybrid hosts work) and opens a session for it
 * with p (whose cgroup and pid must be unset): the cgroup is tagged before
 * anything runs in it. Spawn starts argv (PATH searched; envp NULL: this
 * environment) in the cgroup: the child joins it between fork and exec, as
 * the caller's user; the pid is the caller's to wait for. Close freezes the
 * cgroup, closes the session with kwitnessd killing what is left (counted in
 * the trailer; reply_json has "killed"), removes the cgroup and frees s,
 * whatever the outcome. */
struct kwitness_sandbox;
KWITNESS_API int kwitness_sandbox_open(const char *socket, const struct kwitness_open_params *p,
				       const char *parent, struct kwitness_sandbox **out,
				       struct kwitness_error *err);
KWITNESS_API int kwitness_sandbox_spawn(struct kwitness_sandbox *s, char *const argv[],
					char *const envp[], pid_t *pid,
					struct kwitness_error *err);
KWITNESS_API int kwitness_sandbox_close(struct kwitness_sandbox *s,
					struct kwitness_close_result *out,
					struct kwitness_error *err);
/* The sandbox's cgroup directory and session id. */
KWITNESS_API const char *kwitness_sandbox_cgroup(const struct kwitness_sandbox *s);
KWITNESS_API const char *kwitness_sandbox_session(const struct kwitness_sandbox *s);

/* One request line (a JSON object) in, kwitnessd's reply line out (malloc'd,
 * release with free). A reply with "ok":false is returned as is, with 0. */
KWITNESS_API int kwitness_call(const char *socket, const char *request_json, char **reply_json,
			       struct kwitness_error *err);

/* The socket NULL stands for. */
KWITNESS_API const char *kwitness_socket_path(const char *socket);
/* A short name for a status code. */
KWITNESS_API const char *kwitness_strstatus(int status);

#ifdef __cplusplus
}
#endif

#endif
