/* SPDX-License-Identifier: Apache-2.0 */
/* Closing a session: untag, drain what is in flight (bounded), the trailer,
 * then the seal on the I/O thread and the reply once the record is written. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "bpf/hooks.h"
#include "cgroup_kill.h"
#include "dns_proxy.h"
#include "journal.h"
#include "kwd.h"
#include "lineage.h"
#include "session.h"
#include "util.h"
#include "metrics.h"

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

/* Kills what is left in the cgroup; counts only what is gone, and what
 * survived (the trailer says so, the record is not complete). */
static void kill_left(struct kwd_session *s)
{
	struct kwd_kill_result r;

	kwd_cgroup_kill(s->cgroup_fd, KWD_KILL_TIMEOUT_MS, &r);
	s->killed = r.killed;
	s->kill_failed = r.left;
	s->still_running = r.left;
	if (r.left)
		kwd_log(s->d, LOG_ERR,
			"session %s: kill at close failed: %d of %d process(es) run on (%s: %s)",
			s->id, r.left, r.found, r.what, strerror(-r.err));
	else if (r.err)
		kwd_log(s->d, LOG_WARNING, "session %s: kill at close: %s: %s (all %d gone)",
			s->id, r.what, strerror(-r.err), r.found);
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
			kill_left(s);
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

void kwd_session_close_by_collector(struct kwd_session *s, bool kill_left)
{
	s->close_kill = kill_left;
	begin_close(s, 0);
	quiesce(s->d);
}

/* A removed cgroup holds no process and gets none: nothing more can happen
 * in the session, and whoever would have closed it never will (a runtime
 * whose create failed after its createRuntime hook tears the container down
 * without running poststop; crun does). After a grace for the poststop that
 * may still come, it closes as if asked, by nobody. A
 * session resumed after its cgroup went has no cgroup_fd. */
void kwd_session_close_if_cgroup_gone(struct kwd_session *s, int64_t now_ms)
{
	if (now_ms < s->cgroup_check_ms)
		return;
	s->cgroup_check_ms = now_ms + KWD_CGROUP_CHECK_MS;
	if (s->cgroup_fd >= 0 && (faccessat(s->cgroup_fd, "cgroup.procs", F_OK, 0) == 0 ||
				  errno != ENOENT))
		return;
	if (!s->cgroup_gone_ms)
		s->cgroup_gone_ms = now_ms;
	if (now_ms - s->cgroup_gone_ms < KWD_CGROUP_GONE_GRACE_MS)
		return;
	kwd_log(s->d, LOG_NOTICE, "session %s: its cgroup %s was removed: closing it", s->id,
		s->cgroup_path);
	kwd_session_close_by_collector(s, false);
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

/* Complete: every decision is in the log, every cgroup was tracked, and a
 * kill asked for ended everything. */
static bool record_complete(const struct kwd_session *s, uint64_t dropped, uint64_t untracked)
{
	return dropped == 0 && untracked == 0 && s->kill_failed == 0;
}

static int write_close_entry(struct kwd_session *s, const struct kw_session *c, uint64_t dropped,
			     uint64_t gaps)
{
	struct jcs_obj o;
	int e;

	e = kw_logwriter_entry_begin(&s->log, &o);
	e = e ?: jcs_obj_bool(&o, "complete", record_complete(s, dropped, c->untracked));
	e = e ?: jcs_obj_int(&o, "decisions", (int64_t)s->decisions);
	e = e ?: jcs_obj_int(&o, "denials", (int64_t)s->denials);
	e = e ?: jcs_obj_int(&o, "dropped", (int64_t)dropped);
	/* The binding the record is signed under (new if the PCRs moved). */
	if (s->runtime.bound)
		e = e ?: jcs_obj_str(&o, "evidence", s->runtime.evidence);
	e = e ?: jcs_obj_int(&o, "kill_failed", s->kill_failed);
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

	kwd_session_read_ring(s);
	s->skipped += kw_reorder_flush(&s->ro);
	/* "seen" entries numbered by that flush's decisions */
	while (kwd_lineage_flush(s))
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
		if (d->cfg.record_profile == KW_PROFILE_V03_DRAFT) {
			json_decref(s->record_evidence);
			s->record_runtime.evidence = s->record_evidence =
				kwd_attest_evidence(d, &s->runtime);
		}
		job->in.runtime = &s->record_runtime;
	}
	job->in.profile = d->cfg.record_profile;
	job->key = d->key;
	job->record_path = s->record_path;
	job->publish = d->publish;
	job->ckpt = s->ckpt;
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
	kwd_metrics_session_gone(d, s); /* its kernel counters, before they go */
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
				  record_complete(s, s->dropped, s->untracked));
	if (!job->err && !s->policy_err) {
		json_object_set_new(reply, KW_F_KILLED, json_integer(s->killed < 0 ? 0 : s->killed));
		json_object_set_new(reply, KW_F_STILL_RUNNING, json_integer(s->still_running));
		json_object_set_new(reply, KW_F_KILL_FAILED, json_integer(s->kill_failed));
		kwd_journal_remove(d, s->id);
		kwd_commit_close(d, s, job->hash);
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
		kwd_session_read_ring(s);
		if (drained(s, &c) || now >= s->close_deadline_ms)
			end_session(s);
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
			kwd_session_read_ring(s);
			if (drained(s, &c) || kwd_now_ms() >= deadline)
				end_session(s);
		}
		if (d->n_closing)
			usleep(5000);
	}
}
