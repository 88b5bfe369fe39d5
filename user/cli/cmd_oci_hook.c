/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness oci-hook: an OCI runtime hook (runc, crun, and podman or CRI-O
 * through oci-hooks.d) that records a container without changing the runtime.
 *
 * createRuntime: the runtime has made the container's process and its cgroup
 * but has not yet run pivot_root, let alone the container's program (runc and
 * crun hold it until `start`). The hook finds the cgroup from that pid, opens
 * a kwitnessd session for it and remembers the session in its state folder,
 * so the kernel is enforcing and recording before the workload can act.
 * poststop: the container is gone; the hook closes the session, which writes
 * the decision log's trailer and signs the record.
 *
 * The configuration is in the bundle's config.json annotations (io.kwitness.*).
 * Without io.kwitness.policy the hook does nothing, so it can be installed for
 * every container. Any error fails the hook (the runtime then refuses to start
 * the container) unless io.kwitness.on-error is "allow".
 *
 * Whoever writes a container's annotations is not trusted with the host: the
 * policy annotation only names a file of the policy folder, opened without
 * following links and without blocking, and the hook ends at its deadline
 * whatever it waits for (docs/security.md, "The OCI hook"). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <jansson.h>
#include <linux/openat2.h>

#include "client.h"
#include "commands.h"
#include "lib/buf.h"
#include "lib/cgroup.h"
#include "kwitness/client.h"
#include "policy/policy.h"
#include "lib/text_safe.h"
#include "image/rootfs_digest.h"
#include "oci_identity.h"
#include "oci_rootless.h"
#include "oci_hook_note.h"

#define OCI_DEFAULT_STATE_DIR "/run/kwitness/oci"
#define OCI_DEFAULT_POLICY_DIR "/etc/kwitness/policies"
#define OCI_POLICY_DIR_ENV "KWITNESS_OCI_POLICY_DIR"
/* Seconds a stage may take, all of it: reading the state, digesting the
 * rootfs, every exchange with kwitnessd. */
#define OCI_DEFAULT_TIMEOUT 30
#define OCI_TIMEOUT_ENV "KWITNESS_OCI_TIMEOUT"
#define OCI_POD_SANDBOX_ID_ENV "KWITNESS_OCI_POD_SANDBOX_ID"
#define OCI_TIMEOUT_MAX 3600
#define OCI_DEFAULT_SANDBOX_PREFIX "spiffe://kwitness.local/oci/"
#define OCI_STATE_MAX (1024 * 1024)
#define OCI_CONFIG_MAX (8 * 1024 * 1024)
#define OCI_ID_MAX 256
/* The child cgroup made when the container's cgroup is shared. */
#define OCI_DEDICATED_PREFIX "kwitness-"

#define ANN_PREFIX "io.kwitness."
#define ANN_POLICY "io.kwitness.policy"
#define ANN_SANDBOX_ID "io.kwitness.sandbox-id"
#define ANN_IMAGE_DIGEST "io.kwitness.image-digest"
#define ANN_MODEL_PROVIDER "io.kwitness.model-provider"
#define ANN_MODEL_ID "io.kwitness.model-id"
#define ANN_DATA_CLASS "io.kwitness.data-class"
#define ANN_ON_ERROR "io.kwitness.on-error"

static const char *const known_annotations[] = {
	ANN_POLICY, ANN_SANDBOX_ID, ANN_IMAGE_DIGEST, ANN_MODEL_PROVIDER,
	ANN_MODEL_ID, ANN_DATA_CLASS, ANN_ON_ERROR,
};

enum stage { STAGE_NONE, STAGE_CREATE_RUNTIME, STAGE_POSTSTOP };

struct hook {
	enum stage stage;
	const char *socket, *state_dir, *policy_dir;
	const char *pod_sandbox_tmpl; /* the sandbox id of a pod's container */
	struct oci_identity ident;
	int64_t timeout;
	json_t *state, *config;
	const char *id, *bundle;
	pid_t pid;
	const json_t *ann;
	bool allow_on_error;
	char err[1024];
};

