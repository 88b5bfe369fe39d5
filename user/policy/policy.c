// SPDX-License-Identifier: Apache-2.0
/* Policy bundles (docs/policy.md): strict JSON -> struct kw_policy. Bundles
 * are hostile input: unknown keys are refused, every list is bounded, and
 * every error names the field it is about. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bpf.h>

#include "lib/buf.h"
#include "lib/messages.h"
#include "jcs/jcs.h"
#include "policy/net_compile.h"
#include "kwitness/abi/net_match.h"
#include "policy/policy.h"
#include "policy_parse.h"

int policy_fail(struct pctx *c, const char *fmt, ...)
{
	va_list ap;

	if (c->err && c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A hostile string made safe to quote in an error: printable ASCII only,
 * at most 64 characters. */
const char *policy_quote(const char *s, char buf[80])
{
	size_t i, n = 0;

	for (i = 0; s[i] && n < 64; i++)
		buf[n++] = (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"') ? s[i] : '?';
	if (s[i])
		n = (size_t)(stpcpy(buf + n, "...") - buf);
	buf[n] = '\0';
	return buf;
}

/* Refuses members of obj not in allowed (NULL-terminated). */
int policy_check_keys(struct pctx *c, json_t *obj, const char *where, const char *const *allowed)
{
	const char *key;
	json_t *v;
	char q[80];

	json_object_foreach(obj, key, v) {
		const char *const *a;
		int ok = 0;

		for (a = allowed; *a; a++)
			if (!strcmp(*a, key))
				ok = 1;
		if (!ok) {
			char valid[400];

			kw_valid_names(valid, sizeof(valid), key, allowed);
			if (where)
				return policy_fail(c, "%s.%s: unknown key (%s)", where, policy_quote(key, q),
						   valid);
			return policy_fail(c, "%s: unknown key (%s)", policy_quote(key, q), valid);
		}
	}
	return 0;
}

/* The string value of a list item, refusing embedded NULs. */
const char *policy_item_string(struct pctx *c, json_t *v, const char *list, size_t i, int *ret)
{
	const char *s;

	*ret = 0;
	if (!json_is_string(v)) {
		*ret = policy_fail(c, "%s[%zu]: must be a string", list, i);
		return NULL;
	}
	s = json_string_value(v);
	if (strlen(s) != json_string_length(v)) {
		*ret = policy_fail(c, "%s[%zu]: contains a NUL character", list, i);
		return NULL;
	}
	return s;
}

json_t *policy_get_array(struct pctx *c, json_t *obj, const char *key, const char *name,
			 size_t max, int *ret)
{
	json_t *a = json_object_get(obj, key);

	*ret = 0;
	if (!a)
		return NULL;
	if (!json_is_array(a)) {
		*ret = policy_fail(c, "%s: must be an array", name);
		return NULL;
	}
	if (json_array_size(a) > max) {
		*ret = policy_fail(c, "%s: more than %zu rules", name, max);
		return NULL;
	}
	return a;
}

int policy_get_bool(struct pctx *c, json_t *obj, const char *key, const char *name, bool *out)
{
	json_t *v = json_object_get(obj, key);

	*out = false;
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return policy_fail(c, "%s: must be true or false", name);
	*out = json_is_true(v);
	return 0;
}

/* A section of the bundle: absent (*out NULL), or an object of the allowed
 * keys; being there makes the sessions govern class (0: its rules say). */
int policy_get_section(struct pctx *c, json_t *root, const char *key, uint32_t class,
		       const char *const *allowed, json_t **out)
{
	json_t *v = json_object_get(root, key);

	*out = v;
	if (!v)
		return 0;
	if (!json_is_object(v))
		return policy_fail(c, "%s: must be an object", key);
	c->p->classes |= class;
	return policy_check_keys(c, v, key, allowed);
}

/* A section that is one switch, such as "mount": { "allow": true }. */
int policy_get_switch_section(struct pctx *c, json_t *root, const char *section,
			      const char *key, uint32_t class, bool *out)
{
	const char *const allowed[] = { key, NULL };
	char name[64];
	json_t *s;
	int ret = policy_get_section(c, root, section, class, allowed, &s);

	if (ret || !s)
		return ret;
	snprintf(name, sizeof(name), "%s.%s", section, key);
	return policy_get_bool(c, s, key, name, out);
}

/* Decimal without sign or leading zeros (except "0"), at most max. */
int policy_parse_uint(const char *s, size_t n, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;
	size_t i;

	if (n == 0 || n > 10 || (n > 1 && s[0] == '0'))
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

/* ---- top level ---- */

static int parse_enum(struct pctx *c, json_t *root, const char *key, const char *const *names,
		      int dflt, uint8_t *out)
{
	json_t *v = json_object_get(root, key);
	const char *s;
	char q[80];
	int i;

	if (!v) {
		if (dflt < 0)
			return policy_fail(c, "%s: missing", key);
		*out = (uint8_t)dflt;
		return 0;
	}
	if (!json_is_string(v))
		return policy_fail(c, "%s: must be a string", key);
	s = json_string_value(v);
	for (i = 0; names[i]; i++)
		if (!strcmp(names[i], s) && strlen(s) == json_string_length(v)) {
			*out = (uint8_t)i;
			return 0;
		}
	{
		char valid[200];

		kw_valid_names(valid, sizeof(valid), s, names);
		return policy_fail(c, "%s: unknown value \"%s\" (%s)", key, policy_quote(s, q), valid);
	}
}

static int parse_root(struct pctx *c, json_t *root)
{
	static const char *const keys[] = { "kwitness_policy", "mode", "record",
					    "on_record_failure", "net", "dev", "sysctl", "fs",
					    "exec", "mount", "proc", "bpf", NULL };
	/* indices are the enum values */
	static const char *const modes[] = { "enforce", "advisory", "silent", NULL };
	static const char *const records[] = { "all", "deny", NULL };
	static const char *const failures[] = { "deny", "allow", NULL };
	json_t *v;
	int ret;

	if (!json_is_object(root))
		return policy_fail(c, "bundle: must be a JSON object");
	ret = policy_check_keys(c, root, NULL, keys);
	if (ret)
		return ret;
	v = json_object_get(root, "kwitness_policy");
	if (!v)
		return policy_fail(c, "kwitness_policy: missing");
	if (!json_is_integer(v) || json_integer_value(v) != 1)
		return policy_fail(c, "kwitness_policy: must be 1");
	ret = parse_enum(c, root, "mode", modes, -1, &c->p->mode);
	if (!ret)
		ret = parse_enum(c, root, "record", records, KW_RECORD_ALL, &c->p->record);
	if (!ret)
		ret = parse_enum(c, root, "on_record_failure", failures, KW_ONFAIL_DENY,
				 &c->p->on_failure);
	if (!ret)
		ret = policy_parse_net(c, root);
	if (!ret)
		ret = policy_parse_dev(c, root);
	if (!ret)
		ret = policy_get_switch_section(c, root, "sysctl", "write", KW_CLASS_SYSCTL,
					 &c->p->sysctl_write);
	if (!ret)
		ret = policy_parse_lsm_sections(c, root);
	return ret;
}

int kw_policy_parse(const char *bundle, size_t len, struct kw_policy **out, char *err,
		    size_t errlen)
{
	struct pctx c = { .err = err, .errlen = errlen };
	struct jcs_error je;
	struct kw_net_entry *ents;
	size_t n;
	json_t *root;
	int ret;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (len > KW_POLICY_MAX_BYTES)
		return policy_fail(&c, "bundle: larger than %d bytes", KW_POLICY_MAX_BYTES);
	memset(&je, 0, sizeof(je));
	root = jcs_parse(bundle, len, &je);
	if (!root)
		return policy_fail(&c, "bundle: not strict JSON at line %zu column %zu: %s", je.line,
			    je.column, je.message);
	c.p = calloc(1, sizeof(*c.p));
	if (!c.p) {
		json_decref(root);
		return -ENOMEM;
	}
	c.p->dns.min_ttl = KW_DNS_DEFAULT_MIN_TTL;
	c.p->dns.max_ttl = KW_DNS_DEFAULT_MAX_TTL;
	ret = parse_root(&c, root);
	json_decref(root);
	/* every prefix must fit the kernel's per-prefix rule array */
	if (!ret) {
		ret = kw_net_compile(c.p, 0, &ents, &n, err, errlen);
		if (!ret)
			free(ents);
		else if (ret == -E2BIG)
			ret = -EINVAL;
	}
	if (ret == -ENOMEM)
		policy_fail(&c, "out of memory");
	if (ret) {
		kw_policy_free(c.p);
		return ret;
	}
	*out = c.p;
	return 0;
}

void kw_policy_free(struct kw_policy *p)
{
	if (!p)
		return;
	free(p->net);
	free(p->names);
	free(p->dev);
	free(p->paths);
	free(p->exec_digests);
	free(p);
}

const char *kw_mode_name(uint8_t mode)
{
	switch (mode) {
	case KW_MODE_ENFORCE: return "enforce";
	case KW_MODE_ADVISORY: return "advisory";
	case KW_MODE_SILENT: return "silent";
	}
	return "unknown";
}

const char *kw_class_name(uint32_t class_bit)
{
#define NAME_(id, bit, name, kernel, probe) \
	if (class_bit == KW_CLASS_##id)     \
		return name;
	KW_CLASS_TABLE(NAME_)
#undef NAME_
	return "unknown";
}

static const char *path_list_name(unsigned kind)
{
	switch (kind) {
	case KW_PATH_READ: return "fs.read";
	case KW_PATH_WRITE: return "fs.write";
	case KW_PATH_DENY: return "fs.deny";
	case KW_PATH_EXEC: return "exec.allow";
	case KW_PATH_UNIX: return "net.unix";
	}
	return NULL;
}

/* "name[index]" or "name" + suffix into buf, bounded (snprintf is slow on the
 * collector's per-event path). */
static const char *rule_text(char *buf, size_t len, const char *name, int index,
			     const char *suffix)
{
	char tmp[12];
	size_t n = 0, k = 0;
	unsigned v;

	if (!len)
		return buf;
	while (*name && n + 1 < len)
		buf[n++] = *name++;
	if (index >= 0) {
		v = (unsigned)index;
		do {
			tmp[k++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		if (n + k + 3 <= len) {
			buf[n++] = '[';
			while (k)
				buf[n++] = tmp[--k];
			buf[n++] = ']';
		}
	}
	while (suffix && *suffix && n + 1 < len)
		buf[n++] = *suffix++;
	buf[n] = '\0';
	return buf;
}

/* How each event kind's rules are named (KW_EVENT_TABLE's rules, section
 * and single columns). */
struct kw_rule_naming {
	enum kw_event_rules rules; /* 0: no such kind */
	const char *section, *single;
};
#define KW_RULE_NAMING_(id, value, record, format, tool, rules, section, single) \
	[value] = { KW_EVR_##rules, section, single },
static const struct kw_rule_naming kw_rule_namings[KW_EV_LIMIT] = {
	KW_EVENT_TABLE(KW_RULE_NAMING_)
};
#undef KW_RULE_NAMING_

const char *kw_rule_name(uint16_t event_kind, uint16_t rule, char *buf, size_t len)
{
	static const struct kw_rule_naming unknown = { KW_EVR_PATH, "unknown", "" };
	const struct kw_rule_naming *k = event_kind < KW_EV_LIMIT ? &kw_rule_namings[event_kind] :
								    &unknown;
	const char *plist;

	if (!k->rules)
		k = &unknown;
	if (k->rules == KW_EVR_FIXED)
		return rule_text(buf, len, k->section, -1, NULL);
	if (k->rules == KW_EVR_UNTRACKED)
		return rule_text(buf, len, k->section, -1,
				 rule == KW_UNTRACKED_QUOTA ? ".session_quota" :
				 rule == KW_UNTRACKED_MAP_FULL ? ".table_full" : NULL);
	if (rule == KW_RULE_DEFAULT)
		return rule_text(buf, len, k->section, -1, ":default");
	if (rule == KW_RULE_RESOLVER_GUARD && k->rules == KW_EVR_LIST && event_kind != KW_EV_DEV)
		return rule_text(buf, len, "net.dns", -1, ":guard");
	if (k->rules == KW_EVR_LIST)
		return rule_text(buf, len, k->section, rule, NULL);
	if (k->rules == KW_EVR_EXEC && KW_RULE_PATH_KIND(rule) == KW_RULE_KIND_DIGEST_MISMATCH)
		return rule_text(buf, len, "exec.allow", KW_RULE_PATH_INDEX(rule), ":digest_mismatch");
	plist = path_list_name(KW_RULE_PATH_KIND(rule));
	if (plist)
		return rule_text(buf, len, plist, KW_RULE_PATH_INDEX(rule), NULL);
	if (k->single[0])
		return rule_text(buf, len, k->single, -1, NULL);
	return rule_text(buf, len, k->section, rule, NULL);
}
