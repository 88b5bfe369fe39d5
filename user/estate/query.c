/* SPDX-License-Identifier: Apache-2.0 */
/* The "who did this" query, see query.h. The filters become one WHERE of
 * bound parameters over entries joined to records; each filter uses an
 * index (0001_estate.sql). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/buf.h"
#include "estate/entry.h"
#include "estate/query.h"

#define MAX_PARAMS 16
/* The record's kwitness.open entry, for the pod identity columns and filters. */
#define OPEN_JOIN " LEFT JOIN entries o ON o.record_id = r.id AND o.line = 1"

struct sql {
	struct kw_buf text;
	struct estate_val p[MAX_PARAMS];
	int n;
	/* Strings the parameters point into. */
	char lo[ESTATE_ADDR_LEN], hi[ESTATE_ADDR_LEN];
	char host[300], proto_end[40], proto_via[48];
	int bad;
};

static void put(struct sql *q, const char *s)
{
	q->bad |= kw_buf_puts(&q->text, s) != 0;
}

/* Appends "AND <cond>" where each $ in cond is the next parameter. */
static void where(struct sql *q, const char *cond, int nvals, const struct estate_val *v)
{
	put(q, " AND ");
	for (const char *c = cond; *c; c++) {
		if (*c == '$') {
			char num[16];

			if (q->n == MAX_PARAMS || nvals-- <= 0) {
				q->bad = 1;
				return;
			}
			q->p[q->n++] = *v++;
			snprintf(num, sizeof(num), "$%d", q->n);
			put(q, num);
		} else {
			q->bad |= kw_buf_putc(&q->text, *c) != 0;
		}
	}
}

