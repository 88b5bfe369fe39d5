// SPDX-License-Identifier: Apache-2.0
/* The loader: opens and loads the BPF object, attaches the global programs,
 * and gives sessions their slot (configuration, rules, ring buffer, per-cgroup
 * links, membership). See include/kwitness/hooks.h for the contract. */
#include <dirent.h>
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
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/membarrier.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kwitness/cgroup.h"
#include "kwitness/hooks.h"
#include "kwitness/abi/name_match.h"
#include "kwitness/net_compile.h"
#include "kwitness/probe.h"
#include "kwitness.skel.h"
#include "kwitness-nokfunc.skel.h"
#include "lsm.h"
#include "resolver_guard.h"

#define KW_BPF_FS_MAGIC 0xcafe4a11
/* Deepest cgroup nesting walked when tagging descendants. */
#define KW_CGROUP_WALK_DEPTH 64

/* The cgroup programs and the class each serves. */
struct kw_cg_prog {
	uint32_t class_bit;
	size_t off; /* offset of the program pointer in skel->progs */
	const char *section;
};

#define CG_(cls, name, type, sec) \
	{ KW_CLASS_##cls, offsetof(struct kwitness_bpf, progs.name), sec },
#define LSM_(cls, name, hook, args, need)
static const struct kw_cg_prog kw_cg_progs[] = { KW_CLASS_PROGRAMS(CG_, LSM_) };
#undef CG_
#undef LSM_
#define KW_N_CG_PROGS (sizeof(kw_cg_progs) / sizeof(kw_cg_progs[0]))
_Static_assert(KW_N_CG_PROGS == KW_PLAN_N_CG, "kw_probe_plan.cg_prog follows kw_cg_progs");

struct kw_slot_state {
	bool used;
	bool tagged;
	int ringbuf_fd;
	size_t ringbuf_size;
};

struct kw_hooks {
	struct kwitness_bpf *skel;
	uint32_t available;
	char why[KW_CLASS_COUNT][KW_PROBE_REASON_MAX];
	struct bpf_link *tp_mkdir, *tp_rmdir;
	struct bpf_link *tp_fork, *tp_attach, *tp_free; /* a session follows its tasks */
	struct bpf_link *root_links[KW_N_CG_PROGS]; /* cgroup programs at the cgroup2 root */
	size_t ringbuf_size;
	uint32_t wakeup_bytes;
	char *pin_dir; /* NULL: nothing is pinned, sessions end with the process */
	struct kw_session *sessions_mm; /* kw_sessions, mapped (kw_hooks_take_seq) */
	size_t sessions_mm_len;
	struct kw_lost *lost_mm; /* kw_lost, mapped (kw_hooks_seq_lost) */
	size_t lost_mm_len;
	struct kw_slot_state slots[KW_MAX_SESSIONS];
};

struct kwitness_bpf *kw_hooks_skeleton(struct kw_hooks *h)
{
	return h->skel;
}

static struct bpf_program *cg_prog(const struct kw_hooks *h, const struct kw_cg_prog *p)
{
	return *(struct bpf_program **)((char *)h->skel + p->off);
}

static int class_index(uint32_t class_bit)
{
	int i;

	for (i = 0; i < KW_CLASS_COUNT; i++)
		if (class_bit == (1u << i))
			return i;
	return -1;
}

static int mkdir_p(const char *path)
{
	char tmp[512];
	size_t len = strlen(path), i;

	if (len == 0 || len >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, path, len + 1);
	for (i = 1; i <= len; i++) {
		if (tmp[i] == '/' || tmp[i] == '\0') {
			char c = tmp[i];

			tmp[i] = '\0';
			if (mkdir(tmp, 0700) && errno != EEXIST)
				return -errno;
			tmp[i] = c;
		}
	}
	return 0;
}

/* Pins: <pin_dir>/links/<program> for the global links, and
 * <pin_dir>/sessions/<slot>/<program> for a session's cgroup links. A pinned
 * link stays attached when the collector dies: the kernel goes on enforcing
 * and numbering decisions, and the next collector adopts it. */
static int pin_path(char *out, size_t cap, const char *pin_dir, int slot, const char *name)
{
	int n = slot < 0 ? snprintf(out, cap, "%s/links%s%s", pin_dir, name ? "/" : "",
				    name ? name : "") :
			   snprintf(out, cap, "%s/sessions/%d%s%s", pin_dir, slot, name ? "/" : "",
				    name ? name : "");

	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* bpffs must be mounted at /sys/fs/bpf for pinning (not mounted on every host). */
static int ensure_bpffs(const char *pin_dir, char *err, size_t errlen)
{
	struct statfs st;
	int ret;

	if (strncmp(pin_dir, "/sys/fs/bpf/", 12) == 0 || strcmp(pin_dir, "/sys/fs/bpf") == 0) {
		if (statfs("/sys/fs/bpf", &st) || st.f_type != KW_BPF_FS_MAGIC) {
			mkdir("/sys/fs/bpf", 0700);
			if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
				ret = -errno;
				snprintf(err, errlen, "mounting bpffs at /sys/fs/bpf failed: %s",
					 strerror(errno));
				return ret;
			}
		}
	}
	ret = mkdir_p(pin_dir);
	if (ret) {
		snprintf(err, errlen, "creating pin directory %s failed: %s", pin_dir,
			 strerror(-ret));
		return ret;
	}
	return 0;
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
			bpf_program__set_autoload(cg_prog(h, &kw_cg_progs[i]), false);
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
		if (!strcmp(bpf_program__name(cg_prog(h, &kw_cg_progs[i])), prog))
			cls = kw_cg_progs[i].class_bit;
	if (!cls || (r->classes & cls))
		return false;
	r->classes |= cls;
	kw_class_why(r->why, cls, "the kernel refused %s: %s", prog, why);
	return true;
}

/* True when some session of an earlier collector is still pinned. */
static bool sessions_pinned(const char *pin_dir)
{
	char path[512];
	struct dirent *de;
	bool any = false;
	DIR *d;

	if (!pin_dir || snprintf(path, sizeof(path), "%s/sessions", pin_dir) >= (int)sizeof(path))
		return false;
	d = opendir(path);
	if (!d)
		return false;
	while (!any && (de = readdir(d)))
		any = de->d_name[0] >= '0' && de->d_name[0] <= '9';
	closedir(d);
	return any;
}

/* A link of prog for every task (cgroup_fd < 0: its own attach point; else
 * the cgroup it is attached to), pinned at <pin_dir>/links/<program> when
 * pin_dir is set. */
static struct bpf_link *global_link(struct bpf_program *prog, int cgroup_fd, const char *pin_dir,
				    bool reuse)
{
	struct bpf_link *l;
	char path[512];
	int e;

	if (!pin_dir)
		return cgroup_fd < 0 ? bpf_program__attach(prog) :
				       bpf_program__attach_cgroup(prog, cgroup_fd);
	if (pin_path(path, sizeof(path), pin_dir, -1, bpf_program__name(prog))) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	/* Sessions of an earlier collector are still enforced by its programs:
	 * keep them (same maps), never a moment with none or with two. */
	if (reuse && !access(path, F_OK) && (l = bpf_link__open(path))) {
		/* a cgroup link runs this instance's program from now on (a
		 * tracing link cannot be moved: it keeps the old one, same maps) */
		if (cgroup_fd >= 0)
			bpf_link__update_program(l, prog);
		return l;
	}
	l = cgroup_fd < 0 ? bpf_program__attach(prog) : bpf_program__attach_cgroup(prog, cgroup_fd);
	if (!l)
		return NULL;
	unlink(path); /* an older link detaches as its pin goes */
	e = bpf_link__pin(l, path);
	if (e) {
		bpf_link__destroy(l);
		errno = -e;
		return NULL;
	}
	return l;
}

void kw_hooks_global_unpin(const char *pin_dir, const char *name)
{
	char path[512];

	if (pin_dir && !pin_path(path, sizeof(path), pin_dir, -1, name))
		unlink(path);
}

struct bpf_link *kw_hooks_global_link(struct bpf_program *prog, const char *pin_dir, bool reuse)
{
	return global_link(prog, -1, pin_dir, reuse);
}

/* Deletes every entry of a hash map. */
static void clear_map(const struct bpf_map *m)
{
	int fd = bpf_map__fd(m);
	void *key = malloc(bpf_map__key_size(m));

	if (!key)
		return;
	while (bpf_map_get_next_key(fd, NULL, key) == 0)
		if (bpf_map_delete_elem(fd, key))
			break;
	free(key);
}

/* kw_governed, the class gate the programs read first: the union of the
 * classes of every slot in kw_sessions. Called after any change of a slot's
 * classes: a session's are written before its first tag (raising the gate
 * first) and cleared after its untag (lowering it last), so the gate always
 * covers every session a program can find. It is recomputed whole, under one
 * lock, so two writers cannot lose each other's classes. */
static int update_gate(struct kw_hooks *h)
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
	clear_map(h->skel->maps.kw_cgroups);
	clear_map(h->skel->maps.kw_path_rules);
	clear_map(h->skel->maps.kw_exec_digests);
	/* egress by name: what dead sessions' answers opened, their resolver ports */
	clear_map(h->skel->maps.kw_name_allow);
	clear_map(h->skel->maps.kw_dns_ports);
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
		h->root_links[i] = global_link(cg_prog(h, p), fd, h->pin_dir, reuse);
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
		if (bpf_program__fd(cg_prog(h, &kw_cg_progs[i])) < 0)
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

		ret = ensure_bpffs(opts->pin_dir, err, errlen);
		if (!ret && !(h->pin_dir = strdup(opts->pin_dir)))
			ret = -ENOMEM;
		if (!ret && !(ret = pin_path(links, sizeof(links), opts->pin_dir, -1, NULL)))
			ret = mkdir_p(links);
		if (ret) {
			if (!err[0])
				snprintf(err, errlen, "pin directory %s: %s", opts->pin_dir,
					 strerror(-ret));
			goto fail;
		}
	}
	reuse = sessions_pinned(h->pin_dir);
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
	}

	/* a class needs every one of its programs */
	h->available = kw_hooks_loaded_classes(h, 0);
	if (!reuse)
		forget_dead_sessions(h);
	kw_resolver_guard_forget(h);
	/* pinned sessions keep governing; a gate older programs never wrote is
	 * made from them before any new program runs */
	ret = update_gate(h);
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
	if (h->sessions_mm)
		munmap(h->sessions_mm, h->sessions_mm_len);
	if (h->lost_mm)
		munmap(h->lost_mm, h->lost_mm_len);
	kwitness_bpf__destroy(h->skel);
	free(h->pin_dir);
	free(h);
}

