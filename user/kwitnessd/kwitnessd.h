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
#include "kwitness/abi/event.h"
#include "kwitness/protocol.h"
#include "kwitness/record.h"
#include "collector/logwriter.h"
#include "collector/reorder.h"
#include "collector/seal.h"
#include "ring.h"

#define KWD_DEFAULT_CONFIG "/etc/kwitness/kwitnessd.conf"
#define KWD_DEFAULT_PIN_DIR "/sys/fs/bpf/kwitness"
#define KWD_DEFAULT_RINGBUF (256 * 1024)
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
/* Written log chunk buffers the I/O thread keeps for the next chunks (a
 * busy log would otherwise grow each one from nothing: copies, page faults
 * and the unmapping's TLB flushes), and the largest it keeps. At most
 * KWD_SPARE_BUFS * KWD_SPARE_BUF_MAX bytes held (8 MiB). Two per busy
 * session for eight: with four, eight busy sessions spent 15% of the loop
 * zeroing new pages (bench_collector kmulti). */
#define KWD_SPARE_BUFS 16
#define KWD_SPARE_BUF_MAX (512 * 1024)
/* A full disk: a log chunk is tried again this often. */
#define KWD_DISK_RETRY_MS 200
/* Close with kill: how long the cgroup may take to empty. */
#define KWD_KILL_TIMEOUT_MS 2000
/* Control clients are bounded (docs/security.md, "Bounds"): connections
 * served at once (more get one "busy" line); replies queued for one client
 * (a client that does not read them is disconnected once this much waits
 * and another reply comes); the bytes all
 * clients' buffers hold together (the client that crosses it is
 * disconnected); requests answered per client and for all clients per loop
 * turn, and bytes read per wakeup, so no client holds the loop; buffers that grew past
 * KWD_CLIENT_KEEP are freed once empty. */
#define KWD_MAX_CLIENTS 256
#define KWD_CLIENT_OUT_MAX ((size_t)256 * 1024)
#define KWD_CLIENTS_MEM_MAX ((size_t)32 * 1024 * 1024)
#define KWD_REQUESTS_PER_CLIENT 8
#define KWD_REQUESTS_PER_TURN 128
#define KWD_RECV_CHUNK 16384
#define KWD_CLIENT_KEEP ((size_t)64 * 1024)

#define KWD_LOG_WITNESSES_MAX 8

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
	bool close_on_exit;        /* --close-sessions-on-exit */
	int verbose;
	char *tpm;            /* TCTI; NULL: records are software-only */
	char *tpm_pcrs;       /* NULL: KW_TPM_DEFAULT_PCRS */
	char *tpm_enrollment; /* enrollment record carried in the evidence */
	/* Level 2 (transparency.c): the log every record goes to, its key, the
	 * witnesses that cosign, the tlog-policy the checkpoint must meet. */
	char *log_dir;
	char *log_key;
	char *log_policy;
	char *log_witness[KWD_LOG_WITNESSES_MAX];
	size_t n_log_witness;
	char *estate;         /* estate database URL: records are spooled for
			       * `kwitness estate push`; NULL: nothing is spooled */
	/* set by config.c so main() knows what came from the command line */
	bool ringbuf_from_cli;
};

/* spool.c: written records spooled for `kwitness estate push` (the
 * collector itself ships nothing). */
struct kwd;
/* Makes the spool folder and logs what ships it; 0 without an estate setting. */
int kwd_spool_start(struct kwd *d, char *err, size_t errlen);
/* Spools a written record; nothing without the setting. */
void kwd_spool_enqueue(struct kwd *d, const char *session);
/* {"backlog":N,"error":"..."}, or NULL without the setting. */
json_t *kwd_spool_status(struct kwd *d);

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

/* attest.c: the TPM binding (--tpm). A session keeps a copy of the binding
 * its record is signed under. */
