/* SPDX-License-Identifier: Apache-2.0 */
/* The path rule evaluation the BPF-LSM programs run (include/kwitness/abi/path_match.h),
 * with a table standing in for the kw_path_rules hash map, filled with the
 * entries the loader writes (kw_path_compile). The table lookup also checks
 * what the kernel's hash needs: every key it is handed has zeros after its
 * length, and the slot is the session's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <stdlib.h>

#include "kwitness/abi/lsm_map.h"
#include "kwitness/abi/path_match.h"
#include "kwitness/path_compile.h"

struct table {
	uint32_t slot;
	struct kw_path_rule rules[16]; /* the policy's lists */
	int n_rules;
	int n;
	struct kw_path_key keys[16];
	struct kw_path_val vals[16];
	int lookups;
	char seen[32][KW_PATH_MAX]; /* the prefixes looked up, in order */
};

static const struct kw_path_val *table_lookup(void *ctx, const struct kw_path_key *key)
{
	struct table *t = ctx;
	int i;

	assert_int_equal(key->slot, t->slot);
	assert_true(key->len >= 1 && key->len < KW_PATH_MAX);
	for (i = key->len; i < KW_PATH_MAX; i++)
		assert_int_equal(key->path[i], 0);
	if (t->lookups < 32)
		memcpy(t->seen[t->lookups], key->path, KW_PATH_MAX);
	t->lookups++;
	for (i = 0; i < t->n; i++)
		if (!memcmp(&t->keys[i], key, sizeof(*key)))
			return &t->vals[i];
	return NULL;
}


/* One more rule in the policy's lists; the table then holds what the loader
 * would write for them (kw_path_compile, as user/bpf/lsm.c). */
static void add(struct table *t, const char *path, int kind, uint16_t index)
{
	struct kw_policy pol = { .classes = KW_CLASS_FS | KW_CLASS_EXEC | KW_CLASS_UNIX };
	struct kw_path_rule *r = &t->rules[t->n_rules++];
	struct kw_path_entry *e;
	size_t n, i;

	assert_true(t->n_rules <= 16);
	r->kind = (uint8_t)kind;
	r->index = index;
	r->len = (uint16_t)strlen(path);
	memcpy(r->path, path, r->len + 1);
	pol.paths = t->rules;
	pol.n_paths = (size_t)t->n_rules;
	assert_int_equal(kw_path_compile(&pol, t->slot, &e, &n), 0);
	assert_true(n <= 16);
	for (i = 0; i < n; i++) {
		t->keys[i] = e[i].key;
		t->vals[i] = e[i].val;
	}
	t->n = (int)n;
	free(e);
}

/* Judges path for want (KW_WANT bits); returns permit, sets *rule. */
static int judge(struct table *t, const char *path, uint32_t want, int truncated, uint16_t *rule)
{
	struct kw_path_key key;
	struct kw_path_scan s;

	memset(&key, 0, sizeof(key));
	key.slot = t->slot;
	key.len = (uint32_t)strlen(path);
	memcpy(key.path, path, key.len);
	t->lookups = 0;
	kw_path_scan(&s, &key, want, table_lookup, t);
	return kw_path_decide(&s.res, want, truncated, rule);
}

#define R KW_WANT(KW_PK_READ)
#define W KW_WANT(KW_PK_WRITE)
#define X KW_WANT(KW_PK_EXEC)
#define U KW_WANT(KW_PK_UNIX)

static void test_prefix_is_component_aware(void **state)
{
	struct table t = { .slot = 7 };
	uint16_t rule;

	(void)state;
	add(&t, "/srv/agent", KW_PK_READ, 0);
	assert_int_equal(judge(&t, "/srv/agent/x", R, 0, &rule), 1);
	assert_int_equal(rule, KW_RULE_PATH(KW_PK_READ, 0));
	assert_int_equal(judge(&t, "/srv/agent", R, 0, &rule), 1);
	assert_int_equal(judge(&t, "/srv/agent/a/b/c", R, 0, &rule), 1);
	assert_int_equal(judge(&t, "/srv/agentx", R, 0, &rule), 0);
	assert_int_equal(rule, KW_RULE_DEFAULT);
	assert_int_equal(judge(&t, "/srv/agentx/y", R, 0, &rule), 0);
	assert_int_equal(judge(&t, "/srv", R, 0, &rule), 0);
	assert_int_equal(judge(&t, "/", R, 0, &rule), 0);
}

static void test_prefixes_looked_up_longest_first(void **state)
{
	struct table t = { .slot = 1 };
	uint16_t rule;

	(void)state;
	judge(&t, "/a/bc/d", R, 0, &rule);
	assert_int_equal(t.lookups, 4);
	assert_string_equal(t.seen[0], "/a/bc/d");
	assert_string_equal(t.seen[1], "/a/bc");
	assert_string_equal(t.seen[2], "/a");
	assert_string_equal(t.seen[3], "/");
	judge(&t, "/", R, 0, &rule);
	assert_int_equal(t.lookups, 1);
	assert_string_equal(t.seen[0], "/");
}

