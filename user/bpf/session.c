// SPDX-License-Identifier: Apache-2.0
/* Sessions: a slot's configuration, the class gate, the rules of each class
 * (written by the class's own unit: net.c, dev.c, dns.c, lsm.c), its ring
 * buffer, its live mark and its members (tag.c); and sessions that outlive
 * the collector (adopt, discard). See user/bpf/hooks.h. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/membarrier.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "dev.h"
#include "dns.h"
#include "lsm.h"
#include "net.h"
#include "pin.h"
#include "state.h"
#include "tag.h"

/* kw_governed, the class gate the programs read first: the union of the
 * classes of every slot in kw_sessions. Called after any change of a slot's
 * classes: a session's are written before its first tag (raising the gate
 * first) and cleared after its untag (lowering it last), so the gate always
 * covers every session a program can find. It is recomputed whole, under one
 * lock, so two writers cannot lose each other's classes. */
int kw_hooks_update_gate(struct kw_hooks *h)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	uint32_t governed = 0, zero = 0, slot;
	int ret;

	pthread_mutex_lock(&lock);
	for (slot = 0; slot < KW_MAX_SESSIONS; slot++)
		governed |= __atomic_load_n(&h->sessions_mm[slot].classes, __ATOMIC_ACQUIRE);
	ret = bpf_map_update_elem(bpf_map__fd(h->skel->maps.kw_governed), &zero, &governed,
				  BPF_ANY) ? -errno : 0;
	pthread_mutex_unlock(&lock);
	return ret;
}

/* The marker of a live session, <pin_dir>/sessions/<slot>/: it says a later
 * collector has a session to resume (its state is all in the pinned maps). */
static int mark_live(struct kw_hooks *h, uint32_t slot, bool live)
{
	char dir[512];
	int ret;

	if (!h->pin_dir)
		return 0;
	ret = kw_pin_path(dir, sizeof(dir), h->pin_dir, (int)slot, NULL);
	if (ret)
		return ret;
	if (!live)
		return rmdir(dir) && errno != ENOENT ? -errno : 0;
	return kw_mkdir_p(dir);
}

static int delete_rules(struct kw_hooks *h, uint32_t slot)
{
	int r1, r2, r3;

	r1 = kw_net_rules_remove(h->skel, slot);
	r2 = kw_dev_rules_remove(h->skel, slot);
	r3 = kw_dns_rules_remove(h, slot);
	return r1 < 0 ? r1 : r2 < 0 ? r2 : r3 < 0 ? r3 : 0;
}

static uint32_t read_generation(const struct kw_hooks *h, uint32_t slot)
{
	struct kw_session s;

	if (bpf_map_lookup_elem(bpf_map__fd(h->skel->maps.kw_sessions), &slot, &s))
		return 0;
	return s.generation;
}

static int write_session(struct kw_hooks *h, uint32_t slot, const struct kw_policy *pol)
{
	int fd = bpf_map__fd(h->skel->maps.kw_sessions);
	struct kw_session s;
	uint32_t gen = 0;

	if (bpf_map_lookup_elem(fd, &slot, &s) == 0)
		gen = s.generation;
	/* the last session's drops are not this one's (its numbers restart) */
	memset(&h->lost_mm[slot], 0, sizeof(h->lost_mm[slot]));
	memset(&s, 0, sizeof(s));
	s.classes = pol->classes;
	s.generation = gen + 1;
	s.mode = pol->mode;
	s.record = pol->record;
	s.on_failure = pol->on_failure;
	s.sysctl_write = pol->sysctl_write;
	s.wakeup_bytes = h->wakeup_bytes;
	s.socket_allow = pol->socket_allow;
	memcpy(s.socket_rule, pol->socket_rule, sizeof(s.socket_rule));
	s.flags = pol->socket_implicit ? KW_SESSF_SOCKET_IMPLICIT : 0;
	return bpf_map_update_elem(fd, &slot, &s, BPF_ANY) ? -errno : 0;
}

/* kw_slot_live[slot]: the generation whose task tags count (0: none). */
static int set_live(struct kw_hooks *h, uint32_t slot, uint32_t generation)
{
	return bpf_map_update_elem(bpf_map__fd(h->skel->maps.kw_slot_live), &slot, &generation,
				   BPF_ANY) ? -errno : 0;
}

