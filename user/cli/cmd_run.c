/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness run: a recorded sandbox session around one command. Makes a cgroup,
 * opens a session for it (so the cgroup is tagged before anything runs in
 * it), starts the command inside, closes the session when the command exits,
 * verifies the record, removes the cgroup. Exit status is the command's
 * when it ran, else one of lib/messages.h's KW_EXIT_* (docker's and the
 * shells' conventions), so a wrapper can tell the two apart. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/cgroup.h"
#include "client.h"
#include "commands.h"
#include "lib/messages.h"
#include "lib/messages.h"
#include "lib/buf.h"
#include "lib/digest.h"
#include "jcs/jcs.h"
#include "trace/key.h"
#include "policy/policy.h"
#include "trace/record.h"
#include "lib/text_safe.h"
#include "verify/verdict.h"

/* How long kwitness run waits for a kwitnessd that is down when CMD exits. */
#define KW_RUN_CLOSE_WAIT 300

static void run_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness run --policy FILE [--sandbox-id ID] [--image-digest D]\n"
		"                    [--key-jwk FILE] [--model-provider P] [--model-id M]\n"
		"                    [--data-class C] [--close-wait SECONDS]\n"
		"                    [--user USER[:GROUP] | --as-root] [--json] [--socket PATH]\n"
		"                    -- CMD [ARGS]\n\n"
		"Runs CMD in a new cgroup under a kwitnessd session. When CMD exits the cgroup\n"
		"is frozen, what is left in it is killed (counted in the trailer), the session\n"
		"is closed and the signed record verified (with --key-jwk, else with the\n"
		"record's own embedded key). A summary, completeness included, goes to stderr\n"
		"(--json: the close reply to stdout). When kwitnessd is not answering at that\n"
		"moment, kwitness run waits for it up to --close-wait seconds (default %d;\n"
		"the kernel keeps enforcing meanwhile). Defaults: sandbox id\n"
		"spiffe://kwitness.local/run/<pid>, image digest the sha256 of CMD's\n"
		"executable.\n\n"
		"Exit status: CMD's when it ran (128+N when signal N ended it); 125 when\n"
		"kwitness itself failed (a usage error, the policy, kwitnessd, the cgroup, or a\n"
		"record that did not close or verify after CMD succeeded); 126 when CMD could\n"
		"not be executed; 127 when CMD was not found.\n\n"
		"Run as root, CMD runs unprivileged (no_new_privs set): as --user USER[:GROUP]\n"
		"(names or numbers) when given, else as SUDO_UID/SUDO_GID when set, else as\n"
		"nobody. --as-root keeps root, which can undo the sandbox (docs/security.md).\n",
		KW_RUN_CLOSE_WAIT);
}

/* Who CMD runs as. */
struct run_identity {
	bool keep;        /* --as-root, or kwitness run is not root itself */
	uid_t uid;
	gid_t gid;
	const char *name; /* for the supplementary groups; NULL: none */
};

static int parse_user(const char *spec, struct run_identity *id)
{
	char user[256], *colon, *end;
	struct passwd *pw;
	unsigned long n;

	if (snprintf(user, sizeof(user), "%s", spec) >= (int)sizeof(user) || !user[0])
		return -EINVAL;
	colon = strchr(user, ':');
	if (colon)
		*colon++ = '\0';
	errno = 0;
	n = strtoul(user, &end, 10);
	pw = (*end || end == user) ? getpwnam(user) : getpwuid((uid_t)n);
	if (pw) {
		id->uid = pw->pw_uid;
		id->gid = pw->pw_gid;
		id->name = pw->pw_name;
	} else if (!*end && end != user && !errno && n < 0xffffffffu) {
		id->uid = (uid_t)n;
		id->gid = (gid_t)n;
		id->name = NULL;
	} else {
		return -ENOENT;
	}
	if (colon) {
		struct group *gr;

		errno = 0;
		n = strtoul(colon, &end, 10);
		gr = (*end || end == colon) ? getgrnam(colon) : NULL;
		if (gr)
			id->gid = gr->gr_gid;
		else if (!*end && end != colon && !errno && n < 0xffffffffu)
			id->gid = (gid_t)n;
		else
			return -ENOENT;
	}
	if (id->uid == 0)
		return -EPERM; /* root is --as-root, said out loud */
	return 0;
}

