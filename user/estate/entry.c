/* SPDX-License-Identifier: Apache-2.0 */
/* Decision log lines as entries rows, see entry.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estate/entry.h"
#include "trace/logverify.h"

static const char *str_member(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static bool int_member(const json_t *o, const char *k, int64_t *out)
{
	const json_t *v = json_object_get(o, k);

	if (!json_is_integer(v))
		return false;
	*out = (int64_t)json_integer_value(v);
	return true;
}

static void hex16(const unsigned char b[16], char out[ESTATE_ADDR_LEN])
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < 16; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[32] = '\0';
}

/* host as 16 bytes; IPv4 mapped into IPv6. */
static bool addr_bytes(const char *host, unsigned char b[16], int *bits)
{
	struct in_addr a4;

	if (!host)
		return false;
	if (inet_pton(AF_INET, host, &a4) == 1) {
		memset(b, 0, 10);
		b[10] = b[11] = 0xff;
		memcpy(b + 12, &a4, 4);
		*bits = 32;
		return true;
	}
	*bits = 128;
	return inet_pton(AF_INET6, host, b) == 1;
}

bool estate_addr_hex(const char *host, char out[ESTATE_ADDR_LEN])
{
	unsigned char b[16];
	int bits;

	if (!addr_bytes(host, b, &bits))
		return false;
	hex16(b, out);
	return true;
}

bool estate_cidr_range(const char *cidr, char lo[ESTATE_ADDR_LEN], char hi[ESTATE_ADDR_LEN])
{
	char host[64];
	const char *slash = strchr(cidr, '/');
	unsigned char b[16], top[16];
	int bits, prefix;

	if (strlen(cidr) >= sizeof(host))
		return false;
	snprintf(host, sizeof(host), "%.*s", slash ? (int)(slash - cidr) : (int)strlen(cidr), cidr);
	if (!addr_bytes(host, b, &bits))
		return false;
	prefix = bits;
	if (slash) {
		char *end;
		long n = strtol(slash + 1, &end, 10);

		if (!slash[1] || *end || n < 0 || n > bits)
			return false;
		prefix = (int)n;
	}
	prefix += 128 - bits; /* IPv4 sits in the last 32 bits */
	for (int i = 0; i < 16; i++) {
		int keep = prefix - 8 * i;
		unsigned char mask = keep >= 8 ? 0xff : keep <= 0 ? 0 : (unsigned char)(0xff << (8 - keep));

		b[i] &= mask;
		top[i] = b[i] | (unsigned char)~mask;
	}
	hex16(b, lo);
	hex16(top, hi);
	return true;
}

/* The members that make up an entry's object column besides its own. */
struct object_parts {
	const char *name, *dev, *proto, *family, *type, *access, *via;
};

/* What the decision was about, as one string: host:port/proto (and "via
 * NAME" when a DNS answer opened it), a path, a sysctl or DNS name, a device,
 * a socket's family and type. */
static void describe_object(struct estate_entry *e, const struct object_parts *o)
{
	char port[24] = "";

	if (e->has_port)
		snprintf(port, sizeof(port), ":%d", e->port);
	if (e->host)
		snprintf(e->object, sizeof(e->object), "%s%s%s%s%s", strchr(e->host, ':') ? "[" : "",
			 e->host, strchr(e->host, ':') ? "]" : "", port, o->proto ? "/" : "");
	else if (e->path)
		snprintf(e->object, sizeof(e->object), "%s", e->path);
	else if (o->name)
		snprintf(e->object, sizeof(e->object), "%s", o->name);
	else if (o->dev)
		snprintf(e->object, sizeof(e->object), "%s%s%s", o->dev, o->access ? " " : "",
			 o->access ? o->access : "");
	else if (o->family)
		snprintf(e->object, sizeof(e->object), "%s%s%s", o->family, o->type ? " " : "",
			 o->type ? o->type : "");
	else if (e->has_port)
		snprintf(e->object, sizeof(e->object), "port %d", e->port);
	if (e->host && o->proto) {
		size_t n = strlen(e->object);

		snprintf(e->object + n, sizeof(e->object) - n, "%s", o->proto);
	}
	/* an address a DNS answer opened: the name it was asked for */
	if (e->host && o->via) {
		size_t n = strlen(e->object);

		snprintf(e->object + n, sizeof(e->object) - n, " via %s", o->via);
	}
}

/* The columns computed from the members found. */
static void finish_columns(struct estate_entry *e, const struct object_parts *o)
{
	/* The open and close entries carry no seq: they are not decisions. */
	if (strncmp(e->tool, "kwitness.", 9) == 0)
		e->decision = NULL;
	if (!estate_addr_hex(e->host, e->addr))
		e->addr[0] = '\0';
	describe_object(e, o);
}

