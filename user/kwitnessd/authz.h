/* SPDX-License-Identifier: Apache-2.0 */
/* authz.c: who may do what. Root may do everything; anyone else needs the
 * control socket's group (kwitnessd.conf "group"), opens sessions on cgroups
 * it owns or was delegated or granted ("grant"), and closes and sees only
 * its own sessions. */
#ifndef KWITNESSD_AUTHZ_H
#define KWITNESSD_AUTHZ_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "config.h"

/* Who is on the other end of a control connection (SO_PEERCRED at accept). */
struct kwd_peer {
	uid_t uid;
	gid_t gid;
	pid_t pid;
};

/* A new control connection fd: fills peer from SO_PEERCRED; true when it may
 * stay (root, or a member of the configured group). */
bool kwd_authz_connect(const struct kwd_config *cfg, int fd, struct kwd_peer *peer);
/* May peer open a session on the cgroup directory opened as fd (st: its
 * fstat, real: its path)? Judged on the opened directory, not on a path. */
bool kwd_authz_cgroup(const struct kwd_config *cfg, const struct kwd_peer *peer, int fd,
		      const struct stat *st, const char *real);
/* May peer close or see a session opened by owner? */
bool kwd_authz_session(const struct kwd_peer *peer, uid_t owner);

#endif
