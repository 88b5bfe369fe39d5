/* SPDX-License-Identifier: Apache-2.0 */
/* A session, from open to record, and its phases: session_open.c,
 * session.c (consuming its ring buffer), session_close.c, session_status.c. */
#ifndef KWITNESSD_SESSION_H
#define KWITNESSD_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "kwitness/abi/event.h"
#include "client/protocol.h"
#include "trace/record.h"
#include "collector/logwriter.h"
#include "collector/reorder.h"
#include "attest.h"
#include "authz.h"
#include "commit.h"
#include "kwd.h"
#include "ring.h"
#include "worker.h"

/* Close waits at most this long for decisions still in flight. */
#define KWD_DRAIN_TIMEOUT_MS 2000
/* A sequence gap this old, while the kernel counts drops, is a drop. */
#define KWD_GAP_SKIP_MS 10
/* How often an open session's cgroup is looked at: removed for
 * KWD_CGROUP_GONE_GRACE_MS, it closes (the grace lets a runtime's poststop
 * close it first: runc removes the cgroup, then runs poststop). */
#define KWD_CGROUP_CHECK_MS 1000
#define KWD_CGROUP_GONE_GRACE_MS 10000
/* Close with kill: how long the cgroup may take to empty. */
#define KWD_KILL_TIMEOUT_MS 2000

/* CLOSING: untagged, draining. FINISHING: trailer handed to the I/O thread;
 * the kernel slot (counters, ring buffer) is kept until the record is
 * written, so a collector that dies meanwhile leaves a close the next one
 * can finish. */
enum kwd_session_state { KWD_S_OPEN, KWD_S_CLOSING, KWD_S_FINISHING };

struct kw_dns_steer;
struct kwd_dns;

struct kwd_session {
	struct kwd_watch w;
	struct kwd *d;
	char id[33];
	uint32_t slot;
	enum kwd_session_state state;
	char *sandbox_id;
	char *image_digest;
	char *cgroup_path;
	char *cgroup_rel;     /* cgroup_path below the cgroup2 mount ("/a/b") */
	uid_t owner;          /* the client uid that opened it */
	uint64_t cgroup_id;
	int cgroup_fd;
	struct kw_policy *pol;
	char *bundle;
	size_t bundle_len;
	char bundle_hash[KW_DIGEST_STR_MAX];
	char *model_provider;
	char *model_id;
	char *data_class;
	char *workload[KW_WL_N]; /* as the open request named it, NULL when absent */
	char *log_path;
	char *policy_path;
	char *record_path;
	int ring_fd;          /* owned by the hooks handle */
	struct kwd_ring ring;
	uint64_t emitted_below; /* every seq below it is in the log buffer or given up */
	uint64_t resume_floor;  /* seqs below it are already in the log (resumed) */
	uint64_t duplicates;    /* events read again after a resume, already logged */
	struct kw_reorder ro;
	struct kw_logwriter log;
	struct kwd_job seal;  /* the close's last job: no allocation at close */
	int policy_err;       /* storing the bundle failed (set by the I/O thread) */
	uint64_t decisions;   /* decision entries written */
	uint64_t denials;     /* deny entries written */
	uint64_t bad_events;  /* records the consumer could not decode or that name another session */
	uint64_t dropped;     /* at close: decisions not in the log */
	uint64_t unrecorded;  /* at close: the kernel's count */
	uint64_t untracked;   /* at close: descendants the kernel could not tag */
	uint64_t skipped;     /* sequence numbers given up as dropped while open */
	uint64_t skipped_marked; /* of those, on the kernel's kw_lost mark */
	int64_t gap_since_ms; /* when the current gap was first seen (0: none) */
	int64_t hot_until_ms; /* had events lately: consumed every KWD_POLL_MS */
	int64_t cgroup_check_ms; /* when to look next whether its cgroup was removed */
	int64_t cgroup_gone_ms;  /* when it was first found removed (0: not) */
	int64_t close_deadline_ms;
	uint64_t close_client;
	int64_t opened_us;
	struct kwd_runtime runtime; /* the binding at close */
	struct kwd_session_commit commit; /* the TPM counter and extends (commit.c) */
	struct kw_record_runtime record_runtime; /* points into runtime */
	json_t *record_evidence; /* record_profile trace-v0.3-draft: carried inline */
	uint32_t generation;  /* kw_sessions[slot].generation at open */
	struct kwd_dns *dns;  /* the session's resolver (egress by name), or NULL */
	struct kwd_lineage *lineage; /* process lineage (lineage.c), made on first use */
	bool close_kill;      /* close: kill what is left in the cgroup first */
	int64_t killed;       /* close: processes killed (-1: not asked) */
	int64_t still_running; /* close: processes left running untagged */
	int64_t kill_failed;  /* close with kill: processes the kill did not end */
	int64_t checkpoint_interval; /* seconds, the open's option; -1: the config's */
	uint64_t segment_bytes; /* the log's segment bound (0: one file), journaled */
	struct kwd_ckpt *ckpt; /* checkpoint.c; NULL: none */
};

