/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup helpers, see kwitness/cgroup.h. Hosts differ: cgroup2 may be at
 * /sys/fs/cgroup (unified) or /sys/fs/cgroup/unified (hybrid), so the mount
 * is looked up, never assumed. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/cgroup.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

int kw_cgroup_mount(const char *fstype, char *out, size_t cap)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	size_t type_len = strlen(fstype);
	char line[8192];
	int e = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");
		char *save = NULL, *field;
		int i = 0;

		/* ... optional fields - fstype source super-options */
		if (!sep || strncmp(sep + 3, fstype, type_len) || sep[3 + type_len] != ' ')
			continue;
		/* Fields: id parent major:minor root mount-point ... */
		for (field = strtok_r(line, " ", &save); field && i < 4;
		     field = strtok_r(NULL, " ", &save))
			i++;
		if (!field)
			continue;
		unescape(field);
		if (snprintf(out, cap, "%s", field) >= (int)cap) {
			e = -ENAMETOOLONG;
			continue;
		}
		e = 0;
		break;
	}
	fclose(f);
	return e;
}

int kw_cgroup2_mount(char *out, size_t cap)
{
	return kw_cgroup_mount("cgroup2", out, cap);
}

int kw_cgroup_id(int fd, uint64_t *id)
{
	struct {
		struct file_handle fh;
		unsigned char bytes[16];
	} h;
	struct stat st;
	int mount_id;

	h.fh.handle_bytes = sizeof(h.bytes);
	if (name_to_handle_at(fd, "", &h.fh, &mount_id, AT_EMPTY_PATH) == 0 &&
	    h.fh.handle_bytes >= sizeof(*id)) {
		memcpy(id, h.fh.f_handle, sizeof(*id));
		return 0;
	}
	/* on cgroup2 the id is also the inode number */
	if (fstat(fd, &st))
		return -errno;
	*id = st.st_ino;
	return 0;
}

int kw_cgroup_make(const char *path, int exist_ok)
{
	if (mkdir(path, 0755) == 0)
		return 0;
	if (errno == EEXIST && exist_ok)
		return 0;
	return -errno;
}

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[4096];
	ssize_t n;
	int fd, e = 0;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	if (n < 0)
		e = -errno;
	close(fd);
	return e;
}

int kw_cgroup_freeze(const char *path)
{
	return write_file(path, "cgroup.freeze", "1");
}

int kw_cgroup_join(const char *path, pid_t pid)
{
	char num[32];

	snprintf(num, sizeof(num), "%d\n", (int)pid);
	return write_file(path, "cgroup.procs", num);
}

/* Number of pids listed in cgroup.procs, killing each when kill_them. */
static int procs(const char *dir, int kill_them)
{
	char path[4096];
	FILE *f;
	int n = 0, pid;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fscanf(f, "%d", &pid) == 1) {
		n++;
		if (kill_them)
			kill(pid, SIGKILL);
	}
	fclose(f);
	return n;
}

int kw_cgroup_remove(const char *path)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };

	if (procs(path, 0) > 0 && write_file(path, "cgroup.kill", "1") < 0)
		procs(path, 1);
	for (int i = 0; i < 200; i++) {
		if (rmdir(path) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		if (i % 20 == 19)
			procs(path, 1);
		nanosleep(&pause, NULL);
	}
	return -EBUSY;
}
