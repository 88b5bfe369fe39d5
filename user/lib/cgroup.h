/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup helpers: find a hierarchy's mount, a cgroup's id, and for `kwitness
 * run` make a cgroup, move a process in, remove the cgroup again. */
#ifndef KWITNESS_CGROUP_H
#define KWITNESS_CGROUP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The first mount point of fstype ("cgroup2", or "cgroup" for a v1
 * hierarchy) in /proc/self/mountinfo. 0, -ENOENT, -ENAMETOOLONG, -errno. */
int kw_cgroup_mount(const char *fstype, char *out, size_t cap);
/* kw_cgroup_mount("cgroup2", ...) */
int kw_cgroup2_mount(char *out, size_t cap);
/* The id of the cgroup2 directory open at fd: its file handle, which is what
 * the kernel's bpf_get_current_cgroup_id() returns (the inode number where
 * file handles are not available). 0 or -errno. */
int kw_cgroup_id(int fd, uint64_t *id);
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
