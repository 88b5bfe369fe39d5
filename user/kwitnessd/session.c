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

#include "kwitness/decision.h"
#include "kwitness/digest.h"
#include "kwitness/hooks.h"
#include "kwitness/jcs.h"
#include "kwitness/key.h"
#include "kwitness/policy.h"
#include "kwitness/record.h"
#include "kwitnessd.h"

/* enum kw_class: bits 0 (net.connect) to 10 (net.unix). */
#define KWD_CLASS_BITS 11

static char *xasprintf(const char *fmt, const char *a, const char *b)
{
	char *s;

	if (asprintf(&s, fmt, a, b) < 0)
		return NULL;
	return s;
}

/* The ring buffer's consumer and producer positions, mapped read-only, so
 * status can say how full it is (libbpf 1.1 has no accessor for this). */
static void map_ring_positions(struct kwd_session *s, int ringbuf_fd)
{
	long page = sysconf(_SC_PAGESIZE);
	void *c = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, ringbuf_fd, 0);
	void *p = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, ringbuf_fd, page);

	if (c == MAP_FAILED || p == MAP_FAILED) {
		if (c != MAP_FAILED)
			munmap(c, (size_t)page);
		if (p != MAP_FAILED)
			munmap(p, (size_t)page);
		return;
	}
	s->ring_cons = c;
	s->ring_prod = p;
}

static int64_t ring_used(const struct kwd_session *s)
{
	if (!s->ring_cons || !s->ring_prod)
		return -1;
	return (int64_t)(__atomic_load_n(s->ring_prod, __ATOMIC_ACQUIRE) -
			 __atomic_load_n(s->ring_cons, __ATOMIC_ACQUIRE));
}

static void session_free(struct kwd_session *s)
{
	if (!s)
		return;
	if (s->ring_cons)
		munmap((void *)s->ring_cons, (size_t)sysconf(_SC_PAGESIZE));
	if (s->ring_prod)
		munmap((void *)s->ring_prod, (size_t)sysconf(_SC_PAGESIZE));
	if (s->rb) {
		epoll_ctl(s->d->epfd, EPOLL_CTL_DEL, ring_buffer__epoll_fd(s->rb), NULL);
		ring_buffer__free(s->rb);
	}
	kwd_reorder_free(&s->ro);
	kwd_log_abort(&s->log);
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
	free(s);
}

/* ---- consuming decisions ---------------------------------------------- */

static void maybe_skip_gap(struct kwd_session *s, int64_t now);

