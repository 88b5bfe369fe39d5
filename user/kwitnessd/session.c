/* SPDX-License-Identifier: Apache-2.0 */
/* Sessions: open (validate, store the bundle, tag the cgroup), consume the
 * session's ring buffer into its decision log, close (untag, drain, trailer,
 * signed record). A session lives in one slot of the kernel's session table. */
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

#include "collector/decision.h"
#include "kwitness/abi/name_match.h"
#include "kwitness/cgroup.h"
#include "kwitness/digest.h"
#include "kwitness/hooks.h"
#include "kwitness/jcs.h"
#include "kwitness/key.h"
#include "kwitness/policy.h"
#include "kwitness/record.h"
#include "attest.h"
#include "cgroup_kill.h"
#include "config.h"
#include "authz.h"
#include "dns_proxy.h"
#include "journal.h"
#include "kwd.h"
#include "ring.h"
#include "session.h"
#include "spool.h"
#include "util.h"
#include "wakeup.h"
#include "worker.h"


static char *xasprintf(const char *fmt, const char *a, const char *b)
{
	char *s;

	if (asprintf(&s, fmt, a, b) < 0)
		return NULL;
	return s;
}

void kwd_session_free(struct kwd_session *s)
{
	if (!s)
		return;
	if (s->ring_fd >= 0)
		epoll_ctl(s->d->epfd, EPOLL_CTL_DEL, s->ring_fd, NULL);
	kwd_ring_unmap(&s->ring);
	kwd_dns_free(s->dns);
	s->dns = NULL;
	kw_reorder_free(&s->ro);
	kw_logwriter_abort(&s->log);
	if (s->cgroup_fd >= 0)
		close(s->cgroup_fd);
	kw_policy_free(s->pol);
	free(s->sandbox_id);
	free(s->image_digest);
	free(s->cgroup_path);
	free(s->cgroup_rel);
	free(s->bundle);
	free(s->model_provider);
	free(s->model_id);
	free(s->data_class);
	free(s->log_path);
	free(s->policy_path);
	free(s->record_path);
	json_decref(s->seal.record);
	free(s);
}

/* ---- consuming decisions ---------------------------------------------- */

static void maybe_skip_gap(struct kwd_session *s, int64_t now);
static void session_release(struct kwd_session *s);

/* Reorder window output: one event in sequence order, into the log. */
static int emit_event(void *ctx, const void *data, size_t len)
{
	struct kwd_session *s = ctx;
	const struct kw_event_hdr *h = data;
	const struct kw_ev_net *net = data;
	int e;

	/* its line goes into the log buffer now: once that is written, the
	 * ring buffer may let go of every record numbered below */
	if (h->seq + 1 > s->emitted_below)
		s->emitted_below = h->seq + 1;
	if (h->kind == KWD_EV_COLLECTOR)
		e = kw_logwriter_append(&s->log, (const char *)(h + 1), len - sizeof(*h));
	else if ((h->flags & KW_EVF_VIA) && len >= sizeof(*net))
		e = kw_logwriter_event_via(&s->log, data, len, s->d->boot_to_realtime_ns,
					   kwd_dns_via_name(s->dns, net->via_seq));
	else
		e = kw_logwriter_event(&s->log, data, len, s->d->boot_to_realtime_ns);
	if (e == -EINVAL) {
		s->bad_events++;
		return 0;
	}
	if (e)
		return e;
	s->decisions++;
	if (h->decision == KW_DENY)
		s->denials++;
	return 0;
}

/* The programs stamp each event with its session's slot and the slot's
 * generation, and write it to that session's ring buffer: one that names
 * another session (a slot reused, a corrupt record) is not believed. */
static bool event_is_ours(const struct kwd_session *s, const void *data)
{
	struct kw_event_hdr h;

	memcpy(&h, data, sizeof(h));
	return h.slot == s->slot && h.generation == s->generation;
}

/* Numbers given up without the kernel's word for each (the gap too old, an
 * event too far ahead) lose their kw_lost marks too: a mark left behind could
 * pass for a later number's. */
static void forget_given_up(struct kwd_session *s, uint64_t from)
{
	kw_hooks_lost_forget(s->d->hooks, s->slot, from, s->ro.next);
}

static void jump_to(struct kwd_session *s, uint64_t seq)
{
	uint64_t from = s->ro.next;

	s->skipped += kw_reorder_jump(&s->ro, seq);
	forget_given_up(s, from);
}

