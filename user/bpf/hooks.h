/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel side as kwitnessd and the CLI see it: load the BPF object, attach
 * hooks, give a session a slot (configuration, rules, ring buffer, cgroup
 * membership), read its counters, take it away again. */
#ifndef KWITNESS_HOOKS_H
#define KWITNESS_HOOKS_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "kwitness/abi/event.h"
#include "policy/policy.h"

#include <stdbool.h>

struct kw_hooks; /* opaque: skeleton, links, per-slot ring buffers */

struct kw_hooks_opts {
	size_t ringbuf_size;   /* bytes per session ring buffer, power of two >= 4096 */
	const char *pin_dir;   /* e.g. "/sys/fs/bpf/kwitness"; NULL: do not pin */
	/* 0: the kernel wakes a session's consumer for each event written while
	 * the consumer is caught up (prompt, but a wakeup costs microseconds per
	 * event). N > 0: only once N bytes wait in the ring buffer; the consumer
	 * must then also poll or consume on a timer. */
	size_t wakeup_bytes;
	/* true: load the exec program that does not hash the file even where the
	 * kernel can (exec.digest unavailable; for measuring what hashing costs) */
	bool no_exec_digest;
	/* true: load the programs as kwitnessd would (the same refusals, the
	 * same classes left out) and stop there: nothing is attached or pinned,
	 * and kw_hooks_available says which classes loaded (kwitness probe) */
	bool load_only;
};

/* Opens and loads the BPF object (the programs that this kernel can run;
 * a class one of whose programs the kernel refuses is left out, with the
 * kernel's reason, and the rest loads), mounts bpffs if pin_dir needs it,
 * attaches the global programs. Returns 0 or -errno with a sentence in err. */
int kw_hooks_open(const struct kw_hooks_opts *opts, struct kw_hooks **out, char *err,
		  size_t errlen);
void kw_hooks_close(struct kw_hooks *h);

/* KW_CLASS_* bits whose hooks are loaded and can be attached here. */
uint32_t kw_hooks_available(const struct kw_hooks *h);
/* Why a class is unavailable ("lsm/file_open refused at load: EPERM"), or NULL. */
const char *kw_hooks_unavailable_reason(const struct kw_hooks *h, uint32_t class_bit);
/* JSON array of {"name","tag"} of the loaded programs; new reference. */
json_t *kw_hooks_programs(const struct kw_hooks *h);

/* Gives a session the slot: writes kw_sessions[slot] (fresh counters), the
 * compiled rules, a new ring buffer; attaches the cgroup programs the policy
 * needs to the cgroup (BPF_F_ALLOW_MULTI); then tags the cgroup and every
 * existing descendant. *ringbuf_fd is the session's ring buffer (owned by h).
 * Returns 0 or -errno with err. Nothing stays attached on failure. */
int kw_hooks_session_add(struct kw_hooks *h, uint32_t slot, int cgroup_fd, uint64_t cgroup_id,
			 const struct kw_policy *pol, int *ringbuf_fd, char *err, size_t errlen);
/* Untags the session's cgroups and detaches its cgroup programs: no new
 * decisions start after this returns (ones in flight still finish). */
int kw_hooks_session_untag(struct kw_hooks *h, uint32_t slot);
/* Drops by number (kw_lost, see abi/event.h). seq_lost is true when the
 * kernel marked seq as dropped, and clears the mark: the caller gives the
 * number up at once. lost_forget clears the marks of numbers in [from, to)
 * given up another way (at most the last KW_LOST_BITS). */
bool kw_hooks_seq_lost(struct kw_hooks *h, uint32_t slot, uint64_t seq);
void kw_hooks_lost_forget(struct kw_hooks *h, uint32_t slot, uint64_t from, uint64_t to);
/* Reads the counters of kw_sessions[slot]. */
int kw_hooks_session_counters(struct kw_hooks *h, uint32_t slot, struct kw_session *out);
/* The slot of the open session whose task tag the process tgid carries (it
 * was in that session, wherever it runs now), or -1. */