/* Reorder window output: one event in sequence order, into the log. */
static int emit_event(void *ctx, const void *data, size_t len)
{
	struct kwd_session *s = ctx;
	const struct kw_event_hdr *h = data;
	int e;

	e = kwd_log_event(&s->log, data, len, s->d->boot_to_realtime_ns);
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

static int ring_sample(void *ctx, void *data, size_t size)
{
	struct kwd_session *s = ctx;
	uint64_t seq;
	int e;

	if (kw_event_seq(data, size, &seq) < 0 || size < sizeof(struct kw_event_hdr)) {
		/* Its number never arrives: the trailer counts it as a gap. */
		kwd_log(s->d, LOG_ERR, "session %s: a ring buffer record of %zu bytes has no header",
			s->id, size);
		return 0;
	}
	e = kwd_reorder_push(&s->ro, seq, data, size);
	if (e == -ENOSPC) {
		/* Far ahead of the window: what is missing before it is given up
		 * (the trailer counts it; nothing after it is held back). */
		s->skipped += kwd_reorder_jump(&s->ro, seq);
		e = kwd_reorder_push(&s->ro, seq, data, size);
	}
	if (e) {
		s->bad_events++;
		kwd_log(s->d, LOG_ERR, "session %s: event %llu lost in the collector: %s", s->id,
			(unsigned long long)seq, strerror(-e));
	}
	return 0;
}

void kwd_session_ring_ready(struct kwd_session *s)
{
	int n = ring_buffer__consume(s->rb);

	if (n > 0 && s->d->wakeup_bytes) {
		/* Busy: its tail below the wakeup mark is fetched every
		 * KWD_POLL_MS for a while. */
		s->hot_until_ms = kwd_now_ms() + KWD_HOT_MS;
		if (s->hot_until_ms > s->d->poll_until_ms)
			s->d->poll_until_ms = s->hot_until_ms;
	}
	if (s->ro.pending)
		maybe_skip_gap(s, kwd_now_ms());

	if (n < 0)
		kwd_log(s->d, LOG_ERR, "session %s: ring buffer: %s", s->id, strerror(-n));
}

/* ---- open ----------------------------------------------------------------- */

static const char *get_str(json_t *req, const char *key, bool required, json_t **err)
{
	json_t *v = json_object_get(req, key);

	if (!v) {
		if (required)
			*err = kwd_error("missing_field", "%s: required", key);
		return NULL;
	}
	if (!json_is_string(v)) {
		*err = kwd_error("invalid_field", "%s: must be a string", key);
		return NULL;
	}
	if (json_string_length(v) == 0 || json_string_length(v) > KWD_MAX_FIELD ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		*err = kwd_error("invalid_field", "%s: 1 to %d characters, no NUL", key,
				 KWD_MAX_FIELD);
		return NULL;
	}
	return json_string_value(v);
}

/* The cgroup id is the cgroup2 inode's file handle (what the kernel's
 * bpf_get_current_cgroup_id() returns). */
static int cgroup_id_of(int fd, const struct stat *st, uint64_t *id)
{
	struct {
		struct file_handle fh;
		unsigned char bytes[8];
	} h;
	int mount_id;

	h.fh.handle_bytes = sizeof(h.bytes);
	if (name_to_handle_at(fd, "", &h.fh, &mount_id, AT_EMPTY_PATH) == 0 &&
	    h.fh.handle_bytes == 8) {
		memcpy(id, h.fh.f_handle, 8);
		return 0;
	}
	*id = st->st_ino;
	return 0;
}

static bool path_is_within(const char *inner, const char *outer)
{
	size_t n = strlen(outer);

	return !strncmp(inner, outer, n) && (inner[n] == '/' || inner[n] == '\0');
}

/* Length of the cgroup2 mount path that real (a path on cgroup2) lies under:
 * the longest prefix whose parent is no longer cgroup2. */
static size_t cgroup2_mount_len(const char *real)
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

		if (o && o->cgroup_rel && path_is_within(rel, o->cgroup_rel))
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
	if (pid_cgroup2_path(getpid(), self, sizeof(self)) == 0 && path_is_within(self, rel))
		return "kwitnessd itself runs in it";
	return NULL;
}

/* Root may open a session on any cgroup. Anyone else on a cgroup it owns or
 * was delegated (cgroup v2 delegation: owner of the directory and of its
 * cgroup.procs), or one under a kwitnessd.conf grant for its uid or group.
 * Judged on the opened directory, not on the path. */
