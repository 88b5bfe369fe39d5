// SPDX-License-Identifier: Apache-2.0
/* kw-corecheck OBJECT BTF: relocates a BPF object against another kernel's
 * BTF (libbpf's btf_custom_path) without booting it, and checks that every
 * CO-RE relocation left without a target is one of a known pair of layouts
 * whose other side this kernel has (a branch the verifier drops), never an
 * unguarded read of a field the kernel lacks. Prints TAP-style lines "ok -
 * ..." and "not ok - ..."; exit 1 on a failure. Needs root (libbpf creates
 * the maps before it relocates; the load that follows is not looked at). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "tap_result.h"

/* Alternatives: each row is one structure change, each side one layout (a
 * space-separated list of TYPE.FIELD, or ksym:NAME for a kfunc); the side
 * this kernel has must resolve in full, the other may not. */
static const char *const layouts[][2] = {
	/* a file's owner: embedded up to 6.11, a pointer to a fown_struct
	 * pointing back at its file from 6.12 on (bpf/lsm_proc.bpf.h) */
	{ "file___kw61.f_owner", "fown_struct___kw612.file" },
	/* a superblock's mounts: a list to 6.17, a chain from 6.18 (bpf/lsm_fs.bpf.h) */
	{ "super_block___kw61.s_mounts mount___kw61.mnt_instance",
	  "super_block___kw618.s_mounts mount___kw618.mnt_next_for_sb" },
	/* verity digests: the kfunc, or 6.1's inode state (bpf/lsm_exec.bpf.h) */
	{ "ksym:bpf_get_fsverity_digest",
	  "inode___kwv.i_verity_info fsverity_info___kw.file_digest "
	  "merkle_tree_params___kw.digest_size" },
};
#define N_LAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

#define MAX_FIELDS 4096
static char *resolved[MAX_FIELDS], *poisoned[MAX_FIELDS], *poisoned_prog[MAX_FIELDS];
static size_t n_resolved, n_poisoned;
/* the spec of the relocation being logged: "prog 'P': relo #N: <kind> [id] struct T.F..." */
static char cur_prog[128], cur_field[256];
static int cur_relo = -1;
static struct btf *target;
static const struct btf *object_btf;


static bool listed(char *const *set, size_t n, const char *field)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(set[i], field))
			return true;
	return false;
}

/* "struct T.F.G (0:1:0 @ offset 8)" -> "T.F" */
static void spec_field(const char *spec, char *out, size_t len)
{
	const char *t = strstr(spec, "struct ");
	size_t n;

	out[0] = '\0';
	if (!t)
		return;
	t += 7;
	n = strcspn(t, " ");
	if (n >= len)
		return;
	memcpy(out, t, n);
	out[n] = '\0';
	/* keep the type and its first field */
	t = strchr(out, '.');
	if (t && (t = strchr(t + 1, '.')))
		*(char *)t = '\0';
}

static int capture(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char msg[1024], prog[128];
	const char *p;
	int relo;

	(void)level;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (sscanf(msg, "libbpf: prog '%127[^']': relo #%d:", prog, &relo) != 2)
		return 0;
	p = strstr(msg, ": relo #");
	p = strchr(p + 8, ':') + 2;
	if (*p == '<') { /* the spec of a new relocation */
		snprintf(cur_prog, sizeof(cur_prog), "%s", prog);
		cur_relo = relo;
		spec_field(p, cur_field, sizeof(cur_field));
	} else if (relo == cur_relo && !strcmp(prog, cur_prog) && cur_field[0]) {
		if (!strncmp(p, "matching candidate", 18) && n_resolved < MAX_FIELDS &&
		    !listed(resolved, n_resolved, cur_field))
			resolved[n_resolved++] = strdup(cur_field);
		else if (strstr(p, "w/ invalid insn") && n_poisoned < MAX_FIELDS) {
			poisoned[n_poisoned] = strdup(cur_field);
			poisoned_prog[n_poisoned++] = strdup(prog);
		}
	}
	return 0;
}

/* Whether every item of one layout (space-separated) stands on this kernel. */
static bool layout_stands(const char *side)
{
	char buf[512], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", side);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (!strncmp(tok, "ksym:", 5)) {
			/* the object calls it and this kernel has it */
			if (btf__find_by_name_kind(target, tok + 5, BTF_KIND_FUNC) < 0 ||
			    btf__find_by_name_kind(object_btf, tok + 5, BTF_KIND_FUNC) < 0)
				return false;
		} else if (!listed(resolved, n_resolved, tok)) {
			return false;
		}
	}
	return true;
}

static bool in_layout(const char *side, const char *field)
{
	char buf[512], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", side);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		if (!strcmp(tok, field))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	size_t i, r, unguarded = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: kw-corecheck OBJECT BTF\n");
		return 2;
	}
	target = btf__parse(argv[2], NULL);
	if (!target) {
		result(false, "%s: kernel BTF readable", argv[2]);
		return 1;
	}
	{
		LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = argv[2]);

		libbpf_set_print(capture);
		obj = bpf_object__open_file(argv[1], &opts);
		if (!obj) {
			result(false, "%s opens", argv[1]);
			return 1;
		}
		object_btf = bpf_object__btf(obj);
		bpf_object__load(obj); /* relocates every program first; the load is not ours to judge */
		libbpf_set_print(NULL);
	}
	result(n_resolved > 0, "relocated against %s: %zu fields found", argv[2], n_resolved);
	/* each structure change: this kernel has one of its layouts */
	for (r = 0; r < N_LAYOUTS; r++)
		result(layout_stands(layouts[r][0]) || layout_stands(layouts[r][1]),
		       "one layout of {%s} or {%s} stands on this kernel", layouts[r][0], layouts[r][1]);
	/* each relocation without a target: a layout whose other side stands */
	for (i = 0; i < n_poisoned; i++) {
		bool guarded = false;

		for (r = 0; r < N_LAYOUTS && !guarded; r++)
			guarded = (in_layout(layouts[r][0], poisoned[i]) && layout_stands(layouts[r][1])) ||
				  (in_layout(layouts[r][1], poisoned[i]) && layout_stands(layouts[r][0]));
		if (!guarded) {
			unguarded++;
			result(false, "%s reads %s, which this kernel lacks, and no other layout stands in",
			       poisoned_prog[i], poisoned[i]);
		}
	}
	result(!unguarded, "%zu relocations without a target, %zu of them on a layout this kernel "
	       "does not have", n_poisoned, n_poisoned - unguarded);
	bpf_object__close(obj);
	btf__free(target);
	return tap_failures ? 1 : 0;
}