static void test_longest_prefix_decides(void **state)
{
	struct table t = { .slot = 2 };
	uint16_t rule;

	(void)state;
	add(&t, "/srv", KW_PK_READ, 0);
	add(&t, "/srv/agent/.ssh", KW_PK_DENY, 4);
	assert_int_equal(judge(&t, "/srv/agent/notes", R, 0, &rule), 1);
	assert_int_equal(rule, KW_RULE_PATH(KW_PK_READ, 0));
	assert_int_equal(judge(&t, "/srv/agent/.ssh/id_ed25519", R, 0, &rule), 0);
	assert_int_equal(rule, KW_RULE_PATH(KW_PK_DENY, 4));
	assert_int_equal(judge(&t, "/srv/agent/.sshx", R, 0, &rule), 1);

	/* a longer allow inside a denied tree wins */
	add(&t, "/opt", KW_PK_DENY, 1);
	add(&t, "/opt/tools", KW_PK_READ, 2);
	assert_int_equal(judge(&t, "/opt/tools/bin/x", R, 0, &rule), 1);
	assert_int_equal(rule, KW_RULE_PATH(KW_PK_READ, 2));
	assert_int_equal(judge(&t, "/opt/other", R, 0, &rule), 0);
	assert_int_equal(rule, KW_RULE_PATH(KW_PK_DENY, 1));
}

static void test_tie_goes_to_deny(void **state)
{
	struct table t = { .slot = 3 };
	uint16_t rule;

	(void)state;
	add(&t, "/data", KW_PK_READ, 0);
	add(&t, "/data", KW_PK_WRITE, 0);
	add(&t, "/data", KW_PK_DENY, 2);
	assert_int_equal(judge(&t, "/data/f", R, 0, &rule), 0);
	assert_int_equal(rule, KW_RULE_PATH(KW_PK_DENY, 2));
	assert_int_equal(judge(&t, "/data/f", W, 0, &rule), 0);
	assert_int_equal(rule, KW_RULE_PATH(KW_PK_DENY, 2));
}

static void test_read_and_write_are_separate(void **state)
{
	struct table t = { .slot = 4 };
	uint16_t rule;

	(void)state;
	add(&t, "/tmp", KW_PK_WRITE, 1);
	add(&t, "/usr", KW_PK_READ, 0);
	assert_int_equal(judge(&t, "/tmp/f", W, 0, &rule), 1);
	assert_int_equal(rule, KW_RULE_PATH(KW_PK_WRITE, 1));
	assert_int_equal(judge(&t, "/tmp/f", R, 0, &rule), 0);
	assert_int_equal(rule, KW_RULE_DEFAULT);
	/* read+write needs both */
	assert_int_equal(judge(&t, "/tmp/f", R | W, 0, &rule), 0);
	assert_int_equal(rule, KW_RULE_DEFAULT);
	assert_int_equal(judge(&t, "/usr/lib/x", W, 0, &rule), 0);
	add(&t, "/tmp", KW_PK_READ, 3);
	assert_int_equal(judge(&t, "/tmp/f", R | W, 0, &rule), 1);
	/* a permit names the strongest access's rule */
	assert_int_equal(rule, KW_RULE_PATH(KW_PK_WRITE, 1));
}

static void test_deny_governs_only_fs(void **state)
{
	struct table t = { .slot = 5 };
	uint16_t rule;

	(void)state;
	add(&t, "/usr/bin", KW_PK_EXEC, 0);
	add(&t, "/usr/bin", KW_PK_DENY, 0);
	add(&t, "/run/app.sock", KW_PK_UNIX, 2);
	assert_int_equal(judge(&t, "/usr/bin/true", X, 0, &rule), 1);
	assert_int_equal(rule, KW_RULE_PATH(KW_PK_EXEC, 0));
	assert_int_equal(judge(&t, "/usr/bin/true", R, 0, &rule), 0);
	assert_int_equal(judge(&t, "/usr/sbin/x", X, 0, &rule), 0);
	assert_int_equal(rule, KW_RULE_DEFAULT);
	assert_int_equal(judge(&t, "/run/app.sock", U, 0, &rule), 1);
	assert_int_equal(rule, KW_RULE_PATH(KW_PK_UNIX, 2));
	assert_int_equal(judge(&t, "/run/other.sock", U, 0, &rule), 0);
	/* an exec rule does not grant reads, nor a read rule exec */
	add(&t, "/opt", KW_PK_READ, 1);
	assert_int_equal(judge(&t, "/opt/x", X, 0, &rule), 0);
}

static void test_root_rule_covers_everything(void **state)
{
	struct table t = { .slot = 6 };
	uint16_t rule;

	(void)state;
	add(&t, "/", KW_PK_READ, 0);
	add(&t, "/proc", KW_PK_DENY, 1);
	assert_int_equal(judge(&t, "/", R, 0, &rule), 1);
	assert_int_equal(judge(&t, "/etc/passwd", R, 0, &rule), 1);
	assert_int_equal(rule, KW_RULE_PATH(KW_PK_READ, 0));
	assert_int_equal(judge(&t, "/proc/1/environ", R, 0, &rule), 0);
	assert_int_equal(rule, KW_RULE_PATH(KW_PK_DENY, 1));
}

