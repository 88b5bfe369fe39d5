/* SPDX-License-Identifier: Apache-2.0 */
/* Decision log lines as entries rows, see entry.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estate/entry.h"

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

/* What the decision was about, as one string: host:port/proto (and "via
 * NAME" when a DNS answer opened it), a path, a sysctl or DNS name, a device,
 * a socket's family and type. */
static void describe_object(struct estate_entry *e, const json_t *o)
{
	const char *name = str_member(o, "name"), *dev = str_member(o, "dev");
	const char *proto = str_member(o, "proto"), *family = str_member(o, "family");
	const char *type = str_member(o, "type"), *access = str_member(o, "access");
	char port[24] = "";

	if (e->has_port)
		snprintf(port, sizeof(port), ":%d", e->port);
	if (e->host)
		snprintf(e->object, sizeof(e->object), "%s%s%s%s%s", strchr(e->host, ':') ? "[" : "",
			 e->host, strchr(e->host, ':') ? "]" : "", port, proto ? "/" : "");
	else if (e->path)
		snprintf(e->object, sizeof(e->object), "%s", e->path);
	else if (name)
		snprintf(e->object, sizeof(e->object), "%s", name);
	else if (dev)
		snprintf(e->object, sizeof(e->object), "%s%s%s", dev, access ? " " : "",
			 access ? access : "");
	else if (family)
		snprintf(e->object, sizeof(e->object), "%s%s%s", family, type ? " " : "",
			 type ? type : "");
	else if (e->has_port)
		snprintf(e->object, sizeof(e->object), "port %d", e->port);
	if (e->host && proto) {
		size_t n = strlen(e->object);

		snprintf(e->object + n, sizeof(e->object) - n, "%s", proto);
	}
	/* an address a DNS answer opened: the name it was asked for */
	if (e->host && str_member(o, "via")) {
		size_t n = strlen(e->object);

		snprintf(e->object + n, sizeof(e->object) - n, " via %s", str_member(o, "via"));
	}
}

int estate_entry_parse(struct estate_entry *e, uint64_t line, const char *text, size_t len)
{
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
	/* The open and close entries carry no seq: they are not decisions. */
	if (strncmp(e->tool, "kwitness.", 9) == 0)
		e->decision = NULL;
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
	if (!estate_addr_hex(e->host, e->addr))
		e->addr[0] = '\0';
	describe_object(e, o);
	return 0;
}

void estate_entry_clear(struct estate_entry *e)
{
	json_decref(e->parsed);
	e->parsed = NULL;
}
