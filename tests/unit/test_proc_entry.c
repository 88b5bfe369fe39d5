// SPDX-License-Identifier: Apache-2.0
/* "proc" entries (user/collector/proc_entry.c): the collector's own "seen"
 * entry, a whole argv (its last NUL dropped), a record whose path and argv
 * claim more than it holds; every entry is its own RFC 8785 form. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "collector/proc_entry.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seen),
		cmocka_unit_test(test_exec_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
