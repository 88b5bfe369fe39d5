/* SPDX-License-Identifier: Apache-2.0 */
/* Who may do what (docs/security.md): who may connect to the control
 * socket, on which cgroups a client may open a session, and whose sessions
 * it may close and see. Every decision of the collector about a client is
 * here, judged on what SO_PEERCRED said at accept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <fcntl.h>

#include "authz.h"
#include "util.h"

/* Supplementary groups come from /proc/<pid>/status ("Groups:"). */
static bool pid_in_group(pid_t pid, gid_t group, gid_t primary)
{
	char path[64], line[4096];
	bool found = false;
	FILE *f;

	if (primary == group)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *p, *end;

		if (strncmp(line, "Groups:", 7))
			continue;
		for (p = line + 7;; p = end) {
			unsigned long g = strtoul(p, &end, 10);

			if (end == p)
				break;
			if ((gid_t)g == group)
				found = true;
		}
		break;
	}
	fclose(f);
	return found;
}

bool kwd_authz_connect(const struct kwd_config *cfg, int fd, struct kwd_peer *peer)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return false;
	peer->uid = cred.uid;
	peer->gid = cred.gid;
	peer->pid = cred.pid;
	if (cred.uid == 0)
		return true;
	if (!cfg->have_group)
		return false;
	return pid_in_group(cred.pid, cfg->group, cred.gid);
}

/* Root may open a session on any cgroup. Anyone else on a cgroup it owns or
 * was delegated (cgroup v2 delegation: owner of the directory and of its
 * cgroup.procs), or one under a kwitnessd.conf grant for its uid or group.
 * Judged on the opened directory, not on the path. */
bool kwd_authz_cgroup(const struct kwd_config *cfg, const struct kwd_peer *peer, int fd,
		      const struct stat *st, const char *real)
{
	struct stat procs;

	if (peer->uid == 0)
		return true;
	if (st->st_uid == peer->uid && fstatat(fd, "cgroup.procs", &procs, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(procs.st_mode) && procs.st_uid == peer->uid)
		return true;
	for (unsigned i = 0; i < cfg->n_grants; i++) {
		const struct kwd_grant *g = &cfg->grants[i];

		if (!kwd_path_is_within(real, g->path))
			continue;
		if (g->is_group ? pid_in_group(peer->pid, g->id, peer->gid) : g->id == peer->uid)
			return true;
	}
	return false;
}

bool kwd_authz_session(const struct kwd_peer *peer, uid_t owner)
{
	return peer->uid == 0 || owner == peer->uid;
}
