/* SPDX-License-Identifier: Apache-2.0 */
#ifndef KWITNESSD_CGROUP_KILL_H
#define KWITNESSD_CGROUP_KILL_H

/* cgroup_kill.c: freezes the cgroup tree, kills every process in it and waits
 * (bounded) for it to empty. Returns the processes found, or -errno. */
int kwd_cgroup_kill(int cgroup_fd, int timeout_ms);
/* Processes in the cgroup tree. */
int kwd_cgroup_count(int cgroup_fd);

#endif
