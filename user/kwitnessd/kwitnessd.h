/* SPDX-License-Identifier: Apache-2.0 */
/* kwitnessd: the privileged collector. Types shared by its files, in data-flow
 * order: configuration, host facts for the open entry, the control socket's
 * clients, and sessions (each with a reorder window and a decision log). */
#ifndef KWITNESSD_H
#define KWITNESSD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "kwitness/buf.h"
#include "kwitness/event.h"
#include "kwitness/record.h"
#include "logwriter.h"
#include "reorder.h"

#define KWD_DEFAULT_STATE_DIR "/var/lib/kwitness"
#define KWD_DEFAULT_SOCKET "/run/kwitness/kwitnessd.sock"
#define KWD_DEFAULT_KEY "/etc/kwitness/signing-key.pem"
#define KWD_DEFAULT_CONFIG "/etc/kwitness/kwitnessd.conf"
#define KWD_DEFAULT_PIN_DIR "/sys/fs/bpf/kwitness"
#define KWD_DEFAULT_RINGBUF (256 * 1024)
/* A control message (one line) larger than this closes the connection. */
#define KWD_MAX_MESSAGE (1024 * 1024)
/* Close waits at most this long for decisions still in flight. */
#define KWD_DRAIN_TIMEOUT_MS 2000
/* A shortfall matching the kernel's dropped counter holds this long at close. */
/* A sequence gap this old, while the kernel counts drops, is a drop. */
#define KWD_GAP_SKIP_MS 10
/* Batched wakeups: the programs wake the loop only once a ring buffer holds
 * 1/KWD_WAKEUP_FRACTION of its size. For the rest the loop consumes the ring
 * buffers of sessions that had events in the last KWD_HOT_MS every
 * KWD_POLL_MS, and every open session's on the timer tick (which is also
 * when a quiet session's log lines are flushed). Idle sessions cost no
 * wakeups. Ring buffers below KWD_WAKEUP_MIN_RINGBUF keep a wakeup per event:
 * they hold too few events to wait for a batch. */
#define KWD_WAKEUP_FRACTION 8
#define KWD_WAKEUP_MIN_RINGBUF (64 * 1024)
#define KWD_POLL_MS 2
#define KWD_HOT_MS 50
/* Control connections served at once; more get one "busy" line. */
#define KWD_MAX_CLIENTS 256
/* Strings taken from a client (ids, model names) are bounded. */
#define KWD_MAX_FIELD 1024

/* kwitnessd.conf "grant": a non-root uid or group may open sessions on a
 * cgroup subtree it does not own. */
struct kwd_grant {
	bool is_group;
	uint32_t id;      /* uid or gid */
	char *path;       /* absolute, no trailing slash */
};
#define KWD_MAX_GRANTS 64

struct kwd_config {
	const char *state_dir;
	const char *socket_path;
	const char *key_path;      /* NULL: TRACE_PRIVATE_KEY_PEM */
	const char *config_path;
	const char *pin_dir;       /* NULL: do not pin */
	size_t ringbuf_size;
	bool have_group;
	gid_t group;
	struct kwd_grant grants[KWD_MAX_GRANTS];
	unsigned n_grants;
	char *verifier;
	char *model_provider;
	char *model_id;
	char *data_class;
	bool foreground;
	int verbose;
	/* set by config.c so main() knows what came from the command line */
	bool ringbuf_from_cli;
};

/* config.c */
int kwd_parse_ringbuf_size(const char *v, size_t *out);
int kwd_config_load(struct kwd_config *c, const char *path, bool must_exist, char *err,
		    size_t errlen);
void kwd_config_free(struct kwd_config *c);

/* hostinfo.c: facts about the witness, read once at start. */
struct kwd_hostinfo {
	char hostname[256];
	char machine_id[64];
	char boot_id[64];
	char kernel[128];
	char cgroup_mode[16]; /* "unified" (cgroup2 only) or "hybrid" */
};
void kwd_hostinfo_read(struct kwd_hostinfo *h);

/* What the epoll loop is watching. */
enum kwd_watch_kind { KWD_W_LISTEN, KWD_W_CLIENT, KWD_W_RING, KWD_W_SIGNAL, KWD_W_TIMER,
		      KWD_W_WORKER };
struct kwd_watch {
	enum kwd_watch_kind kind;
	void *ptr;
};

struct kwd;

/* Who is on the other end of a control connection (SO_PEERCRED at accept). */
struct kwd_peer {
	uid_t uid;
	gid_t gid;
	pid_t pid;
};

struct kwd_client {
	struct kwd_watch w;
	struct kwd *d;
	int fd;
	uint64_t id;
	struct kwd_peer peer;
	struct kw_buf in;
	struct kw_buf out;
	size_t out_off;
	bool close_after_write;
	bool dead;
	unsigned awaiting;  /* close replies still to come */
	struct kwd_client *next;
};

enum kwd_session_state { KWD_S_OPEN, KWD_S_CLOSING };

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
	char *log_path;
	char *policy_path;
	char *record_path;
	struct ring_buffer *rb;
	const volatile unsigned long *ring_cons; /* mapped positions, for status */
	const volatile unsigned long *ring_prod;
	struct kwd_reorder ro;
	struct kwd_log log;
	uint64_t decisions;   /* decision entries written */
	uint64_t denials;     /* deny entries written */
	uint64_t bad_events;  /* records the consumer could not decode */
	uint64_t dropped;     /* at close: decisions not in the log */
	uint64_t unrecorded;  /* at close: the kernel's count */
	uint64_t skipped;     /* sequence numbers given up as dropped while open */
	int64_t gap_since_ms; /* when the current gap was first seen (0: none) */
	int64_t hot_until_ms; /* had events lately: consumed every KWD_POLL_MS */
	int64_t close_deadline_ms;
	uint64_t close_client;
	int64_t opened_us;
};

