/* SPDX-License-Identifier: Apache-2.0 */
/* The session summary an attestation states (summary.h). Only entries the
 * log check already found canonical reach here; each is still parsed as
 * untrusted text, and only the members named below are copied. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jcs/jcs.h"
#include "summary.h"

int attest_summary_init(struct attest_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->executables = json_array();
	s->network = json_array();
	s->dns_names = json_array();
	s->denials = json_array();
	s->seen = json_object();
	if (!s->executables || !s->network || !s->dns_names || !s->denials || !s->seen) {
		attest_summary_free(s);
		return -ENOMEM;
	}
	return 0;
}

void attest_summary_free(struct attest_summary *s)
{
	json_decref(s->open);
	json_decref(s->close);
	json_decref(s->executables);
	json_decref(s->network);
	json_decref(s->dns_names);
	json_decref(s->denials);
	json_decref(s->seen);
	memset(s, 0, sizeof(*s));
}

static const char *str(const json_t *e, const char *k)
{
	return json_string_value(json_object_get(e, k));
}

/* Copies the members of e named in keys that it has. */
static json_t *pick(const json_t *e, const char *const *keys)
{
	json_t *o = json_object(), *v;

	for (; o && *keys; keys++)
		if ((v = json_object_get(e, *keys)) && json_object_set(o, *keys, v)) {
			json_decref(o);
			return NULL;
		}
	return o;
}

/* Appends item to list unless key was seen; steals item. */
static int add_once(struct attest_summary *s, json_t *list, const char *key, json_t *item)
{
	if (!item)
		return -ENOMEM;
	if (json_object_get(s->seen, key)) {
		json_decref(item);
		return 0;
	}
	if (json_array_size(list) >= ATTEST_MAX_ITEMS) {
		s->truncated = true;
		json_decref(item);
		return 0;
	}
	if (json_object_set_new(s->seen, key, json_true()) || json_array_append_new(list, item))
		return -ENOMEM;
	return 0;
}

static int add_exec(struct attest_summary *s, const json_t *e)
{
	static const char *const keys[] = { "path", "digest", "digest_unavailable",
					    "verity_digest", "interpreter", NULL };
	char key[1200];
	const char *d = str(e, "digest");

	if (!d)
		s->exec_undigested = true;
	snprintf(key, sizeof(key), "x\n%s\n%s", str(e, "path") ?: "", d ?: "");
	return add_once(s, s->executables, key, pick(e, keys));
}

static int add_dest(struct attest_summary *s, const json_t *e)
{
	static const char *const keys[] = { "host", "port", "proto", "via", NULL };
	char key[512];

	snprintf(key, sizeof(key), "n\n%s\n%lld\n%s\n%s", str(e, "host") ?: "",
		 (long long)json_integer_value(json_object_get(e, "port")), str(e, "proto") ?: "",
		 str(e, "via") ?: "");
	return add_once(s, s->network, key, pick(e, keys));
}

static int add_name(struct attest_summary *s, const json_t *e)
{
	const char *name = str(e, "name");
	char key[600];

	if (!name)
		return 0;
	snprintf(key, sizeof(key), "d\n%s", name);
	return add_once(s, s->dns_names, key, json_string(name));
}

static int add_denial(struct attest_summary *s, const json_t *e)
{
	/* What was refused, never who asked (pid, uid, comm stay in the log). */
	static const char *const keys[] = { "seq", "tool", "rule", "enforced", "host", "port",
					    "proto", "via", "path", "access", "name", "qtype",
					    "digest", "digest_unavailable", "dev", "family",
					    "type", "protocol", "target_pid", "signal", "cmd", NULL };

	json_t *d;

	s->n_denials++;
	if (json_array_size(s->denials) >= ATTEST_MAX_DENIALS) {
		s->truncated = true;
		return 0;
	}
	d = pick(e, keys);
	return d && !json_array_append_new(s->denials, d) ? 0 : -ENOMEM;
}

static int take(json_t **slot, json_t *e)
{
	if (*slot)
		return -EBADMSG; /* the log check refuses a second one too */
	*slot = json_incref(e);
	return 0;
}

static int on_entry(struct attest_summary *s, json_t *e)
{
	const char *tool = str(e, "tool"), *dec = str(e, "decision");
	bool permit = dec && !strcmp(dec, "permit");

	if (!tool)
		return 0;
	if (!strcmp(tool, "kwitness.open"))
		return take(&s->open, e);
	if (!strcmp(tool, "kwitness.close"))
		return take(&s->close, e);
	if (dec && !strcmp(dec, "deny"))
		return add_denial(s, e);
	if (!permit)
		return 0;
	if (!strcmp(tool, "fs.exec"))
		return add_exec(s, e);
	if (!strcmp(tool, "net.connect") || !strcmp(tool, "net.send"))
		return add_dest(s, e);
	if (!strcmp(tool, "dns.query"))
		return add_name(s, e);
	return 0;
}

int attest_summary_entry(void *ctx, const char *line, size_t len)
{
	struct attest_summary *s = ctx;
	json_t *e = jcs_parse(line, len, NULL);
	int ret;

	if (!json_is_object(e)) {
		json_decref(e);
		return s->error = -EBADMSG;
	}
	ret = on_entry(s, e);
	json_decref(e);
	return s->error = ret;
}