static bool may_use_cgroup(struct kwd *d, const struct kwd_peer *peer, int fd,
			   const struct stat *st, const char *real)
{
	struct stat procs;

	if (peer->uid == 0)
		return true;
	if (st->st_uid == peer->uid && fstatat(fd, "cgroup.procs", &procs, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(procs.st_mode) && procs.st_uid == peer->uid)
		return true;
	for (unsigned i = 0; i < d->cfg.n_grants; i++) {
		const struct kwd_grant *g = &d->cfg.grants[i];

		if (!path_is_within(real, g->path))
			continue;
		if (g->is_group ? kwd_pid_in_group(peer->pid, g->id, peer->gid) : g->id == peer->uid)
			return true;
	}
	return false;
}

static json_t *check_cgroup(struct kwd *d, const char *path, struct kwd_session *s,
			    const struct kwd_peer *peer)
{
	char real[PATH_MAX], fdpath[64];
	struct statfs sfs;
	struct stat st;
	const char *why;
	ssize_t n;

	if (path[0] != '/')
		return kwd_error("invalid_field", "cgroup: an absolute path is required");
	/* Opened once; every check below is on this directory, so a path
	 * swapped meanwhile changes nothing. */
	s->cgroup_fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->cgroup_fd < 0)
		return kwd_error(errno == ENOENT ? "cgroup_not_found" : "invalid_cgroup",
				 "cgroup %s: %s", path,
				 errno == ELOOP ? "a symbolic link" : strerror(errno));
	if (fstatfs(s->cgroup_fd, &sfs) < 0 || fstat(s->cgroup_fd, &st) < 0)
		return kwd_error("invalid_cgroup", "cgroup %s: %s", path, strerror(errno));
	if (sfs.f_type != CGROUP2_SUPER_MAGIC)
		return kwd_error("invalid_cgroup", "cgroup %s: not on a cgroup2 mount", path);
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", s->cgroup_fd);
	n = readlink(fdpath, real, sizeof(real) - 1);
	if (n <= 0 || n >= (ssize_t)sizeof(real) - 1)
		return kwd_error("invalid_cgroup", "cgroup %s: cannot name the opened directory", path);
	real[n] = '\0';
	why = outside_collector(real + cgroup2_mount_len(real));
	if (why)
		return kwd_error("invalid_cgroup", "cgroup %s: %s", path, why);
	if (!may_use_cgroup(d, peer, s->cgroup_fd, &st, real))
		return kwd_error("forbidden_cgroup",
				 "cgroup %s: uid %u neither owns it (directory and cgroup.procs) "
				 "nor has a grant for it", path, (unsigned)peer->uid);
	cgroup_id_of(s->cgroup_fd, &st, &s->cgroup_id);
	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
		struct kwd_session *o = d->slots[i];
		bool mine;

		if (!o)
			continue;
		if (o->cgroup_id != s->cgroup_id && !path_is_within(real, o->cgroup_path) &&
		    !path_is_within(o->cgroup_path, real))
			continue;
		/* another user's session is not named to a non-root client */
		mine = peer->uid == 0 || o->owner == peer->uid;
		return kwd_error("cgroup_tagged", "cgroup %s: already belongs to session %s (%s)",
				 path, mine ? o->id : "of another user",
				 mine ? o->cgroup_path : "-");
	}
	s->cgroup_path = strdup(real);
	s->cgroup_rel = strdup(real + cgroup2_mount_len(real));
	if (!s->cgroup_path || !s->cgroup_rel)
		return kwd_error("internal", "out of memory");
	return NULL;
}

