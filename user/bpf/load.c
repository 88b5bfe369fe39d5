// SPDX-License-Identifier: Apache-2.0
/* The loader: opens and loads the BPF object (again without a class whose
 * program the kernel refuses), attaches the global programs, and says which
 * classes this host can govern. See user/bpf/hooks.h for the
 * contract; sessions get their slot in session.c. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "lib/cgroup.h"
#include "bpf/hooks.h"
#include "bpf/probe.h"
#include "kwitness.skel.h"
#include "kwitness-nokfunc.skel.h"
#include "lsm.h"
#include "maps.h"
#include "pin.h"
#include "resolver_guard.h"
#include "state.h"
#include "tag.h"

struct kwitness_bpf *kw_hooks_skeleton(struct kw_hooks *h)
{
	return h->skel;
}

#define CG_(cls, name, type, sec) \
	{ KW_CLASS_##cls, offsetof(struct kwitness_bpf, progs.name), sec },
#define LSM_(cls, name, hook, args, need)
const struct kw_cg_prog kw_cg_progs[KW_N_CG_PROGS] = { KW_CLASS_PROGRAMS(CG_, LSM_) };
#undef CG_
#undef LSM_

static int class_index(uint32_t class_bit)
{
	int i;

	for (i = 0; i < KW_CLASS_COUNT; i++)
		if (class_bit == (1u << i))
			return i;
	return -1;
}

static int pin_maps(struct kw_hooks *h, const char *pin_dir, char *err, size_t errlen)
{
	struct bpf_map *map;
	char path[512];
	int ret;

	bpf_object__for_each_map(map, h->skel->obj) {
		if (bpf_map__is_internal(map))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", pin_dir, bpf_map__name(map)) >=
		    (int)sizeof(path)) {
			snprintf(err, errlen, "pin path under %s is too long", pin_dir);
			return -ENAMETOOLONG;
		}
		ret = bpf_map__set_pin_path(map, path);
		if (ret) {
			snprintf(err, errlen, "setting pin path %s failed: %s", path,
				 strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* What the kernel refused at an earlier try of this open: classes one of
 * whose programs it refused, and refused LSM programs that only extend a
 * cgroup class (the class goes on without them). */
struct kw_refusals {
	uint32_t classes;
	bool lsm_prog[KW_PLAN_N_LSM];
	char why[KW_CLASS_COUNT][KW_PROBE_REASON_MAX];
};

/* Turns off the programs kw_probe_plan says cannot load here, and those of
 * the classes the kernel refused, so the rest load; the classes left out
 * keep their reason. */
static uint32_t prepare_progs(struct kw_hooks *h, bool exec_digest, const struct kw_refusals *r)
{
	struct kw_probe_plan plan;
	size_t i;
	int b;

	kw_probe_plan(exec_digest, &plan);
	plan.classes &= ~r->classes;
	for (i = 0; i < KW_PLAN_N_LSM; i++)
		plan.lsm_prog[i] = plan.lsm_prog[i] && !r->lsm_prog[i];
	for (i = 0; i < KW_N_CG_PROGS; i++)
		if (!plan.cg_prog[i] || (r->classes & kw_cg_progs[i].class_bit))
			bpf_program__set_autoload(kw_cg_program(h, &kw_cg_progs[i]), false);
	memcpy(h->why, plan.why, sizeof(h->why));
	for (b = 0; b < KW_CLASS_COUNT; b++)
		if (r->why[b][0])
			kw_class_why(h->why, 1u << b, "%s", r->why[b]);
	/* tp_btf cannot be probed without a target (libbpf answers "not
	 * supported"): the load itself tells */
	return kw_lsm_prepare(h->skel, &plan);
}

/* libbpf's words during one load: the program the kernel refused and the
 * kernel's reason (the verifier's last line, or the load's errno). */
static struct {
	libbpf_print_fn_t next;
	char prog[64];
	char reason[KW_PROBE_REASON_MAX];
} load_log;
static pthread_mutex_t load_log_lock = PTHREAD_MUTEX_INITIALIZER;

