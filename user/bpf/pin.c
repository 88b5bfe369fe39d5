// SPDX-License-Identifier: Apache-2.0
/* Pins under the collector's pin directory (see pin.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "pin.h"
#include "state.h"

#define KW_BPF_FS_MAGIC 0xcafe4a11

int kw_mkdir_p(const char *path)
{
	char tmp[512];
	size_t len = strlen(path), i;

	if (len == 0 || len >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, path, len + 1);
	for (i = 1; i <= len; i++) {
		if (tmp[i] == '/' || tmp[i] == '\0') {
			char c = tmp[i];

			tmp[i] = '\0';
			if (mkdir(tmp, 0700) && errno != EEXIST)
				return -errno;
			tmp[i] = c;
		}
	}
	return 0;
}

/* Pins: <pin_dir>/links/<program> for the global links, and
 * <pin_dir>/sessions/<slot>/<program> for a session's cgroup links. A pinned
 * link stays attached when the collector dies: the kernel goes on enforcing
 * and numbering decisions, and the next collector adopts it. */
int kw_pin_path(char *out, size_t cap, const char *pin_dir, int slot, const char *name)
{
	int n = slot < 0 ? snprintf(out, cap, "%s/links%s%s", pin_dir, name ? "/" : "",
				    name ? name : "") :
			   snprintf(out, cap, "%s/sessions/%d%s%s", pin_dir, slot, name ? "/" : "",
				    name ? name : "");

	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* bpffs must be mounted at /sys/fs/bpf for pinning (not mounted on every host). */
int kw_ensure_bpffs(const char *pin_dir, char *err, size_t errlen)
{
	struct statfs st;
	int ret;

	if (strncmp(pin_dir, "/sys/fs/bpf/", 12) == 0 || strcmp(pin_dir, "/sys/fs/bpf") == 0) {
		if (statfs("/sys/fs/bpf", &st) || st.f_type != KW_BPF_FS_MAGIC) {
			mkdir("/sys/fs/bpf", 0700);
			if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
				ret = -errno;
				snprintf(err, errlen, "mounting bpffs at /sys/fs/bpf failed: %s",
					 strerror(errno));
				return ret;
			}
		}
	}
	ret = kw_mkdir_p(pin_dir);
	if (ret) {
		snprintf(err, errlen, "creating pin directory %s failed: %s", pin_dir,
			 strerror(-ret));
		return ret;
	}
	return 0;
}

/* True when some session of an earlier collector is still pinned. */
bool kw_sessions_pinned(const char *pin_dir)
{
	char path[512];
	struct dirent *de;
	bool any = false;
	DIR *d;

	if (!pin_dir || snprintf(path, sizeof(path), "%s/sessions", pin_dir) >= (int)sizeof(path))
		return false;
	d = opendir(path);
	if (!d)
		return false;
	while (!any && (de = readdir(d)))
		any = de->d_name[0] >= '0' && de->d_name[0] <= '9';
	closedir(d);
	return any;
}

/* A link of prog for every task (cgroup_fd < 0: its own attach point; else
 * the cgroup it is attached to), pinned at <pin_dir>/links/<program> when
 * pin_dir is set. */
struct bpf_link *kw_global_link(struct bpf_program *prog, int cgroup_fd, const char *pin_dir,
				bool reuse)
{
	struct bpf_link *l;
	char path[512];
	int e;

	if (!pin_dir)
		return cgroup_fd < 0 ? bpf_program__attach(prog) :
				       bpf_program__attach_cgroup(prog, cgroup_fd);
	if (kw_pin_path(path, sizeof(path), pin_dir, -1, bpf_program__name(prog))) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	/* Sessions of an earlier collector are still enforced by its programs:
	 * keep them (same maps), never a moment with none or with two. */
	if (reuse && !access(path, F_OK) && (l = bpf_link__open(path))) {
		/* a cgroup link runs this instance's program from now on (a
		 * tracing link cannot be moved: it keeps the old one, same maps) */
		if (cgroup_fd >= 0)
			bpf_link__update_program(l, prog);
		return l;
	}
	l = cgroup_fd < 0 ? bpf_program__attach(prog) : bpf_program__attach_cgroup(prog, cgroup_fd);
	if (!l)
		return NULL;
	unlink(path); /* an older link detaches as its pin goes */
	e = bpf_link__pin(l, path);
	if (e) {
		bpf_link__destroy(l);
		errno = -e;
		return NULL;
	}
	return l;
}

void kw_hooks_global_unpin(const char *pin_dir, const char *name)
{
	char path[512];

	if (pin_dir && !kw_pin_path(path, sizeof(path), pin_dir, -1, name))
		unlink(path);
}

struct bpf_link *kw_hooks_global_link(struct bpf_program *prog, const char *pin_dir, bool reuse)
{
	return kw_global_link(prog, -1, pin_dir, reuse);
}

int kw_hooks_unpin_idle(struct kw_hooks *h)
{
	char path[512];
	struct dirent *de;
	DIR *d;

	if (!h->pin_dir || kw_sessions_pinned(h->pin_dir) ||
	    kw_pin_path(path, sizeof(path), h->pin_dir, -1, NULL))
		return 0;
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	rmdir(path);
	/* No session to resume: the maps' pins go too (the next start makes
	 * them anew), then the folders they leave empty. */
	if (h->skel) {
		struct bpf_map *map;

		bpf_object__for_each_map(map, h->skel->obj)
			if (!bpf_map__is_internal(map) && bpf_map__pin_path(map))
				bpf_map__unpin(map, NULL);
	}
	if (kw_pin_path(path, sizeof(path), h->pin_dir, 0, NULL) == 0) {
		char *slash = strrchr(path, '/');

		if (slash) {
			*slash = '\0'; /* <pin_dir>/sessions */
			rmdir(path);
		}
	}
	rmdir(h->pin_dir);
	return 1;
}

