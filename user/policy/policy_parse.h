/* SPDX-License-Identifier: Apache-2.0 */
/* The policy parser's shared pieces: its context and the helpers every
 * section's parser uses (policy.c), and each section's entry point
 * (policy_net.c, policy_lsm.c). Not a public interface. */
#ifndef KWITNESS_POLICY_PARSE_H
#define KWITNESS_POLICY_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "policy/policy.h"

#define KW_POLICY_MAX_SOCKET_RULES 64

struct pctx {
	struct kw_policy *p;
	char *err;
	size_t errlen;
	size_t cap_net, cap_dev, cap_paths;
};

int policy_fail(struct pctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A hostile string made safe to quote in an error: printable ASCII only,
 * at most 64 characters. */
const char *policy_quote(const char *s, char buf[80]);
/* Refuses members of obj not in allowed (NULL-terminated). */
int policy_check_keys(struct pctx *c, json_t *obj, const char *where, const char *const *allowed);
/* The string value of a list item, refusing embedded NULs. */
const char *policy_item_string(struct pctx *c, json_t *v, const char *list, size_t i, int *ret);
json_t *policy_get_array(struct pctx *c, json_t *obj, const char *key, const char *name, size_t max, int *ret);
int policy_get_bool(struct pctx *c, json_t *obj, const char *key, const char *name, bool *out);
/* A section of the bundle: absent (*out NULL), or an object of the allowed
 * keys; being there makes the sessions govern class (0: its rules say). */
int policy_get_section(struct pctx *c, json_t *root, const char *key, uint32_t class, const char *const *allowed, json_t **out);
/* A section that is one switch, such as "mount": { "allow": true }. */
int policy_get_switch_section(struct pctx *c, json_t *root, const char *section, const char *key, uint32_t class, bool *out);
/* Decimal without sign or leading zeros (except "0"), at most max. */
int policy_parse_uint(const char *s, size_t n, unsigned long max, unsigned long *out);

/* The sections: "net" (policy_net.c); "dev", and "fs", "exec", "mount",
 * "proc" and "net.unix", the LSM classes (policy_lsm.c). */
int policy_parse_net(struct pctx *c, json_t *root);
int policy_parse_dev(struct pctx *c, json_t *root);
int policy_parse_lsm_sections(struct pctx *c, json_t *root);

#endif
