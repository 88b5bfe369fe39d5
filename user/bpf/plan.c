/* SPDX-License-Identifier: Apache-2.0 */
/* The one answer to "which classes can the loader load here": the kernel
 * knows each cgroup program type, bpf is an active LSM and a trivial lsm
 * program loads, the kernel has each bpf_lsm_<hook>, and it can hash an
 * executed file. Worked out once per process and kept: the loader
 * (load.c, lsm.c) and `kwitness probe` read the same answer. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kwitness/abi/classes.h"
#include "bpf/probe.h"

struct plan_cg {
	uint32_t class_bit;
	enum bpf_prog_type type;
	const char *section;
};

struct plan_lsm {
	uint32_t class_bit;
	const char *hook;
	unsigned int args; /* the prototype it is written for; 0: any */
	bool if_present;   /* KW_HOOK_IF_PRESENT */
};

#define CG_(cls, name, type, sec) { KW_CLASS_##cls, BPF_PROG_TYPE_##type, sec },
#define LSM_(cls, name, hook, args, need)
static const struct plan_cg cg_progs[] = { KW_CLASS_PROGRAMS(CG_, LSM_) };
#undef CG_
#undef LSM_
#define CG_(cls, name, type, sec)
#define LSM_(cls, name, hook, args, need) { KW_CLASS_##cls, #hook, args, need == KW_HOOK_IF_PRESENT },
static const struct plan_lsm lsm_progs[] = { KW_CLASS_PROGRAMS(CG_, LSM_) };
#undef CG_
#undef LSM_
_Static_assert(sizeof(cg_progs) / sizeof(cg_progs[0]) == KW_PLAN_N_CG, "KW_PLAN_N_CG");
_Static_assert(sizeof(lsm_progs) / sizeof(lsm_progs[0]) == KW_PLAN_N_LSM, "KW_PLAN_N_LSM");

static pthread_mutex_t plan_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kw_probe_plan cached; /* without the exec digest decided */
static bool have_cached;
static int digest_state; /* 0 not asked yet, 1 works, -1 does not (cached.why says why) */

void kw_class_why(char why[][KW_PROBE_REASON_MAX], uint32_t class_bits, const char *fmt, ...)
{
	char msg[KW_PROBE_REASON_MAX];
	va_list ap;
	int i;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (i = 0; i < KW_CLASS_COUNT; i++)
		if ((class_bits & (1u << i)) && !why[i][0])
			snprintf(why[i], KW_PROBE_REASON_MAX, "%s", msg);
}

/* An LSM program of a cgroup class: it extends the class where BPF-LSM
 * works and is loaded when it can be, but the class does not depend on it. */
static bool is_extension(const struct plan_lsm *l)
{
	return !(l->class_bit & KW_CLASS_LSM_MASK);
}

static void plan_cgroup(struct kw_probe_plan *p)
{
	size_t i;

	for (i = 0; i < KW_PLAN_N_CG; i++) {
		p->cg_prog[i] = libbpf_probe_bpf_prog_type(cg_progs[i].type, NULL) == 1;
		if (p->cg_prog[i])
			continue;
		kw_class_why(p->why, cg_progs[i].class_bit, "%s: program type not supported by this kernel",
		    cg_progs[i].section);
	}
	/* a class needs every one of its programs */
	for (i = 0; i < KW_PLAN_N_CG; i++)
		if (!p->cg_prog[i])
			p->classes &= ~cg_progs[i].class_bit;
}

/* The number of arguments of bpf_lsm_<hook> in the kernel's BTF, or -1 when
 * the kernel has no such hook. */
static int hook_args(const struct btf *vmlinux, const char *hook)
{
	const struct btf_type *t;
	char fn[64];
	int id;

	snprintf(fn, sizeof(fn), "bpf_lsm_%s", hook);
	id = btf__find_by_name_kind(vmlinux, fn, BTF_KIND_FUNC);
	if (id < 0)
		return -1;
	t = btf__type_by_id(vmlinux, btf__type_by_id(vmlinux, id)->type);
	return t && btf_is_func_proto(t) ? btf_vlen(t) : -1;
}

/* Whether another program for lsm_progs[i]'s hook and class fits here. */
static bool sibling_fits(const struct kw_probe_plan *p, size_t i)
{
	size_t j;

	for (j = 0; j < KW_PLAN_N_LSM; j++)
		if (j != i && p->lsm_prog[j] && lsm_progs[j].class_bit == lsm_progs[i].class_bit &&
		    !strcmp(lsm_progs[j].hook, lsm_progs[i].hook))
			return true;
	return false;
}

/* BPF-LSM: a trial load of a trivial lsm program (a host may list bpf as an
 * LSM and still refuse every lsm program: no BPF trampoline), then the
 * bpf_lsm_* attach points of each class and their prototypes (a hook whose
 * arguments changed has a program per prototype; a hook only newer kernels
 * have is needed where it exists). */
