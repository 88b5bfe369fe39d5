// SPDX-License-Identifier: Apache-2.0
/* kw-lsmprobe: does one operation a BPF-LSM hook judges and prints "ok" or
 * the errno name the process saw (EACCES, EPERM, ...). Used by
 * tests/vm/test_lsm.sh from inside and outside tagged cgroups.
 *
 *   open PATH r|w|rw        file_open
 *   exec PATH [ARG...]      bprm_check_security (execve; the program prints then)
 *   unlink|mkdir|rmdir|mknod|truncate PATH
 *   rename|link FROM TO
 *   symlink TARGET LINKPATH
 *   mount DIR               tmpfs on DIR in a new mount namespace (sb_mount)
 *   kill PID SIG            task_kill
 *   kill-child              a child of ours, SIGTERM
 *   ptrace PID              ptrace_access_check (PTRACE_SEIZE; detaches on exit)
 *   ptrace-child            the same on a child of ours
 *   unix PATH               connect a stream socket (unix_stream_connect); @NAME: abstract
 *   listen PATH             bind + listen, print "ok", accept until killed
 *   nop                     prints "ok" */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int report(int err)
{
	if (!err)
		puts("ok");
	else
		puts(strerrorname_np(err) ? strerrorname_np(err) : "EUNKNOWN");
	return 0;
}

static int sys(int ret)
{
	return report(ret < 0 ? errno : 0);
}

static int do_open(const char *path, const char *mode)
{
	int flags = !strcmp(mode, "r") ? O_RDONLY : !strcmp(mode, "w") ? O_WRONLY : O_RDWR;
	int fd = open(path, flags | O_CLOEXEC);

	if (fd < 0)
		return report(errno);
	close(fd);
	return report(0);
}

/* execve in this process, so the decision carries this pid; what runs then
 * prints the result (e.g. "kw-lsmprobe nop" or "busybox echo ok"). */
static int do_exec(char **argv)
{
	fflush(stdout);
	execv(argv[0], argv);
	return report(errno);
}

static int do_mount(const char *dir)
{
	if (unshare(CLONE_NEWNS))
		return report(errno);
	return sys(mount("kwtest", dir, "tmpfs", 0, "size=64k"));
}

static pid_t child_pause(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static int do_kill_child(void)
{
	pid_t pid = child_pause();
	int err;

	if (pid < 0)
		return report(errno);
	err = kill(pid, SIGTERM) ? errno : 0;
	if (err)
		kill(pid, SIGKILL); /* may fail the same way: the test cleans up */
	waitpid(pid, NULL, 0);
	return report(err);
}

static int do_ptrace(pid_t pid)
{
	return sys((int)ptrace(PTRACE_SEIZE, pid, NULL, NULL));
}

static int do_ptrace_child(void)
{
	pid_t pid = child_pause();
	int err;

	if (pid < 0)
		return report(errno);
	err = ptrace(PTRACE_SEIZE, pid, NULL, NULL) ? errno : 0;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return report(err);
}

/* "@name" is the abstract name "name"; returns the address length or -errno. */
static int unix_addr(const char *path, struct sockaddr_un *a)
{
	size_t n = strlen(path);

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (n >= sizeof(a->sun_path))
		return -ENAMETOOLONG;
	if (path[0] == '@') {
		memcpy(a->sun_path + 1, path + 1, n - 1);
		return (int)(offsetof(struct sockaddr_un, sun_path) + n);
	}
	memcpy(a->sun_path, path, n + 1);
	return (int)sizeof(*a);
}

static int do_unix(const char *path, int listening)
{
	struct sockaddr_un a;
	int fd, c, alen = unix_addr(path, &a);

	if (alen < 0)
		return report(-alen);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return report(errno);
	if (!listening) {
		int r = connect(fd, (struct sockaddr *)&a, (socklen_t)alen) ? errno : 0;

		close(fd);
		return report(r);
	}
	if (path[0] != '@')
		unlink(path);
	if (bind(fd, (struct sockaddr *)&a, (socklen_t)alen) || listen(fd, 16))
		return report(errno);
	report(0);
	fflush(stdout);
	for (;;) {
		c = accept(fd, NULL, NULL);
		if (c >= 0)
			close(c);
	}
}

int main(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(op, "nop"))
		return report(0);
	if (!strcmp(op, "open") && argc == 4)
		return do_open(argv[2], argv[3]);
	if (!strcmp(op, "exec") && argc >= 3)
		return do_exec(argv + 2);
	if (!strcmp(op, "unlink") && argc == 3)
		return sys(unlink(argv[2]));
	if (!strcmp(op, "mkdir") && argc == 3)
		return sys(mkdir(argv[2], 0755));
	if (!strcmp(op, "rmdir") && argc == 3)
		return sys(rmdir(argv[2]));
	if (!strcmp(op, "mknod") && argc == 3)
		return sys(mknod(argv[2], S_IFIFO | 0644, 0));
	if (!strcmp(op, "truncate") && argc == 3)
		return sys(truncate(argv[2], 0));
	if (!strcmp(op, "rename") && argc == 4)
		return sys(rename(argv[2], argv[3]));
	if (!strcmp(op, "link") && argc == 4)
		return sys(link(argv[2], argv[3]));
	if (!strcmp(op, "symlink") && argc == 4)
		return sys(symlink(argv[2], argv[3]));
	if (!strcmp(op, "mount") && argc == 3)
		return do_mount(argv[2]);
	if (!strcmp(op, "kill") && argc == 4)
		return sys(kill(atoi(argv[2]), atoi(argv[3])));
	if (!strcmp(op, "kill-child"))
		return do_kill_child();
	if (!strcmp(op, "ptrace") && argc == 3)
		return do_ptrace(atoi(argv[2]));
	if (!strcmp(op, "ptrace-child"))
		return do_ptrace_child();
	if (!strcmp(op, "unix") && argc == 3)
		return do_unix(argv[2], 0);
	if (!strcmp(op, "listen") && argc == 3)
		return do_unix(argv[2], 1);
	fprintf(stderr, "usage: kw-lsmprobe OP ARGS (see the source)\n");
	return 2;
}