int kw_hooks_unpin_idle(struct kw_hooks *h)
{
	char path[512];
	struct dirent *de;
	DIR *d;

	if (!h->pin_dir || sessions_pinned(h->pin_dir) ||
	    pin_path(path, sizeof(path), h->pin_dir, -1, NULL))
		return 0;
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	return 1;
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

/* ---- sessions ---- */

/* Deletes every key of map whose value (a __u32 slot, or the key's own slot
 * field via key_slot) belongs to slot. Keys are collected before deleting so
 * the iteration is not disturbed. */
typedef bool (*kw_key_match)(const void *key, const void *val, uint32_t slot);

static int delete_matching(int map_fd, size_t key_size, size_t val_size, uint32_t slot,
			   kw_key_match match)
{
	unsigned char key[64], next[64], val[256];
	unsigned char *keys = NULL;
	size_t n = 0, cap = 0, i;
	void *prev = NULL;
	int ret = 0;

	if (key_size > sizeof(key) || val_size > sizeof(val))
		return -EINVAL;
	while (bpf_map_get_next_key(map_fd, prev, next) == 0) {
		memcpy(key, next, key_size);
		prev = key;
		if (bpf_map_lookup_elem(map_fd, key, val))
			continue;
		if (!match(key, val, slot))
			continue;
		if (n == cap) {
			unsigned char *k2 = realloc(keys, (cap ? cap * 2 : 64) * key_size);

			if (!k2) {
				free(keys);
				return -ENOMEM;
			}
			keys = k2;
			cap = cap ? cap * 2 : 64;
		}
		memcpy(keys + n * key_size, key, key_size);
		n++;
	}
	for (i = 0; i < n; i++)
		if (bpf_map_delete_elem(map_fd, keys + i * key_size) && errno != ENOENT)
			ret = -errno;
	free(keys);
	return ret < 0 ? ret : (int)n;
}

static bool match_cgroup(const void *key, const void *val, uint32_t slot)
{
	(void)key;
	return *(const __u32 *)val == slot;
}

static bool match_net(const void *key, const void *val, uint32_t slot)
{
	(void)val;
	return ((const struct kw_net_key *)key)->slot == slot;
}

static bool match_dev(const void *key, const void *val, uint32_t slot)
{
	(void)val;
	return ((const struct kw_dev_key *)key)->slot == slot;
}

static int untag_members(struct kw_hooks *h, uint32_t slot)
{
	int fd = bpf_map__fd(h->skel->maps.kw_cgroups), pass, n = 0;

	/* a child made during a pass (tracked by tp_btf/cgroup_mkdir) is caught
	 * by the next */
	for (pass = 0; pass < 4; pass++) {
		n = delete_matching(fd, sizeof(__u64), sizeof(__u32), slot, match_cgroup);
		if (n <= 0)
			break;
	}
	return n < 0 ? n : 0;
}

/* The marker of a live session, <pin_dir>/sessions/<slot>/: it says a later
 * collector has a session to resume (its state is all in the pinned maps). */
static int mark_live(struct kw_hooks *h, uint32_t slot, bool live)
{
	char dir[512];
	int ret;

	if (!h->pin_dir)
		return 0;
	ret = pin_path(dir, sizeof(dir), h->pin_dir, (int)slot, NULL);
	if (ret)
		return ret;
	if (!live)
		return rmdir(dir) && errno != ENOENT ? -errno : 0;
	return mkdir_p(dir);
}

static bool match_name(const void *key, const void *val, uint32_t slot)
{
	(void)val;
	return ((const struct kw_name_key *)key)->slot == slot;
}

static int delete_rules(struct kw_hooks *h, uint32_t slot)
{
	int r1, r2, r3;

	r1 = delete_matching(bpf_map__fd(h->skel->maps.kw_net_rules), sizeof(struct kw_net_key),
			     sizeof(struct kw_net_rules), slot, match_net);
	r2 = delete_matching(bpf_map__fd(h->skel->maps.kw_dev_rules), sizeof(struct kw_dev_key),
			     sizeof(struct kw_dev_rule), slot, match_dev);
	/* egress by name: the resolver's ports and what its answers opened */
	kw_hooks_dns_steer(h, slot, NULL);
	r3 = delete_matching(bpf_map__fd(h->skel->maps.kw_name_allow), sizeof(struct kw_name_key),
			     sizeof(struct kw_name_allow), slot, match_name);
	return r1 < 0 ? r1 : r2 < 0 ? r2 : r3 < 0 ? r3 : 0;
}

/* Adds id -> slot. Already there for this slot (cgroup_mkdir raced us): fine;
 * there for another live session: nested sessions are refused; there for a
 * slot no session of ours holds (left in pinned maps by an earlier
 * instance): stale, replaced. */
static int tag_one(const struct kw_hooks *h, int map_fd, uint64_t id, uint32_t slot, char *err,
		   size_t errlen)
{
	__u32 cur;

	if (bpf_map_update_elem(map_fd, &id, &slot, BPF_NOEXIST) == 0)
		return 0;
	if (errno == EEXIST && bpf_map_lookup_elem(map_fd, &id, &cur) == 0) {
		if (cur == slot)
			return 0;
		if (cur >= KW_MAX_SESSIONS || !h->slots[cur].used)
			return bpf_map_update_elem(map_fd, &id, &slot, BPF_ANY) ? -errno : 0;
		snprintf(err, errlen, "cgroup %llu already belongs to session slot %u",
			 (unsigned long long)id, cur);
		return -EBUSY;
	}
	snprintf(err, errlen, "tagging cgroup %llu failed: %s", (unsigned long long)id,
		 strerror(errno));
	return errno == E2BIG ? -ENOSPC : -errno;
}

static uint32_t read_generation(const struct kw_hooks *h, uint32_t slot)
{
	struct kw_session s;

	if (bpf_map_lookup_elem(bpf_map__fd(h->skel->maps.kw_sessions), &slot, &s))
		return 0;
	return s.generation;
}

/* Tags every task (threads included) already in the session's cgroups, in
 * the kernel: a task iterator (kw_tag_existing) run once, read to its end.
 * Tasks that fork or join later are tagged by the tracepoints. */
static int tag_existing_tasks(const struct kw_hooks *h, char *err, size_t errlen)
{
	struct bpf_link *link = bpf_program__attach_iter(h->skel->progs.kw_tag_existing, NULL);
	char buf[256];
	ssize_t n;
	int fd, ret = 0;

	if (!link) {
		ret = -errno ?: -EINVAL;
		snprintf(err, errlen, "the task iterator could not be attached: %s", strerror(-ret));
		return ret;
	}
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "the task iterator could not be created: %s", strerror(errno));
	} else {
		while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
			;
		if (n < 0) {
			ret = -errno;
			snprintf(err, errlen, "the task iterator failed: %s", strerror(errno));
		}
		close(fd);
	}
	bpf_link__destroy(link);
	return ret;
}

