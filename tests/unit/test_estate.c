/* SPDX-License-Identifier: Apache-2.0 */
/* The estate's parsers of untrusted text: a log line as an entries row,
 * addresses and CIDR ranges as the 32-hex-digit keys the queries compare
 * (known answers worked out by hand from RFC 4291's mapped form), and the
 * HTML escaper against markup a sandbox may put in a path or a comm. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "estate/entry.h"
#include "estate/ingest_pipe.h"
#include "estate/html.h"

static void addresses(void **state)
{
	char a[ESTATE_ADDR_LEN];

	(void)state;
	assert_true(estate_addr_hex("10.1.2.3", a));
	assert_string_equal(a, "00000000000000000000ffff0a010203");
	assert_true(estate_addr_hex("::1", a));
	assert_string_equal(a, "00000000000000000000000000000001");
	assert_true(estate_addr_hex("2001:db8::ff00:42:8329", a));
	assert_string_equal(a, "20010db8000000000000ff0000428329");
	assert_false(estate_addr_hex("10.1.2", a));
	assert_false(estate_addr_hex("example.org", a));
	assert_false(estate_addr_hex("1.2.3.4 ", a));
}

static void cidrs(void **state)
{
	char lo[ESTATE_ADDR_LEN], hi[ESTATE_ADDR_LEN];

	(void)state;
	assert_true(estate_cidr_range("10.0.0.0/8", lo, hi));
	assert_string_equal(lo, "00000000000000000000ffff0a000000");
	assert_string_equal(hi, "00000000000000000000ffff0affffff");
	/* host bits given are cleared */
	assert_true(estate_cidr_range("192.168.7.9/23", lo, hi));
	assert_string_equal(lo, "00000000000000000000ffffc0a80600");
	assert_string_equal(hi, "00000000000000000000ffffc0a807ff");
	assert_true(estate_cidr_range("127.0.0.1", lo, hi));
	assert_string_equal(lo, hi);
	assert_true(estate_cidr_range("0.0.0.0/0", lo, hi));
	assert_string_equal(lo, "00000000000000000000ffff00000000");
	assert_string_equal(hi, "00000000000000000000ffffffffffff");
	assert_true(estate_cidr_range("fe80::/10", lo, hi));
	assert_string_equal(lo, "fe800000000000000000000000000000");
	assert_string_equal(hi, "febfffffffffffffffffffffffffffff");
	assert_false(estate_cidr_range("10.0.0.0/33", lo, hi));
	assert_false(estate_cidr_range("10.0.0.0/", lo, hi));
	assert_false(estate_cidr_range("10.0.0.0/8x", lo, hi));
	assert_false(estate_cidr_range("::/129", lo, hi));
	assert_false(estate_cidr_range("/etc/passwd", lo, hi));
}