/* --user, else SUDO_UID/SUDO_GID, else nobody (65534 when there is no such
 * user). Strings kept from getpw* are copied: later calls overwrite them. */
static int choose_identity(const char *user, bool as_root, struct run_identity *id,
			   char *name_buf, size_t name_len)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	int e;

	memset(id, 0, sizeof(*id));
	if (as_root || geteuid() != 0) {
		id->keep = true;
		return 0;
	}
	if (user)
		e = parse_user(user, id);
	else if (su && *su && strcmp(su, "0")) {
		char spec[64];

		snprintf(spec, sizeof(spec), "%s%s%s", su, sg && *sg ? ":" : "", sg ? sg : "");
		e = parse_user(spec, id);
	} else {
		e = parse_user("nobody", id);
		if (e == -ENOENT)
			e = parse_user("65534:65534", id);
	}
	if (!e && id->name) {
		snprintf(name_buf, name_len, "%s", id->name);
		id->name = name_buf;
	}
	return e;
}

/* In the child, after it joined the cgroup: drop to id for good. */
static int become(const struct run_identity *id)
{
	if (id->keep)
		return 0;
	if ((id->name ? initgroups(id->name, id->gid) : setgroups(0, NULL)) < 0 ||
	    setresgid(id->gid, id->gid, id->gid) < 0 || setresuid(id->uid, id->uid, id->uid) < 0)
		return -errno;
	/* no setuid binary or file capability gives root back */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

/* The executable execvp would run, for the default image digest. */
static char *find_executable(const char *cmd)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL, *found = NULL;

	if (strchr(cmd, '/'))
		return strdup(cmd);
	copy = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	if (!copy)
		return NULL;
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *cand;

		if (asprintf(&cand, "%s/%s", *dir ? dir : ".", cmd) < 0)
			break;
		if (access(cand, X_OK) == 0) {
			found = cand;
			break;
		}
		free(cand);
	}
	free(copy);
	return found;
}