int estate_entry_parse(struct estate_entry *e, uint64_t line, const char *text, size_t len)
{
	struct object_parts parts;
	json_t *o;
	int64_t v;

	memset(e, 0, sizeof(*e));
	e->line = line;
	e->text = text;
	e->len = len;
	o = json_loadb(text, len, JSON_ALLOW_NUL | JSON_DECODE_ANY, NULL);
	if (!json_is_object(o) || !str_member(o, "tool")) {
		json_decref(o);
		return -EINVAL;
	}
	e->parsed = o;
	e->tool = str_member(o, "tool");
	e->decision = str_member(o, "decision");
	e->host = str_member(o, "host");
	e->path = str_member(o, "path");
	e->rule = str_member(o, "rule");
	e->comm = str_member(o, "comm");
	e->has_seq = int_member(o, "seq", &e->seq);
	e->has_ts = int_member(o, "ts", &e->ts_us);
	e->has_pid = int_member(o, "pid", &e->pid);
	e->has_uid = int_member(o, "uid", &e->uid);
	if (int_member(o, "port", &v) && v >= 0 && v <= 65535) {
		e->has_port = true;
		e->port = (int)v;
	}
	if (json_is_boolean(json_object_get(o, "enforced"))) {
		e->has_enforced = true;
		e->enforced = json_is_true(json_object_get(o, "enforced"));
	}
	parts = (struct object_parts){
		.name = str_member(o, "name"), .dev = str_member(o, "dev"),
		.proto = str_member(o, "proto"), .family = str_member(o, "family"),
		.type = str_member(o, "type"), .access = str_member(o, "access"),
		.via = str_member(o, "via"),
	};
	finish_columns(e, &parts);
	return 0;
}

/* --- a canonical line, read with the log check's scan ---------------- */

struct scan {
	struct estate_entry *e;
	struct object_parts o;
	char *strs;                  /* where the string columns are copied */
	bool whole;                  /* a member needs the full parse */
	bool has_tool;
	struct {
		bool has;
		const char *v;
		size_t n;
	} port, enforced;
};

/* A string member's value: a copy without its quotes, NULL for any other
 * type. Canonical text escapes only quotes, backslashes and controls: a
 * value with an escape is left to the full parse. */
static void scan_str(struct scan *s, const char **out, const char *v, size_t n)
{
	if (n < 2 || v[0] != '"')
		return;
	if (memchr(v + 1, '\\', n - 2)) {
		s->whole = true;
		return;
	}
	memcpy(s->strs, v + 1, n - 2);
	s->strs[n - 2] = '\0';
	*out = s->strs;
	s->strs += n - 1;
}

/* A canonical integer: digits, perhaps a minus (a fraction or exponent
 * makes a real, as for jansson); canonical integers stay within 2^53. */
static bool scan_int(const char *v, size_t n, int64_t *out)
{
	size_t i = n && v[0] == '-';
	uint64_t x = 0;

	if (i >= n || n - i > 16)
		return false;
	for (size_t j = i; j < n; j++) {
		if (v[j] < '0' || v[j] > '9')
			return false;
		x = x * 10 + (uint64_t)(v[j] - '0');
	}
	*out = i ? -(int64_t)x : (int64_t)x;
	return true;
}

static void scan_member(void *ctx, const char *k, size_t kn, const char *v, size_t vn)
{
	struct scan *s = ctx;
	struct estate_entry *e = s->e;

#define IS(lit) (kn == sizeof(lit) - 1 && !memcmp(k, lit, kn))
	if (IS("tool")) {
		scan_str(s, &e->tool, v, vn);
		s->has_tool = true;
	} else if (IS("decision")) {
		scan_str(s, &e->decision, v, vn);
	} else if (IS("host")) {
		scan_str(s, &e->host, v, vn);
	} else if (IS("path")) {
		scan_str(s, &e->path, v, vn);
	} else if (IS("rule")) {
		scan_str(s, &e->rule, v, vn);
	} else if (IS("comm")) {
		scan_str(s, &e->comm, v, vn);
	} else if (IS("seq")) {
		e->has_seq = scan_int(v, vn, &e->seq);
	} else if (IS("ts")) {
		e->has_ts = scan_int(v, vn, &e->ts_us);
	} else if (IS("pid")) {
		e->has_pid = scan_int(v, vn, &e->pid);
	} else if (IS("uid")) {
		e->has_uid = scan_int(v, vn, &e->uid);
	} else if (IS("port")) {
		int64_t p;

		if (scan_int(v, vn, &p) && p >= 0 && p <= 65535) {
			e->has_port = true;
			e->port = (int)p;
		}
	} else if (IS("enforced")) {
		e->has_enforced = (vn == 4 && !memcmp(v, "true", 4)) ||
				  (vn == 5 && !memcmp(v, "false", 5));
		e->enforced = e->has_enforced && vn == 4;
	} else if (IS("name")) {
		scan_str(s, &s->o.name, v, vn);
	} else if (IS("dev")) {
		scan_str(s, &s->o.dev, v, vn);
	} else if (IS("proto")) {
		scan_str(s, &s->o.proto, v, vn);
	} else if (IS("family")) {
		scan_str(s, &s->o.family, v, vn);
	} else if (IS("type")) {
		scan_str(s, &s->o.type, v, vn);
	} else if (IS("access")) {
		scan_str(s, &s->o.access, v, vn);
	} else if (IS("via")) {
		scan_str(s, &s->o.via, v, vn);
	}
#undef IS
}

int estate_entry_parse_canonical(struct estate_entry *e, uint64_t line, const char *text,
				 size_t len, char *strs)
{
	struct scan s = { .e = e, .strs = strs };

	memset(e, 0, sizeof(*e));
	e->line = line;
	e->text = text;
	e->len = len;
	kw_log_members(text, len, scan_member, &s);
	if (!s.whole && s.has_tool && !e->tool)
		return -EINVAL; /* a tool that is not a string */
	/* The lines whose other members are read (lineage.c, the ingest's
	 * open and close entries), and the rare escaped value: the tree. */
	if (s.whole || !e->tool || !strcmp(e->tool, "proc") || !strncmp(e->tool, "kwitness.", 9))
		return estate_entry_parse(e, line, text, len);
	finish_columns(e, &s.o);
	return 0;
}

void estate_entry_clear(struct estate_entry *e)
{
	json_decref(e->parsed);
	e->parsed = NULL;
}
