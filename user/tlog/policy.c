/* SPDX-License-Identifier: Apache-2.0 */
/* tlog-policy files: parsing and evaluating the quorum. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tlog/policy.h"

#define WORDS_MAX (TLOG_POLICY_MAX + 4)

static int fail(char *err, size_t cap, unsigned line, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, cap, "line %u: ", line);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < cap)
		vsnprintf(err + n, cap - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Splits on spaces and tabs; words point into line (NUL-terminated there). */
static size_t split(char *line, char **w)
{
	size_t n = 0;

	for (char *p = line; *p;) {
		while (*p == ' ' || *p == '\t')
			*p++ = '\0';
		if (!*p)
			break;
		if (n == WORDS_MAX)
			return WORDS_MAX + 1;
		w[n++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
	}
	return n;
}

/* Index of a defined witness or group name, -1 when undefined. */
static int lookup(const struct tlog_policy *p, const char *name)
{
	for (size_t i = 0; i < p->nwitnesses; i++)
		if (!strcmp(p->witnesses[i].name, name))
			return (int)i;
	for (size_t i = 0; i < p->ngroups; i++)
		if (!strcmp(p->groups[i].name, name))
			return (int)(TLOG_POLICY_MAX + i);
	return -1;
}

static bool same_key(const struct tlog_policy *p, const uint8_t pub[32])
{
	for (size_t i = 0; i < p->nlogs; i++)
		if (!memcmp(p->logs[i].pub, pub, 32))
			return true;
	for (size_t i = 0; i < p->nwitnesses; i++)
		if (!memcmp(p->witnesses[i].key.pub, pub, 32))
			return true;
	return false;
}

static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < TLOG_NAME_MAX && strcmp(s, "none");
}

static int parse_line(struct tlog_policy *p, char **w, size_t nw, unsigned ln, char *err,
		      size_t cap)
{
	if (!strcmp(w[0], "log")) {
		struct tlog_key k;

		if (nw < 2 || nw > 3)
			return fail(err, cap, ln, "log takes a vkey and an optional URL");
		if (p->nlogs == TLOG_POLICY_MAX)
			return fail(err, cap, ln, "more than %d logs", TLOG_POLICY_MAX);
		if (tlog_key_parse_vkey(w[1], strlen(w[1]), &k) || k.type != TLOG_SIG_ED25519) {
			tlog_key_clear(&k); /* a cosignature vkey parses, and holds a key */
			return fail(err, cap, ln, "not an Ed25519 log vkey: %.60s", w[1]);
		}
		if (same_key(p, k.pub)) {
			tlog_key_clear(&k);
			return fail(err, cap, ln, "duplicate key");
		}
		p->logs[p->nlogs++] = k;
		return 0;
	}
	if (!strcmp(w[0], "witness")) {
		struct tlog_policy_witness *wt;

		if (nw < 3 || nw > 4)
			return fail(err, cap, ln, "witness takes a name, a vkey and an optional URL");
		if (p->nwitnesses == TLOG_POLICY_MAX)
			return fail(err, cap, ln, "more than %d witnesses", TLOG_POLICY_MAX);
		if (!name_ok(w[1]) || lookup(p, w[1]) >= 0)
			return fail(err, cap, ln, "bad or duplicate name: %.60s", w[1]);
		wt = &p->witnesses[p->nwitnesses];
		if (tlog_key_parse_vkey(w[2], strlen(w[2]), &wt->key) ||
		    wt->key.type != TLOG_SIG_COSIGNATURE) {
			tlog_key_clear(&wt->key);
			return fail(err, cap, ln, "not a cosignature (type 0x04) vkey: %.60s", w[2]);
		}
		if (same_key(p, wt->key.pub)) {
			tlog_key_clear(&wt->key);
			return fail(err, cap, ln, "duplicate key");
		}
		snprintf(wt->name, sizeof(wt->name), "%s", w[1]);
		p->nwitnesses++;
		return 0;
	}
	if (!strcmp(w[0], "group")) {
		struct tlog_policy_group *g;
		size_t members = nw - 3;

		if (nw < 4)
			return fail(err, cap, ln, "group takes a name, all|any|k and members");
		if (p->ngroups == TLOG_POLICY_MAX || members > TLOG_POLICY_MAX)
			return fail(err, cap, ln, "too many groups or members");
		if (!name_ok(w[1]) || lookup(p, w[1]) >= 0)
			return fail(err, cap, ln, "bad or duplicate name: %.60s", w[1]);
		g = &p->groups[p->ngroups];
		memset(g, 0, sizeof(*g));
		if (!strcmp(w[2], "all")) {
			g->k = (unsigned)members;
		} else if (!strcmp(w[2], "any")) {
			g->k = 1;
		} else {
			uint64_t k;

			if (tlog_parse_u64(w[2], strlen(w[2]), &k) || k < 1 || k > members)
				return fail(err, cap, ln, "threshold must be all, any or 1..%zu", members);
			g->k = (unsigned)k;
		}
		for (size_t i = 0; i < members; i++) {
			int m = lookup(p, w[3 + i]);

			if (m < 0)
				return fail(err, cap, ln, "undefined member: %.60s", w[3 + i]);
			for (size_t j = 0; j < g->n; j++)
				if (g->members[j] == (unsigned)m)
					return fail(err, cap, ln, "member listed twice: %.60s", w[3 + i]);
			g->members[g->n++] = (unsigned)m;
		}
		snprintf(g->name, sizeof(g->name), "%s", w[1]);
		p->ngroups++;
		return 0;
	}
	if (!strcmp(w[0], "quorum")) {
		if (nw != 2)
			return fail(err, cap, ln, "quorum takes one name");
		if (p->has_quorum)
			return fail(err, cap, ln, "a second quorum line");
		if (!strcmp(w[1], "none")) {
			p->quorum = -1;
		} else {
			p->quorum = lookup(p, w[1]);
			if (p->quorum < 0)
				return fail(err, cap, ln, "undefined quorum: %.60s", w[1]);
		}
		p->has_quorum = 1;
		return 0;
	}
	return fail(err, cap, ln, "unknown keyword: %.40s", w[0]);
}

