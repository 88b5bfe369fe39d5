/* SPDX-License-Identifier: Apache-2.0 */
/* Resuming the sessions a previous collector left pinned. For each journal
 * entry (<state>/sessions/<id>.json): the log is reopened (a torn last line
 * cut, the transcript hash rebuilt from the file, the last sequence number
 * found), the pinned session (live in the kernel) and its ring buffer are
 * adopted, a kwitness.resume
 * entry is written, and the session goes on in the same log with the next
 * number; the events that waited in the ring buffer follow. A session that
 * cannot be resumed is ended in the kernel and sealed complete false with the
 * reason. Pinned slots no journal names are ended. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "trace/logsegment.h"
#include "verify/checkpoint.h"
#include "collector/checkpoint.h"
#include "lib/digest.h"
#include "bpf/hooks.h"
#include "jcs/jcs.h"
#include "policy/policy.h"
#include "kwitness/abi/name_match.h"
#include "commit.h"
#include "journal.h"
#include "recover.h"
#include "resume.h"
#include "resume_segments.h"
#include "ring.h"
#include "segwrite.h"
#include "session.h"
#include "util.h"
#include "metrics.h"

#define KWD_JOURNAL_MAX 4096

/* What the lines of the log say. */
struct scan {
	json_t *open;       /* the kwitness.open entry */
	bool closed;        /* a trailer is there */
	bool have_seq;
	uint64_t max_seq;
	uint64_t numbered; /* entries with a seq: decisions and proc entries */
	uint64_t decisions;
	uint64_t denials;
	int64_t last_ts;
	struct verify_ckpt *ck; /* the log's checkpoints, checked as it is read */
};

/* A member of a flat canonical entry: "key": can only be a key there (quotes
 * inside strings are escaped). */
static bool int_member(const char *line, size_t len, const char *key, long long *out)
{
	char pat[32];
	const char *p;
	char *end;
	int n = snprintf(pat, sizeof(pat), "\"%s\":", key);

	p = memmem(line, len, pat, (size_t)n);
	if (!p)
		return false;
	p += n;
	*out = strtoll(p, &end, 10);
	return end != p;
}

static int scan_line(void *ctx, const char *line, size_t len)
{
	struct scan *sc = ctx;
	long long v;

	if (sc->ck)
		verify_ckpt_entry(sc->ck, line, len);
	if (int_member(line, len, "ts", &v))
		sc->last_ts = v;
	if (!sc->open) {
		struct jcs_error jerr;
		const char *tool;

		sc->open = jcs_parse(line, len, &jerr);
		tool = sc->open ? json_string_value(json_object_get(sc->open, "tool")) : NULL;
		return tool && !strcmp(tool, "kwitness.open") ? 0 : -EINVAL;
	}
	if (memmem(line, len, "\"tool\":\"kwitness.", 17)) {
		if (memmem(line, len, "\"tool\":\"kwitness.close\"", 23))
			sc->closed = true;
		return 0;
	}
	sc->numbered++;
	/* proc entries are numbered, not decisions (docs/decision-log.md) */
	if (!memmem(line, len, "\"tool\":\"proc\"", 13)) {
		sc->decisions++;
		if (memmem(line, len, "\"decision\":\"deny\"", 17))
			sc->denials++;
	}
	if (int_member(line, len, "seq", &v) && v >= 0 &&
	    (!sc->have_seq || (uint64_t)v > sc->max_seq)) {
		sc->max_seq = (uint64_t)v;
		sc->have_seq = true;
	}
	return 0;
}