struct kwd_runtime {
	bool bound;
	char evidence[KW_DIGEST_STR_MAX];
	char measurement[KW_DIGEST_STR_MAX];
	char nonce[KW_THUMBPRINT_MAX];
	char firmware_version[48];
};
struct kwd;
struct kwd_attest;
/* Opens the TPM, binds the signing key; 0 without --tpm. */
int kwd_attest_start(struct kwd *d, char *err, size_t errlen);
void kwd_attest_stop(struct kwd *d);
/* The binding now, quoting again when the key or the PCRs changed; rt is
 * unbound (software-only) without --tpm or when no binding can be verified. */
int kwd_attest_current(struct kwd *d, struct kwd_runtime *rt);

/* What the epoll loop is watching. */
enum kwd_watch_kind { KWD_W_LISTEN, KWD_W_CLIENT, KWD_W_RING, KWD_W_SIGNAL, KWD_W_TIMER,
		      KWD_W_WORKER, KWD_W_DNS };
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
	bool eof;           /* the client shut down its side */
	bool backlog;       /* complete requests wait for the next loop turn */
	size_t mem;         /* in.cap + out.cap, as counted in kwd.client_mem */
	unsigned awaiting;  /* close replies still to come */
	struct kwd_client *next;
};

/* CLOSING: untagged, draining. FINISHING: trailer handed to the I/O thread;
 * the kernel slot (counters, ring buffer) is kept until the record is
 * written, so a collector that dies meanwhile leaves a close the next one
 * can finish. */
enum kwd_session_state { KWD_S_OPEN, KWD_S_CLOSING, KWD_S_FINISHING };

/* Work for the I/O thread, in order: a session's bundle file (at open), log
 * chunks, then the session's seal. */
#define KWD_SEAL_NOT_RUN (-1) /* the log could not be finished: no record */
enum kwd_job_kind { KWD_JOB_WRITE, KWD_JOB_FILE, KWD_JOB_SEAL };
struct kwd_job {
	enum kwd_job_kind kind;
	int fd;                  /* closed (after fsync) by a SEAL job */
	char *data;              /* owned */
	size_t len;
	size_t cap;              /* WRITE: data's allocation, for the spares */
	/* FILE: data written to path atomically (synced), or without data
	 * path synced; a failure's -errno goes to *result, which the job's
	 * owner reads once a later SEAL job came back */
	char *path;              /* owned */
	int *result;
	/* WRITE, SEAL: once data is in the file, its lines are hashed into the
	 * session's transcript (the loop no longer touches it) and the ring
	 * buffer's consumer position moves to release (NULL: nothing) */
	struct kw_transcript *tr;
	unsigned long *cons;
	uint64_t release;
	/* SEAL: the record to seal once the log is on disk. The strings belong
	 * to the session, which is handed over until the job comes back. */
	void *owner;
	struct kw_record_input in;
	const struct kw_key *key;
	const char *record_path;
	const struct kw_publish *publish; /* NULL: no transparency log */
	int err;                 /* an error seen before the worker ran (or by it) */
	/* SEAL, set by the worker */
	char hash[KW_DIGEST_STR_MAX]; /* the transcript, finished after the last lines */
	uint64_t count;
	json_t *record;          /* the signed record (owned) */
	int stage;               /* enum kw_seal_stage, or KWD_SEAL_NOT_RUN */
	char why[512];
	struct kwd_job *next;
};

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
	int64_t close_deadline_ms;
	uint64_t close_client;
	int64_t opened_us;
	struct kwd_runtime runtime; /* the binding at close */
	struct kw_record_runtime record_runtime; /* points into runtime */
	uint32_t generation;  /* kw_sessions[slot].generation at open */
	struct kwd_dns *dns;  /* the session's resolver (egress by name), or NULL */
	bool close_kill;      /* close: kill what is left in the cgroup first */
	int64_t killed;       /* close: processes killed (-1: not asked) */
	int64_t still_running; /* close: processes left running untagged */
};

struct kwd_worker;
struct kwd_transparency;
struct kw_publish;