/* Keeps the counters (the collector may still read them) but governs nothing. */
static void clear_session_classes(struct kw_hooks *h, uint32_t slot)
{
	int fd = bpf_map__fd(h->skel->maps.kw_sessions);
	struct kw_session s;

	if (bpf_map_lookup_elem(fd, &slot, &s) == 0) {
		s.classes = 0;
		bpf_map_update_elem(fd, &slot, &s, BPF_ANY);
	}
	kw_hooks_update_gate(h); /* lowered once no session governs a class */
}

static int create_ringbuf(struct kw_hooks *h, uint32_t slot, char *err, size_t errlen)
{
	int outer = bpf_map__fd(h->skel->maps.kw_ringbufs), fd, ret;

	fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "kw_session_rb", 0, 0, h->ringbuf_size, NULL);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "creating a %zu-byte ring buffer failed: %s",
			 h->ringbuf_size, strerror(errno));
		return ret;
	}
	if (bpf_map_update_elem(outer, &slot, &fd, BPF_ANY)) {
		ret = -errno;
		snprintf(err, errlen, "installing the ring buffer in slot %u failed: %s", slot,
			 strerror(errno));
		close(fd);
		return ret;
	}
	h->slots[slot].ringbuf_fd = fd;
	h->slots[slot].ringbuf_size = h->ringbuf_size;
	return 0;
}

static void remove_ringbuf(struct kw_hooks *h, uint32_t slot)
{
	int outer = bpf_map__fd(h->skel->maps.kw_ringbufs);

	bpf_map_delete_elem(outer, &slot);
	if (h->slots[slot].ringbuf_fd >= 0)
		close(h->slots[slot].ringbuf_fd);
	h->slots[slot].ringbuf_fd = -1;
}

int kw_hooks_session_add(struct kw_hooks *h, uint32_t slot, int cgroup_fd, uint64_t cgroup_id,
			 const struct kw_policy *pol, int *ringbuf_fd, char *err, size_t errlen)
{
	int map_fd = bpf_map__fd(h->skel->maps.kw_cgroups), ret;
	struct kw_slot_state *st;
	uint32_t missing;
	__u32 cur;
	int i;

	*ringbuf_fd = -1;
	if (slot >= KW_MAX_SESSIONS) {
		snprintf(err, errlen, "slot %u out of range (max %d)", slot, KW_MAX_SESSIONS);
		return -EINVAL;
	}
	st = &h->slots[slot];
	if (st->used) {
		snprintf(err, errlen, "slot %u is in use", slot);
		return -EBUSY;
	}
	missing = pol->classes & ~h->available;
	if (missing) {
		for (i = 0; i < KW_CLASS_COUNT; i++)
			if (missing & (1u << i))
				break;
		snprintf(err, errlen, "the policy governs %s, which this host cannot: %s",
			 kw_class_name(1u << i), kw_hooks_unavailable_reason(h, 1u << i));
		return -EOPNOTSUPP;
	}
	if (bpf_map_lookup_elem(map_fd, &cgroup_id, &cur) == 0 && cur < KW_MAX_SESSIONS &&
	    h->slots[cur].used) {
		snprintf(err, errlen, "cgroup %llu already belongs to session slot %u",
			 (unsigned long long)cgroup_id, cur);
		return -EBUSY;
	}
	st->used = true;
	/* pinned maps may hold what an earlier instance left in this slot */
	kw_untag_members(h, slot);
	delete_rules(h, slot);

	/* order: configuration, rules, ring buffer, live mark, membership; nothing
	 * is decided for the session before its cgroup is tagged */
	ret = write_session(h, slot, pol);
	if (!ret)
		ret = kw_hooks_update_gate(h); /* raised before anything can find the session */
	if (ret) {
		snprintf(err, errlen, "writing session slot %u failed: %s", slot, strerror(-ret));
		goto fail;
	}
	ret = kw_net_rules_write(h->skel, slot, pol, err, errlen);
	if (!ret)
		ret = kw_dev_rules_write(h->skel, slot, pol, err, errlen);
	if (!ret && (pol->classes & KW_CLASS_LSM_MASK)) {
		ret = kw_lsm_session_add(h->skel, slot, pol);
		if (ret)
			snprintf(err, errlen, "writing the LSM rules failed: %s", strerror(-ret));
	}
	if (ret)
		goto fail;
	ret = create_ringbuf(h, slot, err, errlen);
	if (ret)
		goto fail;

	/* task tags of this generation count from now on */
	ret = set_live(h, slot, read_generation(h, slot));
	if (!ret)
		ret = mark_live(h, slot, true);
	if (ret) {
		snprintf(err, errlen, "marking slot %u live failed: %s", slot, strerror(-ret));
		goto fail;
	}
	st->tagged = true;
	/* a task already in the cgroups has no mark until the iterator gives
	 * it one: till then the lineage programs look up every task */
	ret = kw_set_unmarked(h, KW_UNMARKED_OPENING, 1);
	if (!ret)
		ret = kw_tag_one(h, map_fd, cgroup_id, slot, err, errlen);
	else
		snprintf(err, errlen, "writing kw_unmarked failed: %s", strerror(-ret));
	if (!ret)
		ret = kw_tag_descendants(h, map_fd, cgroup_fd, slot, 0, err, errlen);
	if (!ret)
		ret = kw_tag_existing_tasks(h, slot, err, errlen);
	if (!ret)
		ret = kw_set_unmarked(h, KW_UNMARKED_OPENING, 0);
	if (ret)
		goto fail;
	*ringbuf_fd = st->ringbuf_fd;
	return 0;
fail:
	kw_hooks_session_untag(h, slot);
	kw_hooks_session_free(h, slot);
	return ret;
}