static void ring_sample(void *ctx, const void *data, size_t size)
{
	struct kwd_session *s = ctx;
	uint64_t seq;
	int e;

	if (kw_event_seq(data, size, &seq) < 0 || size < sizeof(struct kw_event_hdr)) {
		/* Its number never arrives: the trailer counts it as a gap. */
		kwd_log(s->d, LOG_ERR, "session %s: a ring buffer record of %zu bytes has no header",
			s->id, size);
		return;
	}
	if (((const struct kw_event_hdr *)data)->kind == KWD_EV_COLLECTOR) {
		/* no program writes that kind: a record that claims it is not believed */
		s->bad_events++;
		return;
	}
	if (!event_is_ours(s, data)) {
		kwd_log(s->d, LOG_ERR, "session %s: event %llu names another session", s->id,
			(unsigned long long)seq);
		s->bad_events++;
		return;
	}
	if (seq < s->resume_floor) {
		/* read again after a restart: its line is already in the log */
		s->duplicates++;
		return;
	}
	e = kw_reorder_push(&s->ro, seq, data, size);
	if (e == -ENOSPC) {
		/* Far ahead of the window: what is missing before it is given up
		 * (the trailer counts it; nothing after it is held back). */
		jump_to(s, seq);
		e = kw_reorder_push(&s->ro, seq, data, size);
	}
	if (e) {
		s->bad_events++;
		kwd_log(s->d, LOG_ERR, "session %s: event %llu lost in the collector: %s", s->id,
			(unsigned long long)seq, strerror(-e));
	}
}

/* kwd_dns_env.emit: an entry the collector writes itself (dns.query) under
 * a sequence number it took from the session's kernel counter goes through
 * the reorder window like a kernel record. */
static int push_collector(void *ctx, const struct kw_event_hdr *h, const char *line, size_t len)
{
	struct kwd_session *s = ctx;
	char *rec = malloc(sizeof(*h) + len);
	int e;

	if (!rec)
		return -ENOMEM;
	memcpy(rec, h, sizeof(*h));
	memcpy(rec + sizeof(*h), line, len);
	e = kw_reorder_push(&s->ro, h->seq, rec, sizeof(*h) + len);
	if (e == -ENOSPC) {
		jump_to(s, h->seq);
		e = kw_reorder_push(&s->ro, h->seq, rec, sizeof(*h) + len);
	}
	free(rec);
	return e;
}

int kwd_session_dns_start(struct kwd_session *s, struct kw_dns_steer *steer, char *err,
			  size_t errlen)
{
	const struct kwd_dns_env env = {
		.d = s->d, .session = s->id, .slot = s->slot, .generation = s->generation,
		.pol = s->pol, .emit = push_collector, .ctx = s,
	};

	return kwd_dns_start(&env, &s->dns, steer, err, errlen);
}

/* kw_logwriter_submit_fn: a chunk of whole lines goes to the I/O thread with
 * the ring buffer position it frees once written. */
static int session_submit(void *ctx, int fd, struct kw_buf *out)
{
	struct kwd_session *s = ctx;
	uint64_t rel = kwd_ring_releasable(&s->ring, s->emitted_below);
	struct kw_buf chunk = *out;

	memset(out, 0, sizeof(*out));
	kwd_worker_spare(s->d, out);
	return kwd_worker_write(s->d, fd, chunk.data, chunk.len, chunk.cap, &s->log.tr, s->ring.cons,
				rel);
}

/* Queues the buffered lines, or (nothing buffered) just the release of
 * records already written or read twice. */
static void session_flush(struct kwd_session *s)
{
	uint64_t before = s->ring.release_pos;

	if (s->log.out.len) {
		kw_logwriter_flush(&s->log);
		return;
	}
	if (s->log.submit && kwd_ring_releasable(&s->ring, s->emitted_below) > before)
		kwd_worker_write(s->d, s->log.fd, NULL, 0, 0, NULL, s->ring.cons, s->ring.release_pos);
}

void kwd_session_ring_ready(struct kwd_session *s)
{
	int n = kwd_ring_read(&s->ring, ring_sample, s);

	/* The kernel frees ring buffer space only once lines are written:
	 * hand them over before a quarter of it is held. */
	if (kwd_ring_used(&s->ring) > s->ring.size / 4)
		session_flush(s);
	if (n > 0) {
		/* Busy: its tail below the wakeup mark is fetched every
		 * KWD_POLL_MS for a while. */
		s->hot_until_ms = kwd_now_ms() + KWD_HOT_MS;
		if (s->hot_until_ms > s->d->poll_until_ms)
			s->d->poll_until_ms = s->hot_until_ms;
	}
	if (s->ro.pending)
		maybe_skip_gap(s, kwd_now_ms());
}