static const char *member(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static char *dup_member(json_t *o, const char *key, const char *def)
{
	const char *v = member(o, key);

	return v || def ? strdup(v ? v : def) : NULL;
}

/* The bundle the open entry names, checked against its hash, and parsed. */
static int load_bundle(struct kwd *d, struct kwd_session *s, char *why, size_t whylen)
{
	char got[KW_DIGEST_STR_MAX], msg[256] = "";
	struct kw_buf b = { 0 };
	int e;

	if (asprintf(&s->policy_path, "%s/policies/%s", d->cfg.state_dir,
		     strchr(s->bundle_hash, ':') + 1) < 0) {
		s->policy_path = NULL;
		return -ENOMEM;
	}
	e = kw_read_regular_file(s->policy_path, KW_POLICY_MAX_BYTES, &b);
	if (!e)
		e = kw_digest_buf(KW_SHA256, b.data ? b.data : "", b.len, got);
	if (e || strcmp(got, s->bundle_hash)) {
		snprintf(why, whylen, "%.200s: the bundle is missing or does not match",
			 s->policy_path);
		kw_buf_free(&b);
		return e ? e : -EINVAL;
	}
	if (kw_buf_putc(&b, '\0')) {
		kw_buf_free(&b);
		return -ENOMEM;
	}
	s->bundle = b.data;
	s->bundle_len = b.len - 1;
	e = kw_policy_parse(s->bundle, s->bundle_len, &s->pol, msg, sizeof(msg));
	if (e)
		snprintf(why, whylen, "the bundle no longer parses: %s", msg);
	return e;
}

static int write_resume_entry(struct kwd_session *s, const struct kw_session *c, int64_t since_us,
			      uint64_t waiting)
{
	struct jcs_obj o;
	int e;

	e = kw_logwriter_entry_begin(&s->log, &o);
	e = e ?: jcs_obj_int(&o, "collector_pid", getpid());
	e = e ?: jcs_obj_int(&o, "downtime_us", since_us);
	e = e ?: jcs_obj_int(&o, "dropped", (int64_t)c->dropped);
	e = e ?: jcs_obj_int(&o, "events_waiting", (int64_t)waiting);
	e = e ?: jcs_obj_int(&o, "logged_seq", (int64_t)s->ro.next);
	e = e ?: jcs_obj_int(&o, "next_seq", (int64_t)c->next_seq);
	e = e ?: jcs_obj_str(&o, "session", s->id);
	e = e ?: jcs_obj_str(&o, "tool", "kwitness.resume");
	e = e ?: jcs_obj_int(&o, "ts", kwd_now_us());
	return kw_logwriter_entry_end(&s->log, &o, e);
}

/* The checkpoints signed before the restart must still match the log on
 * disk: a log edited while no collector ran is sealed as found (recover.c,
 * which vouches for none of it), not resumed and signed as if witnessed. */
static int ckpt_begin(struct kwd *d, const char *log_path, struct scan *sc, char *why,
		      size_t whylen)
{
	int e;

	sc->ck = calloc(1, sizeof(*sc->ck));
	if (!sc->ck)
		return -ENOMEM;
	e = verify_ckpt_init_beside(sc->ck, d->key, log_path);
	if (e == -ENOENT) { /* no checkpoint yet */
		verify_ckpt_free(sc->ck);
		free(sc->ck);
		sc->ck = NULL;
		return 0;
	}
	if (e)
		snprintf(why, whylen, "its checkpoints cannot be read: %s", strerror(-e));
	return e;
}

static int ckpt_end(struct scan *sc, char *why, size_t whylen)
{
	if (!sc->ck)
		return 0;
	verify_ckpt_end(sc->ck);
	if (verify_ckpt_held(sc->ck) != KW_VERIFY_OK) {
		snprintf(why, whylen, "the log no longer matches its checkpoints (%s): %.180s",
			 kw_verify_reason_code(sc->ck->problem), sc->ck->why);
		return -EBADMSG;
	}
	return 0;
}

static void scan_free(struct scan *sc)
{
	json_decref(sc->open);
	sc->open = NULL;
	if (sc->ck) {
		verify_ckpt_free(sc->ck);
		free(sc->ck);
		sc->ck = NULL;
	}
}

/* A resumed session's fields from its log's open entry and its stored
 * bundle (sc: what the log holds; *seg_n: the segment being written, 1
 * for a log of one file). 0, or -errno with why. */
static int session_from_log(struct kwd *d, struct kwd_session *s, struct scan *sc,
			    uint64_t *seg_n, char *why, size_t whylen)
{
	const char *mode;
	struct stat st;
	int e;

	if (asprintf(&s->log_path, "%s/logs/%s.jsonl", d->cfg.state_dir, s->id) < 0 ||
	    asprintf(&s->record_path, "%s/records/%s.json", d->cfg.state_dir, s->id) < 0) {
		s->log_path = s->record_path = NULL;
		return -ENOMEM;
	}
	if (stat(s->record_path, &st) == 0) {
		snprintf(why, whylen, "it already has a record");
		return -EEXIST;
	}
	*seg_n = 1;
	e = ckpt_begin(d, s->log_path, sc, why, whylen);
	if (e)
		return e;
	if (!kw_log_is_segmented(AT_FDCWD, s->log_path))
		e = kw_logwriter_reopen(&s->log, s->log_path, scan_line, sc, why, whylen);
	else if (!s->segment_bytes) {
		snprintf(why, whylen, "%.200s is cut into segments but its journal names no segment "
			 "size (nor does the configuration)", s->log_path);
		return -EINVAL;
	} else
		e = kwd_resume_segments(&s->log, s->log_path, scan_line, sc, seg_n, why, whylen);
	e = e ?: ckpt_end(sc, why, whylen);
	if (e)
		return e;
	if (!sc->open) {
		snprintf(why, whylen, "%.200s: no open entry", s->log_path);
		return -EINVAL;
	}
	if (sc->closed) {
		snprintf(why, whylen, "the log already has its trailer");
		return -EEXIST;
	}
	s->sandbox_id = dup_member(sc->open, "sandbox_id", NULL);
	s->image_digest = dup_member(sc->open, "image_digest", NULL);
	s->cgroup_path = dup_member(sc->open, "cgroup", NULL);
	s->cgroup_rel = s->cgroup_path ? strdup(s->cgroup_path + kwd_cgroup2_mount_len(s->cgroup_path)) :
					 NULL;
	s->model_provider = dup_member(sc->open, "model_provider", d->cfg.model_provider);
	s->model_id = dup_member(sc->open, "model_id", d->cfg.model_id);
	s->data_class = dup_member(sc->open, "data_class", d->cfg.data_class);
	mode = member(sc->open, "mode");
	if (!s->sandbox_id || !s->image_digest || !s->cgroup_path || !s->cgroup_rel ||
	    !s->model_provider ||
	    !s->model_id || !s->data_class || !mode || !member(sc->open, "bundle_hash") ||
	    !kw_digest_valid(member(sc->open, "bundle_hash")) ||
	    strncmp(member(sc->open, "bundle_hash"), "sha256:", 7)) {
		snprintf(why, whylen, "the open entry lacks a field the record needs");
		return -EINVAL;
	}
	snprintf(s->bundle_hash, sizeof(s->bundle_hash), "%s", member(sc->open, "bundle_hash"));
	{
		/* a decimal string (ids go past 2^53), or a number in older logs */
		json_t *cid = json_object_get(sc->open, "cgroup_id");

		s->cgroup_id = json_is_string(cid) ? strtoull(json_string_value(cid), NULL, 10) :
						     (uint64_t)json_integer_value(cid);
	}
	s->opened_us = json_integer_value(json_object_get(sc->open, "ts"));
	e = load_bundle(d, s, why, whylen);
	if (e)
		return e;
	if (strcmp(mode, kw_mode_name(s->pol->mode))) {
		snprintf(why, whylen, "the open entry's mode is not the bundle's");
		return -EINVAL;
	}
	return 0;
}

/* Resumes one session (segment_bytes: its log's segment bound, 0: one
 * file). 0, or -errno with why (nothing of it is kept). */
static int resume_one(struct kwd *d, const char *id, uint32_t slot, uint32_t generation,
		      uid_t owner, int closing, uint64_t segment_bytes, char *why, size_t whylen)
{
	struct kwd_session *s = kwd_session_new(d);
	struct scan sc = { 0 };
	struct kw_session c = { 0 };
	size_t ring_size = 0;
	uint64_t seg_n = 1;
	int ring_fd = -1, e;
	bool adopted = false;
	int64_t now;

	if (!s)
		return -ENOMEM;
	snprintf(s->id, sizeof(s->id), "%s", id);
	s->slot = slot;
	s->generation = generation;
	s->owner = owner;
	s->segment_bytes = segment_bytes;
	e = session_from_log(d, s, &sc, &seg_n, why, whylen);
	if (e)
		goto fail;

	e = kw_hooks_session_adopt(d->hooks, slot, !closing, &c, &ring_fd, &ring_size, why, whylen);
	if (e)
		goto fail;
	adopted = true;
	if (c.generation != generation) {
		snprintf(why, whylen, "slot %u holds another session now (generation %u, not %u)",
			 slot, c.generation, generation);
		e = -ESTALE;
		goto fail;
	}
	/* the cgroup may be gone (its processes exited): nothing left to kill */
	s->cgroup_fd = open(s->cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

	/* continue after the last number the log holds; what the ring buffer
	 * still has below it was written before the restart */
	s->ro.next = sc.have_seq ? sc.max_seq + 1 : 0;
	s->ro.arrived = sc.numbered;
	s->skipped = s->ro.next - sc.numbered;
	s->resume_floor = s->emitted_below = s->ro.next;
	s->decisions = sc.decisions;
	s->denials = sc.denials;
	e = kwd_session_attach_ring(s, ring_fd, ring_size, why, whylen);
	if (e)
		goto fail;
	now = kwd_now_us();
	e = write_resume_entry(s, &c, sc.last_ts && now > sc.last_ts ? now - sc.last_ts : 0,
			       kwd_ring_count_waiting(&s->ring));
	if (e) {
		snprintf(why, whylen, "writing the resume entry: %s", strerror(-e));
		goto fail;
	}
	/* the worker goes on cutting the log from the resume entry's chunk on
	 * (asked once the session lives, as at open) */
	if (s->segment_bytes &&
	    kwd_segs_request(d, s->log.fd, s->log_path, seg_n, s->segment_bytes))
		kwd_log(d, LOG_ERR, "session %s: out of memory: its log is no longer cut into "
			"segments", id);
	kw_logwriter_flush(&s->log);
	/* its TPM commitment goes on if the TPM saw its open (commit.c) */
	kwd_commit_resume(d, s, member(sc.open, "tpm_counter"));
	d->slots[slot] = s;
	d->n_sessions++;
	kwd_metrics_count(KWD_M_RESUMES);
	kwd_log(d, LOG_NOTICE,
		"session %s resumed in slot %u: %llu decisions logged, kernel next_seq %llu, "
		"%llu dropped while down", id, slot, (unsigned long long)sc.decisions,
		(unsigned long long)c.next_seq, (unsigned long long)c.dropped);
	scan_free(&sc);
	/* egress by name: a new resolver, and the kernel steers DNS to it (what
	 * the old one opened stays open until it expires) */
	if (s->pol->dns_steer && !closing) {
		struct kw_dns_steer steer;
		char dwhy[160] = "";

		e = kwd_session_dns_start(s, &steer, dwhy, sizeof(dwhy));
		e = e ?: kw_hooks_dns_steer(d->hooks, slot, &steer);
		if (e)
			kwd_log(d, LOG_ERR, "session %s: its DNS resolver did not restart (its DNS "
				"fails closed): %s", id, dwhy[0] ? dwhy : strerror(-e));
	}
	/* what waited while no collector ran */
	kwd_session_ring_ready(s);
	if (closing) {
		kwd_log(d, LOG_NOTICE, "session %s: finishing the close a crash cut short", id);
		kwd_session_close_by_collector(s, closing > 1);
	}
	return 0;
fail:
	scan_free(&sc);
	if (adopted) {
		if (s->ring_fd >= 0)
			epoll_ctl(d->epfd, EPOLL_CTL_DEL, s->ring_fd, NULL);
		s->ring_fd = -1;
		kw_hooks_session_free(d->hooks, slot);
	}
	kwd_session_free(s);
	return e;
}

/* A journal's fields; *segment_bytes: the log's segment bound (0: one
 * file; absent, from an older collector: the configuration's). */
static bool parse_journal(struct kwd *d, const char *name, char id[33], uint32_t *slot,
			  uint32_t *generation, uid_t *owner, int *closing, uint64_t *segment_bytes)
{
	char path[4200];
	struct kw_buf b = { 0 };
	struct jcs_error jerr;
	json_t *j = NULL, *vs, *vg, *vo, *vb;
	const char *sid;
	bool ok = false;

	snprintf(path, sizeof(path), "%s/sessions/%s", d->cfg.state_dir, name);
	if (kw_read_regular_file(path, KWD_JOURNAL_MAX, &b) == 0)
		j = jcs_parse(b.data ? b.data : "", b.len && b.data[b.len - 1] == '\n' ? b.len - 1 : b.len,
			      &jerr);
	sid = member(j, "session");
	vs = json_object_get(j, "slot");
	vg = json_object_get(j, "generation");
	vo = json_object_get(j, "owner");
	vb = json_object_get(j, "log_segment_bytes");
	if (sid && strlen(sid) == 32 && !strncmp(name, sid, 32) && json_is_integer(vs) &&
	    json_is_integer(vg) && json_integer_value(vs) >= 0 &&
	    json_integer_value(vs) < KW_MAX_SESSIONS && json_integer_value(vg) >= 0 &&
	    json_integer_value(vg) <= UINT32_MAX) {
		memcpy(id, sid, 33);
		*slot = (uint32_t)json_integer_value(vs);
		*generation = (uint32_t)json_integer_value(vg);
		*closing = !member(j, "closing") ? 0 : !strcmp(member(j, "closing"), "kill") ? 2 : 1;
		/* no owner, or one out of range: root's alone */
		*owner = json_is_integer(vo) && json_integer_value(vo) >= 0 &&
			 json_integer_value(vo) < UINT32_MAX ? (uid_t)json_integer_value(vo) : 0;
		*segment_bytes = !vb ? d->cfg.log_segment_bytes :
				 json_is_integer(vb) && json_integer_value(vb) >= KW_SEGMENT_BYTES_MIN &&
				 json_integer_value(vb) <= (json_int_t)KW_SEGMENT_BYTES_MAX ?
				 (uint64_t)json_integer_value(vb) : 0;
		ok = strspn(id, "0123456789abcdef") == 32;
	}
	json_decref(j);
	kw_buf_free(&b);
	return ok;
}

void kwd_resume_sessions(struct kwd *d)
{
	bool pinned[KW_MAX_SESSIONS], claimed[KW_MAX_SESSIONS] = { false };
	char dir[4200];
	struct dirent *de;
	DIR *dp;

	kw_hooks_pinned_slots(d->hooks, pinned);
	snprintf(dir, sizeof(dir), "%s/sessions", d->cfg.state_dir);
	dp = opendir(dir);
	while (dp && (de = readdir(dp))) {
		char id[33], why[512] = "", swhy[512] = "", rec[4300];
		uint32_t slot = 0, gen = 0;
		uint64_t seg_bytes = 0;
		uid_t owner = 0;
		int closing = 0;
		struct stat st;
		size_t n = strlen(de->d_name);
		int64_t t0 = kwd_now_us();

		if (n != 37 || strcmp(de->d_name + 32, ".json"))
			continue;
		if (!parse_journal(d, de->d_name, id, &slot, &gen, &owner, &closing,
				   &seg_bytes)) {
			kwd_log(d, LOG_ERR, "session journal %s/%s is unreadable: ignored", dir,
				de->d_name);
			continue;
		}
		if (!d->cfg.pin_dir)
			snprintf(why, sizeof(why), "kwitnessd runs with --pin-dir none: nothing of "
				 "the session outlived the previous collector");
		else if (!pinned[slot])
			snprintf(why, sizeof(why), "its pinned state is gone (a reboot, or the pin "
				 "folder was removed): the kernel stopped enforcing it");
		else if (claimed[slot])
			snprintf(why, sizeof(why), "another session journal names slot %u", slot);
		else if (resume_one(d, id, slot, gen, owner, closing, seg_bytes, why,
					sizeof(why)) == 0) {
			claimed[slot] = true;
			kwd_log(d, LOG_INFO, "session %s: resumed in %lld us", id,
				(long long)(kwd_now_us() - t0));
			continue;
		}
		kwd_log(d, LOG_ERR, "session %s cannot be resumed: %s", id, why);
		kwd_journal_remove(d, id);
		snprintf(rec, sizeof(rec), "%s/records/%s.json", d->cfg.state_dir, id);
		if (stat(rec, &st) == 0)
			continue;
		{
			char reason[700];

			snprintf(reason, sizeof(reason), "the session could not be resumed: %s", why);
			if (kwd_seal_one(d, id, reason, swhy, sizeof(swhy)))
				kwd_log(d, LOG_ERR, "session %s cannot be sealed either: %s", id,
					swhy);
		}
	}
	if (dp)
		closedir(dp);
	for (unsigned i = 0; i < KW_MAX_SESSIONS; i++) {
		if (!pinned[i] || claimed[i])
			continue;
		kwd_log(d, LOG_NOTICE, "slot %u: pinned session no journal names: ended", i);
		kw_hooks_session_discard(d->hooks, i);
	}
}
