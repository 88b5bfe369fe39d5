/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup2 helpers for `kwitness run`: find the mount, make a cgroup, move a
 * process in, remove the cgroup again. */
#ifndef KWITNESS_CLI_CGROUP_H
#define KWITNESS_CLI_CGROUP_H

#include <stddef.h>
#include <sys/types.h>

/* The first cgroup2 mount point in /proc/self/mountinfo. 0, -ENOENT, -errno. */
int kw_cgroup2_mount(char *out, size_t cap);
/* mkdir (0755); an existing folder is fine when exist_ok. */
int kw_cgroup_make(const char *path, int exist_ok);
/* Writes pid to <path>/cgroup.procs. */
int kw_cgroup_join(const char *path, pid_t pid);
/* Freezes the cgroup tree (cgroup.freeze = 1). 0 or -errno. */
int kw_cgroup_freeze(const char *path);
/* Kills what is still inside (cgroup.kill, else SIGKILL per pid), waits for it
 * to empty (bounded) and removes the folder. */
int kw_cgroup_remove(const char *path);

#endif