struct kwd_session *kwd_session_new(struct kwd *d)
{
	struct kwd_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->d = d;
	s->cgroup_fd = -1;
	s->ring_fd = -1;
	s->log.fd = -1;
	s->killed = -1;
	s->w.kind = KWD_W_RING;
	s->w.ptr = s;
	kw_reorder_init(&s->ro, emit_event, s);
	return s;
}

/* Maps the ring buffer and watches it (edge-triggered: records read but not
 * yet released keep it readable). From here on log chunks go to the I/O
 * thread. */
int kwd_session_attach_ring(struct kwd_session *s, int ringbuf_fd, size_t size, char *err,
			    size_t errlen)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.ptr = &s->w };
	int e = kwd_ring_map(&s->ring, ringbuf_fd, size);

	if (e) {
		snprintf(err, errlen, "mapping the ring buffer: %s", strerror(-e));
		return e;
	}
	if (epoll_ctl(s->d->epfd, EPOLL_CTL_ADD, ringbuf_fd, &ev) < 0) {
		e = -errno;
		snprintf(err, errlen, "epoll: %s", strerror(errno));
		kwd_ring_unmap(&s->ring);
		return e;
	}
	s->ring_fd = ringbuf_fd;
	s->log.submit = session_submit;
	s->log.submit_ctx = s;
	return 0;
}

/* ---- open ----------------------------------------------------------------- */

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

static void class_names(uint32_t mask, struct kw_buf *out)
{
	for (unsigned b = 0; b < KW_CLASS_COUNT; b++) {
		if (!(mask & (1u << b)))
			continue;
		if (out->len)
			kw_buf_putc(out, ',');
		kw_buf_puts(out, kw_class_name(1u << b) ? kw_class_name(1u << b) : "?");
	}
	if (!out->data)
		kw_buf_puts(out, "");
}

static json_t *check_hooks(struct kwd *d, const struct kw_policy *pol)
{
	uint32_t missing = pol->classes & ~kw_hooks_available(d->hooks);
	struct kw_buf names = { 0 }, why = { 0 };
	json_t *err;

	if (!missing)
		return NULL;
	class_names(missing, &names);
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
	/* A 64-bit id: a decimal string, as in every decision entry. */
	snprintf(cgroup_id, sizeof(cgroup_id), "%llu", (unsigned long long)s->cgroup_id);
	class_names(s->pol->classes, &hooks);
	e = kw_logwriter_entry_begin(&s->log, &o);
	e = e ?: lossy(&o, "boot_id", d->host.boot_id);
	e = e ?: jcs_obj_str(&o, "bundle_hash", s->bundle_hash);
	e = e ?: lossy(&o, "cgroup", s->cgroup_path);
	e = e ?: jcs_obj_str(&o, "cgroup_id", cgroup_id);
	e = e ?: jcs_obj_str(&o, "cgroup_mode", d->host.cgroup_mode);
	e = e ?: jcs_obj_str(&o, "collector", "kwitnessd");
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
	e = e ?: jcs_obj_str(&o, "programs", d->programs ? d->programs : "");
	e = e ?: jcs_obj_str(&o, "record", s->pol->record == KW_RECORD_DENY ? "deny" : "all");
	e = e ?: jcs_obj_int(&o, "ringbuf_size", (int64_t)d->cfg.ringbuf_size);
	e = e ?: jcs_obj_str(&o, "sandbox_id", s->sandbox_id);
	e = e ?: jcs_obj_str(&o, "session", s->id);
	e = e ?: jcs_obj_str(&o, "tool", "kwitness.open");
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

	s->bundle_len = req->policy_len;
	s->bundle = malloc(s->bundle_len + 1);
	if (!s->bundle)
		goto oom;
	memcpy(s->bundle, req->policy, s->bundle_len + 1);
	e = kw_policy_parse(s->bundle, s->bundle_len, &s->pol, msg, sizeof(msg));
	if (e) {
		err = kwd_error(KW_ERR_POLICY_INVALID, "%s", msg[0] ? msg : strerror(-e));
		goto fail;
	}
	err = check_hooks(d, s->pol);
	if (err)
		goto fail;
	s->owner = peer->uid;
	err = check_cgroup(d, req->cgroup, s, peer);
	if (err)
		goto fail;
	for (slot = 0; slot < KW_MAX_SESSIONS && d->slots[slot]; slot++)
		;
	if (slot == KW_MAX_SESSIONS) {
		err = kwd_error(KW_ERR_TOO_MANY_SESSIONS, "all %d session slots are in use",
				KW_MAX_SESSIONS);
		goto fail;
	}
	s->slot = slot;
	s->sandbox_id = strdup(req->sandbox_id);
	s->image_digest = strdup(req->image_digest);
	s->model_provider = dup_or_default(req->model_provider, d->cfg.model_provider);
	s->model_id = dup_or_default(req->model_id, d->cfg.model_id);
	s->data_class = dup_or_default(req->data_class, d->cfg.data_class);
	if (!s->sandbox_id || !s->image_digest || !s->model_provider || !s->model_id ||
	    !s->data_class)
		goto oom;
	if (new_session_id(s->id)) {
		err = kwd_error(KW_ERR_INTERNAL, "no randomness for a session id");
		goto fail;
	}
	e = kw_digest_buf(KW_SHA256, s->bundle, s->bundle_len, s->bundle_hash);
	if (e) {
		err = kwd_error(KW_ERR_INTERNAL, "hashing the bundle: %s", strerror(-e));
		goto fail;
	}
	s->policy_path = xasprintf("%s/policies/%s", d->cfg.state_dir,
				   strchr(s->bundle_hash, ':') + 1);
	s->log_path = xasprintf("%s/logs/%s.jsonl", d->cfg.state_dir, s->id);
	s->record_path = xasprintf("%s/records/%s.json", d->cfg.state_dir, s->id);
	if (!s->policy_path || !s->log_path || !s->record_path)
		goto oom;
	e = kw_logwriter_open(&s->log, s->log_path);
	if (e) {
		s->log.fd = -1;
		err = kwd_error(KW_ERR_STORAGE, "%s: %s", s->log_path, strerror(-e));
		goto fail;
	}

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
	d->slots[slot] = s;
	d->n_sessions++;
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
	goto fail;
oom:
	err = kwd_error(KW_ERR_INTERNAL, "out of memory");
fail:
	kwd_session_free(s);
	return err;
}