/* Whether this process can read path (the collector's log may be root's). */
static bool readable(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Verifies the record from the close reply with the verifier
 * (verify/verdict.c), with the log and the bundle when they can be read
 * here. The close summary already said whether the log is complete. */
static int verify_reply(const json_t *reply, const char *key_jwk, const char *policy_path,
			const char *image_digest, char *how, size_t howlen)
{
	struct verify_request rq = { 0 };
	struct verify_verdict v;
	struct kw_buf text = { 0 };
	char err[256] = "";
	struct kw_key *key = NULL;
	const char *log_path = json_string_value(json_object_get(reply, KW_F_LOG_PATH));
	bool tpm2;
	int e, rc = 1;

	if (key_jwk) {
		e = kw_key_load_public(key_jwk, &key);
		if (e) {
			snprintf(how, howlen, "key %s: %s", key_jwk, strerror(-e));
			return 1;
		}
		rq.opts.trusted = key;
	} else {
		rq.opts.allow_embedded_key = true;
	}
	rq.opts.now = (int64_t)time(NULL);
	rq.opts.skew = KW_DEFAULT_SKEW;
	rq.opts.max_age = 0;
	rq.opts.call_count = -1;
	rq.opts.allow_incomplete = true;
	if (jcs_dump(json_object_get(reply, KW_F_RECORD), &text)) {
		snprintf(how, howlen, "the reply holds no record");
		goto out;
	}
	rq.record_text = text.data;
	rq.record_len = text.len;
	if (log_path && readable(log_path))
		rq.log_path = log_path;
	if (readable(policy_path)) {
		rq.bundle_path = policy_path;
		rq.opts.image_digest = image_digest;
	}
	e = verify_record(&rq, &v, err, sizeof(err));
	{
		json_t *r = jcs_parse(text.data, text.len, NULL);
		const char *p = json_string_value(
			json_object_get(json_object_get(r, "runtime"), "platform"));

		tpm2 = p && !strcmp(p, "tpm2");
		json_decref(r);
	}
	if (e < 0) {
		snprintf(how, howlen, "verification failed: %s", err);
	} else if (!v.valid) {
		snprintf(how, howlen, "NOT VERIFIED: %s: %s", kw_verify_reason_code(v.res.reason),
			 v.res.message);
	} else {
		snprintf(how, howlen, "verified (signature with %s%s%s)",
			 key_jwk ? "the trusted key " : "the record's embedded key (cnf.jwk; "
							"pass --key-jwk to check a trusted key)",
			 key_jwk ? key_jwk : "",
			 !rq.log_path ? ", decision log not readable here: transcript not re-hashed"
			 : tpm2 ? ", decision log re-hashed, bundle hash checked; runtime is tpm2: kwitness verify --evidence appraises it"
				: ", decision log re-hashed, bundle hash and measurement checked");
		rc = 0;
	}
out:
	kw_key_free(key);
	kw_buf_free(&text);
	return rc;
}

/* Closes the session, killing what is left in its cgroup first. A kwitnessd
 * that is not answering (restarting, upgraded) is waited for, up to wait_s:
 * the session stays enforced in the kernel meanwhile, and leaving it open
 * would leave it unclosed. Returns kw_client_call's result. */
static int close_session(const char *sock, const char *session, int wait_s, json_t **reply,
			 char *err, size_t errlen)
{
	struct timespec nap = { 0, 200 * 1000 * 1000 };
	time_t until = time(NULL) + wait_s;
	bool said = false, retried = false;
	int e;

	for (;;) {
		json_t *req = json_pack("{s:s, s:s, s:b}", KW_F_OP, KW_OP_CLOSE, KW_F_SESSION,
					session, KW_F_KILL, 1);

		e = kw_client_call(sock, req, reply, err, errlen);
		json_decref(req);
		if (!e && retried && json_is_false(json_object_get(*reply, KW_F_OK)) &&
		    !strcmp(json_string_value(json_object_get(*reply, KW_F_ERROR)) ?: "",
			    KW_ERR_UNKNOWN_SESSION)) {
			/* the collector that died during our close finished it at
			 * its restart */
			snprintf(err, errlen, "kwitnessd restarted during the close and closed the "
				 "session itself: see its records folder");
			json_decref(*reply);
			*reply = NULL;
			return -EAGAIN;
		}
		if (!e || time(NULL) >= until)
			return e;
		if (!said)
			fprintf(stderr, "kwitness run: kwitnessd is not answering (%s); waiting up to "
				"%d s to close session %s (its cgroup is frozen and still enforced)\n",
				err, wait_s, session);
		said = retried = true;
		nanosleep(&nap, NULL);
	}
}

static volatile sig_atomic_t child_pid;

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* What kwitness run was asked to do. */
struct run_args {
	struct kw_open_options o;
	struct run_identity ident;
	char ident_name[256];
	const char *key_jwk;
	int close_wait;
	char **cmd; /* CMD and its ARGS */
	char sid_buf[128], digest_buf[KW_DIGEST_STR_MAX];
};

/* The options, and the defaults that follow from them. -1 to go on, else
 * the exit status. */
static int run_parse(int argc, char **argv, struct run_args *a)
{
	const char *user = NULL;
	bool as_root = false;
	struct kw_open_options *o = &a->o;
	enum { O_CLOSE_WAIT = 1 };
	const struct cli_opt opts[] = {
		KW_OPEN_OPTIONS(o),
		{ "key-jwk", 0, CLI_TEXT, &a->key_jwk },
		{ "close-wait", 0, CLI_OWN, .id = O_CLOSE_WAIT },
		{ "user", 0, CLI_TEXT, &user },
		{ "as-root", 0, CLI_FLAG, &as_root },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness run", .usage = run_usage, .opts = opts,
				 .on_bad = CLI_BAD_USAGE, .in_order = true };
	int opt, e;

	while ((opt = cli_next_option(&p, argc, argv)) == O_CLOSE_WAIT) {
		char *end;
		long v = strtol(optarg, &end, 10);

		if (*end || end == optarg || v < 0 || v > 86400) {
			kw_usage_error("kwitness run", "--close-wait: seconds from 0 to 86400");
			return KW_EXIT_OWN_FAILURE;
		}
		a->close_wait = (int)v;
	}
	if (opt == CLI_OPTIONS_EXIT)
		return p.status ? KW_EXIT_OWN_FAILURE : 0;
	if (!o->policy || optind >= argc) {
		kw_usage_error("kwitness run", "--policy FILE and a command after -- are required");
		return KW_EXIT_OWN_FAILURE;
	}
	if (user && as_root) {
		kw_usage_error("kwitness run", "--user and --as-root exclude each other");
		return KW_EXIT_OWN_FAILURE;
	}
	if (user && geteuid() != 0) {
		kw_usage_error("kwitness run", "--user needs root");
		return KW_EXIT_OWN_FAILURE;
	}
	e = choose_identity(user, as_root, &a->ident, a->ident_name, sizeof(a->ident_name));
	if (e) {
		fprintf(stderr, "kwitness run: %s: %s\n", user ? user : "the user to run as",
			e == -EPERM ? "root needs --as-root" : e == -ENOENT ? "no such user or group" :
			strerror(-e));
		return KW_EXIT_OWN_FAILURE;
	}
	a->cmd = argv + optind;
	if (!o->sandbox_id) {
		snprintf(a->sid_buf, sizeof(a->sid_buf), "spiffe://kwitness.local/run/%d", (int)getpid());
		o->sandbox_id = a->sid_buf;
	}
	if (!o->image_digest) {
		char *exe = find_executable(a->cmd[0]);

		e = exe ? kw_digest_file(KW_SHA256, exe, a->digest_buf) : -ENOENT;
		if (e) {
			if (e == -ENOENT)
				fprintf(stderr, "kwitness run: %s: command not found\n", a->cmd[0]);
			else
				fprintf(stderr, "kwitness run: %s: %s (give --image-digest)\n",
					a->cmd[0], strerror(-e));
			free(exe);
			return e == -ENOENT ? KW_EXIT_NOT_FOUND : KW_EXIT_CANNOT_EXEC;
		}
		free(exe);
		o->image_digest = a->digest_buf;
	}
	return -1;
}

/* Starts CMD in the cgroup cg, waits for it and freezes what it left
 * behind. Returns CMD's exit status, 126 or 127 when it could not be
 * executed, or 125 when it could not be started. */
static int run_command(const char *cg, const struct run_args *a)
{
	struct sigaction sa = { 0 }, old_int, old_term, old_quit, old_hup;
	int status = 0, rc, pipefd[2], e;
	pid_t pid;

	/* The child reports a failed join or exec through a close-on-exec pipe. */
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		fprintf(stderr, "kwitness run: pipe: %s\n", strerror(errno));
		return KW_EXIT_OWN_FAILURE;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "kwitness run: fork: %s\n", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return KW_EXIT_OWN_FAILURE;
	}
	if (pid == 0) {
		int ce;

		close(pipefd[0]);
		ce = kw_cgroup_join(cg, getpid());
		if (!ce)
			ce = become(&a->ident);
		if (!ce) {
			execvp(a->cmd[0], a->cmd);
			ce = -errno;
		}
		if (write(pipefd[1], &ce, sizeof(ce)) < 0)
			(void)0;
		_exit(ce == -ENOENT || ce == -ENOTDIR ? KW_EXIT_NOT_FOUND : KW_EXIT_CANNOT_EXEC);
	}
	close(pipefd[1]);
	child_pid = pid;
	/* A terminal's ^C and ^\ reach CMD directly (same process group): the
	 * parent only stays alive to close the session. SIGTERM and SIGHUP,
	 * sent to kwitness run itself, are passed on. */
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGQUIT, &sa, &old_quit);
	sa.sa_handler = forward_signal;
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	{
		int ce = 0;
		ssize_t n;

		while ((n = read(pipefd[0], &ce, sizeof(ce))) < 0 && errno == EINTR)
			;
		close(pipefd[0]);
		if (n == (ssize_t)sizeof(ce))
			fprintf(stderr, "kwitness run: %s: %s\n", a->cmd[0],
				strerror(-ce));
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	child_pid = 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

	/* CMD is gone; what it left behind stops here, still recorded, and is
	 * killed by the close (kwitnessd counts it in the trailer). */
	e = kw_cgroup_freeze(cg);
	if (e && e != -ENOENT)
		fprintf(stderr, "kwitness run: freezing %s: %s (killed at close all the same)\n",
			cg, strerror(-e));
	return rc;
}