static void class_names(uint32_t mask, struct kw_buf *out)
{
	for (unsigned b = 0; b < KWD_CLASS_BITS; b++) {
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
	for (unsigned b = 0; b < KWD_CLASS_BITS; b++) {
		const char *r;

		if (!(missing & (1u << b)))
			continue;
		r = kw_hooks_unavailable_reason(d->hooks, 1u << b);
		kw_buf_puts(&why, why.len ? "; " : "");
		kw_buf_puts(&why, kw_class_name(1u << b) ? kw_class_name(1u << b) : "?");
		kw_buf_puts(&why, ": ");
		kw_buf_puts(&why, r ? r : "not loaded");
	}
	err = kwd_error("hooks_unavailable", "the policy governs %s, which this host cannot enforce (%s)",
			names.data, why.data ? why.data : "");
	kw_buf_free(&names);
	kw_buf_free(&why);
	return err;
}

static int store_policy(struct kwd *d, struct kwd_session *s)
{
	const char *hex = strchr(s->bundle_hash, ':') + 1;
	struct stat st;

	s->policy_path = xasprintf("%s/policies/%s", d->cfg.state_dir, hex);
	if (!s->policy_path)
		return -ENOMEM;
	/* Stored by hash: an existing file already holds these bytes. */
	if (stat(s->policy_path, &st) == 0 && (size_t)st.st_size == s->bundle_len)
		return 0;
	return kw_write_file_atomic(s->policy_path, s->bundle, s->bundle_len, 0644);
}

/* Host facts and paths are bytes, not necessarily UTF-8. */
static int lossy(struct jcs_obj *o, const char *key, const char *val)
{
	return jcs_obj_strn_lossy(o, key, val, strlen(val), NULL);
}

static int write_open_entry(struct kwd *d, struct kwd_session *s)
{
	struct kw_buf line = { 0 }, hooks = { 0 };
	struct jcs_obj o;
	int e;

	class_names(s->pol->classes, &hooks);
	e = jcs_obj_begin(&o, &line);
	e = e ?: lossy(&o, "boot_id", d->host.boot_id);
	e = e ?: jcs_obj_str(&o, "bundle_hash", s->bundle_hash);
	e = e ?: lossy(&o, "cgroup", s->cgroup_path);
	e = e ?: jcs_obj_int(&o, "cgroup_id", (int64_t)(s->cgroup_id & JCS_MAX_SAFE_INT));
	e = e ?: jcs_obj_str(&o, "cgroup_mode", d->host.cgroup_mode);
	e = e ?: jcs_obj_str(&o, "collector", "kwitnessd");
	e = e ?: jcs_obj_str(&o, "data_class", s->data_class);
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
	e = e ?: jcs_obj_end(&o);
	e = e ?: kwd_log_append(&s->log, line.data, line.len);
	e = e ?: kwd_log_flush(&s->log);
	kw_buf_free(&line);
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

json_t *kwd_session_open(struct kwd *d, json_t *req, const struct kwd_peer *peer)
{
	const char *cgroup, *sandbox_id, *image_digest, *mp, *mi, *dc;
	struct kwd_session *s;
	json_t *err = NULL, *pv;
	char msg[512] = "";
	int ringbuf_fd = -1, e;
	uint32_t slot;

	if (d->stopping)
		return kwd_error("stopping", "kwitnessd is shutting down");
	cgroup = get_str(req, "cgroup", true, &err);
	if (err)
		return err;
	sandbox_id = get_str(req, "sandbox_id", true, &err);
	if (err)
		return err;
	if (strncmp(sandbox_id, "spiffe://", 9) && strncmp(sandbox_id, "did:", 4))
		return kwd_error("invalid_field", "sandbox_id: a spiffe:// or did: URI is required");
	image_digest = get_str(req, "image_digest", true, &err);
	if (err)
		return err;
	if (!kw_digest_valid(image_digest))
		return kwd_error("invalid_field", "image_digest: sha256:<64 hex> or sha384:<96 hex>");
	mp = get_str(req, "model_provider", false, &err);
	mi = err ? NULL : get_str(req, "model_id", false, &err);
	dc = err ? NULL : get_str(req, "data_class", false, &err);
	if (err)
		return err;
	pv = json_object_get(req, "policy");
	if (!pv)
		return kwd_error("missing_field", "policy: required (the bundle text as a string)");
	if (!json_is_string(pv))
		return kwd_error("invalid_field", "policy: the bundle text as a JSON string");
	if (json_string_length(pv) > KW_POLICY_MAX_BYTES)
		return kwd_error("policy_invalid", "policy: larger than %d bytes", KW_POLICY_MAX_BYTES);
	{
		const char *key;
		json_t *v;
		static const char *const known[] = { "op", "cgroup", "sandbox_id", "image_digest",
						     "policy", "model_provider", "model_id",
						     "data_class" };

		json_object_foreach(req, key, v) {
			bool ok = false;

			for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
				ok = ok || !strcmp(key, known[i]);
			if (!ok)
				return kwd_error("unknown_field", "%.64s: not an open field", key);
		}
	}

	s = calloc(1, sizeof(*s));
	if (!s)
		return kwd_error("internal", "out of memory");
	s->d = d;
	s->cgroup_fd = -1;
	s->log.fd = -1;
	s->w.kind = KWD_W_RING;
	s->w.ptr = s;
	kwd_reorder_init(&s->ro, emit_event, s);

	s->bundle_len = json_string_length(pv);
	s->bundle = malloc(s->bundle_len + 1);
	if (!s->bundle)
		goto oom;
	memcpy(s->bundle, json_string_value(pv), s->bundle_len + 1);
	e = kw_policy_parse(s->bundle, s->bundle_len, &s->pol, msg, sizeof(msg));
	if (e) {
		err = kwd_error("policy_invalid", "%s", msg[0] ? msg : strerror(-e));
		goto fail;
	}
	err = check_hooks(d, s->pol);
	if (err)
		goto fail;
	s->owner = peer->uid;
	err = check_cgroup(d, cgroup, s, peer);
	if (err)
		goto fail;
	for (slot = 0; slot < KW_MAX_SESSIONS && d->slots[slot]; slot++)
		;
	if (slot == KW_MAX_SESSIONS) {
		err = kwd_error("too_many_sessions", "all %d session slots are in use",
				KW_MAX_SESSIONS);
		goto fail;
	}
	s->slot = slot;
	s->sandbox_id = strdup(sandbox_id);
	s->image_digest = strdup(image_digest);
	s->model_provider = dup_or_default(mp, d->cfg.model_provider);
	s->model_id = dup_or_default(mi, d->cfg.model_id);
	s->data_class = dup_or_default(dc, d->cfg.data_class);
	if (!s->sandbox_id || !s->image_digest || !s->model_provider || !s->model_id ||
	    !s->data_class)
		goto oom;
	if (new_session_id(s->id)) {
		err = kwd_error("internal", "no randomness for a session id");
		goto fail;
	}
	e = kw_digest_buf(KW_SHA256, s->bundle, s->bundle_len, s->bundle_hash);
	if (e) {
		err = kwd_error("internal", "hashing the bundle: %s", strerror(-e));
		goto fail;
	}
	e = store_policy(d, s);
	if (e) {
		err = kwd_error("storage", "storing the bundle: %s", strerror(-e));
		goto fail;
	}
	s->log_path = xasprintf("%s/logs/%s.jsonl", d->cfg.state_dir, s->id);
	s->record_path = xasprintf("%s/records/%s.json", d->cfg.state_dir, s->id);
	if (!s->log_path || !s->record_path)
		goto oom;
	e = kwd_log_open(&s->log, s->log_path);
	if (e) {
		s->log.fd = -1;
		err = kwd_error("storage", "%s: %s", s->log_path, strerror(-e));
		goto fail;
	}

	s->opened_us = kwd_now_us();
	/* The open entry goes first; events wait in the ring buffer until the
	 * loop consumes them, after this function returns. */
	e = kw_hooks_session_add(d->hooks, slot, s->cgroup_fd, s->cgroup_id, s->pol, &ringbuf_fd,
				 msg, sizeof(msg));
	if (e) {
		err = kwd_error(e == -EEXIST || e == -EBUSY ? "cgroup_tagged" : "hooks_failed", "%s",
				msg[0] ? msg : strerror(-e));
		goto fail_log;
	}
	e = write_open_entry(d, s);
	if (e) {
		err = kwd_error("storage", "writing the open entry: %s", strerror(-e));
		goto fail_hooks;
	}
	s->rb = ring_buffer__new(ringbuf_fd, ring_sample, s, NULL);
	map_ring_positions(s, ringbuf_fd);
	if (!s->rb) {
		err = kwd_error("hooks_failed", "ring buffer: %s", strerror(errno));
		goto fail_hooks;
	}
	{
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &s->w };

		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->rb), &ev) < 0) {
			err = kwd_error("internal", "epoll: %s", strerror(errno));
			goto fail_hooks;
		}
	}
	/* From here on chunks are written by the I/O worker, in order (the open
	 * entry was written here, so an error path above never races it). */
	s->log.submit = kwd_worker_write;
	s->log.submit_ctx = d;
	d->slots[slot] = s;
	d->n_sessions++;
	kwd_log(d, LOG_INFO, "session %s opened: %s, cgroup %s, slot %u, %s", s->id, s->sandbox_id,
		s->cgroup_path, slot, kw_mode_name(s->pol->mode));
	return json_pack("{s:b, s:s, s:s, s:s, s:s}", "ok", 1, "session", s->id, "log_path",
			 s->log_path, "policy_path", s->policy_path, "bundle_hash", s->bundle_hash);

