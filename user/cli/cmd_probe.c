/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness probe [--json]: which hook classes work on this host, and why not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <bpf/libbpf.h>
#include <jansson.h>

#include "cli_probe.h"
#include "commands.h"
#include "lib/messages.h"
#include "kwitness/abi/classes.h"
#include "bpf/hooks.h"
#include "policy/policy.h"
#include "bpf/probe.h"

/* What kwitnessd's own programs load here: the classes, and why not. */
struct loaded {
	uint32_t classes;
	char why[KW_CLASS_COUNT][KW_PROBE_REASON_MAX];
};

static void usage(FILE *f)
{
	fprintf(f, "usage: kwitness probe [--json]\n\n"
		   "Loads, attaches and triggers a trivial program for each hook class and\n"
		   "loads kwitnessd's own programs the way kwitnessd does (nothing of them\n"
		   "is attached); reports which policy classes work on this kernel, and if\n"
		   "not, why (a class is available only when both its kind of program works\n"
		   "and the kernel accepts kwitness's programs for it); then what no class\n"
		   "reaches (operations without an LSM hook). Needs root.\n");
}

/* The policy classes whose kind of program probe class cls tells about. */
static json_t *policy_classes(int cls)
{
	json_t *a = json_array();

#define SERVES_(id, bit, name, kernel, probe)             \
	if (KW_PROBE_##probe == cls)                      \
		json_array_append_new(a, json_string(name));
	KW_CLASS_TABLE(SERVES_)
#undef SERVES_
	return a;
}

/* The policy classes kwitnessd's programs load for. */
static json_t *loader_classes(const struct loaded *l)
{
	json_t *a = json_array();

#define LOADER_(id, bit, name, kernel, probe)                                           \
	{                                                                               \
		json_t *c = json_object();                                              \
		json_object_set_new(c, "class", json_string(name));                     \
		json_object_set_new(c, "available", json_boolean(l->classes & KW_CLASS_##id)); \
		if (!(l->classes & KW_CLASS_##id))                                      \
			json_object_set_new(c, "reason", json_string(l->why[bit]));     \
		json_array_append_new(a, c);                                            \
	}
	KW_CLASS_TABLE(LOADER_)
#undef LOADER_
	return a;
}

/* Loads kwitnessd's programs as kwitnessd would, and lets them go. */
static void load_own_programs(struct loaded *l)
{
	struct kw_hooks_opts o = { .ringbuf_size = 4096, .load_only = true };
	struct kw_hooks *h = NULL;
	char err[256] = "";
	int i;

	memset(l, 0, sizeof(*l));
	/* what the kernel refuses is in the reasons; libbpf's own words would
	 * only interleave with the answer */
	libbpf_set_print(NULL);
	if (kw_hooks_open(&o, &h, err, sizeof(err))) {
		kw_class_why(l->why, KW_CLASS_ALL_MASK, "%s", err);
		return;
	}
	l->classes = kw_hooks_available(h);
	for (i = 0; i < KW_CLASS_COUNT; i++)
		if (!(l->classes & (1u << i)))
			snprintf(l->why[i], sizeof(l->why[i]), "%s",
				 kw_hooks_unavailable_reason(h, 1u << i) ?: "not loaded");
	kw_hooks_close(h);
}

/* A kind of program works for the policy only where kwitnessd's programs of
 * it load too: the first class it serves that does not load takes it down. */
static void and_loaded(struct kw_probe_result r[KW_PROBE_NCLASSES], const struct loaded *l)
{
#define AND_(id, bit, name, kernel, probe)                                                     \
	if (r[KW_PROBE_##probe].available && !(l->classes & KW_CLASS_##id)) {                   \
		r[KW_PROBE_##probe].available = false;                                          \
		snprintf(r[KW_PROBE_##probe].reason, sizeof(r[KW_PROBE_##probe].reason), "%s: %.*s", \
			 name, (int)(KW_PROBE_REASON_MAX - sizeof(name) - 2), l->why[bit]);     \
	}
	KW_CLASS_TABLE(AND_)
#undef AND_
}

/* {"available": bool, "source" or "reason": text} */
static json_t *verity_json(void)
{
	json_t *v = json_object();
	char how[KW_PROBE_REASON_MAX];
	bool ok = kw_probe_verity(how, sizeof(how));

	json_object_set_new(v, "available", json_boolean(ok));
	json_object_set_new(v, ok ? "source" : "reason", json_string(how));
	return v;
}

static int print_json(const struct kw_probe_result *r, const struct loaded *loaded,
		      const char *release, const char *lsm)
{
	json_t *root = json_object(), *arr = json_array();
	char *text;
	int i;

	if (!root || !arr)
		goto oom;
	json_object_set_new(root, "kernel", json_string(release));
	json_object_set_new(root, "lsm", lsm ? json_string(lsm) : json_null());
	for (i = 0; i < KW_PROBE_NCLASSES; i++) {
		json_t *c = json_object();

		if (!c)
			goto oom;
		json_object_set_new(c, "class", json_string(kw_probe_class_name(i)));
		json_object_set_new(c, "available", json_boolean(r[i].available));
		json_object_set_new(c, "policy_classes", policy_classes(i));
		if (!r[i].available)
			json_object_set_new(c, "reason", json_string(r[i].reason));
		json_array_append_new(arr, c);
	}
	json_object_set_new(root, "classes", arr);
	json_object_set_new(root, "loader", loader_classes(loaded));
	json_object_set_new(root, "verity_digest", verity_json());
	arr = json_array();
	if (!arr)
		goto oom;
	for (i = 0; kw_probe_limits[i].what; i++) {
		json_t *l = json_object();

		if (!l)
			goto oom;
		json_object_set_new(l, "what", json_string(kw_probe_limits[i].what));
		json_object_set_new(l, "why", json_string(kw_probe_limits[i].why));
		json_array_append_new(arr, l);
	}
	json_object_set_new(root, "limits", arr);
	arr = NULL;
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (!text)
		return 1;
	printf("%s\n", text);
	free(text);
	return 0;
oom:
	json_decref(arr);
	json_decref(root);
	fprintf(stderr, "kwitness probe: out of memory\n");
	return 1;
}

int cli_probe_enforceable(uint32_t *classes, char why[KW_CLASS_COUNT][KW_PROBE_REASON_MAX])
{
	struct kw_probe_result r[KW_PROBE_NCLASSES];
	struct loaded loaded;
	int err = kw_probe_all(r);

	if (err)
		return err;
	load_own_programs(&loaded);
	*classes = loaded.classes;
	memcpy(why, loaded.why, sizeof(loaded.why));
	/* a class whose kind of program does not work here is not enforced
	 * even when its programs load */
#define PROBED_(id, bit, name, kernel, probe)                                              	if ((*classes & KW_CLASS_##id) && !r[KW_PROBE_##probe].available) {                 		*classes &= ~(uint32_t)KW_CLASS_##id;                                       		snprintf(why[bit], KW_PROBE_REASON_MAX, "%s", r[KW_PROBE_##probe].reason);   	}
	KW_CLASS_TABLE(PROBED_)
#undef PROBED_
	return 0;
}

int cmd_probe(int argc, char **argv)
{
	struct kw_probe_result r[KW_PROBE_NCLASSES];
	char verity[KW_PROBE_REASON_MAX];
	struct loaded loaded;
	struct utsname u;
	char lsm[256];
	bool json = false, have_lsm;
	int i, err;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else {
			kw_usage_error("kwitness probe", "unknown option '%s'", argv[i]);
			return 2;
		}
	}
	if (uname(&u))
		strcpy(u.release, "unknown");
	err = kw_probe_all(r);
	if (err) {
		fprintf(stderr, "kwitness probe: %s\n", strerror(-err));
		return 1;
	}
	load_own_programs(&loaded);
	and_loaded(r, &loaded);
	have_lsm = kw_probe_lsm_list(lsm, sizeof(lsm)) == 0;
	if (json)
		return print_json(r, &loaded, u.release, have_lsm ? lsm : NULL);
	printf("kernel %s, active LSMs: %s\n", u.release, have_lsm ? lsm : "(securityfs unavailable)");
	for (i = 0; i < KW_PROBE_NCLASSES; i++)
		printf("%-15s %-3s %s\n", kw_probe_class_name(i), r[i].available ? "yes" : "no",
		       r[i].reason);
	printf("kwitnessd's programs load for:\n");
	for (i = 0; i < KW_CLASS_COUNT; i++)
		printf("  %-13s %-3s %s\n", kw_class_name(1u << i),
		       loaded.classes & (1u << i) ? "yes" : "no", loaded.why[i]);
	kw_probe_verity(verity, sizeof(verity));
	printf("exec verity_digest from: %s\n", verity);
	printf("out of reach of every class:\n");
	for (i = 0; kw_probe_limits[i].what; i++)
		printf("  %-13s %s\n", kw_probe_limits[i].what, kw_probe_limits[i].why);
	return 0;
}