/* Closes the session, then verifies and prints its record. Returns rc (CMD's
 * status), or 125 for a CMD that succeeded when the close or the record
 * failed. */
static int run_close(const struct run_args *a, const char *session, int rc)
{
	json_t *reply = NULL;
	char err[512], how[600];
	int e;

	e = close_session(kw_client_socket(a->o.socket), session, a->close_wait, &reply, err,
			  sizeof(err));
	if (e) {
		fprintf(stderr, "kwitness run: closing session %s: %s\n", session, err);
		if (rc == 0)
			rc = KW_EXIT_OWN_FAILURE;
	} else if (!kw_client_reply_ok("run", reply)) {
		if (rc == 0)
			rc = KW_EXIT_OWN_FAILURE;
	} else {
		int v = verify_reply(reply, a->key_jwk, a->o.policy, a->o.image_digest, how, sizeof(how));

		fprintf(stderr, "kwitness run: session %s closed\n", session);
		kw_print_close_summary(stderr, reply);
		fputs("record ", stderr);
		kw_text_fput(stderr, how); /* the verifier's message may quote the record */
		fputc('\n', stderr);
		if (a->o.json)
			kw_print_json(reply);
		if (v && rc == 0)
			rc = KW_EXIT_OWN_FAILURE;
	}
	json_decref(reply);
	return rc;
}

