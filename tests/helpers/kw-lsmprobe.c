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
 *   dgram PATH              sendto a datagram socket (unix_may_send)
 *   dgram-connect PATH      connect a datagram socket, then send
 *   dgram-listen PATH OUT   bind a datagram socket, print "ok", append "got" to OUT per datagram
 *   chmod|chown|utimes|setxattr|removexattr PATH   metadata (path_chmod, path_chown,
 *                           inode_setattr, inode_setxattr, inode_removexattr)
 *   setacl|removeacl PATH   a POSIX access ACL giving group 65534 rwx (mode 644 -> 674),
 *                           or its removal (inode_set_acl/inode_remove_acl from 6.2 on,
 *                           inode_setxattr/inode_removexattr on 6.1)
 *   ftruncate-fd FD         ftruncate(FD, 0) of a descriptor opened by the caller
 *                           (file_truncate from 6.2 on, path_truncate on 6.1)
 *   chattr PATH             open PATH read-only, add the no-dump inode flag with
 *                           FS_IOC_SETFLAGS (file_ioctl; inode_file_setattr on 7.x)
 *   tree-open DIR FILE r|a  open_tree(OPEN_TREE_CLONE) of DIR, openat(tree, FILE)
 *   tree-proc DIR FILE      the same, reopened through /proc/self/fd/N (read)
 *   tree-move DIR TO FILE a|r   in a new mount namespace: move_mount of a clone of DIR
 *                           onto TO, then open TO/FILE (append or read)
 *   tree-exec DIR FILE      execveat(clone of DIR, FILE) ("kw-lsmprobe nop")
 *   fsconfig TYPE           fsopen(TYPE) + fsconfig(size=64k)
 *   umount DIR              umount2(DIR) in a new mount namespace (sb_umount)
 *   pivot-root DIR          pivot_root(DIR, DIR) in a new mount namespace (sb_pivotroot)
 *   sigio PID SIG           a pipe owned (F_SETOWN) by PID, O_ASYNC, F_SETSIG SIG unless 0,
 *                           one write: the kernel signals PID (file_send_sigiotask)
 *   memfd-exec NAME         copy of this program in memfd NAME, execveat(AT_EMPTY_PATH) nop
 *   pipe-reopen             open /proc/self/fd/N of a pipe (read end)
 *   verity-enable PATH      turn fs-verity on for PATH (SHA-256, 4096-byte blocks)
 *   verity-measure PATH     print PATH's fs-verity digest ("sha256:<hex>"), as the
 *                           kernel's FS_IOC_MEASURE_VERITY gives it
 *   bpf-map                 bpf(BPF_MAP_CREATE) of a 1-entry array (lsm/bpf)
 *   nop                     prints "ok"
 *
 * -u before OP: first become uid/gid 65534, then unshare(CLONE_NEWUSER |
 * CLONE_NEWNS) (an unprivileged user with every capability in its own user
 * and mount namespace). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
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

static int do_bpf_map(void)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 1;
	fd = (int)syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
	if (fd >= 0)
		close(fd);
	return sys(fd);
}

static int do_chattr(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), flags = 0, err = 0;

	if (fd < 0)
		return report(errno);
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
		err = errno;
	flags |= FS_NODUMP_FL;
	if (!err && ioctl(fd, FS_IOC_SETFLAGS, &flags) < 0)
		err = errno;
	close(fd);
	return report(err);
}

/* The xattr form of a POSIX ACL (include/uapi/linux/posix_acl_xattr.h):
 * version 2, then entries sorted by tag: owner rw, group r, user 65534 rwx
 * (a named group entry: 0x08 is ACL_GROUP), mask rwx, other r. */