struct kwd {
	struct kwd_config cfg;
	struct kwd_worker *worker;
	struct kwd_watch worker_w;
	struct kwd_hostinfo host;
	struct kw_hooks *hooks;
	struct kw_key *key;
	struct kwd_attest *attest; /* NULL without --tpm */
	struct kwd_transparency *tlog; /* NULL without log = DIR */
	const struct kw_publish *publish; /* into tlog */
	int epfd;
	struct kwd_watch listen_w, signal_w, timer_w;
	int listen_fd;
	int signal_fd;
	int timer_fd;
	struct kwd_client *clients;
	unsigned n_clients;
	unsigned n_backlog;    /* clients with requests waiting (loop does not sleep) */
	unsigned turn_budget;  /* requests still to answer in this loop turn */
	uint64_t rr_last;      /* the client served last (round robin) */
	size_t client_mem;     /* bytes held by every client's buffers */
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

/* transparency.c: opens the log, its key, the witnesses and the policy of
 * `log = DIR` (d->publish stays NULL without it); stop releases them. */
int kwd_transparency_start(struct kwd *d, char *err, size_t errlen);
void kwd_transparency_stop(struct kwd *d);

/* worker.c: one thread for blocking file work (log writes, fsync, records),
 * so the loop keeps consuming ring buffers while a disk is slow. */
int kwd_worker_start(struct kwd *d, char *err, size_t errlen);
/* Queues a job (takes it; a SEAL job comes back through kwd_worker_done). */
void kwd_worker_submit(struct kwd *d, struct kwd_job *job);
/* Queues a log chunk (data: len bytes of whole lines in a buffer of cap,
 * which the worker keeps as a spare once written); once written, the lines
 * are hashed into *tr and *cons moves to release (cons may be NULL). */
int kwd_worker_write(struct kwd *d, int fd, char *data, size_t len, size_t cap,
		     struct kw_transcript *tr, unsigned long *cons, uint64_t release);
/* Main thread: a written chunk's buffer into *out (len 0), 1; or 0 (none
 * spare: *out untouched). */
int kwd_worker_spare(struct kwd *d, struct kw_buf *out);
/* Main thread: the next SEAL job the worker has finished, oldest first, or
 * NULL. The loop drains these when the worker's eventfd is readable. */
struct kwd_job *kwd_worker_done(struct kwd *d);
/* Runs every queued job and stops the thread; finished jobs stay for
 * kwd_worker_done. */
void kwd_worker_stop(struct kwd *d);
/* After kwd_worker_stop and the last kwd_worker_done. */
void kwd_worker_free(struct kwd *d);

/* harden.c: no core dumps or same-uid ptrace, the key in locked memory and
 * out of the environment, folders only root can change. */
int kwd_harden_process(char *err, size_t errlen);
/* Bytes of the locked secure heap in use (the key, once loaded). */
size_t kwd_key_locked_bytes(void);
/* Wipes TRACE_PRIVATE_KEY_PEM, its bytes included, from the environment. */
void kwd_wipe_env_key(void);
/* 0 when path is a folder owned by root (or this user) that neither group nor
 * others can write, under folders that others cannot rename in (sticky
 * folders are fine); else -errno with a one-line err naming what is wrong. */
int kwd_check_dir(const char *what, const char *path, char *err, size_t errlen);

/* recover.c: at start, seals the logs of sessions no collector closed and
 * no collector can resume; seal_one with a reason for one of them. */
void kwd_seal_unclosed(struct kwd *d);
int kwd_seal_one(struct kwd *d, const char *id, const char *reason, char *why, size_t whylen);

/* journal.c: <state>/sessions/<id>.json, what a restarted collector needs to
 * find a pinned session again (slot, generation) and who may act on it
 * (owner). Written atomically. */
/* closing: 0 open, 1 close asked, 2 close with kill asked. */
int kwd_journal_write(const struct kwd_session *s, int closing);
void kwd_journal_remove(struct kwd *d, const char *id);

/* resume.c: at start, adopts every pinned session (journal + pins + log),
 * seals what cannot be resumed, ends pinned slots nobody claims. */
void kwd_resume_sessions(struct kwd *d);

/* cgroup_kill.c: freezes the cgroup tree, kills every process in it and waits
 * (bounded) for it to empty. Returns the processes found, or -errno. */
int kwd_cgroup_kill(int cgroup_fd, int timeout_ms);
/* Processes in the cgroup tree. */
int kwd_cgroup_count(int cgroup_fd);

/* util.c: the leaf every other file may call. */
void kwd_log(struct kwd *d, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* kwd_log goes to syslog from now on (a daemon without a terminal). */
void kwd_log_to_syslog(void);
int64_t kwd_now_ms(void);
int64_t kwd_now_us(void);
void kwd_refresh_clock(struct kwd *d);
/* An {"ok":false,"error":code,"message":...} reply (new reference). */
json_t *kwd_error(const char *code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* control.c: the socket, clients, requests. */
int kwd_control_listen(struct kwd *d, char *err, size_t errlen);
void kwd_control_accept(struct kwd *d);
/* Stops (true) or resumes accepting; the timer resumes it. */
void kwd_control_pause(struct kwd *d, bool pause);
void kwd_client_event(struct kwd_client *c, uint32_t events);
/* Serves the next requests of backlogged clients (once per loop turn). */
void kwd_clients_backlog(struct kwd *d);
/* Queues one reply line (takes the reference) to the client with that id, if
 * it is still connected. */
void kwd_reply_to(struct kwd *d, uint64_t client_id, json_t *reply);
void kwd_control_shutdown(struct kwd *d);
void kwd_clients_reap(struct kwd *d);

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
/* Closes every session now (shutdown): untag, bounded drain, records.
 * closing_only: only finish the closes already asked for (pinned sessions
 * stay enforced for the next collector). */
void kwd_sessions_close_all(struct kwd *d, bool closing_only);
/* Shutdown without close: reads what waits, queues it for the log. */
void kwd_sessions_flush_all(struct kwd *d);
/* Frees the in-memory sessions after the worker stopped (pins stay). */
void kwd_sessions_release(struct kwd *d);
/* An entry the collector writes itself (dns.query) under a sequence number
 * it took from the session's kernel counter: it goes through the reorder
 * window like a kernel record. h->kind is KWD_EV_COLLECTOR. */
#define KWD_EV_COLLECTOR 0x8000
int kwd_session_push_collector(struct kwd_session *s, const struct kw_event_hdr *h,
			       const char *line, size_t len);

/* dns_proxy.c: the per-session resolver of a policy that names hosts.
 * start opens its loopback sockets and fills steer with their ports (for
 * kw_hooks_dns_steer); stop closes them. */
struct kwd_dns;
struct kw_dns_steer;
int kwd_dns_start(struct kwd_session *s, struct kw_dns_steer *steer, char *err, size_t errlen);
void kwd_dns_stop(struct kwd_session *s);
/* stop, then frees it (the names "via" gives go too). */
void kwd_dns_free(struct kwd_session *s);
void kwd_dns_ready(struct kwd_watch *w);
/* Upstream timeouts, idle TCP clients, expired addresses. */
void kwd_dns_tick(struct kwd_session *s, int64_t now_ms);
/* The name asked in the dns.query numbered seq, if still known. */
const char *kwd_dns_via_name(struct kwd_session *s, uint64_t seq);
/* {"queries","refused","servfail","malformed","open_addresses","not_opened"}, or NULL. */
json_t *kwd_dns_status(struct kwd_session *s);

/* session.c, for resume.c: the parts of a session open and resume share. */
struct kwd_session *kwd_session_new(struct kwd *d);
void kwd_session_free(struct kwd_session *s);
int kwd_session_attach_ring(struct kwd_session *s, int ringbuf_fd, size_t size, char *err,
			    size_t errlen);
/* A resumed session whose close a crash cut short: close it again now. */
void kwd_session_close_resumed(struct kwd_session *s, bool kill_left);
/* Main thread: a session's SEAL job came back from the worker. Frees the
 * session and returns the close reply, with *client the id of the client that
 * asked for the close (0: nobody waits for it). */
json_t *kwd_session_sealed(struct kwd *d, struct kwd_job *job, uint64_t *client);

#endif