static void oci_hook_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness oci-hook [--socket PATH] [--state-dir DIR] [createRuntime|poststop]\n\n"
		"An OCI runtime hook: reads the container state JSON on stdin. createRuntime\n"
		"opens a kwitnessd session for the container's cgroup (found from its pid);\n"
		"poststop closes it and kwitnessd writes the signed record. Without a stage\n"
		"argument the stage follows the state's status (creating or created: createRuntime;\n"
		"stopped: poststop).\n"
		"Configured by the bundle's config.json annotations:\n"
		"  io.kwitness.policy          the name of a policy bundle file in the policy\n"
		"                              folder (no path: no '/', no leading '.'); without\n"
		"                              it the hook does nothing\n"
		"  io.kwitness.sandbox-id      default, for a pod's container (CRI annotations):\n"
		"                              the --pod-sandbox-id template; else\n"
		"                              " OCI_DEFAULT_SANDBOX_PREFIX "<container id>\n"
		"  io.kwitness.pod-namespace, io.kwitness.pod-name, io.kwitness.container-name\n"
		"                              name what the runtime does not (podman); never\n"
		"                              a name the runtime gave\n"
		"  io.kwitness.image-digest    default the digest of the rootfs listing\n"
		"  io.kwitness.model-provider, io.kwitness.model-id, io.kwitness.data-class\n"
		"  io.kwitness.on-error        deny (default: any error stops the container)\n"
		"                              or allow (the container runs unrecorded)\n"
		"Options:\n"
		"  --socket PATH     kwitnessd's socket (else $KWITNESS_SOCKET, else\n"
		"                    " KW_DEFAULT_SOCKET ")\n"
		"  --state-dir DIR   where open sessions are remembered between the stages\n"
		"                    (default " OCI_DEFAULT_STATE_DIR ")\n"
		"  --policy-dir DIR  the folder of the policies annotations may name (else\n"
		"                    $" OCI_POLICY_DIR_ENV ", else " OCI_DEFAULT_POLICY_DIR ");\n"
		"                    owned by root (or the hook's user), writable by no one else\n"
		"  --pod-sandbox-id TEMPLATE  the sandbox id of a pod's container (else\n"
		"                    $" OCI_POD_SANDBOX_ID_ENV ", else\n"
		"                    " OCI_DEFAULT_POD_SANDBOX_ID ");\n"
		"                    also {pod_uid}, {container_id}\n"
		"  --timeout SECONDS the stage's deadline, 1 to 3600 (else $" OCI_TIMEOUT_ENV ",\n"
		"                    else 30): past it the hook fails (or, with on-error allow,\n"
		"                    lets the container run unrecorded)\n"
		"  --help            this text\n");
}

static int hfail(struct hook *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int hfail(struct hook *h, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h->err, sizeof(h->err), fmt, ap);
	va_end(ap);
	for (char *c = h->err; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	return -1;
}

/* The deadline: SIGALRM ends the hook, whatever it waits for (a stalled
 * kwitnessd, a runtime that never closes stdin, a slow file system), with the
 * line prepared for it. Two lines, so that the handler never reads one while
 * it is rewritten. */
static char deadline_text[2][640];
static size_t deadline_len[2];
static volatile sig_atomic_t deadline_which, deadline_status = 1;

static void deadline_hit(int sig)
{
	int w = deadline_which;

	(void)sig;
	if (write(STDERR_FILENO, deadline_text[w], deadline_len[w]) < 0) {
		/* nothing more to say */
	}
	_exit(deadline_status);
}

/* The line the deadline prints, once the container id is known. */
static void deadline_say(const struct hook *h, const char *id)
{
	int next = !deadline_which;
	char safe_id[OCI_ID_MAX + 1];
	int n;

	n = snprintf(deadline_text[next], sizeof(deadline_text[next]),
		     "kwitness oci-hook: %s: the stage did not finish within its deadline of %lld s "
		     "(--timeout)%s\n", kw_text_safe(id, safe_id, sizeof(safe_id)),
		     (long long)h->timeout, h->allow_on_error ?
		     " (io.kwitness.on-error is allow: the container runs unrecorded)" : "");
	deadline_len[next] = n < 0 ? 0 : (size_t)n < sizeof(deadline_text[next]) ?
			     (size_t)n : sizeof(deadline_text[next]) - 1;
	deadline_status = h->allow_on_error ? 0 : 1;
	deadline_which = next;
}

static void deadline_start(const struct hook *h)
{
	struct sigaction sa = { .sa_handler = deadline_hit };

	deadline_say(h, "(no valid id)");
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL); /* no SA_RESTART: nothing waits past it */
	alarm((unsigned)h->timeout);
}

