/* SPDX-License-Identifier: Apache-2.0 */
/* Opening a session: the cgroup checked (authz.c says who may use it), the
 * policy's hooks checked, the bundle stored, the open entry written, the
 * cgroup tagged. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <syslog.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <linux/magic.h>

#include "kwitness/abi/name_match.h"
#include "lib/cgroup.h"
#include "bpf/hooks.h"
#include "bpf/object_digest.h"
#include "authz.h"
#include "config.h"
#include "fanout.h"
#include "journal.h"
#include "kwd.h"
#include "segwrite.h"
#include "lineage.h"
#include "session.h"
#include "util.h"
#include "metrics.h"

/* ---- open ----------------------------------------------------------------- */

static char *xasprintf(const char *fmt, const char *a, const char *b)
{
	char *s;

	if (asprintf(&s, fmt, a, b) < 0)
		return NULL;
	return s;
}

size_t kwd_cgroup2_mount_len(const char *real)
{
	char mount[PATH_MAX], parent[PATH_MAX];
	struct statfs sfs;

	snprintf(mount, sizeof(mount), "%s", real);
	for (;;) {
		char *slash = strrchr(mount, '/');

		if (!slash || slash == mount)
			break;
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - mount), mount);
		if (statfs(parent, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC)
			break;
		memcpy(mount, parent, strlen(parent) + 1);
	}
	return strlen(mount);
}

/* The cgroup2 path ("/a/b", below the mount) of pid, from /proc/PID/cgroup;
 * 0 when found. */
static int pid_cgroup2_path(pid_t pid, char *out, size_t len)
{
	char path[64], line[PATH_MAX + 8];
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (snprintf(out, len, "%s", line + 3) < (int)len)
			ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

struct kwd_session *kwd_session_of_pid(struct kwd *d, pid_t pid)
{
	char rel[PATH_MAX];
	int slot;

	if (pid <= 0)
		return NULL;
	/* a process that left its session's cgroups still carries its tag */
	if (d->hooks && (slot = kw_hooks_pid_slot(d->hooks, (uint32_t)pid)) >= 0 && d->slots[slot])
		return d->slots[slot];
	if (pid_cgroup2_path(pid, rel, sizeof(rel)))
		return NULL;
	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
		struct kwd_session *o = d->slots[i];

		if (o && o->cgroup_rel && kwd_path_is_within(rel, o->cgroup_rel))
			return o;
	}
	return NULL;
}

/* The cgroup2 root holds every process on the host, and a cgroup holding
 * kwitnessd itself would put the witness under the policy it enforces:
 * neither can be a session. rel is the cgroup below the mount ("" for the
 * root). NULL when it is fine. */
static const char *outside_collector(const char *rel)
{
	char self[PATH_MAX];

	if (!rel[0] || !strcmp(rel, "/"))
		return "the cgroup2 root holds every process on the host";
	if (pid_cgroup2_path(getpid(), self, sizeof(self)) == 0 && kwd_path_is_within(self, rel))
		return "kwitnessd itself runs in it";
	return NULL;
}

