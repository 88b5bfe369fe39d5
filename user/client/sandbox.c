/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness_sandbox_*: a cgroup made for one session, workloads started in
 * it, and at the end the cgroup frozen, the session closed with what is left
 * killed, the cgroup removed (include/kwitness/client.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cgroup.h"
#include "client/client_internal.h"

extern char **environ;

struct kwitness_sandbox {
	char *socket; /* NULL: the default */
	char cgroup[PATH_MAX];
	char session[KWITNESS_SESSION_ID_MAX];
};

static atomic_uint sandbox_counter;

int kwitness_sandbox_open(const char *socket, const struct kwitness_open_params *p,
			  const char *parent, struct kwitness_sandbox **out,
			  struct kwitness_error *err)
{
	struct kwitness_open_params op;
	struct kwitness_sandbox *s;
	char mount[PATH_MAX - 64], base[PATH_MAX - 32];
	int e;

	kwc_clear(err);
	if (!p || !out)
		return kwc_fail(err, KWITNESS_EINVAL, 0, NULL, "no parameters");
	*out = NULL;
	if (p->cgroup || p->pid)
		return kwc_fail(err, KWITNESS_EINVAL, 0, NULL,
				"a sandbox makes its own cgroup: leave cgroup and pid unset");
	if (!parent) {
		e = kw_cgroup2_mount(mount, sizeof(mount));
		if (e)
			return kwc_fail(err, KWITNESS_ESYSTEM, -e, NULL,
					"no cgroup2 mount in /proc/self/mountinfo: %s", strerror(-e));
		snprintf(base, sizeof(base), "%s/kwitness", mount);
		e = kw_cgroup_make(base, 1);
		if (e)
			return kwc_fail(err, KWITNESS_ESYSTEM, -e, NULL,
					"cannot make %s: %s (a sandbox needs root or a delegated "
					"cgroup as parent)", base, strerror(-e));
		parent = base;
	}
	s = calloc(1, sizeof(*s));
	if (!s || (socket && !(s->socket = strdup(socket)))) {
		free(s);
		return kwc_fail(err, KWITNESS_ESYSTEM, ENOMEM, NULL, "out of memory");
	}
	if (snprintf(s->cgroup, sizeof(s->cgroup), "%s/lib-%d-%u", parent, (int)getpid(),
		     atomic_fetch_add(&sandbox_counter, 1)) >= (int)sizeof(s->cgroup)) {
		e = kwc_fail(err, KWITNESS_EINVAL, ENAMETOOLONG, NULL, "cgroup parent path too long");
		goto fail;
	}
	e = kw_cgroup_make(s->cgroup, 0);
	if (e) {
		e = kwc_fail(err, KWITNESS_ESYSTEM, -e, NULL, "cannot make cgroup %s: %s", s->cgroup,
			     strerror(-e));
		goto fail;
	}
	op = *p;
	op.cgroup = s->cgroup;
	e = kwitness_open(s->socket, &op, s->session, NULL, 0, err);
	if (e) {
		kw_cgroup_remove(s->cgroup);
		goto fail;
	}
	*out = s;
	return 0;
fail:
	free(s->socket);
	free(s);
	return e;
}

const char *kwitness_sandbox_cgroup(const struct kwitness_sandbox *s)
{
	return s ? s->cgroup : NULL;
}

const char *kwitness_sandbox_session(const struct kwitness_sandbox *s)
{
	return s ? s->session : NULL;
}

/* The child: join, exec; an errno goes back through the pipe. */
static void __attribute__((noreturn)) child(int procs_fd, int status_fd, char *const argv[],
					     char *const envp[])
{
	int e = 0;

	if (write(procs_fd, "0", 1) != 1)
		e = errno;
	else
		execvpe(argv[0], argv, envp ? envp : environ);
	if (!e)
		e = errno;
	if (write(status_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int kwitness_sandbox_spawn(struct kwitness_sandbox *s, char *const argv[], char *const envp[],
			   pid_t *pid, struct kwitness_error *err)
{
	char procs[PATH_MAX + 16];
	int fd, pipefd[2], child_errno = 0;
	ssize_t n;
	pid_t c;

	kwc_clear(err);
	if (!s || !argv || !argv[0] || !pid)
		return kwc_fail(err, KWITNESS_EINVAL, 0, NULL, "no sandbox, argv or pid");
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", s->cgroup);
	fd = open(procs, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return kwc_fail(err, KWITNESS_ESYSTEM, errno, NULL, "%s: %s", procs, strerror(errno));
	if (pipe2(pipefd, O_CLOEXEC)) {
		int e = errno;

		close(fd);
		return kwc_fail(err, KWITNESS_ESYSTEM, e, NULL, "pipe: %s", strerror(e));
	}
	c = fork();
	if (c == 0)
		child(fd, pipefd[1], argv, envp);
	close(fd);
	close(pipefd[1]);
	if (c < 0) {
		int e = errno;

		close(pipefd[0]);
		return kwc_fail(err, KWITNESS_ESYSTEM, e, NULL, "fork: %s", strerror(e));
	}
	/* The pipe closes at exec (0 bytes), or carries the child's errno. */
	do
		n = read(pipefd[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n == sizeof(child_errno)) {
		waitpid(c, NULL, 0);
		return kwc_fail(err, KWITNESS_ESYSTEM, child_errno, NULL, "%s: %s", argv[0],
				strerror(child_errno));
	}
	*pid = c;
	return 0;
}

int kwitness_sandbox_close(struct kwitness_sandbox *s, struct kwitness_close_result *out,
			   struct kwitness_error *err)
{
	int e, r;

	kwc_clear(err);
	if (!s || !out)
		return kwc_fail(err, KWITNESS_EINVAL, 0, NULL, "no sandbox or result");
	/* Frozen, nothing in it acts between the close and the kill; the close
	 * kills either way. */
	kw_cgroup_freeze(s->cgroup);
	e = kwc_close(s->socket, s->session, true, out, err);
	r = kw_cgroup_remove(s->cgroup);
	if (!e && r)
		e = kwc_fail(err, KWITNESS_ESYSTEM, -r, NULL, "the session closed, but removing "
			     "cgroup %s failed: %s", s->cgroup, strerror(-r));
	free(s->socket);
	free(s);
	return e;
}