/* runc and crun accept ids of letters, digits and "_+-."; so does the hook,
 * since the id names the state file and the dedicated cgroup. */
static bool id_valid(const char *id)
{
	size_t n = strlen(id);

	if (!n || n > OCI_ID_MAX || !strcmp(id, ".") || !strcmp(id, ".."))
		return false;
	for (const char *c = id; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '+' || *c == '-' || *c == '.'))
			return false;
	return true;
}

static const char *annotation(const struct hook *h, const char *key)
{
	return json_string_value(json_object_get(h->ann, key));
}

/* The annotation names a file of the policy folder: one name, not a path. */
static bool policy_name_valid(const char *name)
{
	if (!*name || name[0] == '.' || strlen(name) > NAME_MAX)
		return false;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		if (*c == '/' || *c < 0x20 || *c == 0x7f)
			return false;
	return true;
}

/* name in the folder dfd, never through a symbolic link and without waiting
 * for a writer (a FIFO) or a device: openat2 resolves beneath the folder with
 * no link at all; where the kernel lacks it (before 5.6, or a seccomp filter
 * refusing it), the name is one component and O_NOFOLLOW refuses a link. */
static int open_beneath(int dfd, const char *name)
{
	const int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC;
#ifdef SYS_openat2
	struct open_how how = {
		.flags = flags,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, dfd, name, &how, sizeof(how));

	if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
		return fd;
#endif
	return openat(dfd, name, flags);
}

/* The policy the annotation names, read into out. Errors name the
 * annotation and the rule; the file's bytes never reach them. */
static int read_policy(struct hook *h, struct kw_buf *out)
{
	const char *name = annotation(h, ANN_POLICY);
	struct stat st;
	int dfd, fd, e;

	if (!policy_name_valid(name))
		return hfail(h, "annotation %s: not a file name of the policy folder %s (a name "
				"without '/' that does not start with '.')", ANN_POLICY, h->policy_dir);
	dfd = open(h->policy_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return hfail(h, "annotation %s: the policy folder %s: %s", ANN_POLICY, h->policy_dir,
			     strerror(errno));
	if (fstat(dfd, &st) || (st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022)) {
		close(dfd);
		return hfail(h, "annotation %s: the policy folder %s is not owned by root or is "
				"writable by others", ANN_POLICY, h->policy_dir);
	}
	fd = open_beneath(dfd, name);
	e = errno;
	close(dfd);
	if (fd < 0)
		return hfail(h, "annotation %s: %s in %s: %s", ANN_POLICY, name, h->policy_dir,
			     e == ELOOP ? "a symbolic link, not followed" : strerror(e));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return hfail(h, "annotation %s: %s in %s: not a regular file", ANN_POLICY, name,
			     h->policy_dir);
	}
	e = st.st_size > KW_POLICY_MAX_BYTES ? -EFBIG : kw_read_fd(fd, KW_POLICY_MAX_BYTES, out);
	close(fd);
	if (e == -EFBIG)
		return hfail(h, "annotation %s: %s in %s: larger than the bundle limit of %d bytes",
			     ANN_POLICY, name, h->policy_dir, KW_POLICY_MAX_BYTES);
	if (e)
		return hfail(h, "annotation %s: %s in %s: %s", ANN_POLICY, name, h->policy_dir,
			     strerror(-e));
	return 0;
}

