/* SPDX-License-Identifier: Apache-2.0 */
/* struct kwd: the collector's state, which the epoll loop (main.c) owns
 * and hands to every unit; and what the loop watches. */
#ifndef KWITNESSD_KWD_H
#define KWITNESSD_KWD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kwitness/abi/event.h"
#include "config.h"
#include "hostinfo.h"

/* What the epoll loop is watching. */
enum kwd_watch_kind { KWD_W_LISTEN, KWD_W_CLIENT, KWD_W_RING, KWD_W_SIGNAL, KWD_W_TIMER,
		      KWD_W_WORKER, KWD_W_DNS };
struct kwd_watch {
	enum kwd_watch_kind kind;
	void *ptr;
};

struct kwd_client;
struct kwd_session;
struct kwd_attest;
struct kwd_commit;
struct kw_hooks;
struct kw_key;
struct kwd_worker;
struct kwd_transparency;
struct kwd_publisher;
struct kw_publish;
struct kwd_fanout;
struct kwd_watchers;
struct kwd_otlp;
struct kwd_signer;
struct kwd_ckpt_tlog;

struct kwd {
	struct kwd_config cfg;
	struct kwd_worker *worker;
	struct kwd_watch worker_w;
	struct kwd_hostinfo host;
	struct kw_hooks *hooks;
	struct kw_key *key;
	struct kwd_attest *attest; /* NULL without --tpm */
	struct kwd_commit *commit; /* commit.c; NULL: sessions are not TPM-committed */
	struct kwd_transparency *tlog; /* NULL without log = DIR */
	const struct kw_publish *publish; /* into tlog */
	struct kwd_publisher *publisher; /* the thread that publishes */
	struct kwd_signer *ckpt_signer; /* checkpoint.c; NULL: checkpoints off */
	struct kwd_ckpt_tlog *ckpt_tlog; /* checkpoint_tlog.c; NULL: not logged */
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
	struct kwd_fanout *fanout;     /* logged entries to watchers and exporters */
	struct kwd_watchers *watchers; /* the watch thread (watch.c) */
	struct kwd_otlp *otlp;         /* the OTLP exporter (otlp.c), or NULL */
};

#endif