/* ---- close -------------------------------------------------------------- */

static struct kwd_session *find_session(struct kwd *d, const char *id)
{
	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++)
		if (d->slots[i] && !strcmp(d->slots[i]->id, id))
			return d->slots[i];
	return NULL;
}

/* Waits until no program that found a session before its untag can still
 * take a sequence number: after this next_seq is final. */
static void quiesce(struct kwd *d)
{
	int e = kw_hooks_quiesce(d->hooks);

	if (e == -ETIMEDOUT) {
		/* a sleepable exec program stayed between its session lookup
		 * and its record for seconds: a number may come after the
		 * trailer; the drain below waits for what it can */
		kwd_log(d, LOG_ERR, "a sleepable program was still numbering a decision after %d ms",
			KW_QUIESCE_SLEEPERS_MS);
	} else if (e) {
		/* nohz_full kernels refuse MEMBARRIER_CMD_GLOBAL: programs run
		 * for microseconds, give them far longer */
		kwd_log(d, LOG_WARNING, "no RCU grace period from membarrier (%s): waiting 50 ms",
			strerror(-e));
		usleep(50 * 1000);
	}
}

/* Close, first half: what is left in the cgroup is killed (when asked) while
 * it is still governed and recorded, then the cgroup is untagged. The grace
 * period (quiesce) comes after, once for every session closing together. */
static void begin_close(struct kwd_session *s, uint64_t client_id)
{
	int e;

	/* a collector that dies from here on: the next one finishes the close */
	if (s->d->cfg.pin_dir &&
	    (e = kwd_journal_write(s, s->close_kill ? 2 : 1)))
		kwd_log(s->d, LOG_ERR, "session %s: journal: %s", s->id, strerror(-e));
	if (s->cgroup_fd >= 0) {
		if (s->close_kill) {
			e = kwd_cgroup_kill(s->cgroup_fd, KWD_KILL_TIMEOUT_MS);
			if (e < 0)
				kwd_log(s->d, LOG_ERR, "session %s: killing what is left: %s", s->id,
					strerror(-e));
			s->killed = e < 0 ? 0 : e;
		} else {
			e = kwd_cgroup_count(s->cgroup_fd);
			s->still_running = e < 0 ? 0 : e;
		}
	}
	e = kw_hooks_session_untag(s->d->hooks, s->slot);
	if (e)
		kwd_log(s->d, LOG_ERR, "session %s: untag: %s", s->id, strerror(-e));
	kwd_dns_stop(s->dns);
	s->state = KWD_S_CLOSING;
	s->d->n_closing++;
	s->close_client = client_id;
	s->close_deadline_ms = kwd_now_ms() + KWD_DRAIN_TIMEOUT_MS;
}