/* Work for the I/O thread, in order: log chunks, then a session's finish. */
enum kwd_job_kind { KWD_JOB_WRITE, KWD_JOB_FINISH };
struct kwd_job {
	enum kwd_job_kind kind;
	int fd;
	char *data;              /* owned */
	size_t len;
	struct kwd_session *s;   /* FINISH: handed over until the job comes back */
	char hash[KW_DIGEST_STR_MAX];
	uint64_t count;
	int err;                 /* FINISH: an error the main thread already saw */
	json_t *reply;           /* FINISH: set by the worker */
	struct kwd_job *next;
};

struct kwd_worker;

struct kwd {
	struct kwd_config cfg;
	struct kwd_worker *worker;
	struct kwd_watch worker_w;
	struct kwd_hostinfo host;
	struct kw_hooks *hooks;
	struct kw_key *key;
	int epfd;
	struct kwd_watch listen_w, signal_w, timer_w;
	int listen_fd;
	int signal_fd;
	int timer_fd;
	struct kwd_client *clients;
	unsigned n_clients;
	bool accept_paused;
	uint64_t next_client_id;
	struct kwd_session *slots[KW_MAX_SESSIONS];
	unsigned n_sessions;
	unsigned n_closing;
	int64_t boot_to_realtime_ns;
	size_t wakeup_bytes;   /* kw_hooks_opts.wakeup_bytes; 0: wakeup per event */
	int64_t next_poll_ms;  /* when hot sessions are consumed next */
	int64_t poll_until_ms; /* the latest hot_until_ms of any session */
	bool stopping;
	char *programs; /* "name:tag,..." */
};

/* worker.c: one thread for blocking file work (log writes, fsync, records),
 * so the loop keeps consuming ring buffers while a disk is slow. */
int kwd_worker_start(struct kwd *d, char *err, size_t errlen);
/* Queues a job (takes it). */
void kwd_worker_submit(struct kwd *d, struct kwd_job *job);
/* kwd_log_submit_fn for session logs. */
int kwd_worker_write(void *ctx, int fd, char *data, size_t len);
/* Main thread: hands back finished jobs (replies go out). */
void kwd_worker_collect(struct kwd *d);
/* Runs every queued job, stops the thread, collects. */
void kwd_worker_stop(struct kwd *d);

/* recover.c: at start, seals the logs of sessions no collector closed. */
void kwd_seal_unclosed(struct kwd *d);

/* main.c */
void kwd_log(struct kwd *d, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int64_t kwd_now_ms(void);
int64_t kwd_now_us(void);
void kwd_refresh_clock(struct kwd *d);

/* control.c: the socket, clients, requests. */
int kwd_control_listen(struct kwd *d, char *err, size_t errlen);
void kwd_control_accept(struct kwd *d);
/* Stops (true) or resumes accepting; the timer resumes it. */
void kwd_control_pause(struct kwd *d, bool pause);
void kwd_client_event(struct kwd_client *c, uint32_t events);
/* Queues one reply line (takes the reference) to the client with that id, if
 * it is still connected. */
void kwd_reply_to(struct kwd *d, uint64_t client_id, json_t *reply);
json_t *kwd_error(const char *code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kwd_control_shutdown(struct kwd *d);
void kwd_clients_reap(struct kwd *d);

/* session.c */
/* Returns a reply for open/close/status/list; NULL when the reply comes later
 * (close waits for the drain). */
json_t *kwd_session_open(struct kwd *d, json_t *req, const struct kwd_peer *peer);
json_t *kwd_session_close_req(struct kwd *d, json_t *req, uint64_t client_id,
			      const struct kwd_peer *peer);
json_t *kwd_status(struct kwd *d, bool sessions_only, const struct kwd_peer *peer);
/* The session process pid belongs to: by its tag (it may have left the
 * session's cgroups), else by its cgroup (/proc/PID/cgroup); NULL for none. */
struct kwd_session *kwd_session_of_pid(struct kwd *d, pid_t pid);
/* pid's primary or supplementary groups include gid (/proc/PID/status). */
bool kwd_pid_in_group(pid_t pid, gid_t gid, gid_t primary);
void kwd_session_ring_ready(struct kwd_session *s);
/* After every epoll batch: finishes drained closes. */
void kwd_sessions_after_batch(struct kwd *d);
/* On every timer tick: that, old gaps, flushes of quiet sessions' logs. */
void kwd_sessions_tick(struct kwd *d);
/* Every KWD_POLL_MS under batched wakeups: consumes the ring buffer of each
 * open session that had events in the last KWD_HOT_MS and holds something. */
void kwd_sessions_poll(struct kwd *d);
/* kw_hooks_opts.wakeup_bytes for a ring buffer size (0: wake per event). */
static inline size_t kwd_wakeup_bytes(size_t ringbuf_size)
{
	return ringbuf_size >= KWD_WAKEUP_MIN_RINGBUF ? ringbuf_size / KWD_WAKEUP_FRACTION : 0;
}
/* Closes every session now (shutdown): untag, bounded drain, records. */
void kwd_sessions_close_all(struct kwd *d);
/* Worker side of close, and the main thread's end of it. */
json_t *kwd_session_finish(struct kwd *d, struct kwd_session *s, const char *hash, uint64_t count);
void kwd_session_done(struct kwd *d, struct kwd_session *s, json_t *reply);

#endif
