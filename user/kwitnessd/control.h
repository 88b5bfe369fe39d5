/* SPDX-License-Identifier: Apache-2.0 */
#ifndef KWITNESSD_CONTROL_H
#define KWITNESSD_CONTROL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "lib/buf.h"
#include "authz.h"
#include "kwd.h"

/* Control clients are bounded (docs/security.md, "Bounds"): connections
 * served at once (more get one "busy" line); replies queued for one client
 * (a client that does not read them is disconnected once this much waits
 * and another reply comes); the bytes all
 * clients' buffers hold together (the client that crosses it is
 * disconnected); requests answered per client and for all clients per loop
 * turn, and bytes read per wakeup, so no client holds the loop; buffers that grew past
 * KWD_CLIENT_KEEP are freed once empty. */
#define KWD_MAX_CLIENTS 256
/* Connections one non-root uid may hold, and those non-root uids together
 * leave to root: no user keeps root from the socket. */
#define KWD_CLIENTS_PER_USER 32
#define KWD_CLIENTS_ROOT_RESERVED 32
#define KWD_CLIENT_OUT_MAX ((size_t)256 * 1024)
#define KWD_CLIENTS_MEM_MAX ((size_t)32 * 1024 * 1024)
#define KWD_REQUESTS_PER_CLIENT 8
#define KWD_REQUESTS_PER_TURN 128
#define KWD_RECV_CHUNK 16384
#define KWD_CLIENT_KEEP ((size_t)64 * 1024)

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

#endif