int kw_hooks_session_untag(struct kw_hooks *h, uint32_t slot)
{
	struct kw_slot_state *st;
	int ret;

	if (slot >= KW_MAX_SESSIONS)
		return -EINVAL;
	st = &h->slots[slot];
	if (!st->used)
		return -ENOENT;
	set_live(h, slot, 0); /* tagged tasks stop being decided, as cgroups do */
	mark_live(h, slot, false);
	ret = kw_untag_members(h, slot);
	st->tagged = false;
	return ret;
}

int kw_hooks_session_counters(struct kw_hooks *h, uint32_t slot, struct kw_session *out)
{
	int fd = bpf_map__fd(h->skel->maps.kw_sessions);

	if (slot >= KW_MAX_SESSIONS)
		return -EINVAL;
	return bpf_map_lookup_elem(fd, &slot, out) ? -errno : 0;
}

int kw_hooks_pid_slot(struct kw_hooks *h, uint32_t tgid)
{
	struct kw_task_tag tag;
	uint32_t live;

	if (bpf_map_lookup_elem(bpf_map__fd(h->skel->maps.kw_tgid_tags), &tgid, &tag) ||
	    tag.slot >= KW_MAX_SESSIONS ||
	    bpf_map_lookup_elem(bpf_map__fd(h->skel->maps.kw_slot_live), &tag.slot, &live) ||
	    !live || live != tag.generation)
		return -1;
	return (int)tag.slot;
}

int kw_hooks_session_free(struct kw_hooks *h, uint32_t slot)
{
	struct kw_slot_state *st;
	int ret, r2;

	if (slot >= KW_MAX_SESSIONS)
		return -EINVAL;
	st = &h->slots[slot];
	if (!st->used)
		return -ENOENT;
	if (st->tagged)
		kw_hooks_session_untag(h, slot);
	clear_session_classes(h, slot);
	ret = delete_rules(h, slot);
	remove_ringbuf(h, slot);
	r2 = kw_lsm_session_remove(h->skel, slot);
	st->used = false;
	return ret ? ret : r2;
}

/* ---- sessions that outlive the collector ---- */

int kw_hooks_pinned_slots(struct kw_hooks *h, bool pinned[KW_MAX_SESSIONS])
{
	char path[512];
	struct dirent *de;
	int n = 0;
	DIR *d;

	memset(pinned, 0, KW_MAX_SESSIONS * sizeof(bool));
	if (!h->pin_dir ||
	    snprintf(path, sizeof(path), "%s/sessions", h->pin_dir) >= (int)sizeof(path))
		return 0;
	/* a session whose close had untagged it has no live mark, only its ring buffer */
	for (uint32_t slot = 0; slot < KW_MAX_SESSIONS; slot++) {
		__u32 id;

		if (!h->slots[slot].used &&
		    bpf_map_lookup_elem(bpf_map__fd(h->skel->maps.kw_ringbufs), &slot, &id) == 0) {
			pinned[slot] = true;
			n++;
		}
	}
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char *end;
		unsigned long slot = strtoul(de->d_name, &end, 10);

		if (de->d_name[0] < '0' || de->d_name[0] > '9' || *end || slot >= KW_MAX_SESSIONS ||
		    pinned[slot])
			continue;
		pinned[slot] = true;
		n++;
	}
	closedir(d);
	return n;
}

/* Opens the slot's ring buffer (kept alive by kw_ringbufs). With need_live,
 * the session must still be governing: its live mark, kw_slot_live[slot] and
 * kw_sessions[slot] of one generation (its programs are the root links,
 * shared by every session; all its state is in the pinned maps). */
