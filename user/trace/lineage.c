// SPDX-License-Identifier: Apache-2.0
/* A session's process tree rebuilt from the decision log's "proc" entries
 * (docs/decision-log.md, "proc"), each process with the decisions that name
 * it (kwitness log tree). Reads the log as given, as untrusted text: verify
 * it first (kwitness verify --log) to trust what it prints. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lib/text_safe.h"
#include "trace/lineage.h"

struct tree_proc {
	char *ref, *parent, *exe, *comm, *argv, *digest;
	long long pid;
	unsigned long long decisions;
	size_t first_child, n_children; /* in the children order */
	int has_parent_entry;
	int printed;
};

struct kw_lineage {
	struct tree_proc *p;
	size_t n, cap;
	char **dref; /* the "proc" of each decision */
	size_t nd, capd;
	size_t *order; /* procs sorted by parent */
};

static int by_ref(const void *a, const void *b)
{
	return strcmp(((const struct tree_proc *)a)->ref, ((const struct tree_proc *)b)->ref);
}

static char *dup_member(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? strndup(json_string_value(v), json_string_length(v)) : NULL;
}

char *kw_log_text(const json_t *v, size_t max)
{
	size_t n, i;
	char *s;

	if (!json_is_string(v))
		return NULL;
	n = json_string_length(v);
	if (max && n >= max) {
		n = max - 1;
		while (n && ((unsigned char)json_string_value(v)[n] & 0xc0) == 0x80)
			n--;
	}
	s = malloc(n + 1);
	if (!s)
		return NULL;
	memcpy(s, json_string_value(v), n);
	for (i = 0; i < n; i++)
		if (!s[i])
			s[i] = ' ';
	s[n] = '\0';
	return s;
}

static void take(char **slot, char *v)
{
	if (v) {
		free(*slot);
		*slot = v;
	}
}

/* A proc entry: a new process, or what a later entry (exec) adds to one. */
static int add_proc(struct kw_lineage *t, json_t *o, const char *ref)
{
	struct tree_proc *p = NULL;
	const char *event = json_string_value(json_object_get(o, "event"));
	size_t i;

	for (i = t->n; i-- > 0;) /* the same process: usually a recent one */
		if (!strcmp(t->p[i].ref, ref)) {
			p = &t->p[i];
			break;
		}
	if (!p) {
		if (t->n == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 64;
			struct tree_proc *np = realloc(t->p, cap * sizeof(*np));

			if (!np)
				return -ENOMEM;
			t->p = np;
			t->cap = cap;
		}
		p = &t->p[t->n++];
		memset(p, 0, sizeof(*p));
		p->ref = strdup(ref);
		if (!p->ref)
			return -ENOMEM;
		p->pid = json_integer_value(json_object_get(o, "pid"));
	}
	if (!p->parent)
		p->parent = dup_member(o, "parent");
	take(&p->comm, dup_member(o, "comm"));
	if (event && !strcmp(event, "exec")) {
		free(p->digest);
		p->digest = dup_member(o, "digest");
		take(&p->exe, dup_member(o, "exe"));
		take(&p->argv, kw_log_text(json_object_get(o, "argv"), 0));
	} else if (!p->exe) {
		take(&p->exe, dup_member(o, "exe"));
		take(&p->argv, kw_log_text(json_object_get(o, "argv"), 0));
	}
	return 0;
}

static int add_decision(struct kw_lineage *t, const char *ref)
{
	if (t->nd == t->capd) {
		size_t cap = t->capd ? t->capd * 2 : 256;
		char **nd = realloc(t->dref, cap * sizeof(*nd));

		if (!nd)
			return -ENOMEM;
		t->dref = nd;
		t->capd = cap;
	}
	t->dref[t->nd] = strdup(ref);
	return t->dref[t->nd++] ? 0 : -ENOMEM;
}

int kw_lineage_add(struct kw_lineage *t, const json_t *o)
{
	const char *tool, *ref;

	if (!json_is_object(o))
		return -EINVAL;
	tool = json_string_value(json_object_get(o, "tool"));
	ref = json_string_value(json_object_get(o, "proc"));
	if (tool && ref && !strcmp(tool, "proc"))
		return add_proc(t, (json_t *)o, ref);
	if (tool && ref && strncmp(tool, "kwitness.", 9))
		return add_decision(t, ref);
	return 0;
}