void kwd_session_close_resumed(struct kwd_session *s, bool kill_left)
{
	s->close_kill = kill_left;
	begin_close(s, 0);
	quiesce(s->d);
}

json_t *kwd_session_close_req(struct kwd *d, const struct kw_request *req,
			      uint64_t client_id, const struct kwd_peer *peer)
{
	const char *id = req->session;
	struct kwd_session *s;

	s = find_session(d, id);
	if (!s)
		return kwd_error(KW_ERR_UNKNOWN_SESSION, "no open session '%.64s'", id);
	if (!kwd_authz_session(peer, s->owner))
		return kwd_error(KW_ERR_FORBIDDEN_SESSION, "session %s belongs to another user", s->id);
	if (s->state != KWD_S_OPEN)
		return kwd_error(KW_ERR_SESSION_CLOSING, "session %s is already closing", s->id);
	s->close_kill = req->kill;
	begin_close(s, client_id);
	quiesce(d);
	return NULL; /* replied when drained, from kwd_sessions_tick */
}

/* Every number below next_seq has arrived or is accounted for by the kernel's
 * dropped counter. The programs number a decision before reserving its event,
 * so while one is in flight arrived + dropped stays below next_seq. */
static bool drained(struct kwd_session *s, struct kw_session *c)
{
	if (kw_hooks_session_counters(s->d->hooks, s->slot, c))
		return false;
	return s->ro.arrived + c->dropped >= c->next_seq;
}

static int write_close_entry(struct kwd_session *s, const struct kw_session *c, uint64_t dropped,
			     uint64_t gaps)
{
	struct jcs_obj o;
	int e;

	e = kw_logwriter_entry_begin(&s->log, &o);
	e = e ?: jcs_obj_bool(&o, "complete", dropped == 0 && c->untracked == 0);
	e = e ?: jcs_obj_int(&o, "decisions", (int64_t)s->decisions);
	e = e ?: jcs_obj_int(&o, "denials", (int64_t)s->denials);
	e = e ?: jcs_obj_int(&o, "dropped", (int64_t)dropped);
	/* The binding the record is signed under (new if the PCRs moved). */
	if (s->runtime.bound)
		e = e ?: jcs_obj_str(&o, "evidence", s->runtime.evidence);
	e = e ?: jcs_obj_int(&o, "killed", s->killed < 0 ? 0 : s->killed);
	e = e ?: jcs_obj_int(&o, "next_seq", (int64_t)c->next_seq);
	e = e ?: jcs_obj_int(&o, "seq_gaps", (int64_t)gaps);
	e = e ?: jcs_obj_str(&o, "session", s->id);
	e = e ?: jcs_obj_int(&o, "still_running", s->still_running);
	e = e ?: jcs_obj_str(&o, "tool", "kwitness.close");
	e = e ?: jcs_obj_int(&o, "ts", kwd_now_us());
	e = e ?: jcs_obj_int(&o, "unrecorded", (int64_t)c->unrecorded);
	e = e ?: jcs_obj_int(&o, "untracked_cgroups", (int64_t)c->untracked);
	return kw_logwriter_entry_end(&s->log, &o, e);
}

/* Main thread, once drained: trailer, transcript hash, kernel slot freed; the
 * blocking rest (write, fsync, seal the record) goes to the I/O worker as the
 * session's one SEAL job. */
