/* SPDX-License-Identifier: Apache-2.0 */
/* One decision log line as a row of the estate's entries table: the members
 * the queries filter on, taken from the canonical JSON text. The text comes
 * from a sandbox's session and is hostile: every member is optional, may
 * have any type, and strings may hold anything JSON can (the columns cut
 * them at a U+0000, object at ESTATE_FIELD_MAX bytes; the full line stays
 * in text). */
#ifndef KWITNESS_ESTATE_ENTRY_H
#define KWITNESS_ESTATE_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define ESTATE_FIELD_MAX 4096
/* An address as 32 lowercase hex digits (IPv4 as ::ffff:a.b.c.d) + NUL. */
#define ESTATE_ADDR_LEN 33

struct estate_entry {
	uint64_t line;               /* 1-based position in the log */
	bool has_seq, has_ts, has_enforced, has_port, has_pid, has_uid;
	int64_t seq, ts_us, pid, uid;
	int port;
	bool enforced;
	/* NULL when absent or not a string. Point into parsed (below). */
	const char *tool, *decision, *host, *path, *rule, *comm;
	char addr[ESTATE_ADDR_LEN];  /* "" when host is not an address */
	char object[ESTATE_FIELD_MAX];
	const char *text;            /* the canonical line */
	size_t len;
	json_t *parsed;
};

/* Fills e from a log line (len bytes, no newline). Returns 0, or -EINVAL
 * when the line is not a JSON object with a string "tool". Release with
 * estate_entry_clear. */
int estate_entry_parse(struct estate_entry *e, uint64_t line, const char *text, size_t len);
/* The same columns for a line the log check found canonical (its
 * on_entry lines), found by the check's own member scan (kw_log_members)
 * instead of a JSON tree: string columns are copied into strs (len + 1
 * bytes at least). Only the lines whose other members are read (proc,
 * kwitness.*) or that hold an escaped string column are parsed whole
 * (parsed set). */
int estate_entry_parse_canonical(struct estate_entry *e, uint64_t line, const char *text,
				 size_t len, char *strs);
void estate_entry_clear(struct estate_entry *e);

/* host as 16 bytes in hex (IPv4 mapped); false when it is not an IPv4 or
 * IPv6 address. */
bool estate_addr_hex(const char *host, char out[ESTATE_ADDR_LEN]);
/* "a.b.c.d/n", "x::y/n" or a bare address: the lowest and highest address
 * of the range in the form above. false when it is none of these. */
bool estate_cidr_range(const char *cidr, char lo[ESTATE_ADDR_LEN], char hi[ESTATE_ADDR_LEN]);

#endif
