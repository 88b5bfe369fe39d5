/* SPDX-License-Identifier: Apache-2.0 */
#ifndef KWITNESSD_CGROUP_KILL_H
#define KWITNESSD_CGROUP_KILL_H

/* What a kill at close did. killed counts only processes verified gone:
 * found minus left. */
struct kwd_kill_result {
	int found;        /* processes in the tree once frozen */
	int killed;       /* of those, gone after the kill */
	int left;         /* processes still in the tree after the kill and the
			   * wait (they run on) */
	int err;          /* the first failure (-errno), 0 when none */
	const char *what; /* what failed: cgroup.freeze, cgroup.kill, kill, ... */
};

/* cgroup_kill.c: freezes the cgroup tree, kills every process in it, waits
 * (bounded) for it to empty and thaws what is left. */
void kwd_cgroup_kill(int cgroup_fd, int timeout_ms, struct kwd_kill_result *r);
/* Processes in the cgroup tree. */
int kwd_cgroup_count(int cgroup_fd);

#endif