static void end_session(struct kwd_session *s)
{
	struct kwd *d = s->d;
	struct kw_session c = { 0 };
	struct kwd_job *job = &s->seal;
	uint64_t gaps;
	int e;

	kwd_ring_read(&s->ring, ring_sample, s);
	s->skipped += kw_reorder_flush(&s->ro);
	kw_hooks_session_counters(d->hooks, s->slot, &c);
	/* gaps: numbers below next_seq that never arrived. dropped: decisions
	 * that are not in the log, by the kernel's count or by the gaps,
	 * whichever says more (they agree once drained), plus events the
	 * collector could not decode. */
	gaps = c.next_seq > s->ro.arrived ? c.next_seq - s->ro.arrived : 0;
	s->dropped = (gaps > c.dropped ? gaps : c.dropped) + s->bad_events;
	s->unrecorded = c.unrecorded;
	s->untracked = c.untracked;
	kwd_attest_current(d, &s->runtime);
	e = write_close_entry(s, &c, s->dropped, gaps);

	/* The slot (counters, ring buffer) stays until the record is written:
	 * a collector that dies meanwhile leaves a close the next one finishes.
	 * The ring buffer mapping stays too: queued chunks release into it. */
	s->state = KWD_S_FINISHING;
	d->n_closing--;
	if (s->ring_fd >= 0)
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, s->ring_fd, NULL);

	job->kind = KWD_JOB_SEAL;
	job->owner = s;
	job->err = e ? e : s->ro.err;
	job->stage = KWD_SEAL_NOT_RUN;
	e = kw_logwriter_detach(&s->log, &job->data, &job->len, &job->fd, &job->tr);
	if (e && !job->err)
		job->err = e;
	job->in.sandbox_id = s->sandbox_id;
	job->in.image_digest = s->image_digest;
	job->in.bundle = s->bundle;
	job->in.bundle_len = s->bundle_len;
	job->in.enforcement_mode = kw_mode_name(s->pol->mode);
	job->in.model_provider = s->model_provider;
	job->in.model_id = s->model_id;
	job->in.data_class = s->data_class;
	job->in.verifier = d->cfg.verifier;
	if (s->runtime.bound) {
		/* Signed under the verified TPM binding (attest.c). */
		s->record_runtime.platform = "tpm2";
		s->record_runtime.measurement = s->runtime.measurement;
		s->record_runtime.nonce = s->runtime.nonce;
		s->record_runtime.firmware_version = s->runtime.firmware_version;
		job->in.runtime = &s->record_runtime;
	}
	job->key = d->key;
	job->record_path = s->record_path;
	job->publish = d->publish;
	kwd_worker_submit(d, job);
}

/* Main thread, the close is over (record written or not): the kernel slot
 * goes, then the session. */
static void session_release(struct kwd_session *s)
{
	struct kwd *d = s->d;

	d->slots[s->slot] = NULL;
	d->n_sessions--;
	s->ring_fd = -1; /* closed with the slot; the mapping goes with s */
	kw_hooks_session_free(d->hooks, s->slot);
	kwd_session_free(s);
}

/* Main thread: the worker has written the log and sealed the record (or
 * failed to). The close reply says what happened. */
json_t *kwd_session_sealed(struct kwd *d, struct kwd_job *job, uint64_t *client)
{
	struct kwd_session *s = job->owner;
	json_t *reply;

	if (job->err && job->stage == KWD_SEAL_NOT_RUN)
		reply = kwd_error(KW_ERR_STORAGE, "decision log %s: %s", s->log_path,
				  strerror(-job->err));
	else if (s->policy_err)
		reply = kwd_error(KW_ERR_STORAGE, "policy bundle %s: %s", s->policy_path,
				  strerror(-s->policy_err));
	else if (job->err)
		reply = kwd_error(job->stage == KW_SEAL_WRITE	 ? KW_ERR_STORAGE :
				  job->stage == KW_SEAL_MEMORY ? KW_ERR_INTERNAL :
								 KW_ERR_RECORD_FAILED,
				  "%s", job->why);
	else
		reply = json_pack("{s:b, s:s, s:O, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:b}",
				  KW_F_OK, 1, KW_F_SESSION, s->id, KW_F_RECORD, job->record,
				  KW_F_RECORD_PATH, s->record_path, KW_F_LOG_PATH, s->log_path,
				  KW_F_POLICY_PATH, s->policy_path, KW_F_DECISIONS,
				  (json_int_t)s->decisions, KW_F_DENIALS, (json_int_t)s->denials,
				  KW_F_DROPPED, (json_int_t)s->dropped, KW_F_UNRECORDED,
				  (json_int_t)s->unrecorded, KW_F_UNTRACKED_CGROUPS,
				  (json_int_t)s->untracked, KW_F_COMPLETE,
				  s->dropped == 0 && s->untracked == 0);
	if (!job->err && !s->policy_err) {
		json_object_set_new(reply, KW_F_KILLED, json_integer(s->killed < 0 ? 0 : s->killed));
		json_object_set_new(reply, KW_F_STILL_RUNNING, json_integer(s->still_running));
		kwd_journal_remove(d, s->id);
	}
	if (job->err || s->policy_err)
		kwd_log(d, LOG_ERR, "session %s: %s", s->id,
			json_string_value(json_object_get(reply, KW_F_MESSAGE)));
	else
		kwd_log(d, LOG_INFO,
			"session %s closed: %llu decisions, %llu denials, %llu dropped -> %s", s->id,
			(unsigned long long)s->decisions, (unsigned long long)s->denials,
			(unsigned long long)s->dropped, s->record_path);
	*client = s->close_client;
	session_release(s);
	return reply;
}

