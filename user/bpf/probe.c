/* SPDX-License-Identifier: Apache-2.0 */
/* `kwitness probe`: for each hook class, does it work on this kernel, and if
 * not, why. A class counts as available only when its trivial program
 * (bpf/probe.bpf.c) loads, attaches, and is seen firing for an operation that a
 * forked child performs. Each class is loaded on its own so one refused program
 * type does not hide the others. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/cgroup.h"
#include "bpf/probe.h"
#include "probe.skel.h"

#define SECURITYFS "/sys/kernel/security"

struct probe_class {
	const char *name;
	enum bpf_prog_type type;
	const char *type_name;
	const char *section; /* for messages */
	bool lsm;
	bool cgroup;
};

static const struct probe_class classes[KW_PROBE_NCLASSES] = {
	[KW_PROBE_CGROUP_NET] = { "cgroup.net", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, "cgroup_sock_addr",
				  "cgroup/connect4", false, true },
	[KW_PROBE_CGROUP_DEV] = { "cgroup.dev", BPF_PROG_TYPE_CGROUP_DEVICE, "cgroup_device",
				  "cgroup/dev", false, true },
	[KW_PROBE_SYSCTL] = { "sysctl", BPF_PROG_TYPE_CGROUP_SYSCTL, "cgroup_sysctl",
			      "cgroup/sysctl", false, true },
	[KW_PROBE_LSM_FILE] = { "lsm.file", BPF_PROG_TYPE_LSM, "lsm", "lsm/file_open", true, false },
	[KW_PROBE_LSM_EXEC] = { "lsm.exec", BPF_PROG_TYPE_LSM, "lsm", "lsm/bprm_check_security",
				true, false },
	[KW_PROBE_LSM_PROC] = { "lsm.proc", BPF_PROG_TYPE_LSM, "lsm", "lsm/task_kill", true, false },
	[KW_PROBE_LSM_MOUNT] = { "lsm.mount", BPF_PROG_TYPE_LSM, "lsm", "lsm/sb_mount", true, false },
	[KW_PROBE_LSM_UNIX] = { "lsm.unix", BPF_PROG_TYPE_LSM, "lsm", "lsm/unix_stream_connect",
				true, false },
	[KW_PROBE_LSM_EXEC_DIGEST] = { "lsm.exec_digest", BPF_PROG_TYPE_LSM, "lsm",
				       "lsm.s/bprm_check_security", true, false },
	[KW_PROBE_LSM_BPF] = { "lsm.bpf", BPF_PROG_TYPE_LSM, "lsm", "lsm/bpf", true, false },
};

const struct kw_probe_limit kw_probe_limits[] = {
	{ "open_tree", "open_tree(OPEN_TREE_CLONE) has no LSM hook: the detached copy it makes is not "
		       "refused when made; fs and exec refuse every path on it (\"mount\":\"detached\") "
		       "and mount refuses attaching it (move_mount)" },
	{ "fsmount", "fsopen and fsmount have no LSM hook: mount refuses setting an option "
		     "(fsconfig) and attaching the new mount (move_mount); fs and exec refuse paths "
		     "on it while it is detached" },
	{ "mount_setattr", "mount_setattr has no LSM hook: mount flags (read-only, idmapped) of "
			   "mounts the sandbox can reach are not governed; paths are judged the same" },
	{ "bind paths", "a file reachable by two paths (a bind mount made before the session) is "
			"judged by the path it was opened through; metadata hooks that see no path "
			"judge up to 4 of its paths" },
	{ "chroot", "a chroot without its own mount namespace is not taken into account: paths "
		    "are from the root of the task's mount namespace" },
	{ "AF_PACKET", "packet sockets never reach cgroup/sock_create: net.socket decides them "
		       "through lsm/socket_create where BPF-LSM works; elsewhere only a sandbox "
		       "without CAP_NET_RAW (kwitness run's default user) is kept from them" },
	{ NULL, NULL },
};

const char *kw_probe_class_name(int cls)
{
	return cls >= 0 && cls < KW_PROBE_NCLASSES ? classes[cls].name : NULL;
}