static int do_setacl(const char *path)
{
	struct {
		uint16_t tag, perm;
		uint32_t id;
	} __attribute__((packed)) e[] = {
		{ 0x01, 6, (uint32_t)-1 }, { 0x04, 4, (uint32_t)-1 }, { 0x08, 7, 65534 },
		{ 0x10, 7, (uint32_t)-1 }, { 0x20, 4, (uint32_t)-1 },
	};
	unsigned char buf[4 + sizeof(e)];
	uint32_t version = 2;

	memcpy(buf, &version, 4);
	memcpy(buf + 4, e, sizeof(e));
	return sys(setxattr(path, "system.posix_acl_access", buf, sizeof(buf), 0));
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

static int do_dgram(const char *path, int connected)
{
	struct sockaddr_un a;
	int fd, r, alen = unix_addr(path, &a);

	if (alen < 0)
		return report(-alen);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return report(errno);
	if (connected)
		r = connect(fd, (struct sockaddr *)&a, (socklen_t)alen) || send(fd, "x", 1, 0) != 1;
	else
		r = sendto(fd, "x", 1, 0, (struct sockaddr *)&a, (socklen_t)alen) != 1;
	r = r ? errno : 0;
	close(fd);
	return report(r);
}

static int do_dgram_listen(const char *path, const char *out)
{
	struct sockaddr_un a;
	int fd, alen = unix_addr(path, &a);
	char b[16];

	if (alen < 0)
		return report(-alen);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return report(errno);
	if (path[0] != '@')
		unlink(path);
	if (bind(fd, (struct sockaddr *)&a, (socklen_t)alen))
		return report(errno);
	chmod(path, 0777);
	report(0);
	fflush(stdout);
	for (;;) {
		if (recv(fd, b, sizeof(b), 0) > 0) {
			FILE *f = fopen(out, "a");

			if (f) {
				fputs("got\n", f);
				fclose(f);
			}
		}
	}
}

static int do_utimes(const char *path)
{
	struct timespec ts[2] = { { 1000000, 0 }, { 1000000, 0 } };

	return sys(utimensat(AT_FDCWD, path, ts, 0));
}

/* An unprivileged user in a new user and mount namespace: every capability
 * there (no id map is written: that would be a write the fs rules judge). */
static int become_userns(void)
{
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		return errno;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
		return errno;
	return 0;
}

static int clone_tree(const char *dir)
{
	return open_tree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
}

static int open_mode(const char *mode)
{
	return !strcmp(mode, "a") ? O_WRONLY | O_APPEND : O_RDONLY;
}

static int do_tree_open(const char *dir, const char *file, const char *mode)
{
	int t = clone_tree(dir), fd;

	if (t < 0)
		return report(errno);
	fd = openat(t, file, open_mode(mode) | O_CLOEXEC);
	if (fd < 0)
		return report(errno);
	if (!strcmp(mode, "a") && write(fd, "x\n", 2) != 2)
		return report(errno);
	return report(0);
}

static int do_tree_proc(const char *dir, const char *file)
{
	int t = clone_tree(dir), p, fd;
	char path[64];

	if (t < 0)
		return report(errno);
	p = openat(t, file, O_PATH | O_CLOEXEC);
	if (p < 0)
		return report(errno);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return report(fd < 0 ? errno : 0);
}

static int do_tree_move(const char *dir, const char *to, const char *file, const char *mode)
{
	char path[512];
	int t, fd;

	if (geteuid() == 0 && unshare(CLONE_NEWNS))
		return report(errno);
	t = clone_tree(dir);
	if (t < 0)
		return report(errno);
	if (move_mount(t, "", AT_FDCWD, to, MOVE_MOUNT_F_EMPTY_PATH))
		return report(errno);
	snprintf(path, sizeof(path), "%s/%s", to, file);
	fd = open(path, open_mode(mode) | O_CLOEXEC);
	if (fd < 0)
		return report(errno);
	if (!strcmp(mode, "a") && write(fd, "x\n", 2) != 2)
		return report(errno);
	return report(0);
}

static int do_tree_exec(const char *dir, const char *file, char *self)
{
	char *argv[] = { self, "nop", NULL };
	char *envp[] = { NULL };
	int t = clone_tree(dir);

	if (t < 0)
		return report(errno);
	fflush(stdout);
	syscall(SYS_execveat, t, file, argv, envp, 0);
	return report(errno);
}

static int do_fsconfig(const char *type)
{
	int fd = fsopen(type, FSOPEN_CLOEXEC);

	if (fd < 0)
		return report(errno);
	return sys(fsconfig(fd, FSCONFIG_SET_STRING, "size", "64k", 0));
}

static int do_umount(const char *dir)
{
	if (geteuid() == 0 && unshare(CLONE_NEWNS))
		return report(errno);
	return sys(umount2(dir, MNT_DETACH));
}

static int do_pivot_root(const char *dir)
{
	if (geteuid() == 0 && unshare(CLONE_NEWNS))
		return report(errno);
	if (chdir(dir))
		return report(errno);
	return sys((int)syscall(SYS_pivot_root, ".", "."));
}

static int do_sigio(pid_t pid, int sig)
{
	int p[2];

	if (pipe(p))
		return report(errno);
	if (fcntl(p[0], F_SETOWN, pid) || (sig && fcntl(p[0], F_SETSIG, sig)) ||
	    fcntl(p[0], F_SETFL, O_ASYNC))
		return report(errno);
	if (write(p[1], "x", 1) != 1)
		return report(errno);
	return report(0);
}

static int do_memfd_exec(const char *name, char *self)
{
	char *argv[] = { self, "nop", NULL };
	char *envp[] = { NULL };
	char buf[65536];
	int in, fd;
	ssize_t n;

	fd = memfd_create(name, MFD_CLOEXEC);
	in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || in < 0)
		return report(errno);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			return report(errno);
	fflush(stdout);
	syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
	return report(errno);
}

