/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Path rule evaluation for the BPF-LSM hooks, plain C so the same code runs in
 * the BPF programs (bpf/lsm_path.bpf.h) and in the cmocka test
 * (tests/unit/test_path_match.c).
 *
 * Rules live in one hash map keyed by (slot, prefix length, prefix bytes with
 * zeros after them); the value says which lists (fs.read, fs.write, fs.deny,
 * exec.allow, net.unix) hold that exact path and at which index. A decision
 * looks up every component prefix of the path, longest first ("/srv/agent/x",
 * "/srv/agent", "/srv", "/"), so "/srv/agent" covers "/srv/agent/x" but not
 * "/srv/agentx". Per wanted access the longest prefix holding a relevant rule
 * decides; at equal length fs.deny beats an allow (a tie goes to deny).
 * fs.deny governs read and write; exec.allow and net.unix only themselves.
 * No rule: the section's default deny (KW_RULE_DEFAULT). A path that did not
 * fit the kernel buffer is never allowed: a matching fs.deny names the rule,
 * otherwise the default deny does.
 *
 * Objects with no path (memfd, pipe, socket, anon-inode files) are named
 * "kind:name" ("memfd:buf", "pipe:[1234]", "anon:[eventfd]"). Their components
 * end at the first ':' instead of at '/', and "/" does not cover them: only a
 * rule that names them ("memfd:", "memfd:buf") does.
 *
 * The exact path's value also says whether an fs.deny path lies strictly
 * below it (KW_PK_BELOW): renaming or linking such a directory would move the
 * denied path, so kw_path_decide_move refuses it.
 *
 * The map lookup is the caller's: the scan says when the key holds a prefix
 * to look up (the BPF programs look in kw_path_rules, the tests in a table). */
#ifndef KWITNESS_PATH_MATCH_H
#define KWITNESS_PATH_MATCH_H

#include "kwitness/abi/lsm_map.h"

#ifndef KW_INLINE
#ifdef __bpf__
#define KW_INLINE static __always_inline
#else
#define KW_INLINE static inline
#endif
#endif

/* Wanted accesses, bit (1 << KW_PK_x). */
#define KW_WANT(k) (1u << (k))

struct kw_path_result {
	__u8 decided[KW_PK_N];
	__u8 allow[KW_PK_N];
	__u16 rule[KW_PK_N]; /* KW_RULE_PATH(list, index) of the deciding rule */
	__u16 below;         /* index of an fs.deny rule strictly below the path, or KW_PATH_NONE */
	__u16 pad[3];
};

KW_INLINE void kw_path_result_init(struct kw_path_result *r)
{
	int k;

	for (k = 0; k < KW_PK_N; k++) {
		r->decided[k] = 0;
		r->allow[k] = 0;
		r->rule[k] = KW_RULE_DEFAULT;
	}
	r->below = KW_PATH_NONE;
}

/* Folds in the rules at one prefix. Called longest prefix first, so the first
 * prefix with a relevant rule decides each wanted access. */
KW_INLINE void kw_path_fold(struct kw_path_result *r, const struct kw_path_val *v, __u32 want)
{
	int k;

	for (k = KW_PK_READ; k < KW_PK_N; k++) {
		if (k == KW_PK_DENY || !(want & KW_WANT(k)) || r->decided[k])
			continue;
		if ((k == KW_PK_READ || k == KW_PK_WRITE) && v->rule[KW_PK_DENY] != KW_PATH_NONE) {
			r->decided[k] = 1;
			r->allow[k] = 0;
			r->rule[k] = KW_RULE_PATH(KW_PK_DENY, v->rule[KW_PK_DENY]);
		} else if (v->rule[k] != KW_PATH_NONE) {
			r->decided[k] = 1;
			r->allow[k] = 1;
			r->rule[k] = KW_RULE_PATH(k, v->rule[k]);
		}
	}
}

/* A scan of the component prefixes of key->path (len in key->len, the bytes
 * after it zero), longest first, each hit folded into res. It runs as steps
 * so the BPF side can drive it with bpf_loop (one verification of the step
 * instead of one per byte) and the tests with a plain loop:
 *
 *	kw_path_scan_init(s, key, want);
 *	for (k = 0; !kw_path_scan_at(s, key, k, &lookup); k++) {
 *		if (lookup)
 *			kw_path_scan_hit(s, <value at key, or NULL>);
 *		kw_path_scan_next(s, key);
 *	}
 *	if (kw_path_scan_root(s, key))
 *		kw_path_scan_hit(s, <value at key, or NULL>);
 */
struct kw_path_scan {
	__u32 len;  /* the full path's length */
	__u32 want; /* KW_WANT bits */
	__u32 pos;  /* length of the prefix being considered */
	char next;  /* the byte just past that prefix */
	char abs;   /* 1: a path ("/..."); 0: a "kind:name" object */
	char pad[2];
	struct kw_path_result res;
};