static int open_pinned(struct kw_hooks *h, uint32_t slot, bool need_live, char *err,
		       size_t errlen)
{
	struct kw_slot_state *st = &h->slots[slot];
	int outer = bpf_map__fd(h->skel->maps.kw_ringbufs);
	struct bpf_map_info info;
	__u32 len = sizeof(info), id = 0, live = 0;
	struct kw_session conf;
	char path[512];

	if (need_live &&
	    (kw_pin_path(path, sizeof(path), h->pin_dir, (int)slot, NULL) || access(path, F_OK) ||
	     bpf_map_lookup_elem(bpf_map__fd(h->skel->maps.kw_slot_live), &slot, &live) ||
	     kw_hooks_session_counters(h, slot, &conf) || !live || live != conf.generation)) {
		snprintf(err, errlen, "slot %u: the session no longer governs (no live mark under "
			 "%s/sessions/%u)", slot, h->pin_dir, slot);
		return -ENOENT;
	}
	if (bpf_map_lookup_elem(outer, &slot, &id) == 0 && id)
		st->ringbuf_fd = bpf_map_get_fd_by_id(id);
	if (st->ringbuf_fd >= 0) {
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(st->ringbuf_fd, &info, &len) == 0)
			st->ringbuf_size = info.max_entries;
	}
	if (st->ringbuf_fd < 0 || !st->ringbuf_size) {
		snprintf(err, errlen, "slot %u: the ring buffer is gone", slot);
		return -ENOENT;
	}
	return 0;
}

int kw_hooks_session_adopt(struct kw_hooks *h, uint32_t slot, bool need_live,
			   struct kw_session *conf, int *ringbuf_fd, size_t *ringbuf_size, char *err,
			   size_t errlen)
{
	struct kw_slot_state *st;
	int ret;

	*ringbuf_fd = -1;
	if (slot >= KW_MAX_SESSIONS || !h->pin_dir) {
		snprintf(err, errlen, "slot %u: nothing is pinned", slot);
		return -EINVAL;
	}
	st = &h->slots[slot];
	if (st->used) {
		snprintf(err, errlen, "slot %u is in use", slot);
		return -EBUSY;
	}
	st->used = st->tagged = true;
	ret = open_pinned(h, slot, need_live, err, errlen);
	if (!ret && kw_hooks_session_counters(h, slot, conf)) {
		ret = -errno;
		snprintf(err, errlen, "slot %u: reading the session: %s", slot, strerror(errno));
	}
	if (ret) {
		/* keep the pinned state: kw_hooks_session_discard decides */
		if (st->ringbuf_fd >= 0)
			close(st->ringbuf_fd);
		st->ringbuf_fd = -1;
		st->used = st->tagged = false;
		return ret;
	}
	*ringbuf_fd = st->ringbuf_fd;
	*ringbuf_size = st->ringbuf_size;
	return 0;
}

int kw_hooks_session_discard(struct kw_hooks *h, uint32_t slot)
{
	char err[256];
	struct kw_slot_state *st;

	if (slot >= KW_MAX_SESSIONS)
		return -EINVAL;
	st = &h->slots[slot];
	if (st->used)
		return -EBUSY;
	st->used = st->tagged = true;
	if (h->pin_dir)
		open_pinned(h, slot, false, err, sizeof(err)); /* whatever is left of it */
	return kw_hooks_session_free(h, slot);
}

int kw_hooks_quiesce(struct kw_hooks *h)
{
	uint32_t zero = 0;
	uint64_t n = 0;
	int e = 0;

	/* MEMBARRIER_CMD_GLOBAL is synchronize_rcu(): every non-sleepable
	 * program that started before it has returned when it does, and it is
	 * a full barrier on every CPU after the untag. */
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		e = -errno;
	/* The sleepable ones count themselves while they number and record
	 * (bpf/lsm_exec.bpf.h, kw_sleepers): their count seen at 0 once is enough. */
	if (!h || !h->skel || bpf_map__fd(h->skel->maps.kw_sleepers) < 0)
		return e;
	for (int i = 0; !bpf_map_lookup_elem(bpf_map__fd(h->skel->maps.kw_sleepers), &zero, &n) && n;
	     i++) {
		if (i >= KW_QUIESCE_SLEEPERS_MS * 5)
			return -ETIMEDOUT;
		usleep(200); /* at least: five polls a millisecond at most */
	}
	return e;
}

