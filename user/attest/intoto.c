/* SPDX-License-Identifier: Apache-2.0 */
/* in-toto statements and the kwitness session predicate (intoto.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "trace/level.h"
#include "intoto.h"

/* "sha256:<hex>" -> "<hex>", NULL for any other algorithm. */
static const char *sha256_hex(const char *d)
{
	return d && !strncmp(d, "sha256:", 7) && kw_digest_valid(d) ? d + 7 : NULL;
}

json_t *intoto_statement(const struct intoto_subject *subj, size_t n, json_t *predicate)
{
	json_t *list = json_array(), *st = NULL;

	for (size_t i = 0; list && i < n; i++) {
		const char *hex = sha256_hex(subj[i].digest);

		if (!hex || json_array_append_new(list, json_pack("{s:s, s:{s:s}}", "name",
								  subj[i].name, "digest",
								  "sha256", hex)))
			goto out;
	}
	if (list && predicate)
		st = json_pack("{s:s, s:O, s:s, s:O}", "_type", INTOTO_STATEMENT_TYPE, "subject",
			       list, "predicateType", KW_PREDICATE_SESSION_V1, "predicate",
			       predicate);
out:
	json_decref(list);
	json_decref(predicate);
	return st;
}

static bool hex64(const char *s)
{
	if (!s || strlen(s) != 64)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

int intoto_check(const json_t *st, char *why, size_t whylen)
{
	const json_t *subj = json_object_get(st, "subject"), *s;
	const char *type = json_string_value(json_object_get(st, "_type"));
	const char *pt = json_string_value(json_object_get(st, "predicateType"));
	size_t i;

	if (!json_is_object(st) || !type || strcmp(type, INTOTO_STATEMENT_TYPE)) {
		snprintf(why, whylen, "the payload is not an in-toto Statement v1");
		return -EBADMSG;
	}
	if (!pt || strcmp(pt, KW_PREDICATE_SESSION_V1) ||
	    !json_is_object(json_object_get(st, "predicate"))) {
		snprintf(why, whylen, "the predicate is not a %s object", KW_PREDICATE_SESSION_V1);
		return -EBADMSG;
	}
	if (!json_is_array(subj) || !json_array_size(subj) ||
	    json_array_size(subj) > INTOTO_MAX_SUBJECTS) {
		snprintf(why, whylen, "the statement has no subject list of 1 to %d",
			 INTOTO_MAX_SUBJECTS);
		return -EBADMSG;
	}
	json_array_foreach(subj, i, s) {
		if (!json_is_string(json_object_get(s, "name")) ||
		    !hex64(json_string_value(json_object_get(json_object_get(s, "digest"), "sha256")))) {
			snprintf(why, whylen, "subject %zu has no name or no sha256 digest", i);
			return -EBADMSG;
		}
	}
	return 0;
}

const json_t *intoto_subject_with(const json_t *st, const char *digest)
{
	const char *hex = sha256_hex(digest);
	const json_t *s;
	size_t i;

	json_array_foreach(json_object_get(st, "subject"), i, s) {
		const char *h = json_string_value(json_object_get(json_object_get(s, "digest"), "sha256"));

		if (hex && h && !strcmp(h, hex))
			return s;
	}
	return NULL;
}

/* True when the comma-separated list has item. */
static bool listed(const char *list, const char *item)
{
	size_t n = strlen(item);

	for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, item, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/* Whether a list is every such event of the session: the class was
 * governed, permits were recorded ("record": "all") and the log is complete;
 * and whether each program listed has the kernel's digest. */
static json_t *coverage(const struct attest_summary *s, const struct verify_verdict *v)
{
	const char *hooks = json_string_value(json_object_get(s->open, "hooks"));
	const char *rec = json_string_value(json_object_get(s->open, "record"));
	bool all = rec && !strcmp(rec, "all") && v->completeness == VERIFY_COMPLETE &&
		   !s->truncated;
	bool exec = all && listed(hooks, "exec");

	return json_pack("{s:b, s:b, s:b}", "executables", exec, "executable_digests",
			 exec && !s->exec_undigested, "network",
			 all && listed(hooks, "net.connect") && listed(hooks, "net.send"));
}

static json_t *opened(const json_t *open, const char *k)
{
	json_t *v = json_object_get(open, k);

	return v ? json_incref(v) : json_null();
}

json_t *attest_predicate(const struct attest_summary *s, const struct verify_verdict *v,
			 const struct attest_record *r)
{
	const json_t *pol = json_object_get(r->rec, "policy");
	const char *hex = sha256_hex(r->digest);

	if (!hex)
		return NULL;
	return json_pack(
		"{s:{s:s, s:{s:s}, s:s}, s:o, s:o, s:o, s:{s:O*, s:O*, s:o}, s:o, s:o,"
		" s:{s:b, s:s}, s:{s:s, s:I}, s:i, s:o, s:O, s:O, s:O, s:O, s:I, s:b}",
		"record", "name", r->name, "digest", "sha256", hex, "signer", r->signer,
		"session", opened(s->open, "session"),
		"sandbox_id", opened(s->open, "sandbox_id"),
		"machine_id", opened(s->open, "machine_id"),
		"policy", "bundle_hash", json_object_get(pol, "bundle_hash"), "enforcement_mode",
		json_object_get(pol, "enforcement_mode"), "record", opened(s->open, "record"),
		"hooks", opened(s->open, "hooks"),
		"image_digest", opened(s->open, "image_digest"),
		"completeness", "complete", v->completeness == VERIFY_COMPLETE, "why",
		v->completeness == VERIFY_COMPLETE ? "" : v->completeness_text,
		"transcript", "hash", v->transcript_hash, "entries", (json_int_t)v->log_entries,
		"level", kw_level_number(v->level), "coverage", coverage(s, v),
		"executables", s->executables, "network", s->network, "dns_names", s->dns_names,
		"denials", s->denials, "denials_total", (json_int_t)s->n_denials,
		"truncated", s->truncated);
}