static bool seq_lost(void *ctx, uint64_t seq)
{
	struct kwd_session *s = ctx;

	return kw_hooks_seq_lost(s->d->hooks, s->slot, seq);
}

/* A gap is a number in flight (another CPU took it and has not written its
 * event yet) or a drop. The kernel marks drops in kw_lost: those are given up
 * at once, so the ring buffer, which lets go only below what was written, is
 * not held for them. A gap without a mark that stays open while the kernel
 * counts more drops than gaps given up is one of those drops too (its mark
 * overwritten): move past it after KWD_GAP_SKIP_MS, so the window does not
 * hold every later event. (A number that still arrives is written anyway.) */
static void maybe_skip_gap(struct kwd_session *s, int64_t now)
{
	struct kw_session c;
	uint64_t from, n = s->ro.pending ? kw_reorder_skip_lost(&s->ro, seq_lost, s) : 0;

	s->skipped += n;
	s->skipped_marked += n;
	if (!s->ro.pending) {
		s->gap_since_ms = 0;
		return;
	}
	if (!s->gap_since_ms || n) {
		s->gap_since_ms = now; /* a new gap */
		return;
	}
	if (now - s->gap_since_ms < KWD_GAP_SKIP_MS ||
	    kw_hooks_session_counters(s->d->hooks, s->slot, &c) || c.dropped <= s->skipped)
		return;
	from = s->ro.next;
	s->skipped += kw_reorder_skip(&s->ro);
	forget_given_up(s, from);
	s->gap_since_ms = s->ro.pending ? now : 0;
}

/* After every epoll batch: only closing sessions need a look. */
void kwd_sessions_after_batch(struct kwd *d)
{
	int64_t now;

	if (!d->n_closing)
		return;
	now = kwd_now_ms();
	for (unsigned i = 0; i < KW_MAX_SESSIONS && d->n_closing; i++) {
		struct kwd_session *s = d->slots[i];
		struct kw_session c;

		if (!s || s->state != KWD_S_CLOSING)
			continue;
		kwd_ring_read(&s->ring, ring_sample, s);
		if (drained(s, &c) || now >= s->close_deadline_ms)
			end_session(s);
	}
}

/* On the timer: old gaps, and log lines buffered by quiet sessions. */
void kwd_sessions_tick(struct kwd *d)
{
	int64_t now = kwd_now_ms();

	kwd_sessions_after_batch(d);
	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
		struct kwd_session *s = d->slots[i];

		if (!s || s->state != KWD_S_OPEN)
			continue;
		/* What waits below the wakeup mark (and records the kernel
		 * did not wake for while earlier ones were not released). */
		if (kwd_ring_unread(&s->ring))
			kwd_session_ring_ready(s);
		maybe_skip_gap(s, now);
		kwd_dns_tick(s->dns, now);
		session_flush(s);
	}
}

void kwd_sessions_poll(struct kwd *d)
{
	int64_t now = kwd_now_ms();

	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
		struct kwd_session *s = d->slots[i];

		/* An empty ring buffer costs two loads, not a consume call. */
		if (!s || s->state != KWD_S_OPEN || s->hot_until_ms <= now ||
		    !kwd_ring_unread(&s->ring))
			continue;
		kwd_session_ring_ready(s);
	}
}

void kwd_sessions_close_all(struct kwd *d, bool closing_only)
{
	int64_t deadline = kwd_now_ms() + KWD_DRAIN_TIMEOUT_MS;
	unsigned started = 0;

	for (unsigned i = 0; i < KW_MAX_SESSIONS && !closing_only; i++)
		if (d->slots[i] && d->slots[i]->state == KWD_S_OPEN) {
			begin_close(d->slots[i], 0);
			started++;
		}
	if (started)
		quiesce(d);
	while (d->n_closing) {
		kwd_refresh_clock(d);
		for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
			struct kwd_session *s = d->slots[i];
			struct kw_session c;

			if (!s || s->state != KWD_S_CLOSING)
				continue;
			kwd_ring_read(&s->ring, ring_sample, s);
			if (drained(s, &c) || kwd_now_ms() >= deadline)
				end_session(s);
		}
		if (d->n_closing)
			usleep(5000);
	}
}

void kwd_sessions_flush_all(struct kwd *d)
{
	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
		struct kwd_session *s = d->slots[i];

		if (!s || s->state != KWD_S_OPEN)
			continue;
		kwd_ring_read(&s->ring, ring_sample, s);
		/* events held for a gap stay unreleased in the ring buffer */
		session_flush(s);
	}
}