static json_t *check_cgroup(struct kwd *d, const char *path, struct kwd_session *s,
			    const struct kwd_peer *peer)
{
	char real[PATH_MAX], fdpath[64];
	struct statfs sfs;
	struct stat st;
	const char *why;
	ssize_t n;
	int e;

	if (path[0] != '/')
		return kwd_error(KW_ERR_INVALID_FIELD, "cgroup: an absolute path is required");
	/* Opened once; every check below is on this directory, so a path
	 * swapped meanwhile changes nothing. */
	s->cgroup_fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->cgroup_fd < 0)
		return kwd_error(errno == ENOENT ? KW_ERR_CGROUP_NOT_FOUND : KW_ERR_INVALID_CGROUP,
				 "cgroup %s: %s", path,
				 errno == ELOOP ? "a symbolic link" : strerror(errno));
	if (fstatfs(s->cgroup_fd, &sfs) < 0 || fstat(s->cgroup_fd, &st) < 0)
		return kwd_error(KW_ERR_INVALID_CGROUP, "cgroup %s: %s", path, strerror(errno));
	if (sfs.f_type != CGROUP2_SUPER_MAGIC)
		return kwd_error(KW_ERR_INVALID_CGROUP, "cgroup %s: not on a cgroup2 mount", path);
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", s->cgroup_fd);
	n = readlink(fdpath, real, sizeof(real) - 1);
	if (n <= 0 || n >= (ssize_t)sizeof(real) - 1)
		return kwd_error(KW_ERR_INVALID_CGROUP, "cgroup %s: cannot name the opened directory", path);
	real[n] = '\0';
	why = outside_collector(real + kwd_cgroup2_mount_len(real));
	if (why)
		return kwd_error(KW_ERR_INVALID_CGROUP, "cgroup %s: %s", path, why);
	if (!kwd_authz_cgroup(&d->cfg, peer, s->cgroup_fd, &st, real))
		return kwd_error(KW_ERR_FORBIDDEN_CGROUP,
				 "cgroup %s: uid %u neither owns it (directory and cgroup.procs) "
				 "nor has a grant for it", path, (unsigned)peer->uid);
	e = kw_cgroup_id(s->cgroup_fd, &s->cgroup_id);
	if (e)
		return kwd_error(KW_ERR_INVALID_CGROUP, "cgroup %s: %s", path, strerror(-e));
	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
		struct kwd_session *o = d->slots[i];
		bool mine;

		if (!o)
			continue;
		if (o->cgroup_id != s->cgroup_id && !kwd_path_is_within(real, o->cgroup_path) &&
		    !kwd_path_is_within(o->cgroup_path, real))
			continue;
		/* another user's session is not named to a non-root client */
		mine = kwd_authz_session(peer, o->owner);
		return kwd_error(KW_ERR_CGROUP_TAGGED, "cgroup %s: already belongs to session %s (%s)",
				 path, mine ? o->id : "of another user",
				 mine ? o->cgroup_path : "-");
	}
	s->cgroup_path = strdup(real);
	s->cgroup_rel = strdup(real + kwd_cgroup2_mount_len(real));
	if (!s->cgroup_path || !s->cgroup_rel)
		return kwd_error(KW_ERR_INTERNAL, "out of memory");
	return NULL;
}

static json_t *check_hooks(struct kwd *d, const struct kw_policy *pol)
{
	uint32_t missing = pol->classes & ~kw_hooks_available(d->hooks);
	struct kw_buf names = { 0 }, why = { 0 };
	json_t *err;

	if (!missing)
		return NULL;
	kwd_class_names(missing, &names);
	for (unsigned b = 0; b < KW_CLASS_COUNT; b++) {
		const char *r;

		if (!(missing & (1u << b)))
			continue;
		r = kw_hooks_unavailable_reason(d->hooks, 1u << b);
		kw_buf_puts(&why, why.len ? "; " : "");
		kw_buf_puts(&why, kw_class_name(1u << b) ? kw_class_name(1u << b) : "?");
		kw_buf_puts(&why, ": ");
		kw_buf_puts(&why, r ? r : "not loaded");
	}
	err = kwd_error(KW_ERR_HOOKS_UNAVAILABLE, "the policy governs %s, which this host cannot enforce (%s)",
			names.data, why.data ? why.data : "");
	kw_buf_free(&names);
	kw_buf_free(&why);
	return err;
}

/* The bundle is stored by its hash: an existing file already holds these
 * bytes. Otherwise it is written here, whole but not synced (a collector
 * killed right after the open reply must leave it for the next one to resume
 * or seal the session), and the I/O thread syncs it, ahead of anything else
 * of this session; a failure to sync is the close's reply. Returns 0 or
 * -errno. */
static int store_policy(struct kwd *d, struct kwd_session *s)
{
	struct kwd_job *job;
	struct stat st;
	int e;

	if (lstat(s->policy_path, &st) == 0 && S_ISREG(st.st_mode) &&
	    (size_t)st.st_size == s->bundle_len)
		return 0;
	job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	job->kind = KWD_JOB_FILE;
	job->fd = -1;
	job->path = strdup(s->policy_path);
	if (!job->path) {
		free(job);
		return -ENOMEM;
	}
	e = kw_write_file_replace(s->policy_path, s->bundle, s->bundle_len, 0644);
	if (e) {
		free(job->path);
		free(job);
		return e;
	}
	job->result = &s->policy_err;
	kwd_worker_submit(d, job);
	return 0;
}

/* Host facts and paths are bytes, not necessarily UTF-8. */
static int lossy(struct jcs_obj *o, const char *key, const char *val)
{
	return jcs_obj_strn_lossy(o, key, val, strlen(val), NULL);
}

/* The workload members from..to, in canonical (sorted) order: the members are
 * written in order, and kw_workload_fields lists them sorted. */
static int workload(struct jcs_obj *o, const struct kwd_session *s, enum kw_workload_field from,
		    enum kw_workload_field to)
{
	int e = 0;

