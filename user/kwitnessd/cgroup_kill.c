/* SPDX-License-Identifier: Apache-2.0 */
/* What is left in a session's cgroup at close. A command's background
 * processes outlive it; closing the session while they run would let them
 * act unrecorded. Close with kill freezes the tree (cgroup.freeze: nothing in
 * it runs on, nothing forks away), counts the processes, kills them
 * (cgroup.kill, or SIGKILL per process on kernels before 5.14) and waits for
 * the tree to empty, all while it is still tagged and recorded. Only what is
 * gone afterwards counts as killed: a read-only cgroup fs, a missing
 * CAP_KILL or a survivor leaves processes behind, and those are counted and
 * the first failure kept for the log. Paths are opened below the session's
 * cgroup fd without following symlinks. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cgroup_kill.h"


#define KWD_CGROUP_DEPTH 64

static int write_at(int dirfd, const char *name, const char *text)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW), e = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		e = -errno;
	close(fd);
	return e;
}

/* Processes in the tree below dirfd (each listed once, in its own cgroup);
 * with sig, each is sent sig, and the first failure other than ESRCH (the
 * process is gone) goes to *kill_err. */
static int walk(int dirfd, int sig, int depth, int *kill_err)
{
	int fd, n = 0, pid;
	struct dirent *de;
	FILE *f;
	DIR *d;

	if (depth > KWD_CGROUP_DEPTH)
		return 0;
	fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	f = fd < 0 ? NULL : fdopen(fd, "re");
	if (f) {
		while (fscanf(f, "%d", &pid) == 1) {
			n++;
			if (sig && pid > 0 && kill(pid, sig) < 0 && errno != ESRCH &&
			    kill_err && !*kill_err)
				*kill_err = -errno;
		}
		fclose(f);
	} else if (fd >= 0) {
		close(fd);
	}
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return n;
	}
	while ((de = readdir(d))) {
		int c;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		c = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (c < 0)
			continue;
		n += walk(c, sig, depth + 1, kill_err);
		close(c);
	}
	closedir(d);
	return n;
}

int kwd_cgroup_count(int cgroup_fd)
{
	return walk(cgroup_fd, 0, 0, NULL);
}

static bool populated(int cgroup_fd)
{
	char buf[256];
	int fd = openat(cgroup_fd, "cgroup.events", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return kwd_cgroup_count(cgroup_fd) > 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return kwd_cgroup_count(cgroup_fd) > 0;
	buf[n] = '\0';
	return strstr(buf, "populated 1") != NULL;
}

/* Keeps the first failure: what was tried and why it failed. */
static void note(struct kwd_kill_result *r, const char *what, int err)
{
	if (err && !r->err) {
		r->err = err;
		r->what = what;
	}
}

void kwd_cgroup_kill(int cgroup_fd, int timeout_ms, struct kwd_kill_result *r)
{
	struct timespec nap = { 0, 2 * 1000 * 1000 };
	int waited = 0, kill_err = 0, e;
	bool have_kill, frozen;

	*r = (struct kwd_kill_result){ 0 };
	/* cgroup.freeze exists from 5.2 on; without it a fork may race the
	 * kills below, which the rounds catch */
	e = write_at(cgroup_fd, "cgroup.freeze", "1");
	frozen = e == 0;
	if (e != -ENOENT)
		note(r, "cgroup.freeze", e);
	r->found = kwd_cgroup_count(cgroup_fd);
	if (!r->found)
		goto out;
	e = write_at(cgroup_fd, "cgroup.kill", "1");
	have_kill = e == 0;
	if (e != -ENOENT)
		note(r, "cgroup.kill", e);
	if (!have_kill)
		walk(cgroup_fd, SIGKILL, 0, &kill_err);
	while (populated(cgroup_fd) && waited < timeout_ms) {
		nanosleep(&nap, NULL);
		waited += 2;
		/* without cgroup.kill a process forked meanwhile is caught by
		 * the next round */
		if (!have_kill && waited % 50 == 0)
			walk(cgroup_fd, SIGKILL, 0, &kill_err);
	}
	note(r, "kill", kill_err);
out:
	if (frozen)
		write_at(cgroup_fd, "cgroup.freeze", "0");
	/* counted after the thaw: what is left runs on */
	r->left = kwd_cgroup_count(cgroup_fd);
	r->killed = r->found > r->left ? r->found - r->left : 0;
	if (r->left && !r->err) {
		r->err = -ETIMEDOUT;
		r->what = "waiting for the tree to empty";
	}
}