static void entry_rows(void **state)
{
	static const char connect[] =
		"{\"cgroup\":\"23471\",\"comm\":\"kw-netprobe\",\"decision\":\"deny\",\"enforced\":true,"
		"\"host\":\"::1\",\"pid\":31534,\"port\":18081,\"proto\":\"tcp\",\"rule\":\"net.connect:default\","
		"\"seq\":3,\"tool\":\"net.connect\",\"ts\":1795952651086419,\"uid\":0}";
	static const char open_entry[] =
		"{\"hostname\":\"h\",\"session\":\"s\",\"tool\":\"kwitness.open\",\"ts\":5}";
	static const char odd[] = "{\"decision\":7,\"port\":70000,\"seq\":\"x\",\"tool\":\"fs.open\","
				  "\"path\":\"/a\\u0000b\",\"enforced\":\"yes\"}";
	struct estate_entry e;

	(void)state;
	assert_int_equal(estate_entry_parse(&e, 2, connect, sizeof(connect) - 1), 0);
	assert_string_equal(e.tool, "net.connect");
	assert_string_equal(e.decision, "deny");
	assert_true(e.has_enforced && e.enforced);
	assert_true(e.has_seq && e.seq == 3 && e.has_ts && e.ts_us == 1795952651086419LL);
	assert_true(e.has_port && e.port == 18081);
	assert_string_equal(e.object, "[::1]:18081/tcp");
	assert_string_equal(e.addr, "00000000000000000000000000000001");
	assert_ptr_equal(e.text, connect);
	estate_entry_clear(&e);

	/* The open and close entries are not decisions, whatever they say. */
	assert_int_equal(estate_entry_parse(&e, 1, open_entry, sizeof(open_entry) - 1), 0);
	assert_null(e.decision);
	assert_false(e.has_seq);
	estate_entry_clear(&e);

	/* Wrong types are absent; a U+0000 cuts the column, not the row. */
	assert_int_equal(estate_entry_parse(&e, 3, odd, sizeof(odd) - 1), 0);
	assert_null(e.decision);
	assert_false(e.has_port);
	assert_false(e.has_seq);
	assert_false(e.has_enforced);
	assert_string_equal(e.path, "/a");
	estate_entry_clear(&e);

	assert_int_equal(estate_entry_parse(&e, 1, "[1]", 3), -22);
	assert_int_equal(estate_entry_parse(&e, 1, "{\"tool\":1}", 10), -22);
	assert_int_equal(estate_entry_parse(&e, 1, "{\"tool\":", 8), -22);
}

static void escaping(void **state)
{
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);

	(void)state;
	assert_non_null(f);
	html_escape(f, "<script>alert('x')</script>&\"\x1b[2J\x7f\tok");
	fclose(f);
	assert_string_equal(out, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"
				 "\\x1b[2J\\x7f\tok");
	free(out);
}

static const char *or_null(const char *s)
{
	return s ? s : "(null)";
}

/* A canonical line read by the log check's member scan (the ingest's path)
 * gives the columns the JSON parse gives (check.c's, report.c's path). */
static void canonical_rows(void **state)
{
	static const char *const lines[] = {
		"{\"cgroup\":\"23471\",\"comm\":\"kw-netprobe\",\"decision\":\"deny\",\"enforced\":true,"
		"\"host\":\"10.1.2.3\",\"pid\":31534,\"port\":18081,\"proto\":\"tcp\",\"rule\":\"r\","
		"\"seq\":3,\"tool\":\"net.connect\",\"ts\":1795952651086419,\"uid\":0}",
		"{\"decision\":7,\"enforced\":null,\"port\":70000,\"seq\":\"x\",\"tool\":\"fs.open\","
		"\"path\":\"/a\\u0000b\"}",
		"{\"access\":\"rw\",\"dev\":\"c 1:3\",\"enforced\":false,\"pid\":-4,\"tool\":\"dev\","
		"\"uid\":1.5}",
		"{\"family\":\"inet\",\"host\":\"::1\",\"nested\":{\"tool\":\"x\",\"seq\":9},"
		"\"tool\":\"net.bind\",\"type\":\"stream\",\"via\":\"a.example\"}",
		"{\"name\":\"kernel.x\",\"rule\":\"q\\\"uote\",\"tool\":\"sysctl\"}",
		"{\"enforced\":null,\"port\":5,\"tool\":\"net.listen\"}",
		"{\"hostname\":\"h\",\"seq\":1,\"tool\":\"kwitness.open\",\"ts\":5}",
		"{\"event\":\"exec\",\"proc\":\"p1\",\"tool\":\"proc\"}",
		"{\"tool\":1}",
		"{\"seq\":1}",
	};
	struct estate_entry a, b;
	char strs[512];

	(void)state;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		size_t n = strlen(lines[i]);
		int ra = estate_entry_parse(&a, 4, lines[i], n);
		int rb = estate_entry_parse_canonical(&b, 4, lines[i], n, strs);

		assert_true(n < sizeof(strs));
		assert_int_equal(ra, rb);
		if (ra) {
			assert_null(b.parsed);
			continue;
		}
		assert_string_equal(or_null(a.tool), or_null(b.tool));
		assert_string_equal(or_null(a.decision), or_null(b.decision));
		assert_string_equal(or_null(a.host), or_null(b.host));
		assert_string_equal(or_null(a.path), or_null(b.path));
		assert_string_equal(or_null(a.rule), or_null(b.rule));
		assert_string_equal(or_null(a.comm), or_null(b.comm));
		assert_string_equal(a.object, b.object);
		assert_string_equal(a.addr, b.addr);
		assert_true(a.has_seq == b.has_seq && a.seq == b.seq);
		assert_true(a.has_ts == b.has_ts && a.ts_us == b.ts_us);
		assert_true(a.has_pid == b.has_pid && a.pid == b.pid);
		assert_true(a.has_uid == b.has_uid && a.uid == b.uid);
		assert_true(a.has_port == b.has_port && a.port == b.port);
		assert_true(a.has_enforced == b.has_enforced && a.enforced == b.enforced);
		/* only the lines whose other members are read get a tree */
		assert_int_equal(b.parsed != NULL, i == 1 || i == 4 || i >= 6);
		estate_entry_clear(&a);
		estate_entry_clear(&b);
	}
}