fail_hooks:
	kw_hooks_session_untag(d->hooks, slot);
	kw_hooks_session_free(d->hooks, slot);
fail_log:
	kwd_log_abort(&s->log);
	unlink(s->log_path);
	goto fail;
oom:
	err = kwd_error("internal", "out of memory");
fail:
	session_free(s);
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

static void begin_close(struct kwd_session *s, uint64_t client_id)
{
	int e = kw_hooks_session_untag(s->d->hooks, s->slot);

	if (e)
		kwd_log(s->d, LOG_ERR, "session %s: untag: %s", s->id, strerror(-e));
	s->state = KWD_S_CLOSING;
	s->d->n_closing++;
	s->close_client = client_id;
	s->close_deadline_ms = kwd_now_ms() + KWD_DRAIN_TIMEOUT_MS;
}

json_t *kwd_session_close_req(struct kwd *d, json_t *req, uint64_t client_id,
			      const struct kwd_peer *peer)
{
	json_t *err = NULL;
	const char *id = get_str(req, "session", true, &err);
	struct kwd_session *s;

	if (err)
		return err;
	s = find_session(d, id);
	if (!s)
		return kwd_error("unknown_session", "no open session '%.64s'", id);
	if (peer->uid != 0 && s->owner != peer->uid)
		return kwd_error("forbidden_session", "session %s belongs to another user", s->id);
	if (s->state != KWD_S_OPEN)
		return kwd_error("session_closing", "session %s is already closing", s->id);
	begin_close(s, client_id);
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
	struct kw_buf line = { 0 };
	struct jcs_obj o;
	int e;

	e = jcs_obj_begin(&o, &line);
	e = e ?: jcs_obj_bool(&o, "complete", dropped == 0);
	e = e ?: jcs_obj_int(&o, "decisions", (int64_t)s->decisions);
	e = e ?: jcs_obj_int(&o, "denials", (int64_t)s->denials);
	e = e ?: jcs_obj_int(&o, "dropped", (int64_t)dropped);
	e = e ?: jcs_obj_int(&o, "next_seq", (int64_t)c->next_seq);
	e = e ?: jcs_obj_int(&o, "seq_gaps", (int64_t)gaps);
	e = e ?: jcs_obj_str(&o, "session", s->id);
	e = e ?: jcs_obj_str(&o, "tool", "kwitness.close");
	e = e ?: jcs_obj_int(&o, "ts", kwd_now_us());
	e = e ?: jcs_obj_int(&o, "unrecorded", (int64_t)c->unrecorded);
	e = e ?: jcs_obj_end(&o);
	e = e ?: kwd_log_append(&s->log, line.data, line.len);
	kw_buf_free(&line);
	return e;
}