static struct bpf_program *class_prog(struct kwitness_probe_bpf *s, int cls)
{
	switch (cls) {
	case KW_PROBE_CGROUP_NET: return s->progs.probe_connect4;
	case KW_PROBE_CGROUP_DEV: return s->progs.probe_dev;
	case KW_PROBE_SYSCTL: return s->progs.probe_sysctl;
	case KW_PROBE_LSM_FILE: return s->progs.probe_file_open;
	case KW_PROBE_LSM_EXEC: return s->progs.probe_bprm_check;
	case KW_PROBE_LSM_PROC: return s->progs.probe_task_kill;
	case KW_PROBE_LSM_MOUNT: return s->progs.probe_sb_mount;
	case KW_PROBE_LSM_UNIX: return s->progs.probe_unix_connect;
	case KW_PROBE_LSM_EXEC_DIGEST: return s->progs.probe_bprm_digest;
	case KW_PROBE_LSM_BPF: return s->progs.probe_bpf;
	}
	return NULL;
}

static void say(struct kw_probe_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(struct kw_probe_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
	r->available = false;
}

/* libbpf's own messages would drown the answer; probe failures are expected. */
static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level; (void)fmt; (void)ap;
	return 0;
}

static int ensure_securityfs(void)
{
	if (access(SECURITYFS "/lsm", R_OK) == 0)
		return 0;
	if (mount("securityfs", SECURITYFS, "securityfs", 0, NULL) && errno != EBUSY)
		return -errno;
	return access(SECURITYFS "/lsm", R_OK) ? -errno : 0;
}

int kw_probe_lsm_list(char *buf, size_t len)
{
	int fd, err;
	ssize_t n;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	err = ensure_securityfs();
	if (err)
		return err;
	fd = open(SECURITYFS "/lsm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static bool lsm_list_has_bpf(const char *list)
{
	const char *p = list;
	size_t n;

	while (*p) {
		n = strcspn(p, ",");
		if (n == 3 && !strncmp(p, "bpf", 3))
			return true;
		p += n;
		if (*p == ',')
			p++;
	}
	return false;
}

/* ---- what the child does to make each hook fire ---- */

static int trigger_exec(void)
{
	char path[] = "/tmp/kwitness-probe-exec.XXXXXX";
	char *argv[] = { path, NULL }, *envp[] = { NULL };
	int fd = mkstemp(path), err;

	/* Not a binary format the kernel knows: bprm_check_security runs, then
	 * execve fails with ENOEXEC and the child carries on. */
	if (fd < 0)
		return errno;
	if (write(fd, "kwitness probe\n", 15) != 15 || fchmod(fd, 0700)) {
		err = errno;
		close(fd);
		unlink(path);
		return err;
	}
	close(fd);
	execve(path, argv, envp);
	err = errno == ENOEXEC ? 0 : errno;
	unlink(path);
	return err;
}

static int trigger_unix(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	socklen_t alen;
	int l, c, err = 0;

	/* abstract name: nothing on disk to clean up */
	snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "kwitness-probe-%d", (int)getpid());
	alen = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a.sun_path + 1);
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || c < 0 || bind(l, (struct sockaddr *)&a, alen) || listen(l, 1) ||
	    connect(c, (struct sockaddr *)&a, alen))
		err = errno;
	if (l >= 0)
		close(l);
	if (c >= 0)
		close(c);
	return err;
}

static int trigger(int cls)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(9) };
	char buf[64];
	int fd, err = 0;

	switch (cls) {
	case KW_PROBE_CGROUP_NET:
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		/* a UDP connect sends nothing but runs the connect4 hook */
		if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)))
			err = errno;
		if (fd >= 0)
			close(fd);
		return err;
	case KW_PROBE_CGROUP_DEV:
	case KW_PROBE_SYSCTL:
	case KW_PROBE_LSM_FILE:
		fd = open(cls == KW_PROBE_SYSCTL ? "/proc/sys/kernel/ostype" : "/dev/null",
			  O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return errno;
		if (read(fd, buf, sizeof(buf)) < 0)
			err = errno;
		close(fd);
		return err;
	case KW_PROBE_LSM_EXEC:
	case KW_PROBE_LSM_EXEC_DIGEST:
		return trigger_exec();
	case KW_PROBE_LSM_PROC:
		return kill(getpid(), 0) ? errno : 0;
	case KW_PROBE_LSM_MOUNT:
		/* in a mount namespace of its own: the propagation change stays there */
		if (unshare(CLONE_NEWNS))
			return errno;
		return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ? errno : 0;
	case KW_PROBE_LSM_UNIX:
		return trigger_unix();
	case KW_PROBE_LSM_BPF: {
		/* any command reaches the hook first: the next map id after the last */
		union bpf_attr attr = { .start_id = UINT32_MAX };

		return syscall(__NR_bpf, BPF_MAP_GET_NEXT_ID, &attr, sizeof(attr)) && errno != ENOENT ?
			       errno : 0;
	}
	}
	return EINVAL;
}