static int do_verity_enable(const char *path)
{
	struct fsverity_enable_arg arg = { .version = 1,
					   .hash_algorithm = FS_VERITY_HASH_ALG_SHA256,
					   .block_size = 4096 };
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return report(errno);
	ret = ioctl(fd, FS_IOC_ENABLE_VERITY, &arg) ? errno : 0;
	close(fd);
	return report(ret);
}

static int do_verity_measure(const char *path)
{
	struct {
		struct fsverity_digest d;
		unsigned char buf[64];
	} m = { .d.digest_size = 64 };
	int fd = open(path, O_RDONLY | O_CLOEXEC), i;

	if (fd < 0)
		return report(errno);
	if (ioctl(fd, FS_IOC_MEASURE_VERITY, &m.d)) {
		i = errno;
		close(fd);
		return report(i);
	}
	close(fd);
	if (m.d.digest_algorithm != FS_VERITY_HASH_ALG_SHA256 || m.d.digest_size != 32)
		return report(EPROTO);
	printf("sha256:");
	for (i = 0; i < 32; i++)
		printf("%02x", m.d.digest[i]);
	printf("\n");
	return 0;
}

static int do_pipe_reopen(void)
{
	char path[64];
	int p[2], fd;

	if (pipe(p))
		return report(errno);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	return report(fd < 0 ? errno : 0);
}

int main(int argc, char **argv)
{
	const char *op;
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && !strcmp(argv[1], "-u")) {
		err = become_userns();
		if (err)
			return report(err);
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	op = argc > 1 ? argv[1] : "";
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
	if (!strcmp(op, "bpf-map"))
		return do_bpf_map();
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
	if (!strcmp(op, "dgram") && argc == 3)
		return do_dgram(argv[2], 0);
	if (!strcmp(op, "dgram-connect") && argc == 3)
		return do_dgram(argv[2], 1);
	if (!strcmp(op, "dgram-listen") && argc == 4)
		return do_dgram_listen(argv[2], argv[3]);
	if (!strcmp(op, "chmod") && argc == 3)
		return sys(chmod(argv[2], 0777));
	if (!strcmp(op, "chown") && argc == 3)
		return sys(chown(argv[2], 65534, 65534));
	if (!strcmp(op, "utimes") && argc == 3)
		return do_utimes(argv[2]);
	if (!strcmp(op, "setxattr") && argc == 3)
		return sys(setxattr(argv[2], "trusted.kw", "x", 1, 0));
	if (!strcmp(op, "removexattr") && argc == 3)
		return sys(removexattr(argv[2], "trusted.kw"));
	if (!strcmp(op, "setacl") && argc == 3)
		return do_setacl(argv[2]);
	if (!strcmp(op, "removeacl") && argc == 3)
		return sys(removexattr(argv[2], "system.posix_acl_access"));
	if (!strcmp(op, "chattr") && argc == 3)
		return do_chattr(argv[2]);
	if (!strcmp(op, "ftruncate-fd") && argc == 3)
		return sys(ftruncate(atoi(argv[2]), 0));
	if (!strcmp(op, "tree-open") && argc == 5)
		return do_tree_open(argv[2], argv[3], argv[4]);
	if (!strcmp(op, "tree-proc") && argc == 4)
		return do_tree_proc(argv[2], argv[3]);
	if (!strcmp(op, "tree-move") && argc == 6)
		return do_tree_move(argv[2], argv[3], argv[4], argv[5]);
	if (!strcmp(op, "verity-enable") && argc == 3)
		return do_verity_enable(argv[2]);
	if (!strcmp(op, "verity-measure") && argc == 3)
		return do_verity_measure(argv[2]);
	if (!strcmp(op, "tree-exec") && argc == 4)
		return do_tree_exec(argv[2], argv[3], argv[0]);
	if (!strcmp(op, "fsconfig") && argc == 3)
		return do_fsconfig(argv[2]);
	if (!strcmp(op, "umount") && argc == 3)
		return do_umount(argv[2]);
	if (!strcmp(op, "pivot-root") && argc == 3)
		return do_pivot_root(argv[2]);
	if (!strcmp(op, "sigio") && argc == 4)
		return do_sigio(atoi(argv[2]), atoi(argv[3]));
	if (!strcmp(op, "memfd-exec") && argc == 3)
		return do_memfd_exec(argv[2], argv[0]);
	if (!strcmp(op, "pipe-reopen"))
		return do_pipe_reopen();
	fprintf(stderr, "usage: kw-lsmprobe OP ARGS (see the source)\n");
	return 2;
}