/* The last line of a verifier log that is not its statistics. */
static void verifier_reason(const char *log, const char *end)
{
	const char *line, *next;

	for (line = log; line < end; line = next + 1) {
		next = memchr(line, '\n', (size_t)(end - line));
		if (!next)
			next = end;
		if (next > line && strncmp(line, "processed ", 10) &&
		    strncmp(line, "verification time", 17) && strncmp(line, "stack depth", 11))
			snprintf(load_log.reason, sizeof(load_log.reason), "%.*s", (int)(next - line), line);
	}
}

static int load_log_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	const char *q, *e;
	char *msg = NULL;
	va_list cp;
	int n, ret = 0;

	va_copy(cp, ap);
	n = level == LIBBPF_DEBUG ? -1 : vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n >= 0 && (msg = malloc((size_t)n + 1))) {
		va_copy(cp, ap);
		vsnprintf(msg, (size_t)n + 1, fmt, cp);
		va_end(cp);
	}
	if (msg && (q = strstr(msg, "-- BEGIN PROG LOAD LOG --\n")) &&
	    (e = strstr(q, "-- END PROG LOAD LOG --")))
		verifier_reason(q + 26, e);
	else if (msg && !load_log.reason[0] && (q = strstr(msg, "BPF program load failed: ")))
		snprintf(load_log.reason, sizeof(load_log.reason), "%.*s", (int)strcspn(q + 25, "\n"),
			 q + 25);
	if (msg && !load_log.prog[0] && (q = strstr(msg, "prog '")) &&
	    strstr(msg, "': failed to load") && (e = strchr(q + 6, '\'')) &&
	    e - (q + 6) < (ptrdiff_t)sizeof(load_log.prog))
		snprintf(load_log.prog, sizeof(load_log.prog), "%.*s", (int)(e - (q + 6)), q + 6);
	if (load_log.next)
		ret = load_log.next(level, fmt, ap);
	free(msg);
	return ret;
}

/* Loads the object; on failure, names the program the kernel refused (empty
 * when the failure was no program's) and why. */
static int load_naming_refusal(struct kw_hooks *h, char *prog, size_t proglen, char *why,
			       size_t whylen)
{
	int ret;

	pthread_mutex_lock(&load_log_lock);
	memset(&load_log, 0, sizeof(load_log));
	load_log.next = libbpf_set_print(load_log_print);
	ret = kwitness_bpf__load(h->skel);
	libbpf_set_print(load_log.next);
	snprintf(prog, proglen, "%s", ret ? load_log.prog : "");
	snprintf(why, whylen, "%s", load_log.reason[0] ? load_log.reason : strerror(-ret));
	pthread_mutex_unlock(&load_log_lock);
	return ret;
}

/* Takes the refused program's class (or, for an LSM program extending a
 * cgroup class, the program alone) out of the next try. false when the
 * program serves no class (the tracking programs everything needs) or was
 * already out. */
static bool refuse(struct kw_hooks *h, struct kw_refusals *r, const char *prog, const char *why)
{
	uint32_t cls = 0;
	size_t i;
	int ix;

	ix = kw_lsm_prog_index(h->skel, prog, &cls);
	if (ix >= 0 && !(cls & KW_CLASS_LSM_MASK)) {
		if (r->lsm_prog[ix])
			return false;
		r->lsm_prog[ix] = true;
		return true;
	}
	for (i = 0; ix < 0 && i < KW_N_CG_PROGS; i++)
		if (!strcmp(bpf_program__name(kw_cg_program(h, &kw_cg_progs[i])), prog))
			cls = kw_cg_progs[i].class_bit;
	if (!cls || (r->classes & cls))
		return false;
	r->classes |= cls;
	kw_class_why(r->why, cls, "the kernel refused %s: %s", prog, why);
	return true;
}

/* Pinned maps may hold what a collector that died without pinned sessions
 * left (none to resume): cgroups still mapped to its slots, sessions still
 * governing, their path rules and exec digests (which session_add does not
 * clear). With the programs at the cgroup2 root, those would be decided
 * again, so this instance starts from no session at all. Pinned sessions are
 * left to resume, which adopts or ends each. */