static void plan_lsm(struct kw_probe_plan *p)
{
	char msg[KW_PROBE_REASON_MAX] = "";
	struct btf *vmlinux;
	int args[KW_PLAN_N_LSM];
	size_t i;

	if (!kw_probe_lsm_loadable(msg, sizeof(msg))) {
		kw_class_why(p->why, KW_CLASS_LSM_MASK, "%s", msg);
		p->classes &= ~KW_CLASS_LSM_MASK;
		return;
	}
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		kw_class_why(p->why, KW_CLASS_LSM_MASK, "no kernel BTF: BPF-LSM programs cannot be attached");
		p->classes &= ~KW_CLASS_LSM_MASK;
		return;
	}
	p->kfuncs = btf__find_by_name_kind(vmlinux, "bpf_get_fsverity_digest", BTF_KIND_FUNC) >= 0;
	for (i = 0; i < KW_PLAN_N_LSM; i++) {
		args[i] = hook_args(vmlinux, lsm_progs[i].hook);
		p->lsm_prog[i] = args[i] >= 0 &&
				 (!lsm_progs[i].args || (unsigned int)args[i] == lsm_progs[i].args);
	}
	btf__free(vmlinux);
	for (i = 0; i < KW_PLAN_N_LSM; i++) {
		if (p->lsm_prog[i] || is_extension(&lsm_progs[i]) ||
		    (args[i] < 0 && lsm_progs[i].if_present) || sibling_fits(p, i))
			continue;
		if (args[i] < 0)
			kw_class_why(p->why, lsm_progs[i].class_bit, "the kernel has no LSM hook %s",
				     lsm_progs[i].hook);
		else
			kw_class_why(p->why, lsm_progs[i].class_bit,
				     "the kernel's LSM hook %s has %d arguments, a prototype kwitness "
				     "has no program for", lsm_progs[i].hook, args[i]);
		p->classes &= ~lsm_progs[i].class_bit;
	}
}

/* Whether the kernel gives the SHA-256 of an executed file: the probe's
 * sleepable program loads, attaches and sees bpf_ima_file_hash return a
 * SHA-256 for a real exec. Asked only when the caller wants digests. */
static void plan_digest(struct kw_probe_plan *p)
{
	struct kw_probe_result r;

	if (!(p->classes & KW_CLASS_EXEC_DIGEST)) {
		digest_state = -1;
		return;
	}
	if (kw_probe_class(KW_PROBE_LSM_EXEC_DIGEST, &r)) {
		kw_class_why(p->why, KW_CLASS_EXEC_DIGEST, "the exec digest probe could not run");
		digest_state = -1;
	} else if (!r.available) {
		kw_class_why(p->why, KW_CLASS_EXEC_DIGEST, "%s", r.reason);
		digest_state = -1;
	} else {
		digest_state = 1;
	}
	if (digest_state < 0)
		p->classes &= ~KW_CLASS_EXEC_DIGEST;
}

void kw_probe_plan(bool exec_digest, struct kw_probe_plan *out)
{
	pthread_mutex_lock(&plan_lock);
	if (!have_cached) {
		memset(&cached, 0, sizeof(cached));
		cached.classes = KW_CLASS_ALL_MASK;
		plan_cgroup(&cached);
		plan_lsm(&cached);
		have_cached = true;
	}
	if (exec_digest && !digest_state)
		plan_digest(&cached);
	*out = cached;
	pthread_mutex_unlock(&plan_lock);
	if (!exec_digest && (out->classes & KW_CLASS_EXEC_DIGEST)) {
		out->classes &= ~KW_CLASS_EXEC_DIGEST;
		kw_class_why(out->why, KW_CLASS_EXEC_DIGEST, "turned off by the loader's caller");
	}
}

/* Whether struct name in btf has a member called member. */
static bool has_member(const struct btf *btf, const char *name, const char *member)
{
	const struct btf_member *m;
	const struct btf_type *t;
	int id, i;

	id = btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT);
	if (id < 0)
		return false;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), member))
			return true;
	return false;
}

bool kw_probe_verity(char *how, size_t len)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	bool ok = true;

	if (!vmlinux) {
		snprintf(how, len, "unavailable: no kernel BTF");
		return false;
	}
	/* the order the exec programs try them in (bpf/lsm_exec.bpf.h) */
	if (btf__find_by_name_kind(vmlinux, "bpf_get_fsverity_digest", BTF_KIND_FUNC) >= 0)
		snprintf(how, len, "the kernel's bpf_get_fsverity_digest");
	else if (has_member(vmlinux, "inode", "i_verity_info") &&
		 has_member(vmlinux, "fsverity_info", "file_digest"))
		snprintf(how, len, "the inode's fs-verity state (inode->i_verity_info)");
	else {
		snprintf(how, len, "unavailable: this kernel has neither bpf_get_fsverity_digest nor "
			 "inode->i_verity_info (CONFIG_FS_VERITY off?): exec entries carry no "
			 "verity_digest");
		ok = false;
	}
	btf__free(vmlinux);
	return ok;
}