/* The state on stdin, then the bundle's config.json. */
static int read_inputs(struct hook *h)
{
	struct kw_buf in = { 0 };
	json_error_t jerr;
	const char *status, *key;
	char path[PATH_MAX];
	json_t *v;
	int e;

	e = kw_read_fd(STDIN_FILENO, OCI_STATE_MAX, &in);
	if (e)
		return hfail(h, "reading the container state on stdin: %s",
			     e == -EFBIG ? "too large" : strerror(-e));
	h->state = json_loadb(in.data ? in.data : "", in.len, JSON_REJECT_DUPLICATES, &jerr);
	kw_buf_free(&in);
	if (!json_is_object(h->state))
		return hfail(h, "the container state on stdin is not a JSON object");
	h->id = json_string_value(json_object_get(h->state, "id"));
	h->bundle = json_string_value(json_object_get(h->state, "bundle"));
	status = json_string_value(json_object_get(h->state, "status"));
	if (!h->id || !id_valid(h->id))
		return hfail(h, "the state's id is missing or not a container id");
	if (!h->bundle || h->bundle[0] != '/')
		return hfail(h, "the state's bundle is missing or not an absolute path");
	if (h->stage == STAGE_NONE) {
		/* createRuntime sees "creating" from runc, "created" from crun */
		if (status && (!strcmp(status, "creating") || !strcmp(status, "created")))
			h->stage = STAGE_CREATE_RUNTIME;
		else if (status && !strcmp(status, "stopped"))
			h->stage = STAGE_POSTSTOP;
		else
			return hfail(h, "status \"%s\" is not a stage the hook serves; name it: "
					"createRuntime or poststop", status ? status : "");
	}
	v = json_object_get(h->state, "pid");
	if (json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) <= INT_MAX)
		h->pid = (pid_t)json_integer_value(v);
	if (snprintf(path, sizeof(path), "%s/config.json", h->bundle) >= (int)sizeof(path))
		return hfail(h, "bundle path too long");
	e = kw_read_regular_file(path, OCI_CONFIG_MAX, &in);
	if (e) {
		kw_buf_free(&in);
		return hfail(h, "%s: %s", path, e == -EFBIG ? "too large" : strerror(-e));
	}
	h->config = json_loadb(in.data ? in.data : "", in.len, 0, &jerr);
	kw_buf_free(&in);
	if (!json_is_object(h->config))
		return hfail(h, "%s: not a JSON object", path);
	h->ann = json_object_get(h->config, "annotations");
	if (h->ann && !json_is_object(h->ann))
		return hfail(h, "%s: annotations is not an object", path);
	/* every io.kwitness.* annotation must be known and a string: a typo
	 * must not silently drop a setting */
	json_object_foreach((json_t *)h->ann, key, v) {
		bool known = false;

		if (strncmp(key, ANN_PREFIX, strlen(ANN_PREFIX)))
			continue;
		for (size_t i = 0; i < sizeof(known_annotations) / sizeof(*known_annotations); i++)
			known |= !strcmp(key, known_annotations[i]);
		for (size_t i = 0; i < sizeof(oci_identity_annotations) / sizeof(char *); i++)
			known |= !strcmp(key, oci_identity_annotations[i]);
		if (!known)
			return hfail(h, "unknown annotation %s", key);
		if (!json_is_string(v) || !*json_string_value(v))
			return hfail(h, "annotation %s: an empty or non-string value", key);
	}
	if (annotation(h, ANN_ON_ERROR)) {
		const char *oe = annotation(h, ANN_ON_ERROR);

		if (!strcmp(oe, "allow"))
			h->allow_on_error = true;
		else if (strcmp(oe, "deny"))
			return hfail(h, "annotation %s: \"%s\" is neither allow nor deny", ANN_ON_ERROR,
				     oe);
	}
	if (oci_identity_read(h->ann, h->id, &h->ident, h->err, sizeof(h->err)))
		return -1;
	return 0;
}

/* The hook's state folder, made 0700 when missing; refused when it is not a
 * folder of ours that only we can write. Returns an O_DIRECTORY fd. */
