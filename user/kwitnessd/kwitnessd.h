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
#include "collector/worker.h"

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
/* Control connections served at once; more get one "busy" line. */
#define KWD_MAX_CLIENTS 256

struct kwd_config {
	const char *state_dir;
	const char *socket_path;
	const char *key_path;      /* NULL: TRACE_PRIVATE_KEY_PEM */
	const char *config_path;
	const char *pin_dir;       /* NULL: do not pin */
	size_t ringbuf_size;
	bool have_group;
	gid_t group;
	char *verifier;
	char *model_provider;
	char *model_id;
	char *data_class;
	bool foreground;
	int verbose;
	char *tpm;            /* TCTI; NULL: records are software-only */
	char *tpm_pcrs;       /* NULL: KW_TPM_DEFAULT_PCRS */
	char *tpm_enrollment; /* enrollment record carried in the evidence */
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
		      KWD_W_WORKER };
struct kwd_watch {
	enum kwd_watch_kind kind;
	void *ptr;
};

struct kwd;

struct kwd_client {
	struct kwd_watch w;
	struct kwd *d;
	int fd;
	uint64_t id;
	uid_t uid;
	struct kw_buf in;
	struct kw_buf out;
	size_t out_off;
	bool close_after_write;
	bool dead;
	unsigned awaiting;  /* close replies still to come */
	struct kwd_client *next;
};

enum kwd_session_state { KWD_S_OPEN, KWD_S_CLOSING };

/* The heap strings a session owns, freed with it. */
#define KWD_SESSION_OWNS(X)                                                      \
	X(sandbox_id) X(image_digest) X(cgroup_path) X(bundle) X(model_provider) \
	X(model_id) X(data_class) X(log_path) X(policy_path) X(record_path)

struct kwd_session {
	struct kwd_watch w;
	struct kwd *d;
	char id[33];
	uint32_t slot;
	enum kwd_session_state state;
	char *sandbox_id;
	char *image_digest;
	char *cgroup_path;
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
	struct kw_reorder ro;
	struct kw_logwriter log;
	struct kw_job seal;   /* the close's last job: no allocation at close */
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
	struct kwd_runtime runtime; /* the binding at close */
	struct kw_record_runtime record_runtime; /* points into runtime */
};

struct kwd {
	struct kwd_config cfg;
	struct kw_worker *worker;
	struct kwd_watch worker_w;
	struct kwd_hostinfo host;
	struct kw_hooks *hooks;
	struct kw_key *key;
	struct kwd_attest *attest; /* NULL without --tpm */
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

/* recover.c: at start, seals the logs of sessions no collector closed. */
void kwd_seal_unclosed(struct kwd *d);

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
/* Queues one reply line (takes the reference) to the client with that id, if
 * it is still connected. */
void kwd_reply_to(struct kwd *d, uint64_t client_id, json_t *reply);
void kwd_control_shutdown(struct kwd *d);
void kwd_clients_reap(struct kwd *d);

/* session.c */
/* Returns a reply for open/close/status/list; NULL when the reply comes later
 * (close waits for the drain). */
json_t *kwd_session_open(struct kwd *d, json_t *req);
json_t *kwd_session_close_req(struct kwd *d, json_t *req, uint64_t client_id);
json_t *kwd_status(struct kwd *d, bool sessions_only);
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
/* Main thread: a session's SEAL job came back from the worker. Frees the
 * session and returns the close reply, with *client the id of the client that
 * asked for the close (0: nobody waits for it). */
json_t *kwd_session_sealed(struct kwd *d, struct kw_job *job, uint64_t *client);

#endif