	for (int i = from; i <= (int)to; i++)
		if (s->workload[i])
			e = e ?: jcs_obj_str(o, kw_workload_fields[i], s->workload[i]);
	return e;
}

static int write_open_entry(struct kwd *d, struct kwd_session *s)
{
	struct kw_buf hooks = { 0 };
	struct kwd_runtime rt;
	char cgroup_id[24];
	struct jcs_obj o;
	int e;

	/* With --tpm: the binding in force now, named so the transcript
	 * commits to its evidence file. */
	kwd_attest_current(d, &rt);
	kwd_commit_open(d, s);
	/* A 64-bit id: a decimal string, as in every decision entry. */
	snprintf(cgroup_id, sizeof(cgroup_id), "%llu", (unsigned long long)s->cgroup_id);
	kwd_class_names(s->pol->classes, &hooks);
	e = kw_logwriter_entry_begin(&s->log, &o);
	e = e ?: lossy(&o, "boot_id", d->host.boot_id);
	e = e ?: jcs_obj_str(&o, "bundle_hash", s->bundle_hash);
	e = e ?: lossy(&o, "cgroup", s->cgroup_path);
	e = e ?: jcs_obj_str(&o, "cgroup_id", cgroup_id);
	e = e ?: jcs_obj_str(&o, "cgroup_mode", d->host.cgroup_mode);
	e = e ?: jcs_obj_str(&o, "collector", "kwitnessd");
	e = e ?: jcs_obj_str(&o, "collector_version", kw_version());
	e = e ?: workload(&o, s, KW_WL_CONTAINER_ID, KW_WL_CONTAINER_NAME);
	e = e ?: jcs_obj_str(&o, "data_class", s->data_class);
	if (rt.bound)
		e = e ?: jcs_obj_str(&o, "evidence", rt.evidence);
	e = e ?: jcs_obj_str(&o, "hooks", hooks.data ? hooks.data : "");
	e = e ?: lossy(&o, "hostname", d->host.hostname);
	e = e ?: jcs_obj_str(&o, "image_digest", s->image_digest);
	e = e ?: lossy(&o, "kernel", d->host.kernel);
	e = e ?: lossy(&o, "machine_id", d->host.machine_id);
	e = e ?: jcs_obj_str(&o, "mode", kw_mode_name(s->pol->mode));
	e = e ?: jcs_obj_str(&o, "model_id", s->model_id);
	e = e ?: jcs_obj_str(&o, "model_provider", s->model_provider);
	e = e ?: jcs_obj_str(&o, "on_record_failure",
			     s->pol->on_failure == KW_ONFAIL_DENY ? "deny" : "allow");
	e = e ?: workload(&o, s, KW_WL_POD_NAME, KW_WL_POD_UID);
	e = e ?: jcs_obj_str(&o, "programs", d->programs ? d->programs : "");
	e = e ?: jcs_obj_str(&o, "record", s->pol->record == KW_RECORD_DENY ? "deny" : "all");
	e = e ?: jcs_obj_int(&o, "ringbuf_size", (int64_t)d->cfg.ringbuf_size);
	e = e ?: jcs_obj_str(&o, "sandbox_id", s->sandbox_id);
	e = e ?: jcs_obj_str(&o, "session", s->id);
	e = e ?: jcs_obj_str(&o, "tool", "kwitness.open");
	if (s->commit.counter[0]) /* a 64-bit count: a decimal string */
		e = e ?: jcs_obj_str(&o, "tpm_counter", s->commit.counter);
	e = e ?: jcs_obj_int(&o, "ts", s->opened_us);
	e = kw_logwriter_entry_end(&s->log, &o, e);
	e = e ?: kw_logwriter_flush(&s->log);
	kw_buf_free(&hooks);
	return e;
}

static int new_session_id(char out[33])
{
	unsigned char r[16];

	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		return -EIO;
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
	return 0;
}

static char *dup_or_default(const char *v, const char *def)
{
	return strdup(v ? v : def);
}

/* A non-root uid holds at most user_sessions_max sessions (open or closing:
 * each holds a slot, a ring buffer and descriptors), and non-root uids
 * together leave root_reserved_sessions slots to root. NULL, or the error
 * reply naming the limit. */