/* Main thread, once drained: trailer, transcript hash, kernel slot freed; the
 * blocking rest (write, fsync, record) goes to the I/O worker as one job. */
static void end_session(struct kwd_session *s)
{
	struct kwd *d = s->d;
	struct kw_session c = { 0 };
	struct kwd_job *job = calloc(1, sizeof(*job));
	uint64_t gaps;
	int e;

	ring_buffer__consume(s->rb);
	s->skipped += kwd_reorder_flush(&s->ro);
	kw_hooks_session_counters(d->hooks, s->slot, &c);
	/* gaps: numbers below next_seq that never arrived. dropped: decisions
	 * that are not in the log, by the kernel's count or by the gaps,
	 * whichever says more (they agree once drained), plus events the
	 * collector could not decode. */
	gaps = c.next_seq > s->ro.arrived ? c.next_seq - s->ro.arrived : 0;
	s->dropped = (gaps > c.dropped ? gaps : c.dropped) + s->bad_events;
	s->unrecorded = c.unrecorded;
	e = write_close_entry(s, &c, s->dropped, gaps);

	d->slots[s->slot] = NULL;
	d->n_sessions--;
	d->n_closing--;
	if (s->rb) {
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, ring_buffer__epoll_fd(s->rb), NULL);
		ring_buffer__free(s->rb);
		s->rb = NULL;
	}
	kw_hooks_session_free(d->hooks, s->slot);

	if (!job) {
		kwd_reply_to(d, s->close_client, kwd_error("internal", "out of memory"));
		session_free(s);
		return;
	}
	job->kind = KWD_JOB_FINISH;
	job->s = s;
	job->err = e ? e : s->ro.err;
	e = kwd_log_detach(&s->log, job->hash, &job->count, &job->data, &job->len, &job->fd);
	if (e && !job->err)
		job->err = e;
	kwd_worker_submit(d, job);
}

/* I/O worker: the last lines, fsync, then the record (build, sign, verify,
 * atomic write). Returns the close reply. Touches only the session's own
 * strings and the daemon's key and settings, which do not change. */