int cmd_run(int argc, char **argv)
{
	struct run_args a = { .close_wait = KW_RUN_CLOSE_WAIT };
	char mount[4000], cg[4200], base[4100];
	json_t *req, *reply = NULL;
	char *session = NULL;
	int rc, e;

	rc = run_parse(argc, argv, &a);
	if (rc >= 0)
		return rc;
	e = kw_cgroup2_mount(mount, sizeof(mount));
	if (e) {
		fprintf(stderr, "kwitness run: no cgroup2 mount in /proc/self/mountinfo: %s\n",
			strerror(-e));
		return KW_EXIT_OWN_FAILURE;
	}
	if (snprintf(base, sizeof(base), "%s/kwitness", mount) >= (int)sizeof(base) ||
	    snprintf(cg, sizeof(cg), "%s/run-%d", base, (int)getpid()) >= (int)sizeof(cg)) {
		fprintf(stderr, "kwitness run: cgroup2 mount path too long\n");
		return KW_EXIT_OWN_FAILURE;
	}
	if ((e = kw_cgroup_make(base, 1)) || (e = kw_cgroup_make(cg, 0))) {
		if (e == -EACCES || e == -EPERM || e == -EROFS)
			fprintf(stderr, "kwitness run: cgroup %s: %s: kwitness run needs root or a "
				"granted cgroup (run it as root; or, as a user with a `grant` in "
				"kwitnessd.conf, use `kwitness session open --cgroup` on that cgroup)\n",
				cg, strerror(-e));
		else
			fprintf(stderr, "kwitness run: cgroup %s: %s\n", cg, strerror(-e));
		return KW_EXIT_OWN_FAILURE;
	}

	/* The session is open (the cgroup tagged) before the command exists. */
	req = kw_session_open_request(cg, &a.o);
	if (!req)
		goto out_cgroup;
	if (kw_client_request("run", a.o.socket, req, &reply))
		goto out_cgroup;
	if (!kw_client_reply_ok("run", reply))
		goto out_cgroup;
	session = strdup(json_string_value(json_object_get(reply, KW_F_SESSION)));
	json_decref(reply);
	reply = NULL;
	if (!session)
		goto out_cgroup;

	rc = run_close(&a, session, run_command(cg, &a));
	free(session);
	e = kw_cgroup_remove(cg);
	if (e)
		fprintf(stderr, "kwitness run: removing cgroup %s: %s\n", cg, strerror(-e));
	return rc;

out_cgroup:
	json_decref(reply);
	kw_cgroup_remove(cg);
	return KW_EXIT_OWN_FAILURE;
}