void kwd_sessions_release(struct kwd *d)
{
	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
		struct kwd_session *s = d->slots[i];

		if (!s)
			continue;
		d->slots[i] = NULL;
		d->n_sessions--;
		/* the pinned state and the ring buffer stay: the kernel goes on */
		s->ring_fd = -1;
		kwd_session_free(s);
	}
}

/* ---- status ------------------------------------------------------------- */

json_t *kwd_status(struct kwd *d, bool sessions_only, const struct kwd_peer *peer)
{
	json_t *list = json_array(), *reply;
	uint32_t avail;

	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
		struct kwd_session *s = d->slots[i];
		struct kw_session c = { 0 };
		struct kw_buf hooks = { 0 };

		if (!s || !kwd_authz_session(peer, s->owner))
			continue;
		kw_hooks_session_counters(d->hooks, s->slot, &c);
		class_names(s->pol->classes, &hooks);
		json_array_append_new(
			list,
			json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:s, s:s, s:I, s:I, s:I, s:I, "
				  "s:I, s:I, s:I, s:I, s:I, s:I}",
				  KW_F_SESSION, s->id, KW_F_SANDBOX_ID, s->sandbox_id, KW_F_CGROUP,
				  s->cgroup_path, KW_F_SLOT, (json_int_t)s->slot, KW_F_OPENED_US,
				  (json_int_t)s->opened_us, KW_F_MODE, kw_mode_name(s->pol->mode),
				  KW_F_HOOKS, hooks.data ? hooks.data : "", KW_F_STATE,
				  s->state == KWD_S_OPEN ? "open" : "closing", KW_F_DECISIONS,
				  (json_int_t)s->decisions, KW_F_DENIALS, (json_int_t)s->denials,
				  KW_F_DROPPED, (json_int_t)c.dropped, KW_F_UNRECORDED,
				  (json_int_t)c.unrecorded, KW_F_NEXT_SEQ, (json_int_t)c.next_seq,
				  KW_F_PENDING, (json_int_t)s->ro.pending, KW_F_GAPS_MARKED,
				  (json_int_t)s->skipped_marked, KW_F_GAPS_UNMARKED,
				  (json_int_t)(s->skipped - s->skipped_marked), KW_F_LOG_BYTES,
				  (json_int_t)(s->log.bytes + s->log.out.len), KW_F_RINGBUF_SIZE,
				  (json_int_t)s->ring.size));
		json_object_set_new(json_array_get(list, json_array_size(list) - 1),
				    KW_F_RINGBUF_USED,
				    json_integer((json_int_t)kwd_ring_used(&s->ring)));
		if (s->dns)
			json_object_set_new(json_array_get(list, json_array_size(list) - 1), KW_F_DNS,
					    kwd_dns_status(s->dns));
		kw_buf_free(&hooks);
	}
	if (sessions_only)
		return json_pack("{s:b, s:o}", KW_F_OK, 1, KW_F_SESSIONS, list);
	avail = kw_hooks_available(d->hooks);
	{
		json_t *a = json_array(), *u = json_array();

		for (unsigned b = 0; b < KW_CLASS_COUNT; b++) {
			const char *name = kw_class_name(1u << b);

			if (!name)
				continue;
			if (avail & (1u << b)) {
				json_array_append_new(a, json_string(name));
			} else {
				const char *r = kw_hooks_unavailable_reason(d->hooks, 1u << b);

				json_array_append_new(u, json_pack("{s:s, s:s}", KW_F_CLASS, name,
								   KW_F_REASON, r ? r : "not loaded"));
			}
		}
		reply = json_pack("{s:b, s:o, s:o, s:o, s:s, s:s, s:I, s:s}", KW_F_OK, 1, KW_F_SESSIONS,
				  list, KW_F_HOOKS_AVAILABLE, a, KW_F_HOOKS_UNAVAILABLE, u, KW_F_PROGRAMS,
				  d->programs ? d->programs : "", KW_F_STATE_DIR, d->cfg.state_dir,
				  KW_F_RINGBUF_SIZE, (json_int_t)d->cfg.ringbuf_size, KW_F_KERNEL,
				  d->host.kernel);
	}
	{
		json_t *spool = kwd_spool_status(d);

		if (spool && reply)
			json_object_set_new(reply, KW_F_ESTATE, spool);
		else
			json_decref(spool);
	}
	return reply;
}