static bool all_digits(const char *s)
{
	if (!*s || strlen(s) > 5)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* Characters, not bytes: substr() counts characters in both engines. */
/* The OBJECT column as estate query prints it for an address: HOST:PORT,
 * [V6]:PORT, either with /PROTO, HOST/PROTO, or "port N". true when o is
 * one of these, with its conditions added; *bad set when it looks like one
 * but its port or protocol is not a valid one. */
static bool object_as_printed(struct sql *q, const char *o, bool *bad)
{
	char text[300], *port = NULL, *proto, *host = text, *end;
	long n = -1;

	*bad = false;
	if (!strncmp(o, "port ", 5) && all_digits(o + 5) && strlen(o + 5) <= 5 && atoi(o + 5) <= 65535) {
		where(q, "e.port = $", 1, &EV_I(atoi(o + 5)));
		return true;
	}
	if (snprintf(text, sizeof(text), "%s", o) >= (int)sizeof(text))
		return false;
	proto = strrchr(text, '/');
	if (proto && (proto == text || !proto[1] || strspn(proto + 1, "abcdefghijklmnopqrstuvwxyz0123456789") !=
			  strlen(proto + 1) || all_digits(proto + 1)))
		proto = NULL; /* a path or a CIDR, not /tcp */
	if (proto)
		*proto++ = '\0';
	if (text[0] == '[') {
		char *close = strchr(text, ']');

		if (!close || (close[1] && close[1] != ':'))
			return false;
		*close = '\0';
		host = text + 1;
		port = close[1] ? close + 2 : NULL;
	} else if (strchr(text, ':') == strrchr(text, ':') && strchr(text, ':')) {
		port = strchr(text, ':');
		*port++ = '\0';
	} else if (!proto) {
		return false;
	}
	if (port) {
		n = all_digits(port) && strlen(port) <= 5 ? strtol(port, &end, 10) : -1;
		if (n < 0 || n > 65535) {
			*bad = true;
			return true;
		}
	}
	if (!*host || strlen(proto ? proto : "") > 16) {
		*bad = true;
		return true;
	}
	if (estate_cidr_range(host, q->lo, q->hi)) {
		struct estate_val v[2] = { EV_S(q->lo), EV_S(q->hi) };

		where(q, "e.addr >= $ AND e.addr <= $", 2, v);
	} else {
		snprintf(q->host, sizeof(q->host), "%s", host);
		where(q, "e.host = $", 1, &EV_S(q->host));
	}
	if (port)
		where(q, "e.port = $", 1, &EV_I(n));
	if (proto) {
		/* as entry.c writes it: ".../PROTO", or ".../PROTO via NAME" */
		snprintf(q->proto_end, sizeof(q->proto_end), "%%/%s", proto);
		snprintf(q->proto_via, sizeof(q->proto_via), "%%/%s via %%", proto);
		struct estate_val v[2] = { EV_S(q->proto_end), EV_S(q->proto_via) };

		where(q, "(e.object LIKE $ OR e.object LIKE $)", 2, v);
	}
	return true;
}

static int64_t utf8_chars(const char *s)
{
	int64_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* A member of the record's kwitness.open entry (its first line): the pod
 * identity kwitness oci-hook gave (docs/decision-log.md). key is one of the
 * constant names below, never input. */
static void open_member(struct sql *q, const struct estate_db *db, const char *key)
{
	put(q, db->engine == ESTATE_SQLITE ? "json_extract(o.entry, '$." : "(o.entry::jsonb ->> '");
	put(q, key);
	put(q, "')");
}

static void where_open(struct sql *q, const struct estate_db *db, const char *key,
		       const char *val)
{
	char cond[24];

	if (q->n == MAX_PARAMS) {
		q->bad = 1;
		return;
	}
	put(q, " AND ");
	open_member(q, db, key);
	q->p[q->n++] = EV_S(val);
	snprintf(cond, sizeof(cond), " = $%d", q->n);
	put(q, cond);
}

/* The process reference of the decision e ("proc", docs/decision-log.md).
 * PostgreSQL cannot read a JSON text holding \u0000 (a proc entry's argv)
 * as json: the reference, digits and a dash, is taken from the canonical
 * text, where "proc":" can only be a member's start (a quote inside a
 * string is escaped). */
static void decision_proc(struct sql *q, const struct estate_db *db)
{
	put(q, db->engine == ESTATE_SQLITE ? "json_extract(e.entry, '$.proc')"
					   : "substring(e.entry from '\"proc\":\"([0-9]+-[0-9]+)\"')");
}

/* The program e's process ran at e: its procs row with the greatest seq
 * before e's that names one (an exec, or a fork's inherited program). */
static void where_program(struct sql *q, const struct estate_db *db, const char *col,
			  const char *val)
{
	char cond[160];

	if (q->n == MAX_PARAMS) {
		q->bad = 1;
		return;
	}
	q->p[q->n++] = EV_S(val);
	put(q, " AND EXISTS (SELECT 1 FROM procs p WHERE p.record_id = e.record_id AND p.proc = ");
	decision_proc(q, db);
	snprintf(cond, sizeof(cond), " AND p.%s = $%d", col, q->n);
	put(q, cond);
	put(q, " AND p.seq = (SELECT max(m.seq) FROM procs m WHERE m.record_id = e.record_id"
	       " AND m.proc = p.proc AND m.seq < e.seq AND m.exe IS NOT NULL))");
}

/* --ancestor: the processes of the subtrees (kwitness log tree) rooted at
 * the processes that ran a matching program, as "WITH ... lineage". First
 * in the statement: its parameters come first. */
static void with_lineage(struct sql *q, const struct estate_db *db, const char *pattern)
{
	const char *has = db->engine == ESTATE_SQLITE ? "instr" : "strpos";
	char text[400];

	if (q->n + 2 > MAX_PARAMS) {
		q->bad = 1;
		return;
	}
	q->p[q->n++] = EV_S(pattern);
	q->p[q->n++] = EV_S(pattern);
	snprintf(text, sizeof(text),
		 "WITH RECURSIVE lineage (record_id, proc) AS (SELECT record_id, proc FROM procs"
		 " WHERE inherited = 0 AND (%s(exe, $%d) > 0 OR %s(argv, $%d) > 0)"
		 " UNION SELECT c.record_id, c.proc FROM procs c JOIN lineage a"
		 " ON c.record_id = a.record_id AND c.tree_parent = a.proc) ",
		 has, q->n - 1, has, q->n);
	put(q, text);
}

static int add_filters(struct sql *q, const struct estate_db *db, const struct estate_filter *f,
		       char *err, size_t errlen)
{
	/* tool and decision take few values: with an object to look for,
	 * SQLite must not take their index ("+" keeps a column off an index
	 * there; PostgreSQL's planner weighs them from its statistics). */
	bool steer = f->object && db->engine == ESTATE_SQLITE;

	/* A record estate verify found changed shows as TAMPERED (check.h). */
	put(q, steer ? " FROM entries e JOIN records r ON r.id = e.record_id"
		       " LEFT JOIN record_checks c ON c.record_id = r.id" OPEN_JOIN
		       " WHERE +e.decision IS NOT NULL"
		     : " FROM entries e JOIN records r ON r.id = e.record_id"
		       " LEFT JOIN record_checks c ON c.record_id = r.id" OPEN_JOIN
		       " WHERE e.decision IS NOT NULL");
	if (f->tool)
		where(q, steer ? "+e.tool = $" : "e.tool = $", 1, &EV_S(f->tool));
	if (f->decision)
		where(q, steer ? "+e.decision = $" : "e.decision = $", 1, &EV_S(f->decision));
	if (f->sandbox)
		where(q, "r.sandbox_id = $", 1, &EV_S(f->sandbox));
	if (f->session)
		where(q, "r.session = $", 1, &EV_S(f->session));
	if (f->pod_namespace)
		where_open(q, db, "pod_namespace", f->pod_namespace);
	if (f->pod)
		where_open(q, db, "pod_name", f->pod);
	if (f->container)
		where_open(q, db, "container_name", f->container);
	if (f->signer)
		where(q, "r.signer = $", 1, &EV_S(f->signer));
	if (f->host) {
		struct estate_val v[2] = { EV_S(f->host), EV_S(f->host) };

		where(q, "(r.hostname = $ OR r.machine_id = $)", 2, v);
	}
	if (f->has_since)
		where(q, "e.ts_us >= $", 1, &EV_I(f->since_us));
	if (f->has_until)
		where(q, "e.ts_us <= $", 1, &EV_I(f->until_us));
	if (f->incomplete)
		put(q, " AND r.complete = 0");
	if (f->exe)
		where_program(q, db, "exe", f->exe);
	if (f->digest)
		where_program(q, db, "digest", f->digest);
	if (f->ancestor) {
		put(q, " AND e.record_id IN (SELECT record_id FROM lineage) AND (e.record_id, ");
		decision_proc(q, db);
		put(q, ") IN (SELECT record_id, proc FROM lineage)");
	}
	if (f->object) {
		const char *o = f->object;
		bool bad;

		if (o[0] != '/' && object_as_printed(q, o, &bad)) {
			if (bad) {
				snprintf(err, errlen, "--object %s: want HOST:PORT[/PROTO] with a port "
					 "from 0 to 65535 and a protocol such as tcp or udp", o);
				return -1;
			}
		} else if (all_digits(o) && atoi(o) <= 65535) {
			where(q, "e.port = $", 1, &EV_I(atoi(o)));
		} else if (estate_cidr_range(o, q->lo, q->hi)) {
			struct estate_val v[2] = { EV_S(q->lo), EV_S(q->hi) };

			where(q, "e.addr >= $ AND e.addr <= $", 2, v);
		} else if (o[0] == '/') {
			struct estate_val v[2] = { EV_I(utf8_chars(o)), EV_S(o) };

			where(q, "substr(e.path, 1, $) = $", 2, v);
		} else if (strchr(o, '/')) {
			snprintf(err, errlen, "--object %s: not an address range (want a.b.c.d/N or x:y::/N), "
				 "a HOST:PORT/PROTO as printed, a /path, a port or a host name", o);
			return -1;
		} else {
			where(q, "e.host = $", 1, &EV_S(o));
		}
	}
	return 0;
}

int estate_query_run(struct estate_db *db, const struct estate_filter *f, bool count,
		     enum estate_group group, estate_row_fn fn, void *ctx, char *err, size_t errlen)
{
	static const char *const keys[] = {
		[ESTATE_GROUP_HOST] = "r.hostname, r.machine_id",
		[ESTATE_GROUP_SANDBOX] = "r.sandbox_id",
		[ESTATE_GROUP_TOOL] = "e.tool",
	};
	struct sql q = { 0 };
	int rc = -1;

	if (f->ancestor)
		with_lineage(&q, db, f->ancestor);
	if (count)
		put(&q, "SELECT count(*)");
	else if (group != ESTATE_GROUP_NONE) {
		put(&q, "SELECT ");
		put(&q, keys[group]);
		put(&q, ", count(*) AS decisions");
	} else
		put(&q, "SELECT e.ts_us, r.hostname, r.machine_id, r.sandbox_id, r.session, e.tool,"
			" e.object, e.decision, e.enforced, r.bundle_hash, r.enforcement_mode, r.signer,"
			" CASE WHEN c.ok = 0 THEN 'TAMPERED' ELSE r.trace_level END, r.log_index,"
			" r.record_path, r.complete, CASE WHEN c.ok = 0 THEN c.why ELSE"
			" r.appraisal || CASE WHEN r.appraisal <> '' AND r.transparency <> ''"
			" THEN '; ' ELSE '' END || r.transparency END");
	if (!count && group == ESTATE_GROUP_NONE) {
		/* the pod identity, from the open entry (EC_NAMESPACE..EC_CONTAINER) */
		put(&q, ", ");
		open_member(&q, db, "pod_namespace");
		put(&q, ", ");
		open_member(&q, db, "pod_name");
		put(&q, ", ");
		open_member(&q, db, "container_name");
	}
	if (add_filters(&q, db, f, err, errlen))
		goto out;
	if (!count && group != ESTATE_GROUP_NONE) {
		put(&q, " GROUP BY ");
		put(&q, keys[group]);
		put(&q, " ORDER BY count(*) DESC, ");
		put(&q, keys[group]);
	} else if (!count) {
		put(&q, " ORDER BY e.ts_us, r.session, e.line");
		if (f->limit > 0) {
			char lim[40];

			snprintf(lim, sizeof(lim), " LIMIT %lld", (long long)f->limit);
			put(&q, lim);
		}
	}
	if (q.bad || kw_buf_putc(&q.text, '\0')) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	rc = estate_query(db, q.text.data, q.p, q.n, fn, ctx);
	if (rc)
		snprintf(err, errlen, "query: %s", db->err);
out:
	kw_buf_free(&q.text);
	return rc;
}

int estate_parse_time(const char *s, int64_t *us)
{
	static const char *const forms[] = { "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S",
					      "%Y-%m-%d %H:%M:%S", "%Y-%m-%d" };
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (*s && !*end && !errno && v >= 0 && v < 253402300800LL) {
		*us = (int64_t)v * 1000000;
		return 0;
	}
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		struct tm tm = { 0 };
		const char *rest = strptime(s, forms[i], &tm);

		if (rest && !*rest) {
			*us = (int64_t)timegm(&tm) * 1000000;
			return 0;
		}
	}
	return -EINVAL;
}

void estate_format_time(int64_t us, char out[32])
{
	time_t t = (time_t)(us / 1000000);
	struct tm tm;

	if (us < 0 || !gmtime_r(&t, &tm) || tm.tm_year > 8099) {
		snprintf(out, 32, "-");
		return;
	}
	char text[96];

	snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(us % 1000000));
	memcpy(out, text, 31);
	out[31] = '\0';
}