static json_t *check_quota(const struct kwd *d, uid_t uid)
{
	unsigned mine = 0, others = 0;

	if (uid == 0)
		return NULL;
	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
		const struct kwd_session *o = d->slots[i];

		if (o && o->owner != 0)
			o->owner == uid ? mine++ : others++;
	}
	if (mine >= d->cfg.user_sessions_max)
		return kwd_error(KW_ERR_TOO_MANY_SESSIONS,
				 "uid %u holds %u sessions: the limit is max_sessions_per_user = %u "
				 "(kwitnessd.conf)", (unsigned)uid, mine, d->cfg.user_sessions_max);
	if (mine + others >= KW_MAX_SESSIONS - d->cfg.root_reserved_sessions)
		return kwd_error(KW_ERR_TOO_MANY_SESSIONS,
				 "non-root clients hold %u sessions: the other %u slots are kept for "
				 "root (root_reserved_sessions in kwitnessd.conf)", mine + others,
				 d->cfg.root_reserved_sessions);
	return NULL;
}

/* The request checked and the session's fields filled (policy, cgroup,
 * slot, id, paths) and its log file opened; NULL, or the error reply. */
static json_t *session_prepare(struct kwd *d, struct kwd_session *s, const struct kw_request *req,
			       const struct kwd_peer *peer)
{
	json_t *err;
	char msg[512] = "";
	uint32_t slot;
	int e;

	s->bundle_len = req->policy_len;
	s->bundle = malloc(s->bundle_len + 1);
	if (!s->bundle)
		return kwd_error(KW_ERR_INTERNAL, "out of memory");
	memcpy(s->bundle, req->policy, s->bundle_len + 1);
	e = kw_policy_parse(s->bundle, s->bundle_len, &s->pol, msg, sizeof(msg));
	if (e)
		return kwd_error(KW_ERR_POLICY_INVALID, "%s", msg[0] ? msg : strerror(-e));
	err = check_hooks(d, s->pol);
	if (err)
		return err;
	s->owner = peer->uid;
	err = check_quota(d, peer->uid);
	if (err)
		return err;
	err = check_cgroup(d, req->cgroup, s, peer);
	if (err)
		return err;
	for (slot = 0; slot < KW_MAX_SESSIONS && d->slots[slot]; slot++)
		;
	if (slot == KW_MAX_SESSIONS)
		return kwd_error(KW_ERR_TOO_MANY_SESSIONS, "all %d session slots are in use",
				 KW_MAX_SESSIONS);
	s->slot = slot;
	s->sandbox_id = strdup(req->sandbox_id);
	s->image_digest = strdup(req->image_digest);
	s->model_provider = dup_or_default(req->model_provider, d->cfg.model_provider);
	s->model_id = dup_or_default(req->model_id, d->cfg.model_id);
	s->data_class = dup_or_default(req->data_class, d->cfg.data_class);
	s->checkpoint_interval = req->checkpoint_interval;
	if (!s->sandbox_id || !s->image_digest || !s->model_provider || !s->model_id ||
	    !s->data_class)
		return kwd_error(KW_ERR_INTERNAL, "out of memory");
	for (int i = 0; i < KW_WL_N; i++)
		if (req->workload[i] && !(s->workload[i] = strdup(req->workload[i])))
			return kwd_error(KW_ERR_INTERNAL, "out of memory");
	if (new_session_id(s->id))
		return kwd_error(KW_ERR_INTERNAL, "no randomness for a session id");
	e = kw_digest_buf(KW_SHA256, s->bundle, s->bundle_len, s->bundle_hash);
	if (e)
		return kwd_error(KW_ERR_INTERNAL, "hashing the bundle: %s", strerror(-e));
	s->policy_path = xasprintf("%s/policies/%s", d->cfg.state_dir,
				   strchr(s->bundle_hash, ':') + 1);
	s->log_path = xasprintf("%s/logs/%s.jsonl", d->cfg.state_dir, s->id);
	s->record_path = xasprintf("%s/records/%s.json", d->cfg.state_dir, s->id);
	if (!s->policy_path || !s->log_path || !s->record_path)
		return kwd_error(KW_ERR_INTERNAL, "out of memory");
	e = kw_logwriter_open(&s->log, s->log_path);
	if (e) {
		s->log.fd = -1;
		return kwd_error(KW_ERR_STORAGE, "%s: %s", s->log_path, strerror(-e));
	}
	kwd_fanout_tap(s);
	return NULL;
}