/* Forks a child that joins cg_procs (if any) and triggers cls once the parent
 * has told the programs its pid. Returns the child's errno (0: triggered). */
static int run_child(struct kwitness_probe_bpf *skel, int cls, const char *cg_procs, int *child_err)
{
	int go[2], status, fd;
	char c = 0, pidbuf[16];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1 || c != 'g')
			_exit(ECANCELED);
		_exit(trigger(cls) & 0xff);
	}
	close(go[0]);
	if (cg_procs) {
		fd = open(cg_procs, O_WRONLY | O_CLOEXEC);
		snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
		if (fd < 0 || write(fd, pidbuf, strlen(pidbuf)) < 0) {
			*child_err = errno;
			c = 'x';
		} else {
			c = 'g';
		}
		if (fd >= 0)
			close(fd);
	} else {
		c = 'g';
	}
	skel->bss->target_tgid = (__u32)pid;
	if (write(go[1], &c, 1) != 1)
		c = 'x';
	close(go[1]);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (c == 'g')
		*child_err = WIFEXITED(status) ? WEXITSTATUS(status) : EINTR;
	return 0;
}

static const char *errname(int err)
{
	switch (err) {
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case 524: return "ENOTSUPP"; /* kernel-internal, seen from bpf() */
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case E2BIG: return "E2BIG";
	case ESRCH: return "ESRCH";
	case EBUSY: return "EBUSY";
	}
	return strerrorname_np(err) ? strerrorname_np(err) : "error";
}

static void probe_one(int cls, const char *lsm_list, const char *cg2, struct kw_probe_result *r)
{
	const struct probe_class *pc = &classes[cls];
	struct kwitness_probe_bpf *skel = NULL;
	struct bpf_link *link = NULL;
	char cgdir[4200] = "", procs[4300];
	int cgfd = -1, err, child_err = 0, i;

	r->available = false;
	r->reason[0] = '\0';
	/* libbpf's probe for lsm programs loads one against a bogus BTF id and
	 * expects EINVAL; a kernel refusing every lsm program (EPERM) reads as
	 * "unknown" there, so for lsm the trial load below gives the reason. */
	err = libbpf_probe_bpf_prog_type(pc->type, NULL);
	if (err == 0 && !pc->lsm) {
		say(r, "the kernel does not know %s programs", pc->type_name);
		return;
	}
	if (err < 0 && geteuid() != 0) {
		say(r, "cannot probe %s programs: %s (not root)", pc->type_name, errname(-err));
		return;
	}
	if (pc->lsm) {
		if (!lsm_list) {
			say(r, "securityfs not available: cannot read the active LSM list");
			return;
		}
		if (!lsm_list_has_bpf(lsm_list)) {
			say(r, "bpf is not an active LSM (lsm=%s; boot with lsm=...,bpf)", lsm_list);
			return;
		}
	}
	if (pc->cgroup && !cg2) {
		say(r, "no cgroup2 hierarchy mounted");
		return;
	}

	skel = kwitness_probe_bpf__open();
	if (!skel) {
		say(r, "cannot open the probe object: %s", errname(errno));
		return;
	}
	for (i = 0; i < KW_PROBE_NCLASSES; i++)
		bpf_program__set_autoload(class_prog(skel, i), i == cls);
	err = kwitness_probe_bpf__load(skel);
	if (err) {
		err = -err;
		if (pc->lsm && err == EPERM && geteuid() == 0)
			say(r, "lsm programs refused at load: EPERM (no BPF trampoline on this kernel)");
		else
			say(r, "%s refused at load: %s%s", pc->section, errname(err),
			    geteuid() ? " (not root)" : "");
		goto out;
	}

	if (pc->cgroup) {
		snprintf(cgdir, sizeof(cgdir), "%s/kwitness-probe-%d", cg2, (int)getpid());
		if (mkdir(cgdir, 0755) && errno != EEXIST) {
			say(r, "cannot create a probe cgroup under %s: %s", cg2, errname(errno));
			cgdir[0] = '\0';
			goto out;
		}
		cgfd = open(cgdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cgfd < 0) {
			say(r, "cannot open %s: %s", cgdir, errname(errno));
			goto out;
		}
		link = bpf_program__attach_cgroup(class_prog(skel, cls), cgfd);
	} else {
		link = bpf_program__attach(class_prog(skel, cls));
	}
	if (!link) {
		say(r, "%s loads but does not attach: %s", pc->section, errname(errno));
		goto out;
	}

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgdir);
	err = run_child(skel, cls, pc->cgroup ? procs : NULL, &child_err);
	if (err) {
		say(r, "cannot run the probe child: %s", errname(-err));
		goto out;
	}
	if (skel->bss->hits[cls] > 0) {
		r->available = true;
	} else if (cls == KW_PROBE_LSM_EXEC_DIGEST && skel->bss->digest_calls) {
		long dr = (long)skel->bss->digest_ret;

		if (dr < 0)
			say(r, "bpf_ima_file_hash failed: %s (a kernel without CONFIG_IMA?)",
			    errname((int)-dr));
		else
			say(r, "IMA hashes with algorithm %ld, not SHA-256 (boot with ima_hash=sha256)",
			    dr);
	} else if (child_err) {
		say(r, "%s attached but the probe could not trigger it: %s", pc->section,
		    errname(child_err));
	} else {
		say(r, "%s attached but never fired", pc->section);
	}