static int open_state_dir(struct hook *h, bool create)
{
	struct stat st;
	char parent[PATH_MAX], *slash;
	int fd;

	if (create && mkdir(h->state_dir, 0700) && errno == ENOENT) {
		/* the parent too (e.g. /run/kwitness before kwitnessd ran) */
		snprintf(parent, sizeof(parent), "%s", h->state_dir);
		slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = '\0';
			(void)mkdir(parent, 0755);
		}
		(void)mkdir(h->state_dir, 0700);
	}
	fd = open(h->state_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return hfail(h, "state folder %s: %s", h->state_dir, strerror(errno));
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return hfail(h, "state folder %s: not ours or writable by others", h->state_dir);
	}
	return fd;
}

static int state_name(struct hook *h, char *name, size_t cap)
{
	if (snprintf(name, cap, "%s.json", h->id) >= (int)cap)
		return hfail(h, "container id too long");
	return 0;
}

/* True when the cgroup holds a process other than pid (or is the root). */
static int cgroup_shared(struct hook *h, const char *cg, const char *mount, bool *shared)
{
	struct kw_buf procs = { 0 };
	char path[PATH_MAX + 16];
	char *line, *save = NULL;
	int e;

	*shared = !strcmp(cg, mount);
	if (*shared)
		return 0;
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	e = kw_read_file(path, 16 * 1024 * 1024, &procs);
	if (e)
		return hfail(h, "%s: %s", path, strerror(-e));
	if (kw_buf_putc(&procs, '\0')) {
		kw_buf_free(&procs);
		return hfail(h, "out of memory");
	}
	for (line = strtok_r(procs.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (atol(line) != (long)h->pid)
			*shared = true;
	kw_buf_free(&procs);
	return 0;
}

/* Moves the container's init into a child cgroup of its own. */
static int make_dedicated(struct hook *h, const char *cg, char *out, size_t cap)
{
	int e;

	if (snprintf(out, cap, "%s/%s%s", cg, OCI_DEDICATED_PREFIX, h->id) >= (int)cap)
		return hfail(h, "cgroup path too long");
	if (mkdir(out, 0755))
		return hfail(h, "making the dedicated cgroup %s: %s", out, strerror(errno));
	e = kw_cgroup_join(out, h->pid);
	if (e) {
		rmdir(out);
		return hfail(h, "moving pid %d into %s: %s", (int)h->pid, out, strerror(-e));
	}
	return 0;
}

/* Undoes make_dedicated after a later failure: back to the parent, child gone. */
static void undo_dedicated(struct hook *h, const char *parent, const char *child)
{
	(void)kw_cgroup_join(parent, h->pid);
	rmdir(child);
}

static int image_digest(struct hook *h, char out[KW_DIGEST_STR_MAX])
{
	const char *given = annotation(h, ANN_IMAGE_DIGEST), *root;
	char path[PATH_MAX], err[512];

	if (given) {
		if (!kw_digest_valid(given))
			return hfail(h, "annotation %s: not sha256:<64 hex> or sha384:<96 hex>",
				     ANN_IMAGE_DIGEST);
		snprintf(out, KW_DIGEST_STR_MAX, "%s", given);
		return 0;
	}
	root = json_string_value(json_object_get(json_object_get(h->config, "root"), "path"));
	if (!root || !*root)
		return hfail(h, "config.json has no root.path to digest (give %s)", ANN_IMAGE_DIGEST);
	if (snprintf(path, sizeof(path), "%s%s%s", root[0] == '/' ? "" : h->bundle,
		     root[0] == '/' ? "" : "/", root) >= (int)sizeof(path))
		return hfail(h, "rootfs path too long");
	if (kw_rootfs_digest(path, out, err, sizeof(err)))
		return hfail(h, "%s", err);
	return 0;
}

/* The subject and the pod identity of the open: the annotation's sandbox id,
 * else the pod template for a pod's container, else the container's own. */
static int open_identity(struct hook *h, struct kwitness_open_params *p, char *sandbox,
			 size_t cap)
{
	if (annotation(h, ANN_SANDBOX_ID))
		p->sandbox_id = annotation(h, ANN_SANDBOX_ID);
	else if (oci_identity_is_pod(&h->ident)) {
		if (oci_identity_sandbox_id(&h->ident, h->pod_sandbox_tmpl, sandbox, cap, h->err,
					    sizeof(h->err)))
			return -1;
		p->sandbox_id = sandbox;
	} else {
		snprintf(sandbox, cap, OCI_DEFAULT_SANDBOX_PREFIX "%s", h->id);
		p->sandbox_id = sandbox;
	}
	p->pod_namespace = h->ident.v[KW_WL_POD_NAMESPACE];
	p->pod_name = h->ident.v[KW_WL_POD_NAME];
	p->pod_uid = h->ident.v[KW_WL_POD_UID];
	p->pod_sandbox_id = h->ident.v[KW_WL_POD_SANDBOX_ID];
	p->container_name = h->ident.v[KW_WL_CONTAINER_NAME];
	p->container_id = h->ident.v[KW_WL_CONTAINER_ID];
	p->container_image = h->ident.v[KW_WL_CONTAINER_IMAGE];
	return 0;
}

static int create_runtime(struct hook *h, struct kw_buf *policy)
{
	struct kwitness_open_params p = { 0 };
	struct kwitness_error ke;
	char mount[PATH_MAX], cg[PATH_MAX], dedicated[PATH_MAX + 300];
	char sandbox[1024], digest[KW_DIGEST_STR_MAX];
	char session[KWITNESS_SESSION_ID_MAX], name[OCI_ID_MAX + 16], *text;
	const char *target;
	bool shared;
	json_t *st;
	int dfd, fd, e;

	if (h->pid <= 0)
		return hfail(h, "the state has no container pid (createRuntime needs one)");
	if (read_policy(h, policy))
		return -1;
	if (open_identity(h, &p, sandbox, sizeof(sandbox)))
		return -1;
	if (image_digest(h, digest))
		return -1;
	dfd = open_state_dir(h, true);
	if (dfd < 0)
		return -1;
	if (state_name(h, name, sizeof(name)) || !faccessat(dfd, name, F_OK, AT_SYMLINK_NOFOLLOW)) {
		close(dfd);
		return h->err[0] ? -1 :
		       hfail(h, "a session for this container id is already open (%s/%s)",
			     h->state_dir, name);
	}
	/* kwitnessd must answer before any cgroup is touched */
	if (kwitness_call(h->socket, "{\"op\":\"" KW_OP_PING "\"}", &text, &ke)) {
		close(dfd);
		return hfail(h, "%s", ke.message);
	}
	free(text);
	e = kw_cgroup2_mount(mount, sizeof(mount));
	if (e || kwitness_pid_cgroup(h->pid, cg, sizeof(cg), &ke) ||
	    cgroup_shared(h, cg, mount, &shared)) {
		close(dfd);
		return h->err[0] ? -1 :
		       hfail(h, "%s", e ? "no cgroup2 mount" : ke.message);
	}
	target = cg;
	if (shared) {
		if (make_dedicated(h, cg, dedicated, sizeof(dedicated))) {
			close(dfd);
			return -1;
		}
		target = dedicated;
	}
	p.cgroup = target;
	p.policy = policy->data ? policy->data : "";
	p.policy_len = policy->len;
	p.image_digest = digest;
	p.model_provider = annotation(h, ANN_MODEL_PROVIDER);
	p.model_id = annotation(h, ANN_MODEL_ID);
	p.data_class = annotation(h, ANN_DATA_CLASS);
	if (kwitness_open(h->socket, &p, session, NULL, 0, &ke)) {
		/* a refusal of the policy may quote it: its code only */
		if (ke.status == KWITNESS_EREFUSED && !strcmp(ke.code, KW_ERR_POLICY_INVALID))
			hfail(h, "annotation %s: %s in %s: kwitnessd refused the policy (%s)",
			      ANN_POLICY, annotation(h, ANN_POLICY), h->policy_dir, ke.code);
		else
			hfail(h, "%s", ke.message);
		goto undo;
	}
	st = json_pack("{s:s, s:s, s:b, s:s}", "session", session, "cgroup", target, "dedicated",
		       shared, "sandbox_id", p.sandbox_id);
	text = st ? json_dumps(st, JSON_COMPACT) : NULL;
	json_decref(st);
	fd = text ? openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
	e = fd < 0 ? -errno : kw_write_all(fd, text, strlen(text));
	if (fd >= 0 && (close(fd) || e)) {
		unlinkat(dfd, name, 0);
		fd = -1;
	}
	free(text);
	if (fd < 0) {
		struct kwitness_close_result r;

		hfail(h, "cannot remember the session in %s/%s: %s", h->state_dir, name,
		      strerror(e ? -e : EIO));
		/* no poststop could close it: close it now */
		if (!kwitness_close(h->socket, session, &r, &ke))
			kwitness_close_result_free(&r);
		goto undo;
	}
	close(dfd);
	oci_note_open(h->id, session, p.sandbox_id, h->state_dir);
	return 0;
undo:
	if (shared)
		undo_dedicated(h, cg, dedicated);
	close(dfd);
	return -1;
}

static int poststop(struct hook *h)
{
	struct kwitness_close_result r;
	struct kwitness_error ke;
	struct kw_buf text = { 0 };
	char name[OCI_ID_MAX + 16], mount[PATH_MAX];
	const char *session, *cg;
	json_t *st, *reply;
	json_error_t jerr;
	int dfd, fd, e, rc = -1;

	if (access(h->state_dir, F_OK) < 0 && errno == ENOENT) {
		fprintf(stderr, "kwitness oci-hook: %s: poststop: no session was opened for this "
			"container (nothing to close)\n", h->id);
		return 0;
	}
	dfd = open_state_dir(h, false);
	if (dfd < 0)
		return -1;
	if (state_name(h, name, sizeof(name))) {
		close(dfd);
		return -1;
	}
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* createRuntime failed (and said why) or never ran: runc runs
		 * poststop after a failed create, and an error here would only
		 * come before the real reason */
		close(dfd);
		fprintf(stderr, "kwitness oci-hook: %s: poststop: no session was opened for this "
			"container (nothing to close)\n", h->id);
		return 0;
	}
	if (fd < 0) {
		e = errno;
		close(dfd);
		return hfail(h, "the container's session file %s/%s: %s", h->state_dir, name,
			     strerror(e));
	}
	e = kw_read_fd(fd, 64 * 1024, &text);
	close(fd);
	st = e ? NULL : json_loadb(text.data ? text.data : "", text.len, 0, &jerr);
	kw_buf_free(&text);
	session = json_string_value(json_object_get(st, "session"));
	cg = json_string_value(json_object_get(st, "cgroup"));
	if (!session || !cg) {
		hfail(h, "%s/%s: not a session the hook wrote", h->state_dir, name);
		goto out;
	}
	if (kwitness_close(h->socket, session, &r, &ke)) {
		hfail(h, "closing session %s: %s", session, ke.message);
		/* a session kwitnessd no longer knows will never close: forget it */
		if (ke.status == KWITNESS_EREFUSED && !strcmp(ke.code, "unknown_session"))
			unlinkat(dfd, name, 0);
		goto out;
	}
	reply = json_loads(r.reply_json, 0, &jerr);
	printf("container: %s\nsession:   %s\n", h->id, session);
	kw_print_close_summary(stdout, reply);
	oci_note_closed(dfd, h->state_dir, h->id, session, reply);
	json_decref(reply);
	kwitness_close_result_free(&r);
	unlinkat(dfd, name, 0);
	/* the dedicated cgroup is the hook's to remove; the runtime removes its own */
	if (json_is_true(json_object_get(st, "dedicated")) &&
	    !kw_cgroup2_mount(mount, sizeof(mount)) && !strncmp(cg, mount, strlen(mount)) &&
	    strstr(cg, "/" OCI_DEDICATED_PREFIX) && !strstr(cg, "/.."))
		(void)kw_cgroup_remove(cg);
	rc = 0;
out:
	json_decref(st);
	close(dfd);
	return rc;
}

int cmd_oci_hook(int argc, char **argv)
{
	struct hook h = { .state_dir = OCI_DEFAULT_STATE_DIR, .policy_dir = getenv(OCI_POLICY_DIR_ENV),
			  .timeout = OCI_DEFAULT_TIMEOUT,
			  .pod_sandbox_tmpl = getenv(OCI_POD_SANDBOX_ID_ENV) };
	const char *env_timeout = getenv(OCI_TIMEOUT_ENV);
	struct kw_buf policy = { 0 };
	const struct cli_opt opts[] = {
		{ "socket", 0, CLI_TEXT, &h.socket },
		{ "state-dir", 0, CLI_TEXT, &h.state_dir },
		{ "policy-dir", 0, CLI_TEXT, &h.policy_dir },
		{ "pod-sandbox-id", 0, CLI_TEXT, &h.pod_sandbox_tmpl },
		{ "timeout", 0, CLI_NUMBER, &h.timeout, .min = 1, .max = OCI_TIMEOUT_MAX,
		  .bad = "needs whole seconds from 1 to 3600" },
		{ "help", 'h', CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness oci-hook", .usage = oci_hook_usage, .opts = opts,
				 .on_bad = CLI_BAD_USAGE };
	int rc;

	if (env_timeout) {
		char *end;
		long long t = strtoll(env_timeout, &end, 10);

		if (*end || end == env_timeout || t < 1 || t > OCI_TIMEOUT_MAX) {
			fprintf(stderr, "kwitness oci-hook: $" OCI_TIMEOUT_ENV ": whole seconds from 1 "
					"to 3600\n");
			return 2;
		}
		h.timeout = t;
	}
	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (!h.policy_dir || !*h.policy_dir)
		h.policy_dir = OCI_DEFAULT_POLICY_DIR;
	if (!h.pod_sandbox_tmpl || !*h.pod_sandbox_tmpl)
		h.pod_sandbox_tmpl = OCI_DEFAULT_POD_SANDBOX_ID;
	if (argc - optind > 1) {
		fprintf(stderr, "kwitness oci-hook: one stage at most\n");
		return 2;
	}
	if (optind < argc) {
		if (!strcmp(argv[optind], "createRuntime"))
			h.stage = STAGE_CREATE_RUNTIME;
		else if (!strcmp(argv[optind], "poststop"))
			h.stage = STAGE_POSTSTOP;
		else {
			fprintf(stderr, "kwitness oci-hook: unsupported stage '%s' (createRuntime or "
					"poststop)\n", argv[optind]);
			return 2;
		}
	}
	/* a runtime that went away must not kill the hook half way */
	signal(SIGPIPE, SIG_IGN);
	deadline_start(&h);
	rc = read_inputs(&h);
	if (h.id && id_valid(h.id))
		deadline_say(&h, h.id);
	if (!rc && (!annotation(&h, ANN_POLICY) || h.ident.runtime_sandbox)) {
		/* not a kwitness container, or a CRI pod's pause container: the
		 * runtime's own, which holds the pod's namespaces and runs nothing */
		rc = 0;
	} else if (!rc && oci_in_user_namespace()) {
		rc = hfail(&h, "the hook runs in a user namespace (a rootless runtime, such as "
			       "rootless podman): kwitness governs containers of rootful runtimes only");
	} else if (!rc) {
		rc = h.stage == STAGE_CREATE_RUNTIME ? create_runtime(&h, &policy) : poststop(&h);
	}
	alarm(0);
	if (rc) {
		/* the error quotes annotations and paths a container chose */
		fprintf(stderr, "kwitness oci-hook: %s: ", h.id && id_valid(h.id) ? h.id : "(no valid id)");
		kw_text_fput(stderr, h.err);
		fprintf(stderr, "%s\n", h.allow_on_error ? " (io.kwitness.on-error is allow: the "
							 "container runs unrecorded)" : "");
		rc = h.allow_on_error ? 0 : 1;
	}
	kw_buf_free(&policy);
	json_decref(h.state);
	json_decref(h.config);
	return rc;
}