json_t *kwd_session_finish(struct kwd *d, struct kwd_session *s, const char *hash, uint64_t count)
{
	char msg[512] = "";
	struct kw_record_input in = { 0 };
	struct kw_verify_result vr = { 0 };
	struct kw_verify_opts vo = { 0 };
	struct kw_buf text = { 0 };
	json_t *rec = NULL, *reply;
	int64_t now_s;
	int e;

	now_s = kwd_now_us() / 1000000;
	in.sandbox_id = s->sandbox_id;
	in.image_digest = s->image_digest;
	in.bundle = s->bundle;
	in.bundle_len = s->bundle_len;
	in.transcript_hash = hash;
	in.call_count = count;
	in.enforcement_mode = kw_mode_name(s->pol->mode);
	in.model_provider = s->model_provider;
	in.model_id = s->model_id;
	in.data_class = s->data_class;
	in.verifier = d->cfg.verifier;
	in.iat = now_s;
	rec = kw_record_build(&in, msg, sizeof(msg));
	if (!rec) {
		reply = kwd_error("record_failed", "build: %s", msg);
		goto out;
	}
	e = kw_record_sign(rec, d->key, msg, sizeof(msg));
	if (e) {
		reply = kwd_error("record_failed", "sign: %s", msg);
		goto out;
	}
	e = jcs_dump(rec, &text);
	if (e) {
		reply = kwd_error("record_failed", "canonical form: %s", strerror(-e));
		goto out;
	}
	/* Check what was signed against what was written before it leaves. */
	vo.trusted = d->key;
	vo.now = now_s;
	vo.max_age = 0;
	vo.skew = 300;
	vo.transcript_hash = hash;
	vo.call_count = (int64_t)count;
	vo.bundle = s->bundle;
	vo.bundle_len = s->bundle_len;
	vo.image_digest = s->image_digest;
	e = kw_record_verify(text.data, text.len, &vo, &vr);
	if (e) {
		reply = kwd_error("record_failed", "self-check: %s",
				  e > 0 ? vr.message : strerror(-e));
		goto out;
	}
	if (kw_buf_putc(&text, '\n')) {
		reply = kwd_error("internal", "out of memory");
		goto out;
	}
	e = kw_write_file_atomic(s->record_path, text.data, text.len, 0644);
	if (e) {
		reply = kwd_error("storage", "%s: %s", s->record_path, strerror(-e));
		goto out;
	}
	reply = json_pack("{s:b, s:s, s:O, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:b}", "ok", 1,
			  "session", s->id, "record", rec, "record_path", s->record_path,
			  "log_path", s->log_path, "policy_path", s->policy_path, "decisions",
			  (json_int_t)s->decisions, "denials", (json_int_t)s->denials, "dropped",
			  (json_int_t)s->dropped, "unrecorded", (json_int_t)s->unrecorded,
			  "complete", s->dropped == 0);
out:
	json_decref(rec);
	kw_buf_free(&text);
	return reply;
}

/* Main thread: the worker is done with a session. */
void kwd_session_done(struct kwd *d, struct kwd_session *s, json_t *reply)
{
	if (json_is_false(json_object_get(reply, "ok")))
		kwd_log(d, LOG_ERR, "session %s: %s", s->id,
			json_string_value(json_object_get(reply, "message")));
	else
		kwd_log(d, LOG_INFO,
			"session %s closed: %llu decisions, %llu denials, %llu dropped -> %s", s->id,
			(unsigned long long)s->decisions, (unsigned long long)s->denials,
			(unsigned long long)s->dropped, s->record_path);
	if (s->close_client)
		kwd_reply_to(d, s->close_client, reply);
	else
		json_decref(reply);
	session_free(s);
}

/* A gap that stays open while the kernel counts more drops than gaps given
 * up is one of those drops: move past it, so the window does not hold every
 * later event. (A number that still arrives is written anyway.) */
