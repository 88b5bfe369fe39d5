/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness probe [--json]: which hook classes work on this host, and why not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <jansson.h>

#include "commands.h"
#include "kwitness/abi/classes.h"
#include "kwitness/policy.h"
#include "kwitness/probe.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: kwitness probe [--json]\n\n"
		   "Loads, attaches and triggers a trivial program for each hook class and\n"
		   "reports whether it works on this kernel, and if not, why; then which\n"
		   "policy classes the loader (kwitnessd) would load here, and what no\n"
		   "class reaches (operations without an LSM hook). Needs root.\n");
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

/* The policy classes the loader would load, from the answer it uses itself. */
static json_t *loader_classes(const struct kw_probe_plan *plan)
{
	json_t *a = json_array();

#define LOADER_(id, bit, name, kernel, probe)                                           \
	{                                                                               \
		json_t *c = json_object();                                              \
		json_object_set_new(c, "class", json_string(name));                     \
		json_object_set_new(c, "available", json_boolean(plan->classes & KW_CLASS_##id)); \
		if (!(plan->classes & KW_CLASS_##id))                                   \
			json_object_set_new(c, "reason", json_string(plan->why[bit]));  \
		json_array_append_new(a, c);                                            \
	}
	KW_CLASS_TABLE(LOADER_)
#undef LOADER_
	return a;
}

static int print_json(const struct kw_probe_result *r, const struct kw_probe_plan *plan,
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
	json_object_set_new(root, "loader", loader_classes(plan));
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

int cmd_probe(int argc, char **argv)
{
	struct kw_probe_result r[KW_PROBE_NCLASSES];
	struct kw_probe_plan plan;
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
			fprintf(stderr, "kwitness probe: unknown option '%s'\n", argv[i]);
			usage(stderr);
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
	kw_probe_plan(true, &plan);
	have_lsm = kw_probe_lsm_list(lsm, sizeof(lsm)) == 0;
	if (json)
		return print_json(r, &plan, u.release, have_lsm ? lsm : NULL);
	printf("kernel %s, active LSMs: %s\n", u.release, have_lsm ? lsm : "(securityfs unavailable)");
	for (i = 0; i < KW_PROBE_NCLASSES; i++)
		printf("%-15s %-3s %s\n", kw_probe_class_name(i), r[i].available ? "yes" : "no",
		       r[i].reason);
	printf("the loader would load:\n");
	for (i = 0; i < KW_CLASS_COUNT; i++)
		printf("  %-13s %-3s %s\n", kw_class_name(1u << i),
		       plan.classes & (1u << i) ? "yes" : "no", plan.why[i]);
	printf("out of reach of every class:\n");
	for (i = 0; kw_probe_limits[i].what; i++)
		printf("  %-13s %s\n", kw_probe_limits[i].what, kw_probe_limits[i].why);
	return 0;
}
