// SPDX-License-Identifier: Apache-2.0
/* "proc" entries (user/collector/proc_entry.c): the collector's own "seen"
 * entry, a whole argv (its last NUL dropped), a record whose path and argv
 * claim more than it holds, an "open" entry with a cut argv and its
 * argv_sha256; every entry is its own RFC 8785 form. The start time of
 * /proc/PID/stat lines whose comm is hostile. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "collector/proc_entry.h"
#include "collector/proc_stat.h"
#include "jcs/jcs.h"

static void assert_canonical(const struct kw_buf *b)
{
	struct kw_buf canon = { 0 };
	struct jcs_error je = { 0 };

	assert_int_equal(jcs_canonicalize(b->data, b->len, &canon, &je), 0);
	assert_int_equal(canon.len, b->len);
	assert_memory_equal(canon.data, b->data, b->len);
	kw_buf_free(&canon);
}

static void test_seen(void **state)
{
	struct kw_proc_facts f = {
		.seq = 9, .ts_us = 1700000000000001, .event = "seen", .pid = 77,
		.start_ns = 123456789012345ULL, .has_cgroup = true, .cgroup = 18446744073709551615ULL,
		.comm = "a\"b", .comm_len = 3,
	};
	struct kw_buf b = { 0 };
	char ref[KW_PROC_REF_MAX];

	(void)state;
	assert_int_equal(kw_proc_ref(ref, 4294967295U, 18446744073709551615ULL), 31); /* the longest: KW_PROC_REF_MAX - 1 */
	assert_string_equal(ref, "4294967295-18446744073709551615");
	assert_int_equal(kw_proc_facts_entry(&f, &b), 0);
	assert_string_equal(b.data, "{\"cgroup\":\"18446744073709551615\",\"comm\":\"a\\\"b\","
				    "\"event\":\"seen\",\"pid\":77,\"proc\":\"77-123456789012345\","
				    "\"seq\":9,\"tool\":\"proc\",\"ts\":1700000000000001}");
	assert_canonical(&b);
	kw_buf_free(&b);
}

static void test_exec_record(void **state)
{
	unsigned char rec[sizeof(struct kw_ev_task) + 32] = { 0 };
	struct kw_ev_task *ev = (struct kw_ev_task *)rec;
	struct kw_proc_facts f;
	struct kw_buf b = { 0 };

	(void)state;
	ev->h.kind = KW_EV_PROC_EXEC;
	ev->h.pid = 5;
	ev->h.start_ns = 6;
	ev->ppid = 1;
	ev->parent_start_ns = 2;
	memcpy(ev + 1, "/bin/lsls\0-l\0", 13);
	ev->path_len = 7;
	ev->argv_len = ev->argv_full = 6; /* whole: "ls\0-l\0" */
	assert_int_equal(kw_proc_event_facts(rec, sizeof(*ev) + 13, 0, &f), 0);
	assert_int_equal(f.argv_len, 5);
	assert_false(f.argv_full > f.argv_len);
	assert_int_equal(kw_proc_facts_entry(&f, &b), 0);
	assert_non_null(strstr(b.data, "\"argv\":\"ls\\u0000-l\",\"cgroup\""));
	assert_null(strstr(b.data, "argv_truncated"));
	assert_non_null(strstr(b.data, "\"exe\":\"/bin/ls\""));
	assert_canonical(&b);
	/* a path and argv past the record's end, a path past its bound */
	assert_int_equal(kw_proc_event_facts(rec, sizeof(*ev) + 12, 0, &f), -EINVAL);
	ev->path_len = KW_PATH_MAX;
	assert_int_equal(kw_proc_event_facts(rec, sizeof(rec), 0, &f), -EINVAL);
	ev->path_len = 0;
	ev->argv_len = KW_ARGV_MAX + 1;
	assert_int_equal(kw_proc_event_facts(rec, sizeof(rec), 0, &f), -EINVAL);
	ev->argv_len = 0;
	ev->h.kind = KW_EV_NET_CONNECT;
	assert_int_equal(kw_proc_event_facts(rec, sizeof(rec), 0, &f), -EINVAL);
	kw_buf_free(&b);
}

static void test_open_cut_argv(void **state)
{
	static const char sha[] = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	struct kw_proc_facts f = {
		.seq = 3, .ts_us = 1, .event = "open", .pid = 8, .start_ns = 9, .has_parent = true,
		.ppid = 1, .parent_start_ns = 2, .argv = "ab\0c", .argv_len = 4, .argv_full = 5000,
		.argv_sha256 = sha,
	};
	struct kw_buf b = { 0 };

	(void)state;
	assert_int_equal(kw_proc_facts_entry(&f, &b), 0);
	/* argv_sha256 sorts between argv_len and argv_truncated */
	assert_non_null(strstr(b.data, "\"argv\":\"ab\\u0000c\",\"argv_len\":5000,\"argv_sha256\":\""
					"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\","
					"\"argv_truncated\":true,"));
	assert_non_null(strstr(b.data, "\"event\":\"open\""));
	assert_canonical(&b);
	/* a whole argv has no hash, whatever the facts say */
	kw_buf_reset(&b);
	f.argv_full = 4;
	assert_int_equal(kw_proc_facts_entry(&f, &b), 0);
	assert_null(strstr(b.data, "argv_sha256"));
	kw_buf_free(&b);
}

static void test_stat_starttime(void **state)
{
	static const char fields[] = " S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 19 20\n";
	char line[256];
	unsigned long long t = 0;

	(void)state;
	snprintf(line, sizeof(line), "77 (a) b ) c)%s", fields); /* a comm of spaces and ')' */
	assert_int_equal(kw_proc_stat_starttime(line, strlen(line), &t), 0);
	assert_int_equal(t, 4242);
	/* a comm that mimics the fields: the last ')' still ends it */
	snprintf(line, sizeof(line), "77 ( S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 999)%s", fields);
	assert_int_equal(kw_proc_stat_starttime(line, strlen(line), &t), 0);
	assert_int_equal(t, 4242);
	/* cut before field 22, no ')', a number too large, not a number */
	assert_int_equal(kw_proc_stat_starttime(line, strlen(line) - 12, &t), -EINVAL);
	assert_int_equal(kw_proc_stat_starttime("77 (x S 1", 9, &t), -EINVAL);
	snprintf(line, sizeof(line), "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 99999999999999999999 1");
	assert_int_equal(kw_proc_stat_starttime(line, strlen(line), &t), -EINVAL);
	snprintf(line, sizeof(line), "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 12x 1");
	assert_int_equal(kw_proc_stat_starttime(line, strlen(line), &t), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seen),
		cmocka_unit_test(test_exec_record),
		cmocka_unit_test(test_open_cut_argv),
		cmocka_unit_test(test_stat_starttime),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