/* session.c */
/* Returns a reply for open/close/status/list; NULL when the reply comes later
 * (close waits for the drain). */
json_t *kwd_session_open(struct kwd *d, const struct kw_request *req,
			 const struct kwd_peer *peer);
json_t *kwd_session_close_req(struct kwd *d, const struct kw_request *req,
			      uint64_t client_id, const struct kwd_peer *peer);
json_t *kwd_status(struct kwd *d, bool sessions_only, const struct kwd_peer *peer);
/* The session process pid belongs to: by its tag (it may have left the
 * session's cgroups), else by its cgroup (/proc/PID/cgroup); NULL for none. */
struct kwd_session *kwd_session_of_pid(struct kwd *d, pid_t pid);
/* Length of the cgroup2 mount path that real (a path on cgroup2) lies under:
 * the longest prefix whose parent is no longer cgroup2. */
size_t kwd_cgroup2_mount_len(const char *real);
void kwd_session_ring_ready(struct kwd_session *s);
/* After every epoll batch: finishes drained closes. */
void kwd_sessions_after_batch(struct kwd *d);
/* On every timer tick, after kwd_sessions_after_batch: old gaps, flushes of
 * quiet sessions' logs, the resolvers' timeouts. */
void kwd_sessions_tick(struct kwd *d);
/* Every KWD_POLL_MS under batched wakeups: consumes the ring buffer of each
 * open session that had events in the last KWD_HOT_MS and holds something. */
void kwd_sessions_poll(struct kwd *d);
/* Closes every session now (shutdown): untag, bounded drain, records.
 * closing_only: only finish the closes already asked for (pinned sessions
 * stay enforced for the next collector). */
void kwd_sessions_close_all(struct kwd *d, bool closing_only);
/* Shutdown without close: reads what waits, queues it for the log. */
void kwd_sessions_flush_all(struct kwd *d);
/* Frees the in-memory sessions after the worker stopped (pins stay). */
void kwd_sessions_release(struct kwd *d);
/* Between the phases (session.c, session_open.c, session_close.c,
 * session_status.c). */
/* Reads what the session's ring buffer holds into the reorder window. */
void kwd_session_read_ring(struct kwd_session *s);
/* The names of the policy classes in mask, comma-separated, into out. */
void kwd_class_names(uint32_t mask, struct kw_buf *out);

/* Starts the session's resolver (egress by name) into s->dns, handing it
 * the session's slot, policy and log: 0 or -errno with err. */
int kwd_session_dns_start(struct kwd_session *s, struct kw_dns_steer *steer, char *err,
			  size_t errlen);

/* session.c, for resume.c: the parts of a session open and resume share. */
/* An entry the collector wrote itself (h->kind KWD_EV_COLLECTOR), numbered
 * from the session's counter, into the reorder window: 0 or -errno. */
int kwd_session_push_collector(struct kwd_session *s, const struct kw_event_hdr *h,
			       const char *line, size_t len);
struct kwd_session *kwd_session_new(struct kwd *d);
void kwd_session_free(struct kwd_session *s);
int kwd_session_attach_ring(struct kwd_session *s, int ringbuf_fd, size_t size, char *err,
			    size_t errlen);
/* A resumed session whose close a crash cut short: close it again now. */
void kwd_session_close_by_collector(struct kwd_session *s, bool kill_left);
void kwd_session_close_if_cgroup_gone(struct kwd_session *s, int64_t now_ms);
/* Main thread: a session's SEAL job came back from the worker. Frees the
 * session and returns the close reply, with *client the id of the client that
 * asked for the close (0: nobody waits for it). */
json_t *kwd_session_sealed(struct kwd *d, struct kwd_job *job, uint64_t *client);

#endif
