/* SPDX-License-Identifier: Apache-2.0 */
/* Pins: <pin_dir>/links/<program> for the global links, and
 * <pin_dir>/sessions/<slot>/ for a live session's marker. A pinned link stays
 * attached when the collector dies: the kernel goes on enforcing and
 * numbering decisions, and the next collector adopts it. */
#ifndef KWITNESS_USER_BPF_PIN_H
#define KWITNESS_USER_BPF_PIN_H

#include <stdbool.h>
#include <stddef.h>

struct bpf_program;
struct bpf_link;

/* mkdir -p, mode 0700. 0 or -errno. */
int kw_mkdir_p(const char *path);
/* <pin_dir>/links[/name] (slot < 0) or <pin_dir>/sessions/<slot>[/name].
 * 0 or -ENAMETOOLONG. */
int kw_pin_path(char *out, size_t cap, const char *pin_dir, int slot, const char *name);
/* Mounts bpffs at /sys/fs/bpf if pin_dir lies there, and creates pin_dir. */
int kw_ensure_bpffs(const char *pin_dir, char *err, size_t errlen);
/* True when some session of an earlier collector is still pinned. */
bool kw_sessions_pinned(const char *pin_dir);
/* A link of prog for every task (cgroup_fd < 0: its own attach point; else
 * the cgroup it is attached to), pinned at <pin_dir>/links/<program> when
 * pin_dir is set; reuse keeps an existing pin. NULL with errno. */
struct bpf_link *kw_global_link(struct bpf_program *prog, int cgroup_fd, const char *pin_dir,
				bool reuse);
/* Attaches a global program, pinned under <pin_dir>/links/ when pin_dir is
 * set; with reuse, an existing pin is kept instead (sessions still use it). */
struct bpf_link *kw_hooks_global_link(struct bpf_program *prog, const char *pin_dir, bool reuse);
/* Removes the pinned global link of program name, if any (its program then
 * detaches): one this collector does not run, left by an earlier one. */
void kw_hooks_global_unpin(const char *pin_dir, const char *name);

#endif