KW_INLINE void kw_path_scan_init(struct kw_path_scan *s, const struct kw_path_key *key,
				 __u32 want)
{
	s->len = key->len;
	s->want = want;
	s->pos = 0;
	s->next = 0;
	s->abs = key->path[0] == '/';
	kw_path_result_init(&s->res);
}

/* Step k (0, 1, ...) considers the prefix of length len - k. Returns 1 when
 * the scan is over (go on with kw_path_scan_root). Otherwise 0, with *lookup
 * set when that prefix ends a component: key->len is then the prefix's length
 * and the caller looks the key up. */
KW_INLINE int kw_path_scan_at(struct kw_path_scan *s, struct kw_path_key *key, __u32 k,
			      int *lookup)
{
	*lookup = 0;
	if (s->len < 1 || s->len >= KW_PATH_MAX || k >= s->len)
		return 1;
	s->pos = s->len - k; /* len down to 1 */
	if (s->next == 0 ||
	    (s->abs ? s->next == '/' : key->path[(s->pos - 1) & (KW_PATH_MAX - 1)] == ':')) {
		key->len = s->pos;
		*lookup = 1;
	}
	return 0;
}

/* Folds in what the lookup found (NULL: no rule at that prefix). */
KW_INLINE void kw_path_scan_hit(struct kw_path_scan *s, const struct kw_path_val *v)
{
	if (!v)
		return;
	if (s->pos == s->len) /* the exact path */
		s->res.below = v->rule[KW_PK_BELOW];
	kw_path_fold(&s->res, v, s->want);
}

/* Drops the prefix's last byte from the key, so the key keeps "zeros after
 * len" for the next, shorter prefix. */
KW_INLINE void kw_path_scan_next(struct kw_path_scan *s, struct kw_path_key *key)
{
	s->next = key->path[(s->pos - 1) & (KW_PATH_MAX - 1)];
	key->path[(s->pos - 1) & (KW_PATH_MAX - 1)] = 0;
}

/* The root rule "/" covers every path (not a "kind:name" object): leaves "/"
 * in the key and returns 1 when the caller is to look it up (not for "/"
 * itself, already seen). */
KW_INLINE int kw_path_scan_root(struct kw_path_scan *s, struct kw_path_key *key)
{
	key->path[0] = '/';
	key->len = 1;
	return s->abs && s->len > 1 && s->len < KW_PATH_MAX;
}

#ifndef __bpf__
/* The whole scan as a plain loop (userspace, tests), with lookup(ctx, key)
 * returning the value at a key or NULL. Clobbers key. */
static inline void kw_path_scan(struct kw_path_scan *s, struct kw_path_key *key, __u32 want,
				const struct kw_path_val *(*lookup)(void *ctx,
								    const struct kw_path_key *key),
				void *ctx)
{
	int hit;
	__u32 k;

	kw_path_scan_init(s, key, want);
	for (k = 0; k < KW_PATH_MAX && !kw_path_scan_at(s, key, k, &hit); k++) {
		if (hit)
			kw_path_scan_hit(s, lookup(ctx, key));
		kw_path_scan_next(s, key);
	}
	if (kw_path_scan_root(s, key))
		kw_path_scan_hit(s, lookup(ctx, key));
}
#endif

/* The decision over every wanted access: 1 permit, 0 deny; *rule is the
 * deciding rule (the first refused access's, or for a permit the rule of the
 * strongest access: write over read). A truncated path is never permitted. */
KW_INLINE int kw_path_decide(const struct kw_path_result *r, __u32 want, int truncated,
			     __u16 *rule)
{
	int k;

	*rule = KW_RULE_DEFAULT;
	for (k = KW_PK_READ; k < KW_PK_N; k++) {
		if (k == KW_PK_DENY || !(want & KW_WANT(k)))
			continue;
		if (!r->decided[k] || !r->allow[k]) {
			*rule = r->decided[k] ? r->rule[k] : KW_RULE_DEFAULT;
			return 0;
		}
		if (truncated) {
			/* the allow matched a prefix of a longer, unknown path */
			*rule = KW_RULE_DEFAULT;
			return 0;
		}
		*rule = r->rule[k];
	}
	return 1;
}

/* The decision for a rename or link source or target (want: write): as
 * kw_path_decide, and refused by the fs.deny rule below it when the path is
 * an ancestor of a denied path. */
KW_INLINE int kw_path_decide_move(const struct kw_path_result *r, __u32 want, int truncated,
				  __u16 *rule)
{
	if (!kw_path_decide(r, want, truncated, rule))
		return 0;
	if (r->below != KW_PATH_NONE) {
		*rule = KW_RULE_PATH(KW_PK_DENY, r->below);
		return 0;
	}
	return 1;
}

#endif