int tlog_policy_parse(const char *text, size_t len, struct tlog_policy *p, char *err,
		      size_t errcap)
{
	char line[4096], *w[WORDS_MAX + 1];
	unsigned ln = 0;
	int ret = 0;

	memset(p, 0, sizeof(*p));
	for (size_t pos = 0; pos < len && !ret;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - (text + pos)) : len - pos;
		size_t nw;

		ln++;
		if (ll >= sizeof(line)) {
			ret = fail(err, errcap, ln, "line too long");
			break;
		}
		memcpy(line, text + pos, ll);
		line[ll] = '\0';
		pos += ll + 1;
		for (size_t i = 0; i < ll; i++) {
			unsigned char c = (unsigned char)line[i];

			if ((c < 0x20 && c != '\t') || c == 0x7f) {
				ret = fail(err, errcap, ln, "control character");
				break;
			}
		}
		if (ret)
			break;
		nw = split(line, w);
		if (nw == 0 || w[0][0] == '#')
			continue;
		if (nw > WORDS_MAX) {
			ret = fail(err, errcap, ln, "too many words");
			break;
		}
		ret = parse_line(p, w, nw, ln, err, errcap);
	}
	if (!ret && !p->has_quorum)
		ret = fail(err, errcap, ln, "no quorum line");
	if (ret)
		tlog_policy_free(p);
	return ret;
}

void tlog_policy_free(struct tlog_policy *p)
{
	for (size_t i = 0; i < p->nlogs; i++)
		tlog_key_clear(&p->logs[i]);
	for (size_t i = 0; i < p->nwitnesses; i++)
		tlog_key_clear(&p->witnesses[i].key);
	memset(p, 0, sizeof(*p));
}

/* Groups only name earlier definitions, so one pass in order settles them. */
static bool witnessed(unsigned m, const bool *cosig, const bool *group_ok)
{
	return m < TLOG_POLICY_MAX ? cosig[m] : group_ok[m - TLOG_POLICY_MAX];
}

enum tlog_policy_verdict tlog_policy_check(const struct tlog_policy *p, const struct tlog_note *n,
					   const struct tlog_checkpoint *cp, size_t *cosigned)
{
	bool cosig[TLOG_POLICY_MAX] = { false }, group_ok[TLOG_POLICY_MAX] = { false };
	bool known = false, signed_ok = false;

	*cosigned = 0;
	for (size_t i = 0; i < p->nlogs; i++) {
		if (strcmp(p->logs[i].name, cp->origin))
			continue;
		known = true;
		if (tlog_note_verify(n, &p->logs[i], NULL) == 0)
			signed_ok = true;
	}
	if (!known)
		return TLOG_POLICY_UNKNOWN_LOG;
	if (!signed_ok)
		return TLOG_POLICY_LOG_SIGNATURE;
	for (size_t i = 0; i < p->nwitnesses; i++)
		if (tlog_note_verify(n, &p->witnesses[i].key, NULL) == 0) {
			cosig[i] = true;
			(*cosigned)++;
		}
	for (size_t g = 0; g < p->ngroups; g++) {
		unsigned have = 0;

		for (size_t j = 0; j < p->groups[g].n; j++)
			have += witnessed(p->groups[g].members[j], cosig, group_ok);
		group_ok[g] = have >= p->groups[g].k;
	}
	if (p->quorum >= 0 && !witnessed((unsigned)p->quorum, cosig, group_ok))
		return TLOG_POLICY_QUORUM;
	return TLOG_POLICY_OK;
}