/* Tags every descendant of the directory dirfd (already tagged itself): each
 * child is tagged before its own children are read, so a grandchild made
 * meanwhile is tagged by cgroup_mkdir or found by the read. */
static int tag_descendants(const struct kw_hooks *h, int map_fd, int dirfd, uint32_t slot,
			   int depth, char *err, size_t errlen)
{
	struct dirent *de;
	DIR *d;
	int fd, ret = 0;

	if (depth > KW_CGROUP_WALK_DEPTH) {
		snprintf(err, errlen, "cgroup tree deeper than %d levels", KW_CGROUP_WALK_DEPTH);
		return -ELOOP;
	}
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		ret = -errno;
		snprintf(err, errlen, "reading the cgroup's children failed: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	while (!ret && (de = readdir(d))) {
		uint64_t id = 0;
		int cfd;

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		cfd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (cfd < 0) {
			if (errno == ENOENT) /* removed meanwhile */
				continue;
			ret = -errno;
			snprintf(err, errlen, "opening child cgroup %s failed: %s", de->d_name,
				 strerror(errno));
			break;
		}
		ret = kw_cgroup_id(cfd, &id);
		if (ret)
			snprintf(err, errlen, "reading the id of child cgroup %s failed: %s",
				 de->d_name, strerror(-ret));
		else
			ret = tag_one(h, map_fd, id, slot, err, errlen);
		if (!ret)
			ret = tag_descendants(h, map_fd, cfd, slot, depth + 1, err, errlen);
		close(cfd);
	}
	closedir(d);
	return ret;
}