/* The verifying thread ahead of the writer: every entry arrives, in order,
 * with its own copy of the line; a writer that fails stops the verifier at
 * its next entry, and what was in the ring is released (ASan: no leak). */
struct pipe_run {
	struct estate_pipe *p;
	int lines, fail_at, stored, stopped_at;
	uint64_t next;
};

static int pipe_verify(void *arg)
{
	struct pipe_run *r = arg;
	char line[96];

	for (int i = 1; i <= r->lines; i++) {
		bool oom = false;
		struct estate_entry *e;
		/* every tenth a proc line: the full parse, a tree to release */
		int n = snprintf(line, sizeof(line), "{\"proc\":\"p\",\"seq\":%d,\"tool\":\"%s\"}", i,
				 i % 10 ? "net.connect" : "proc");

		e = estate_pipe_slot(r->p, (uint64_t)i, line, (size_t)n, &oom);
		if (!e) {
			r->stopped_at = i;
			return oom ? -12 : 5;
		}
		memset(line, 'x', sizeof(line)); /* the slot holds its own copy */
		estate_pipe_push(r->p);
	}
	return 0;
}

static int pipe_store(void *ctx, struct estate_entry *e)
{
	struct pipe_run *r = ctx;

	assert_int_equal(e->line, r->next + 1);
	assert_true(e->has_seq && e->seq == (int64_t)e->line);
	assert_string_equal(e->tool, e->line % 10 ? "net.connect" : "proc");
	assert_true(e->len && e->text[e->len - 1] == '}');
	r->next = e->line;
	if (r->fail_at && (int)e->line == r->fail_at)
		return -5;
	r->stored++;
	return 0;
}

static void pipe_order_and_stop(void **state)
{
	struct estate_pipe *p = estate_pipe_new();
	struct pipe_run r = { .p = p, .lines = 5000 };
	int store_rc;

	(void)state;
	assert_non_null(p);
	assert_int_equal(estate_pipe_run(p, pipe_verify, &r, pipe_store, &r, &store_rc), 0);
	assert_int_equal(store_rc, 0);
	assert_int_equal(r.stored, 5000);
	assert_int_equal(r.stopped_at, 0);

	/* the same ring again, with a writer that fails at entry 1,000 */
	r = (struct pipe_run){ .p = p, .lines = 5000, .fail_at = 1000 };
	assert_int_equal(estate_pipe_run(p, pipe_verify, &r, pipe_store, &r, &store_rc), 5);
	assert_int_equal(store_rc, -5);
	assert_int_equal(r.stored, 999);
	assert_true(r.stopped_at > 1000 && r.stopped_at < 5000);
	estate_pipe_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(addresses),
		cmocka_unit_test(cidrs),
		cmocka_unit_test(entry_rows),
		cmocka_unit_test(canonical_rows),
		cmocka_unit_test(pipe_order_and_stop),
		cmocka_unit_test(escaping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