json_t *kwd_session_open(struct kwd *d, const struct kw_request *req,
			 const struct kwd_peer *peer)
{
	struct kwd_session *s;
	json_t *err = NULL;
	char msg[512] = "";
	int ringbuf_fd = -1, e;
	uint32_t slot;

	if (d->stopping)
		return kwd_error(KW_ERR_STOPPING, "kwitnessd is shutting down");
	s = kwd_session_new(d);
	if (!s)
		return kwd_error(KW_ERR_INTERNAL, "out of memory");

	err = session_prepare(d, s, req, peer);
	if (err)
		goto fail;
	slot = s->slot;
	s->opened_us = kwd_now_us();
	/* The open entry goes first; events wait in the ring buffer until the
	 * loop consumes them, after this function returns. */
	e = kw_hooks_session_add(d->hooks, slot, s->cgroup_fd, s->cgroup_id, s->pol, &ringbuf_fd,
				 msg, sizeof(msg));
	if (e) {
		err = kwd_error(e == -EEXIST || e == -EBUSY ? KW_ERR_CGROUP_TAGGED : KW_ERR_HOOKS_FAILED, "%s",
				msg[0] ? msg : strerror(-e));
		goto fail_log;
	}
	{
		struct kw_session c = { 0 };

		kw_hooks_session_counters(d->hooks, slot, &c);
		s->generation = c.generation;
	}
	/* Egress by name: the resolver, then the kernel steers DNS to it. */
	if (s->pol->dns_steer) {
		struct kw_dns_steer steer;

		e = kwd_session_dns_start(s, &steer, msg, sizeof(msg));
		e = e ?: kw_hooks_dns_steer(d->hooks, slot, &steer);
		if (e) {
			err = kwd_error(KW_ERR_HOOKS_FAILED, "the session's DNS resolver: %s",
					msg[0] ? msg : strerror(-e));
			goto fail_hooks;
		}
	}
	/* the log's segment bound (the open request's, else the config's; 0:
	 * one file), journaled so that a resumed session keeps cutting its log */
	s->segment_bytes = req->log_segment_bytes >= 0 ? (uint64_t)req->log_segment_bytes :
							 d->cfg.log_segment_bytes;
	/* A collector started after a crash finds the session through this. */
	if (d->cfg.pin_dir) {
		e = kwd_journal_write(s, 0);
		if (e) {
			err = kwd_error(KW_ERR_STORAGE, "session journal: %s", strerror(-e));
			goto fail_hooks;
		}
	}
	e = write_open_entry(d, s);
	if (e) {
		err = kwd_error(KW_ERR_STORAGE, "writing the open entry: %s", strerror(-e));
		goto fail_journal;
	}
	/* the processes already there: entries queued for the loop */
	kwd_lineage_open(s);
	/* From here on chunks are written by the I/O worker, in order (the open
	 * entry was written here, so an error path above never races it). */
	if (kwd_session_attach_ring(s, ringbuf_fd, d->cfg.ringbuf_size, msg, sizeof(msg))) {
		err = kwd_error(KW_ERR_HOOKS_FAILED, "ring buffer: %s", msg);
		goto fail_journal;
	}
	/* Last: once the bundle's job is queued the session must live on (the
	 * job reports into it). */
	e = store_policy(d, s);
	if (e) {
		err = kwd_error(e == -ENOMEM ? KW_ERR_INTERNAL : KW_ERR_STORAGE,
				"storing the bundle %s: %s", s->policy_path, strerror(-e));
		goto fail_ring;
	}
	/* The worker cuts the log into segments (the open request's size, else
	 * the config's; 0: one file) from its first chunk on; asked once the
	 * session lives, so no failed open leaves the worker a registration. */
	if (s->segment_bytes && kwd_segs_request(d, s->log.fd, s->log_path, 1, s->segment_bytes))
		kwd_log(d, LOG_ERR, "session %s: out of memory: its log is not cut into segments", s->id);
	d->slots[slot] = s;
	d->n_sessions++;
	kwd_metrics_count(KWD_M_SESSIONS_OPENED);
	kwd_log(d, LOG_INFO, "session %s opened: %s, cgroup %s, slot %u, %s", s->id, s->sandbox_id,
		s->cgroup_path, slot, kw_mode_name(s->pol->mode));
	return json_pack("{s:b, s:s, s:s, s:s, s:s}", KW_F_OK, 1, KW_F_SESSION, s->id, KW_F_LOG_PATH,
			 s->log_path, KW_F_POLICY_PATH, s->policy_path, KW_F_BUNDLE_HASH, s->bundle_hash);

fail_ring:
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, s->ring_fd, NULL);
	kwd_ring_unmap(&s->ring);
	s->ring_fd = -1; /* closed with the slot */
fail_journal:
	kwd_journal_remove(d, s->id);
fail_hooks:
	kw_hooks_session_untag(d->hooks, slot);
	kw_hooks_session_free(d->hooks, slot);
fail_log:
	kw_logwriter_abort(&s->log);
	unlink(s->log_path);
fail:
	kwd_session_free(s);
	return err;
}