static void forget_dead_sessions(struct kw_hooks *h)
{
	int sessions = bpf_map__fd(h->skel->maps.kw_sessions);
	__u32 slot, zero = 0;
	struct kw_session s;

	for (slot = 0; slot < KW_MAX_SESSIONS; slot++) {
		bpf_map_update_elem(bpf_map__fd(h->skel->maps.kw_slot_live), &slot, &zero, BPF_ANY);
		if (bpf_map_lookup_elem(sessions, &slot, &s) == 0 && s.classes) {
			s.classes = 0;
			bpf_map_update_elem(sessions, &slot, &s, BPF_ANY);
		}
	}
	kw_map_clear(h->skel->maps.kw_cgroups);
	kw_map_clear(h->skel->maps.kw_path_rules);
	kw_map_clear(h->skel->maps.kw_exec_digests);
	/* egress by name: what dead sessions' answers opened, their resolver ports */
	kw_map_clear(h->skel->maps.kw_name_allow);
	kw_map_clear(h->skel->maps.kw_dns_ports);
}

/* 1 when the kernel's bpf_task_storage_get for tracing programs always
 * looks: 6.2 added bpf_task_storage_get_recur for it. 6.1's returns NULL,
 * without looking, while this CPU is inside another task storage operation
 * (one preempted there), so a missing mark proves nothing there. */
static bool marks_lookup_always(void)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	bool yes;

	if (!vmlinux)
		return false;
	yes = btf__find_by_name_kind(vmlinux, "bpf_task_storage_get_recur", BTF_KIND_FUNC) >= 0;
	btf__free(vmlinux);
	return yes;
}

/* The initial pid namespace's inode number (PROC_PID_INIT_INO, fixed). */
#define KW_PID_INIT_INO 0xEFFFFFFCU

/* 1 when this process runs in the initial pid namespace. Elsewhere (a
 * container without the host's pids) the task iterator that marks the tasks
 * already in a session's cgroups at open sees only this namespace's tasks. */
static bool in_initial_pid_ns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) == 0 && st.st_ino == KW_PID_INIT_INO;
}

/* Before any tracepoint program runs: whether the lineage programs may trust
 * a missing mark (bpf/maps.bpf.h, kw_unmarked). Not after an earlier
 * collector's sessions resumed: it may have tagged tasks without a mark; not
 * outside the initial pid namespace. */
static int reset_unmarked(struct kw_hooks *h, bool reuse, char *err, size_t errlen)
{
	int ret = kw_set_unmarked(h, KW_UNMARKED_FAILED,
				  reuse || !marks_lookup_always() || !in_initial_pid_ns());

	if (!ret && !reuse)
		ret = kw_set_unmarked(h, KW_UNMARKED_OPENING, 0);
	if (ret)
		snprintf(err, errlen, "writing kw_unmarked failed: %s", strerror(-ret));
	return ret;
}

/* The cgroup programs run for every task on the host, attached once at the
 * cgroup2 root (multi-attach: other programs stay, and no cgroup below can
 * override them): a session task that left its cgroups is decided wherever
 * it went. A class whose program cannot be attached there is unavailable. */