static int write_dev_rules(struct kw_hooks *h, uint32_t slot, const struct kw_policy *pol,
			   char *err, size_t errlen)
{
	int fd = bpf_map__fd(h->skel->maps.kw_dev_rules);
	size_t i;

	for (i = 0; i < pol->n_dev; i++) {
		const struct kw_dev_rule_spec *d = &pol->dev[i];
		struct kw_dev_key key = { .slot = slot, .type = d->type, .major = d->major,
					  .minor = d->minor };
		struct kw_dev_rule val = { .access = d->access, .rule = d->index };

		if (bpf_map_update_elem(fd, &key, &val, BPF_NOEXIST)) {
			int ret = -errno;

			snprintf(err, errlen, "dev.allow[%u]: writing the rule failed: %s",
				 d->index, strerror(errno));
			return ret;
		}
	}
	return 0;
}

static int write_net_rules(struct kw_hooks *h, uint32_t slot, const struct kw_policy *pol,
			   char *err, size_t errlen)
{
	int fd = bpf_map__fd(h->skel->maps.kw_net_rules), ret = 0;
	struct kw_net_entry *ents;
	size_t n, i;

	ret = kw_net_compile(pol, slot, &ents, &n, err, errlen);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		if (bpf_map_update_elem(fd, &ents[i].key, &ents[i].val, BPF_ANY)) {
			ret = -errno;
			snprintf(err, errlen, "writing network rule %zu of %zu failed: %s", i + 1,
				 n, strerror(errno));
			break;
		}
	}
	free(ents);
	return ret;
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
	update_gate(h); /* lowered once no session governs a class */
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
	untag_members(h, slot);
	delete_rules(h, slot);

	/* order: configuration, rules, ring buffer, live mark, membership; nothing
	 * is decided for the session before its cgroup is tagged */
	ret = write_session(h, slot, pol);
	if (!ret)
		ret = update_gate(h); /* raised before anything can find the session */
	if (ret) {
		snprintf(err, errlen, "writing session slot %u failed: %s", slot, strerror(-ret));
		goto fail;
	}
	ret = write_net_rules(h, slot, pol, err, errlen);
	if (!ret)
		ret = write_dev_rules(h, slot, pol, err, errlen);
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
	ret = tag_one(h, map_fd, cgroup_id, slot, err, errlen);
	if (!ret)
		ret = tag_descendants(h, map_fd, cgroup_fd, slot, 0, err, errlen);
	if (!ret)
		ret = tag_existing_tasks(h, err, errlen);
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
	ret = untag_members(h, slot);
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
	    (pin_path(path, sizeof(path), h->pin_dir, (int)slot, NULL) || access(path, F_OK) ||
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

/* ---- egress by name ---- */

int kw_hooks_take_seq(struct kw_hooks *h, uint32_t slot, bool permit, uint64_t *seq)
{
	struct kw_session *s;

	if (slot >= KW_MAX_SESSIONS || !h->sessions_mm)
		return -EINVAL;
	s = &h->sessions_mm[slot];
	/* the same counting as kw_record_decision (bpf/session.bpf.h) */
	if (!permit) {
		__atomic_fetch_add(&s->denials, 1, __ATOMIC_RELAXED);
	} else if (__atomic_load_n(&s->record, __ATOMIC_RELAXED) == KW_RECORD_DENY) {
		__atomic_fetch_add(&s->unrecorded, 1, __ATOMIC_RELAXED);
		return -ENOENT;
	}
	*seq = __atomic_fetch_add(&s->next_seq, 1, __ATOMIC_SEQ_CST);
	return 0;
}

/* kw_lost's word and bit for seq. */
static __u64 *lost_word(struct kw_hooks *h, uint32_t slot, uint64_t seq, __u64 *bit)
{
	*bit = 1ULL << (seq & 63);
	return &h->lost_mm[slot].bits[(seq / 64) % (KW_LOST_BITS / 64)];
}

bool kw_hooks_seq_lost(struct kw_hooks *h, uint32_t slot, uint64_t seq)
{
	__u64 bit, *w;

	if (slot >= KW_MAX_SESSIONS || !h->lost_mm)
		return false;
	w = lost_word(h, slot, seq, &bit);
	if (!(__atomic_load_n(w, __ATOMIC_ACQUIRE) & bit))
		return false;
	/* The bit is seq's own unless a number KW_LOST_BITS or more above it
	 * was handed out (and dropped) before the bit was read: next_seq, read
	 * after it, would show that number. */
	if (__atomic_load_n(&h->sessions_mm[slot].next_seq, __ATOMIC_ACQUIRE) >
	    seq + KW_LOST_BITS)
		return false;
	__atomic_fetch_and(w, ~bit, __ATOMIC_RELAXED);
	return true;
}

void kw_hooks_lost_forget(struct kw_hooks *h, uint32_t slot, uint64_t from, uint64_t to)
{
	__u64 bit, *w;

	if (slot >= KW_MAX_SESSIONS || !h->lost_mm)
		return;
	if (to - from > KW_LOST_BITS)
		from = to - KW_LOST_BITS;
	for (uint64_t seq = from; seq < to; seq++) {
		w = lost_word(h, slot, seq, &bit);
		if (__atomic_load_n(w, __ATOMIC_RELAXED) & bit)
			__atomic_fetch_and(w, ~bit, __ATOMIC_RELAXED);
	}
}

static void steer_ports(int fd, const struct kw_dns_steer *st, const __u32 *slot)
{
	const __u16 ports[4] = { st->udp4, st->tcp4, st->udp6, st->tcp6 };

	for (int i = 0; i < 4; i++) {
		__u32 key = ports[i];

		if (!key)
			continue;
		if (slot)
			bpf_map_update_elem(fd, &key, slot, BPF_ANY);
		else
			bpf_map_delete_elem(fd, &key);
	}
}

int kw_hooks_dns_steer(struct kw_hooks *h, uint32_t slot, const struct kw_dns_steer *steer)
{
	int sfd = bpf_map__fd(h->skel->maps.kw_dns_steer);
	int pfd = bpf_map__fd(h->skel->maps.kw_dns_ports);
	struct kw_dns_steer old, none = { 0 };

	if (slot >= KW_MAX_SESSIONS)
		return -EINVAL;
	if (!bpf_map_lookup_elem(sfd, &slot, &old))
		steer_ports(pfd, &old, NULL);
	if (!steer)
		return bpf_map_update_elem(sfd, &slot, &none, BPF_ANY) ? -errno : 0;
	/* the ports first: from the moment DNS is steered, no other session
	 * may reach these sockets */
	steer_ports(pfd, steer, &slot);
	return bpf_map_update_elem(sfd, &slot, steer, BPF_ANY) ? -errno : 0;
}

int kw_hooks_name_put(struct kw_hooks *h, const struct kw_name_key *k,
		      const struct kw_name_allow *v)
{
	return bpf_map_update_elem(bpf_map__fd(h->skel->maps.kw_name_allow), k, v, BPF_ANY) ?
		       -errno : 0;
}

int kw_hooks_name_del(struct kw_hooks *h, const struct kw_name_key *k)
{
	if (bpf_map_delete_elem(bpf_map__fd(h->skel->maps.kw_name_allow), k) && errno != ENOENT)
		return -errno;
	return 0;
}