static void maybe_skip_gap(struct kwd_session *s, int64_t now)
{
	struct kw_session c;

	if (!s->ro.pending) {
		s->gap_since_ms = 0;
		return;
	}
	if (!s->gap_since_ms) {
		s->gap_since_ms = now;
		return;
	}
	if (now - s->gap_since_ms < KWD_GAP_SKIP_MS ||
	    kw_hooks_session_counters(s->d->hooks, s->slot, &c) || c.dropped <= s->skipped)
		return;
	s->skipped += kwd_reorder_skip(&s->ro);
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
		ring_buffer__consume(s->rb);
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
		/* Batched wakeups: what waits below the mark, before the flush. */
		if (d->wakeup_bytes && ring_used(s))
			kwd_session_ring_ready(s);
		maybe_skip_gap(s, now);
		if (s->log.out.len)
			kwd_log_flush(&s->log);
	}
}

void kwd_sessions_poll(struct kwd *d)
{
	int64_t now = kwd_now_ms();

	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
		struct kwd_session *s = d->slots[i];

		/* An empty ring buffer costs two loads, not a consume call. */
		if (!s || s->state != KWD_S_OPEN || s->hot_until_ms <= now || !ring_used(s))
			continue;
		kwd_session_ring_ready(s);
	}
}

void kwd_sessions_close_all(struct kwd *d)
{
	int64_t deadline = kwd_now_ms() + KWD_DRAIN_TIMEOUT_MS;

	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++)
		if (d->slots[i] && d->slots[i]->state == KWD_S_OPEN)
			begin_close(d->slots[i], 0);
	while (d->n_sessions) {
		kwd_refresh_clock(d);
		for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
			struct kwd_session *s = d->slots[i];
			struct kw_session c;

			if (!s)
				continue;
			ring_buffer__consume(s->rb);
			if (drained(s, &c) || kwd_now_ms() >= deadline)
				end_session(s);
		}
		if (d->n_sessions)
			usleep(5000);
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

		if (!s || (peer->uid != 0 && s->owner != peer->uid))
			continue;
		kw_hooks_session_counters(d->hooks, s->slot, &c);
		class_names(s->pol->classes, &hooks);
		json_array_append_new(
			list,
			json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:s, s:s, s:I, s:I, s:I, s:I, "
				  "s:I, s:I, s:I, s:I}",
				  "session", s->id, "sandbox_id", s->sandbox_id, "cgroup",
				  s->cgroup_path, "slot", (json_int_t)s->slot, "opened_us",
				  (json_int_t)s->opened_us, "mode", kw_mode_name(s->pol->mode),
				  "hooks", hooks.data ? hooks.data : "", "state",
				  s->state == KWD_S_OPEN ? "open" : "closing", "decisions",
				  (json_int_t)s->decisions, "denials", (json_int_t)s->denials,
				  "dropped", (json_int_t)c.dropped, "unrecorded",
				  (json_int_t)c.unrecorded, "next_seq", (json_int_t)c.next_seq,
				  "pending", (json_int_t)s->ro.pending, "log_bytes",
				  (json_int_t)(s->log.bytes + s->log.out.len), "ringbuf_size",
				  (json_int_t)d->cfg.ringbuf_size));
		json_object_set_new(json_array_get(list, json_array_size(list) - 1),
				    "ringbuf_used", json_integer(ring_used(s)));
		kw_buf_free(&hooks);
	}
	if (sessions_only)
		return json_pack("{s:b, s:o}", "ok", 1, "sessions", list);
	avail = kw_hooks_available(d->hooks);
	{
		json_t *a = json_array(), *u = json_array();

		for (unsigned b = 0; b < KWD_CLASS_BITS; b++) {
			const char *name = kw_class_name(1u << b);

			if (!name)
				continue;
			if (avail & (1u << b)) {
				json_array_append_new(a, json_string(name));
			} else {
				const char *r = kw_hooks_unavailable_reason(d->hooks, 1u << b);

				json_array_append_new(u, json_pack("{s:s, s:s}", "class", name,
								   "reason", r ? r : "not loaded"));
			}
		}
		reply = json_pack("{s:b, s:o, s:o, s:o, s:s, s:s, s:I, s:s}", "ok", 1, "sessions",
				  list, "hooks_available", a, "hooks_unavailable", u, "programs",
				  d->programs ? d->programs : "", "state_dir", d->cfg.state_dir,
				  "ringbuf_size", (json_int_t)d->cfg.ringbuf_size, "kernel",
				  d->host.kernel);
	}
	return reply;
}