out:
	bpf_link__destroy(link);
	if (cgfd >= 0)
		close(cgfd);
	if (cgdir[0])
		rmdir(cgdir);
	kwitness_probe_bpf__destroy(skel);
}

int kw_probe_all(struct kw_probe_result out[KW_PROBE_NCLASSES])
{
	libbpf_print_fn_t old = libbpf_set_print(quiet_print);
	char lsm[256], cg2[4096];
	bool have_lsm = kw_probe_lsm_list(lsm, sizeof(lsm)) == 0;
	bool have_cg2 = kw_cgroup2_mount(cg2, sizeof(cg2)) == 0;
	int i;

	for (i = 0; i < KW_PROBE_NCLASSES; i++)
		probe_one(i, have_lsm ? lsm : NULL, have_cg2 ? cg2 : NULL, &out[i]);
	libbpf_set_print(old);
	return 0;
}

int kw_probe_class(int cls, struct kw_probe_result *out)
{
	libbpf_print_fn_t old;
	char lsm[256], cg2[4096] = "";
	bool have_lsm, have_cg2;

	if (cls < 0 || cls >= KW_PROBE_NCLASSES)
		return -EINVAL;
	old = libbpf_set_print(quiet_print);
	have_lsm = kw_probe_lsm_list(lsm, sizeof(lsm)) == 0;
	have_cg2 = !classes[cls].cgroup || kw_cgroup2_mount(cg2, sizeof(cg2)) == 0;
	probe_one(cls, have_lsm ? lsm : NULL, have_cg2 ? cg2 : NULL, out);
	libbpf_set_print(old);
	return 0;
}

int kw_probe_lsm_loadable(char *why, size_t whylen)
{
	libbpf_print_fn_t old;
	struct kwitness_probe_bpf *skel;
	char lsm[256];
	int err, i;

	if (kw_probe_lsm_list(lsm, sizeof(lsm))) {
		snprintf(why, whylen, "securityfs not available: cannot read the active LSM list");
		return 0;
	}
	if (!lsm_list_has_bpf(lsm)) {
		snprintf(why, whylen, "bpf is not an active LSM (lsm=%s)", lsm);
		return 0;
	}
	old = libbpf_set_print(quiet_print);
	skel = kwitness_probe_bpf__open();
	if (!skel) {
		err = errno;
		libbpf_set_print(old);
		snprintf(why, whylen, "cannot open the probe object: %s", errname(err));
		return 0;
	}
	for (i = 0; i < KW_PROBE_NCLASSES; i++)
		bpf_program__set_autoload(class_prog(skel, i), i == KW_PROBE_LSM_FILE);
	err = -kwitness_probe_bpf__load(skel);
	kwitness_probe_bpf__destroy(skel);
	libbpf_set_print(old);
	if (err) {
		if (err == EPERM && geteuid() == 0)
			snprintf(why, whylen,
				 "lsm programs refused at load: EPERM (no BPF trampoline on this kernel)");
		else
			snprintf(why, whylen, "lsm programs refused at load: %s", errname(err));
		return 0;
	}
	return 1;
}