static void attach_at_root(struct kw_hooks *h, bool reuse)
{
	char root[4096];
	size_t i;
	int fd;

	if (kw_cgroup2_mount(root, sizeof(root)) ||
	    (fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		kw_class_why(h->why, h->available & ~KW_CLASS_LSM_MASK, "no cgroup2 mount to attach to");
		h->available &= KW_CLASS_LSM_MASK;
		return;
	}
	for (i = 0; i < KW_N_CG_PROGS; i++) {
		const struct kw_cg_prog *p = &kw_cg_progs[i];

		if (!(h->available & p->class_bit))
			continue;
		h->root_links[i] = kw_global_link(kw_cg_program(h, p), fd, h->pin_dir, reuse);
		if (!h->root_links[i]) {
			kw_class_why(h->why, p->class_bit, "attaching %s at the cgroup2 root failed: %s",
				p->section, strerror(errno));
			h->available &= ~p->class_bit;
		}
	}
	close(fd);
}

/* kw_sessions and kw_lost in this process's memory: an mmapable array's
 * values lie one after the other, each rounded up to 8 bytes. */
_Static_assert(sizeof(struct kw_session) % 8 == 0, "kw_session must be a multiple of 8 bytes");
_Static_assert(sizeof(struct kw_lost) % 8 == 0, "kw_lost must be a multiple of 8 bytes");

static int map_array(const struct bpf_map *map, size_t value_size, void **out, size_t *len,
		     char *err, size_t errlen)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;
	int e;

	*len = (KW_MAX_SESSIONS * value_size + page - 1) & ~(page - 1);
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
	if (p == MAP_FAILED) {
		e = -errno;
		snprintf(err, errlen, "mapping %s failed: %s (a map pinned by an older "
			 "kwitnessd is not mappable)", bpf_map__name(map), strerror(-e));
		return e;
	}
	*out = p;
	return 0;
}

static int map_session_arrays(struct kw_hooks *h, char *err, size_t errlen)
{
	return map_array(h->skel->maps.kw_sessions, sizeof(struct kw_session),
			 (void **)&h->sessions_mm, &h->sessions_mm_len, err, errlen) ?:
	       map_array(h->skel->maps.kw_lost, sizeof(struct kw_lost), (void **)&h->lost_mm,
			 &h->lost_mm_len, err, errlen);
}

/* The skeleton over the object built with the kfuncs, or over the one built
 * without (the same maps, programs and globals, so the skeleton's pointers
 * fit either): see kw_probe_plan.kfuncs. */
static struct kwitness_bpf *skel_open(bool kfuncs)
{
	struct kwitness_bpf *obj = calloc(1, sizeof(*obj));
	int err;