int kw_hooks_pid_slot(struct kw_hooks *h, uint32_t tgid);
/* Egress by name (kwitnessd's resolver). take_seq numbers a decision the
 * collector makes itself from kw_sessions[slot].next_seq, with the same
 * atomic add the programs use, and counts it as they do (a deny in denials,
 * a permit under record: deny in unrecorded, returning -ENOENT: no number).
 * dns_steer points the session's DNS at its resolver (NULL: stops).
 * name_put/name_del write and delete kw_name_allow entries. 0 or -errno. */
struct kw_dns_steer;
struct kw_name_key;
struct kw_name_allow;
int kw_hooks_take_seq(struct kw_hooks *h, uint32_t slot, bool permit, uint64_t *seq);
/* The number of an entry that is not a decision (a "proc" entry): written
 * whatever the record mode, counted nowhere else. 0 or -EINVAL. */
int kw_hooks_take_note_seq(struct kw_hooks *h, uint32_t slot, uint64_t *seq);
/* The processes already in slot's cgroups when kw_hooks_session_add tagged
 * them (at most KW_EXISTING_MAX; valid until the next session add). */
#define KW_EXISTING_MAX 4096
size_t kw_hooks_existing(const struct kw_hooks *h, uint32_t slot, const struct kw_iter_proc **out);
int kw_hooks_dns_steer(struct kw_hooks *h, uint32_t slot, const struct kw_dns_steer *steer);
int kw_hooks_name_put(struct kw_hooks *h, const struct kw_name_key *k,
		      const struct kw_name_allow *v);
int kw_hooks_name_del(struct kw_hooks *h, const struct kw_name_key *k);

/* Removes rules and the ring buffer; the slot can be reused. */
int kw_hooks_session_free(struct kw_hooks *h, uint32_t slot);

/* Sessions that outlive the collector (pin_dir set). Every link is global and
 * pinned under <pin_dir>/links/ (the cgroup programs at the cgroup2 root, the
 * tracking tracepoints, the LSM programs); a session lives in the pinned
 * maps, and <pin_dir>/sessions/<slot>/ marks it live (removed at untag):
 * when the collector dies the kernel goes on enforcing, following tasks and
 * numbering; events wait in the ring buffer (kw_ringbufs holds it); when it
 * is full the decision is counted as dropped (and refused under
 * on_record_failure deny). kw_hooks_close keeps every pin. */

/* Marks the slots that have a live mark or a ring buffer. Returns how many. */
int kw_hooks_pinned_slots(struct kw_hooks *h, bool pinned[KW_MAX_SESSIONS]);
/* Takes over a pinned session: its ring buffer (*ringbuf_fd, owned by h, and
 * its size), and *conf = kw_sessions[slot]. With need_live the session must
 * still govern (live mark and kw_slot_live); without, one a close had
 * untagged is taken too. 0 or -errno with err; on failure the pinned state
 * is left for kw_hooks_session_discard. */
int kw_hooks_session_adopt(struct kw_hooks *h, uint32_t slot, bool need_live,
			   struct kw_session *conf, int *ringbuf_fd, size_t *ringbuf_size, char *err,
			   size_t errlen);
/* Ends what is left of a pinned session nobody adopts: live mark, task tags
 * validity, membership, rules, ring buffer. */
int kw_hooks_session_discard(struct kw_hooks *h, uint32_t slot);
/* After untag: waits until no program that found a session before the untag
 * can still number a decision: an RCU grace period for the programs that run
 * under RCU, then the sleepable ones' count at 0. 0, -ETIMEDOUT when the
 * sleepable count stayed above 0 for KW_QUIESCE_SLEEPERS_MS, or -errno from
 * membarrier (nohz_full kernels refuse it). */
#define KW_QUIESCE_SLEEPERS_MS 5000
int kw_hooks_quiesce(struct kw_hooks *h);
/* With no session pinned any more, unpins the global links too (they are
 * detached when the collector exits). 1 when it did. */
int kw_hooks_unpin_idle(struct kw_hooks *h);

#endif
