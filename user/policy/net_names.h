/* SPDX-License-Identifier: Apache-2.0 */
/* Host names in net.connect and net.send ("api.example.org:443",
 * "*.example.org:443", "example.org:80,443") and the net.dns section: the
 * syntax, and which rule a name in a DNS question matches. Shared by the
 * policy parser and kwitnessd's per-session resolver. Names are hostile
 * input on both paths: every function is bounded. */
#ifndef KWITNESS_NET_NAMES_H
#define KWITNESS_NET_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A name in presentation form without its final dot (RFC 1035: 255 octets
 * on the wire, so at most 253 characters). */
#define KW_NAME_MAX 253
#define KW_NAME_LABEL_MAX 63
/* Port ranges one name rule may list ("80,443,8000-8100"). */
#define KW_NAME_PORT_RANGES 8
/* Name rules per policy (net.connect and net.send together). */
#define KW_POLICY_MAX_NAME_RULES 64
/* net.dns.resolvers entries. */
#define KW_DNS_MAX_RESOLVERS 4
/* TTL clamps: defaults and the largest max_ttl a policy may set (a day). */
#define KW_DNS_DEFAULT_MIN_TTL 0
#define KW_DNS_DEFAULT_MAX_TTL 3600
#define KW_DNS_TTL_LIMIT 86400

struct kw_port_range {
	uint16_t lo, hi; /* inclusive */
};

struct kw_name_rule {
	uint8_t op;       /* enum kw_net_op: KW_NET_CONNECT or KW_NET_SEND */
	bool wildcard;    /* "*.suffix": one or more labels in front of suffix */
	uint8_t n_ports;
	uint16_t index;   /* position in its policy list (net.connect[3]) */
	struct kw_port_range ports[KW_NAME_PORT_RANGES];
	char name[KW_NAME_MAX + 1]; /* lowercase; for a wildcard, the suffix */
};

struct kw_dns_resolver {
	uint8_t family;   /* 4 or 6 */
	uint8_t addr[16]; /* v4 in the first 4 bytes */
	uint16_t port;
};

/* net.dns, with its defaults when the section is absent. */
struct kw_dns_conf {
	struct kw_dns_resolver resolvers[KW_DNS_MAX_RESOLVERS];
	size_t n_resolvers;      /* 0: the host's, from /etc/resolv.conf */
	bool allow_other_names;  /* false: names no rule matches get REFUSED */
	uint32_t min_ttl, max_ttl; /* seconds */
};

/* Checks and normalises a host name: LDH labels of 1..63 characters, not
 * starting or ending with '-', at most 253 characters, lowercased, one final
 * dot dropped; a last label of digits only is refused (an address belongs in
 * a CIDR rule); a name that is not ASCII must be written in A-label form
 * ("xn--..."). With allow_wildcard, a leading "*." is allowed and left out of
 * out (*wildcard set). Returns 0, or -EINVAL with *why a short reason. */
int kw_name_normalise(const char *s, size_t n, bool allow_wildcard, char out[KW_NAME_MAX + 1],
		      bool *wildcard, const char **why);

/* 1 when the normalised name (lowercase, no final dot) is matched by rule r:
 * equal to it, or, for a wildcard, ending in "." + suffix with at least one
 * label in front. */
int kw_name_rule_matches(const struct kw_name_rule *r, const char *name);

/* The first rule among rules[0..n) that matches name, or NULL. */
const struct kw_name_rule *kw_name_rule_find(const struct kw_name_rule *rules, size_t n,
					     const char *name);

/* "80", "80,443", "8000-8100", "*" into at most KW_NAME_PORT_RANGES ranges.
 * 0 or -EINVAL. */
int kw_name_ports_parse(const char *s, struct kw_port_range *out, uint8_t *n);

/* 1 when port is in one of r's ranges. */
int kw_name_rule_port(const struct kw_name_rule *r, uint16_t port);

/* The host's resolvers: "nameserver" lines of a resolv.conf text (at most
 * KW_DNS_MAX_RESOLVERS, port 53; scoped IPv6 "%if" entries are skipped).
 * Returns how many. */
size_t kw_dns_resolv_conf(const char *text, size_t len, struct kw_dns_resolver *out);

#endif
