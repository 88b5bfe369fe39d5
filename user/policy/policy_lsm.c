// SPDX-License-Identifier: Apache-2.0
/* The policy's device and LSM sections (docs/policy.md): "dev", path lists
 * ("fs", "net.unix"), "exec" with digests, "mount", "proc". */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bpf.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "policy/net_compile.h"
#include "kwitness/abi/net_match.h"
#include "policy/policy.h"
#include "policy_parse.h"

/* ---- dev: "c 1:3 rw" ---- */

static int parse_dev_num(const char *s, size_t n, unsigned long max, uint32_t *out)
{
	unsigned long v;

	if (n == 1 && s[0] == '*') {
		*out = KW_DEV_ANY;
		return 0;
	}
	if (policy_parse_uint(s, n, max, &v))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_dev_rule(struct pctx *c, const char *s, size_t idx, struct kw_dev_rule_spec *d)
{
	const char *sp1, *sp2, *colon, *acc;
	char q[80];

	memset(d, 0, sizeof(*d));
	d->index = (uint16_t)idx;
	if ((s[0] != 'c' && s[0] != 'b') || s[1] != ' ')
		return policy_fail(c, "dev.allow[%zu]: bad device rule \"%s\" (want \"c|b MAJOR:MINOR rwm\")",
			    idx, policy_quote(s, q));
	d->type = s[0] == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK;
	sp1 = s + 1;
	sp2 = strchr(sp1 + 1, ' ');
	colon = strchr(sp1 + 1, ':');
	if (!sp2 || !colon || colon > sp2 ||
	    parse_dev_num(sp1 + 1, (size_t)(colon - sp1 - 1), 4095, &d->major) ||
	    parse_dev_num(colon + 1, (size_t)(sp2 - colon - 1), 1048575, &d->minor))
		return policy_fail(c, "dev.allow[%zu]: bad device number in \"%s\"", idx, policy_quote(s, q));
	if (d->major == KW_DEV_ANY && d->minor != KW_DEV_ANY)
		return policy_fail(c, "dev.allow[%zu]: \"%s\": a wildcard major needs a wildcard minor",
			    idx, policy_quote(s, q));
	acc = sp2 + 1;
	if (!*acc)
		return policy_fail(c, "dev.allow[%zu]: no access in \"%s\"", idx, policy_quote(s, q));
	for (; *acc; acc++) {
		uint32_t bit = *acc == 'r' ? BPF_DEVCG_ACC_READ : *acc == 'w' ? BPF_DEVCG_ACC_WRITE :
			       *acc == 'm' ? BPF_DEVCG_ACC_MKNOD : 0;

		if (!bit || (d->access & bit))
			return policy_fail(c, "dev.allow[%zu]: bad access in \"%s\" (want r, w, m once each)",
				    idx, policy_quote(s, q));
		d->access |= bit;
	}
	return 0;
}

int policy_parse_dev(struct pctx *c, json_t *root)
{
	static const char *const keys[] = { "allow", NULL };
	json_t *dev, *a, *v;
	size_t i, j;
	int ret;

	ret = policy_get_section(c, root, "dev", KW_CLASS_DEV, keys, &dev);
	if (ret || !dev)
		return ret;
	a = policy_get_array(c, dev, "allow", "dev.allow", KW_POLICY_MAX_DEV_RULES, &ret);
	if (ret || !a)
		return ret;
	c->p->dev = calloc(json_array_size(a) ? json_array_size(a) : 1, sizeof(*c->p->dev));
	if (!c->p->dev)
		return -ENOMEM;
	json_array_foreach(a, i, v) {
		struct kw_dev_rule_spec *d = &c->p->dev[i];
		const char *s = policy_item_string(c, v, "dev.allow", i, &ret);

		if (!s)
			return ret;
		ret = parse_dev_rule(c, s, i, d);
		if (ret)
			return ret;
		for (j = 0; j < i; j++)
			if (c->p->dev[j].type == d->type && c->p->dev[j].major == d->major &&
			    c->p->dev[j].minor == d->minor)
				return policy_fail(c, "dev.allow[%zu]: same device as dev.allow[%zu]", i, j);
		c->p->n_dev++;
	}
	return 0;
}

/* ---- paths (fs, exec, net.unix) ---- */

/* Absolute, no "." or ".." components, no empty components (duplicate or
 * trailing slashes) except the root itself. */
static int path_normalised(const char *s)
{
	const char *p = s;

	if (s[0] != '/')
		return 0;
	if (!strcmp(s, "/"))
		return 1;
	while (*p == '/') {
		const char *q = p + 1;
		size_t n;

		while (*q && *q != '/')
			q++;
		n = (size_t)(q - p - 1);
		if (n == 0 || (n == 1 && p[1] == '.') || (n == 2 && p[1] == '.' && p[2] == '.'))
			return 0;
		p = q;
	}
	return *p == '\0';
}

int kw_path_object_name(const char *s)
{
	static const char *const kinds[] = { "memfd:", "pipe:", "socket:", "anon:", NULL };
	size_t i;

	for (i = 0; kinds[i]; i++)
		if (!strncmp(s, kinds[i], strlen(kinds[i])))
			return 1;
	return 0;
}

/* Appends path rule s (item i of list name) after checking it. */
static int add_path_rule(struct pctx *c, const char *s, const char *name, size_t i,
			 uint8_t kind, struct kw_path_rule **out)
{
	struct kw_path_rule *r;
	size_t len = strlen(s);
	char q[80];

	if (len >= KW_PATH_MAX)
		return policy_fail(c, "%s[%zu]: path longer than %d bytes", name, i, KW_PATH_MAX - 1);
	if (kw_path_object_name(s) && kind != KW_PATH_UNIX)
		; /* a file with no path, by kind and name */
	else if (s[0] != '/')
		return policy_fail(c, "%s[%zu]: path \"%s\" is not absolute (nor memfd:, pipe:, "
			    "socket:, anon:)", name, i, policy_quote(s, q));
	else if (!path_normalised(s))
		return policy_fail(c, "%s[%zu]: path \"%s\" is not normalised (no \".\", \"..\", "
			    "duplicate or trailing slashes)", name, i, policy_quote(s, q));
	if (c->p->n_paths == c->cap_paths) {
		struct kw_path_rule *n = kw_array_grow(c->p->paths, &c->cap_paths, sizeof(*n), 16);

		if (!n)
			return -ENOMEM;
		c->p->paths = n;
	}
	r = &c->p->paths[c->p->n_paths++];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->index = (uint16_t)i;
	r->len = (uint16_t)len;
	memcpy(r->path, s, len + 1);
	if (out)
		*out = r;
	return 0;
}

static int parse_path_list(struct pctx *c, json_t *obj, const char *key, const char *name,
			   uint8_t kind)
{
	json_t *a, *v;
	size_t i;
	int ret;

	a = policy_get_array(c, obj, key, name, KW_POLICY_MAX_PATH_RULES, &ret);
	if (ret || !a)
		return ret;
	json_array_foreach(a, i, v) {
		const char *s = policy_item_string(c, v, name, i, &ret);

		if (!s)
			return ret;
		ret = add_path_rule(c, s, name, i, kind, NULL);
		if (ret)
			return ret;
	}
	return 0;
}

int kw_sha256_parse(const char *s, uint8_t out[KW_SHA256_LEN])
{
	size_t i;

	if (strncmp(s, KW_SHA256_PREFIX, strlen(KW_SHA256_PREFIX)))
		return -EINVAL;
	s += strlen(KW_SHA256_PREFIX);
	for (i = 0; i < 2 * KW_SHA256_LEN; i++) {
		char ch = s[i];
		int v;

		if (ch >= '0' && ch <= '9')
			v = ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			v = ch - 'a' + 10;
		else
			return -EINVAL;
		if (i % 2 == 0)
			out[i / 2] = (uint8_t)(v << 4);
		else
			out[i / 2] |= (uint8_t)v;
	}
	return s[i] ? -EINVAL : 0;
}

/* exec.allow: paths as in the other lists, plus "sha256:<hex>" (that build,
 * wherever it is) and {"path": P, "sha256": "sha256:<hex>"} (only that build
 * at P). Any digest makes the policy need exec.digest. */
static int parse_exec_allow(struct pctx *c, json_t *exec)
{
	static const char *const keys[] = { "path", "sha256", NULL };
	const char *name = "exec.allow";
	json_t *a, *v;
	size_t i;
	int ret;
	char q[80], where[48];

	a = policy_get_array(c, exec, "allow", name, KW_POLICY_MAX_PATH_RULES, &ret);
	if (ret || !a)
		return ret;
	c->p->exec_digests = calloc(json_array_size(a) + 1, sizeof(*c->p->exec_digests));
	if (!c->p->exec_digests)
		return -ENOMEM;
	json_array_foreach(a, i, v) {
		struct kw_path_rule *r;
		const char *s, *d;
		json_t *jp, *jd;

		if (json_is_string(v) && !strncmp(json_string_value(v), KW_SHA256_PREFIX,
						   strlen(KW_SHA256_PREFIX))) {
			struct kw_exec_digest *e;

			s = policy_item_string(c, v, name, i, &ret);
			if (!s)
				return ret;
			e = &c->p->exec_digests[c->p->n_exec_digests];
			if (kw_sha256_parse(s, e->sha256))
				return policy_fail(c, "%s[%zu]: \"%s\" is not sha256: and 64 lowercase hex "
					    "digits", name, i, policy_quote(s, q));
			e->index = (uint16_t)i;
			c->p->n_exec_digests++;
			c->p->classes |= KW_CLASS_EXEC_DIGEST;
			continue;
		}
		if (!json_is_object(v)) {
			s = policy_item_string(c, v, name, i, &ret);
			if (!s)
				return ret;
			ret = add_path_rule(c, s, name, i, KW_PATH_EXEC, NULL);
			if (ret)
				return ret;
			continue;
		}
		snprintf(where, sizeof(where), "%s[%zu]", name, i);
		ret = policy_check_keys(c, v, where, keys);
		if (ret)
			return ret;
		jp = json_object_get(v, "path");
		jd = json_object_get(v, "sha256");
		if (!jp || !jd)
			return policy_fail(c, "%s: needs both \"path\" and \"sha256\"", where);
		if (!json_is_string(jp) || !json_is_string(jd) ||
		    strlen(json_string_value(jp)) != json_string_length(jp))
			return policy_fail(c, "%s: \"path\" and \"sha256\" must be strings", where);
		s = json_string_value(jp);
		d = json_string_value(jd);
		ret = add_path_rule(c, s, name, i, KW_PATH_EXEC, &r);
		if (ret)
			return ret;
		if (strlen(d) != json_string_length(jd) || kw_sha256_parse(d, r->sha256))
			return policy_fail(c, "%s.sha256: \"%s\" is not sha256: and 64 lowercase hex digits",
				    where, policy_quote(d, q));
		r->pinned = true;
		c->p->classes |= KW_CLASS_EXEC_DIGEST;
	}
	/* a path pinned to builds cannot also be allowed for any build */
	for (i = 0; i < c->p->n_paths; i++) {
		const struct kw_path_rule *x = &c->p->paths[i];
		size_t j;

		for (j = 0; x->kind == KW_PATH_EXEC && x->pinned && j < c->p->n_paths; j++) {
			const struct kw_path_rule *y = &c->p->paths[j];

			if (y->kind == KW_PATH_EXEC && !y->pinned && !strcmp(x->path, y->path))
				return policy_fail(c, "%s[%u]: \"%s\" is also allowed for any build by "
					    "%s[%u]", name, x->index, policy_quote(x->path, q), name, y->index);
		}
	}
	return 0;
}

int policy_parse_lsm_sections(struct pctx *c, json_t *root)
{
	static const char *const fs_keys[] = { "read", "write", "deny", NULL };
	static const char *const exec_keys[] = { "allow", NULL };
	json_t *s, *net;
	int ret;

	ret = policy_get_section(c, root, "fs", KW_CLASS_FS, fs_keys, &s);
	if (!ret && s) {
		ret = parse_path_list(c, s, "read", "fs.read", KW_PATH_READ);
		if (!ret)
			ret = parse_path_list(c, s, "write", "fs.write", KW_PATH_WRITE);
		if (!ret)
			ret = parse_path_list(c, s, "deny", "fs.deny", KW_PATH_DENY);
	}
	if (!ret)
		ret = policy_get_section(c, root, "exec", KW_CLASS_EXEC, exec_keys, &s);
	if (!ret && s)
		ret = parse_exec_allow(c, s);
	if (!ret)
		ret = policy_get_switch_section(c, root, "mount", "allow", KW_CLASS_MOUNT,
					 &c->p->mount_allow);
	if (!ret)
		ret = policy_get_switch_section(c, root, "bpf", "allow", KW_CLASS_BPF, &c->p->bpf_allow);
	if (!ret)
		ret = policy_get_switch_section(c, root, "proc", "signal_outside", KW_CLASS_PROC,
					 &c->p->signal_outside);
	net = json_object_get(root, "net");
	if (!ret && net && json_object_get(net, "unix")) {
		c->p->classes |= KW_CLASS_UNIX;
		ret = parse_path_list(c, net, "unix", "net.unix", KW_PATH_UNIX);
	}
	return ret;
}