	if (!obj)
		return NULL;
	err = kwitness_bpf__create_skeleton(obj);
	if (!err && !kfuncs)
		obj->skeleton->data = (void *)kwitness_nokfunc_bpf__elf_bytes(&obj->skeleton->data_sz);
	if (!err)
		err = bpf_object__open_skeleton(obj->skeleton, NULL);
	if (err) {
		kwitness_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

/* Opens and loads the object. When the kernel refuses a program of a
 * class, that class (named, with the kernel's reason) is left out and the
 * rest is loaded again: one refused hook costs its class, not every class. */
static int open_and_load(struct kw_hooks *h, const struct kw_hooks_opts *opts,
			 uint32_t *lsm_classes, char *err, size_t errlen)
{
	struct kw_refusals refused;
	struct kw_probe_plan plan;
	char prog[64], why[KW_PROBE_REASON_MAX];
	int ret;

	memset(&refused, 0, sizeof(refused));
	kw_probe_plan(!opts->no_exec_digest, &plan);
	for (;;) {
		h->skel = skel_open(plan.kfuncs);
		if (!h->skel) {
			ret = -errno ?: -EINVAL;
			snprintf(err, errlen, "opening the BPF object failed: %s", strerror(-ret));
			return ret;
		}
		*lsm_classes = prepare_progs(h, !opts->no_exec_digest, &refused);
		if (h->pin_dir && !opts->load_only) {
			ret = pin_maps(h, h->pin_dir, err, errlen);
			if (ret)
				return ret;
		}
		ret = load_naming_refusal(h, prog, sizeof(prog), why, sizeof(why));
		if (!ret)
			return 0;
		if (!prog[0] || !refuse(h, &refused, prog, why)) {
			snprintf(err, errlen, "loading the BPF object failed%s%s: %s",
				 prog[0] ? ": the kernel refused " : "", prog, why);
			return ret;
		}
		kwitness_bpf__destroy(h->skel);
		h->skel = NULL;
	}
}

/* DNS is steered by the connect and sendmsg programs. */
static void dns_needs_steering(struct kw_hooks *h)
{
	const uint32_t steer = KW_CLASS_NET_CONNECT | KW_CLASS_NET_SEND;

	if ((h->available & steer) != steer && (h->available & KW_CLASS_NET_DNS)) {
		kw_class_why(h->why, KW_CLASS_NET_DNS,
			     "DNS steering needs cgroup/connect and cgroup/sendmsg");
		h->available &= ~KW_CLASS_NET_DNS;
	}
}

/* The classes whose programs the object holds after load (before attach). */
static uint32_t kw_hooks_loaded_classes(const struct kw_hooks *h, uint32_t lsm_classes)
{
	uint32_t classes = KW_CLASS_ALL_MASK & ~KW_CLASS_LSM_MASK;
	size_t i;

	for (i = 0; i < KW_N_CG_PROGS; i++)
		if (bpf_program__fd(kw_cg_program(h, &kw_cg_progs[i])) < 0)
			classes &= ~kw_cg_progs[i].class_bit;
	return classes | lsm_classes;
}

int kw_hooks_open(const struct kw_hooks_opts *opts, struct kw_hooks **out, char *err,
		  size_t errlen)
{
	bool reuse;
	struct kw_hooks *h;
	uint32_t lsm_classes;
	size_t i;
	int ret;

	*out = NULL;
	if (opts->ringbuf_size < 4096 || (opts->ringbuf_size & (opts->ringbuf_size - 1)) ||
	    opts->ringbuf_size > (1u << 30)) {
		snprintf(err, errlen, "ring buffer size %zu is not a power of two in [4096, 1 GiB]",
			 opts->ringbuf_size);
		return -EINVAL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	h->ringbuf_size = opts->ringbuf_size;
	h->wakeup_bytes = opts->wakeup_bytes >= opts->ringbuf_size ? (uint32_t)opts->ringbuf_size / 2 :
			  (uint32_t)opts->wakeup_bytes;
	for (i = 0; i < KW_MAX_SESSIONS; i++)
		h->slots[i].ringbuf_fd = -1;

	if (opts->pin_dir) {
		char links[512];

		ret = kw_ensure_bpffs(opts->pin_dir, err, errlen);
		if (!ret && !(h->pin_dir = strdup(opts->pin_dir)))
			ret = -ENOMEM;
		if (!ret && !(ret = kw_pin_path(links, sizeof(links), opts->pin_dir, -1, NULL)))
			ret = kw_mkdir_p(links);
		if (ret) {
			if (!err[0])
				snprintf(err, errlen, "pin directory %s: %s", opts->pin_dir,
					 strerror(-ret));
			goto fail;
		}
	}
	reuse = kw_sessions_pinned(h->pin_dir);
	ret = open_and_load(h, opts, &lsm_classes, err, errlen);
	if (ret)
		goto fail;
	if (opts->load_only) {
		h->available = kw_hooks_loaded_classes(h, lsm_classes);
		dns_needs_steering(h);
		*out = h;
		return 0;
	}
	ret = map_session_arrays(h, err, errlen);
	if (!ret)
		ret = reset_unmarked(h, reuse, err, errlen);
	if (ret)
		goto fail;

	if (bpf_program__fd(h->skel->progs.kw_cgroup_mkdir) >= 0) {
		h->tp_mkdir = kw_hooks_global_link(h->skel->progs.kw_cgroup_mkdir, h->pin_dir, reuse);
		h->tp_rmdir = kw_hooks_global_link(h->skel->progs.kw_cgroup_rmdir, h->pin_dir, reuse);
		h->tp_fork = kw_hooks_global_link(h->skel->progs.kw_task_fork, h->pin_dir, reuse);
		h->tp_attach = kw_hooks_global_link(h->skel->progs.kw_task_attach, h->pin_dir, reuse);
		h->tp_free = kw_hooks_global_link(h->skel->progs.kw_task_free, h->pin_dir, reuse);
		if (!h->tp_mkdir || !h->tp_rmdir || !h->tp_fork || !h->tp_attach || !h->tp_free) {
			ret = -errno ?: -EINVAL;
			snprintf(err, errlen, "attaching tp_btf/cgroup_mkdir/rmdir, "
				 "sched_process_fork/free, cgroup_attach_task failed: %s", strerror(-ret));
			goto fail;
		}
		/* lineage only: without it, proc entries lack exec (kwitnessd logs why) */
		if (bpf_program__fd(h->skel->progs.kw_proc_exec) >= 0)
			h->tp_exec = kw_hooks_global_link(h->skel->progs.kw_proc_exec, h->pin_dir,
							  reuse);
	}

	/* a class needs every one of its programs */
	h->available = kw_hooks_loaded_classes(h, 0);
	if (!reuse)
		forget_dead_sessions(h);
	kw_resolver_guard_forget(h);
	/* pinned sessions keep governing; a gate older programs never wrote is
	 * made from them before any new program runs */
	ret = kw_hooks_update_gate(h);
	if (ret) {
		snprintf(err, errlen, "writing the class gate failed: %s", strerror(-ret));
		goto fail;
	}
	if (h->available && h->tp_mkdir)
		attach_at_root(h, reuse);
	dns_needs_steering(h);
	if (!h->tp_mkdir) {
		/* without tracking, children made after tagging would escape */
		kw_class_why(h->why, h->available, "tp_btf/cgroup_mkdir unavailable: new child cgroups "
			"could not be followed");
		h->available = 0;
	}

	if (lsm_classes) {
		ret = kw_lsm_attach(h->skel, h->pin_dir, reuse);
		if (ret)
			kw_class_why(h->why, lsm_classes, "attaching the BPF-LSM programs failed: %s",
				strerror(-ret));
		else
			h->available |= lsm_classes;
	}
	*out = h;
	return 0;
fail:
	kw_hooks_close(h);
	return ret;
}

void kw_hooks_close(struct kw_hooks *h)
{
	size_t i, j;

	if (!h)
		return;
	for (j = 0; j < KW_N_CG_PROGS; j++)
		bpf_link__destroy(h->root_links[j]);
	for (i = 0; i < KW_MAX_SESSIONS; i++)
		if (h->slots[i].ringbuf_fd >= 0)
			close(h->slots[i].ringbuf_fd);
	bpf_link__destroy(h->tp_mkdir);
	bpf_link__destroy(h->tp_rmdir);
	bpf_link__destroy(h->tp_fork);
	bpf_link__destroy(h->tp_attach);
	bpf_link__destroy(h->tp_free);
	bpf_link__destroy(h->tp_exec);
	if (h->sessions_mm)
		munmap(h->sessions_mm, h->sessions_mm_len);
	if (h->lost_mm)
		munmap(h->lost_mm, h->lost_mm_len);
	kwitness_bpf__destroy(h->skel);
	free(h->pin_dir);
	free(h->existing);
	free(h);
}

uint32_t kw_hooks_available(const struct kw_hooks *h)
{
	return h->available;
}

const char *kw_hooks_unavailable_reason(const struct kw_hooks *h, uint32_t class_bit)
{
	int i = class_index(class_bit);

	if (i < 0 || (h->available & class_bit))
		return NULL;
	return h->why[i][0] ? h->why[i] : "no program provides this class";
}

json_t *kw_hooks_programs(const struct kw_hooks *h)
{
	struct bpf_program *prog;
	json_t *arr = json_array();

	if (!arr)
		return NULL;
	bpf_object__for_each_program(prog, h->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		char tag[2 * BPF_TAG_SIZE + 1];
		int fd = bpf_program__fd(prog), i;
		json_t *o;

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		for (i = 0; i < BPF_TAG_SIZE; i++)
			snprintf(tag + 2 * i, 3, "%02x", info.tag[i]);
		o = json_pack("{s:s, s:s}", "name", bpf_program__name(prog), "tag", tag);
		if (!o || json_array_append_new(arr, o)) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}


/* The two objects' bytes as built in (object_digest.c hashes them here, so
 * the 1.5 MB of each stays in the binary once). */
const void *kw_bpf_object_bytes(bool nokfunc, size_t *size)
{
	return nokfunc ? kwitness_nokfunc_bpf__elf_bytes(size) : kwitness_bpf__elf_bytes(size);
}