static int read_log(struct kw_lineage *t, FILE *f, const char *path)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned long long lineno = 0;
	int e = 0;

	while (!e && (n = getline(&line, &cap, f)) > 0) {
		json_error_t je;
		json_t *o = json_loadb(line, (size_t)n, JSON_ALLOW_NUL, &je);

		lineno++;
		if (!json_is_object(o)) {
			fprintf(stderr, "kwitness log tree: %s line %llu: not a JSON object\n", path,
				lineno);
			json_decref(o);
			e = -EINVAL;
			break;
		}
		e = kw_lineage_add(t, o);
		json_decref(o);
	}
	free(line);
	return e;
}

static struct tree_proc *find(struct kw_lineage *t, const char *ref)
{
	struct tree_proc key = { .ref = (char *)ref };

	return ref && t->n ? bsearch(&key, t->p, t->n, sizeof(*t->p), by_ref) : NULL;
}

static const struct kw_lineage *sort_tree;
static int by_parent(const void *a, const void *b)
{
	const struct tree_proc *x = &sort_tree->p[*(const size_t *)a];
	const struct tree_proc *y = &sort_tree->p[*(const size_t *)b];
	int c = strcmp(x->parent ? x->parent : "", y->parent ? y->parent : "");

	return c ? c : (x->pid > y->pid) - (x->pid < y->pid);
}

/* A process that has not run execve runs its parent's program. */
static void print_proc(struct kw_lineage *t, size_t i, unsigned depth, const char *inherited, FILE *out)
{
	struct tree_proc *p = &t->p[i];
	const char *exe = p->exe ? p->exe : inherited;
	size_t k;

	if (p->printed || depth > 4096)
		return; /* a cycle only a forged log can hold */
	p->printed = 1;
	/* the log's strings are the processes' own: escaped, one line each */
	fprintf(out, "%*s%lld ", (int)(2 * depth), "", p->pid);
	kw_text_fput(out, exe ? exe : p->comm ? p->comm : "?");
	fprintf(out, " decisions=%llu proc=", p->decisions);
	kw_text_fput(out, p->ref);
	if (p->digest) {
		fputs(" digest=", out);
		kw_text_fput(out, p->digest);
	}
	if (p->argv) {
		fputs(" argv=\"", out);
		kw_text_fput(out, p->argv);
		fputc('"', out);
	}
	fputc('\n', out);
	for (k = 0; k < p->n_children; k++)
		print_proc(t, t->order[p->first_child + k], depth + 1, exe, out);
}

/* Links children to parents and prints every root (a process whose parent
 * has no entry) with its descendants. */
void kw_lineage_print(struct kw_lineage *t, FILE *out)
{
	size_t i, k;

	if (!t->n)
		return;
	free(t->order); /* printed before: counted and linked again */
	t->order = NULL;
	for (i = 0; i < t->n; i++) {
		t->p[i].decisions = 0;
		t->p[i].n_children = 0;
		t->p[i].printed = 0;
	}
	qsort(t->p, t->n, sizeof(*t->p), by_ref);
	for (i = 0; i < t->nd; i++) {
		struct tree_proc *p = find(t, t->dref[i]);

		if (p)
			p->decisions++;
	}
	t->order = calloc(t->n ? t->n : 1, sizeof(*t->order));
	if (!t->order)
		return;
	for (i = 0; i < t->n; i++)
		t->order[i] = i;
	sort_tree = t;
	qsort(t->order, t->n, sizeof(*t->order), by_parent);
	for (k = 0; k < t->n; k++) {
		struct tree_proc *c = &t->p[t->order[k]], *par = find(t, c->parent);

		c->has_parent_entry = par != NULL && par != c;
		if (c->has_parent_entry && !par->n_children++)
			par->first_child = k;
	}
	for (k = 0; k < t->n; k++)
		if (!t->p[t->order[k]].has_parent_entry)
			print_proc(t, t->order[k], 0, NULL, out);
	/* parents in a cycle (a forged log): shown, as roots */
	for (k = 0; k < t->n; k++)
		print_proc(t, t->order[k], 0, NULL, out);
}

void kw_lineage_free(struct kw_lineage *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->p[i].ref);
		free(t->p[i].parent);
		free(t->p[i].exe);
		free(t->p[i].comm);
		free(t->p[i].argv);
		free(t->p[i].digest);
	}
	for (size_t i = 0; i < t->nd; i++)
		free(t->dref[i]);
	free(t->p);
	free(t->dref);
	free(t->order);
	free(t);
}

struct kw_lineage *kw_lineage_new(void)
{
	return calloc(1, sizeof(struct kw_lineage));
}

int kw_log_tree(FILE *f, const char *name, FILE *out)
{
	struct kw_lineage *t = kw_lineage_new();
	int e = t ? read_log(t, f, name) : -ENOMEM;

	if (!e)
		kw_lineage_print(t, out);
	kw_lineage_free(t);
	return e;
}