static void test_truncated_is_never_allowed(void **state)
{
	struct table t = { .slot = 8 };
	uint16_t rule;

	(void)state;
	add(&t, "/srv", KW_PK_READ, 0);
	add(&t, "/srv/secret", KW_PK_DENY, 3);
	assert_int_equal(judge(&t, "/srv/aaaa", R, 1, &rule), 0);
	assert_int_equal(rule, KW_RULE_DEFAULT);
	/* a deny on the part that fit still names the rule */
	assert_int_equal(judge(&t, "/srv/secret/aaaa", R, 1, &rule), 0);
	assert_int_equal(rule, KW_RULE_PATH(KW_PK_DENY, 3));
}

static void test_longest_path_that_fits(void **state)
{
	struct table t = { .slot = 9 };
	char path[KW_PATH_MAX];
	uint16_t rule;

	(void)state;
	memset(path, 'a', sizeof(path));
	path[0] = '/';
	path[4] = '/';
	path[KW_PATH_MAX - 1] = '\0'; /* 255 bytes: the longest the kernel keeps */
	add(&t, "/aaa", KW_PK_WRITE, 0);
	assert_int_equal(judge(&t, path, W, 0, &rule), 1);
	assert_int_equal(rule, KW_RULE_PATH(KW_PK_WRITE, 0));
	assert_int_equal(t.lookups, 3);
}

static void test_other_slot_rules_do_not_apply(void **state)
{
	struct table t = { .slot = 10 };
	struct table other = { .slot = 11 };
	uint16_t rule;

	(void)state;
	add(&other, "/srv", KW_PK_READ, 0);
	/* the same rule path under another slot is a different key */
	memcpy(t.keys, other.keys, sizeof(other.keys));
	memcpy(t.vals, other.vals, sizeof(other.vals));
	t.n = other.n;
	t.keys[0].slot = 11;
	assert_int_equal(judge(&t, "/srv/x", R, 0, &rule), 0);
}

static void test_scan_step_bounds(void **state)
{
	struct kw_path_key key;
	struct kw_path_scan s;
	int lookup = -1;

	(void)state;
	memset(&key, 0, sizeof(key));
	key.slot = 12;
	key.len = KW_PATH_MAX; /* impossible length: nothing is looked up */

	kw_path_scan_init(&s, &key, R);
	assert_int_equal(kw_path_scan_at(&s, &key, 0, &lookup), 1);
	assert_int_equal(lookup, 0);
	key.len = 0;
	kw_path_scan_init(&s, &key, R);
	assert_int_equal(kw_path_scan_at(&s, &key, 0, &lookup), 1);
	assert_int_equal(kw_path_scan_root(&s, &key), 0);
}

/* The loader's entries: only governed lists, one entry per path, the first
 * listing of a path in a list names it; a rule the parser never makes is
 * refused. */
static void test_compile(void **state)
{
	struct kw_path_rule rules[4] = {
		{ .kind = KW_PATH_READ, .index = 2, .len = 4, .path = "/srv" },
		{ .kind = KW_PATH_READ, .index = 1, .len = 4, .path = "/srv" },
		{ .kind = KW_PATH_EXEC, .index = 0, .len = 4, .path = "/srv" },
		{ .kind = KW_PATH_WRITE, .index = 0, .len = 4, .path = "/tmp" },
	};
	struct kw_policy pol = { .classes = KW_CLASS_FS, .paths = rules, .n_paths = 4 };
	struct kw_path_entry *e;
	size_t n;

	(void)state;
	assert_int_equal(kw_path_compile(&pol, 5, &e, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(e[0].key.slot, 5);
	assert_int_equal(e[0].key.len, 4);
	assert_int_equal(e[0].val.rule[KW_PK_READ], 1);
	assert_int_equal(e[0].val.rule[KW_PK_EXEC], KW_PATH_NONE); /* exec not governed */
	assert_int_equal(e[1].val.rule[KW_PK_WRITE], 0);
	assert_int_equal(e[1].key.path[4], 0);
	free(e);
	rules[3].path[0] = 't'; /* not absolute */
	assert_int_equal(kw_path_compile(&pol, 5, &e, &n), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefix_is_component_aware),
		cmocka_unit_test(test_prefixes_looked_up_longest_first),
		cmocka_unit_test(test_longest_prefix_decides),
		cmocka_unit_test(test_tie_goes_to_deny),
		cmocka_unit_test(test_read_and_write_are_separate),
		cmocka_unit_test(test_deny_governs_only_fs),
		cmocka_unit_test(test_root_rule_covers_everything),
		cmocka_unit_test(test_truncated_is_never_allowed),
		cmocka_unit_test(test_longest_path_that_fits),
		cmocka_unit_test(test_other_slot_rules_do_not_apply),
		cmocka_unit_test(test_scan_step_bounds),
		cmocka_unit_test(test_compile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
