/* SPDX-License-Identifier: Apache-2.0 */
/* The streaming decision log check (logverify.c): the transcript hash against
 * the known answer and against the tree-per-line path, chunking, and the
 * structure rules — sequence gaps, late entries, duplicates, trailer counts,
 * completeness, entries after the trailer, collector notes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "collector/transcript.h"
#include "trace/logverify.h"
#include "trace/record.h"

#define SID "0123456789abcdef0123456789abcdef"
#define OPEN "{\"bundle_hash\":\"sha256:b7\",\"image_digest\":\"sha256:aa\",\"mode\":\"enforce\"," \
	     "\"sandbox_id\":\"spiffe://x/y\",\"session\":\"" SID "\",\"tool\":\"kwitness.open\",\"ts\":1}\n"
#define DEC(seq, d) "{\"decision\":\"" d "\",\"seq\":" #seq ",\"tool\":\"net.connect\"}\n"
#define CLOSE(complete, n, deny, dropped, next, gaps)                                              \
	"{\"complete\":" complete ",\"decisions\":" #n ",\"denials\":" #deny ",\"dropped\":" #dropped \
	",\"next_seq\":" #next ",\"seq_gaps\":" #gaps ",\"session\":\"" SID                          \
	"\",\"tool\":\"kwitness.close\",\"ts\":2,\"unrecorded\":0}\n"

/* Checks text fed in pieces of step bytes (0: at once). */
static void check(struct kw_log_check *c, const char *text, size_t step)
{
	size_t len = strlen(text);

	memset(c, 0, sizeof(*c));
	assert_int_equal(kw_log_check_init(c), 0);
	if (!step)
		step = len ? len : 1;
	for (size_t i = 0; i < len; i += step)
		assert_int_equal(kw_log_check_feed(c, text + i, len - i < step ? len - i : step), 0);
	assert_int_equal(kw_log_check_end(c), 0);
}

static void test_known_answer(void **state)
{
	/* The known-answer decisions (docs/record.md), in canonical form. */
	static const char log[] =
		"{\"decision\":\"permit\",\"path\":\"/work/src\",\"tool\":\"fs.read\"}\n"
		"{\"decision\":\"deny\",\"host\":\"api.example.org\",\"tool\":\"net.connect\"}\n";
	struct kw_log_check c;
	char old[KW_DIGEST_STR_MAX], err[200];
	uint64_t n;

	(void)state;
	for (size_t step = 0; step <= 7; step += 7) {
		check(&c, log, step);
		assert_int_equal(c.problem, KW_VERIFY_OK);
		assert_string_equal(c.hash, "sha256:ffce23badc0a325b93ac587374132bbaae4f7798a4d57f84cf135a312f4a6aea");
		assert_int_equal(c.entries, 2);
		assert_false(c.complete); /* no open entry, no trailer */
		assert_non_null(strstr(c.incomplete_why, "no kwitness.open entry and no trailer"));
	}
	/* The tree-per-line path agrees on a collector-shaped log too. */
	static const char full[] = OPEN DEC(0, "permit") DEC(1, "deny") CLOSE("true", 2, 1, 0, 2, 0);
	check(&c, full, 1);
	assert_int_equal(kw_transcript_from_text(full, strlen(full), old, &n, err, sizeof(err)), 0);
	assert_string_equal(c.hash, old);
	assert_int_equal(c.entries, n);
	assert_true(c.complete);
	assert_false(c.inconsistent);
	assert_int_equal(c.decisions, 2);
	assert_int_equal(c.denials, 1);
	kw_log_check_free(&c);
}

/* The open entry's machine id and the close entry's evidence digest are
 * kept for TPM appraisal; an open entry's evidence is not the close's. */
static void test_machine_id_and_close_evidence(void **state)
{
	static const char log[] =
		"{\"evidence\":\"sha256:0a\",\"machine_id\":\"3d12\",\"session\":\"" SID
		"\",\"tool\":\"kwitness.open\",\"ts\":1}\n"
		"{\"complete\":true,\"decisions\":0,\"denials\":0,\"dropped\":0,\"evidence\":\"sha256:0b\","
		"\"next_seq\":0,\"seq_gaps\":0,\"session\":\"" SID "\",\"tool\":\"kwitness.close\",\"ts\":2}\n";
	static const char plain[] = OPEN CLOSE("true", 0, 0, 0, 0, 0);
	struct kw_log_check c;
	char out[64];

	(void)state;
	check(&c, log, 5);
	kw_log_field_string(&c.machine_id, out, sizeof(out));
	assert_string_equal(out, "3d12");
	kw_log_field_string(&c.close_evidence, out, sizeof(out));
	assert_string_equal(out, "sha256:0b");
	kw_log_field_string(&c.close_evidence, out, 9); /* too small: none */
	assert_string_equal(out, "");
	kw_log_check_free(&c);
	check(&c, plain, 0);
	kw_log_field_string(&c.close_evidence, out, sizeof(out));
	assert_string_equal(out, "");
	kw_log_check_free(&c);
}

static void test_late_entry_fills_its_gap(void **state)
{
	struct kw_log_check c;

	(void)state;
	check(&c, OPEN DEC(0, "permit") DEC(2, "permit") DEC(1, "permit") CLOSE("true", 3, 0, 0, 3, 0), 0);
	assert_false(c.inconsistent);
	assert_true(c.complete);
	assert_int_equal(c.seq_late, 1);
	assert_int_equal(c.seq_missing, 0);
}

static void test_duplicate_seq(void **state)
{
	struct kw_log_check c;

	(void)state;
	check(&c, OPEN DEC(0, "permit") DEC(1, "permit") DEC(1, "permit") CLOSE("true", 3, 0, 0, 2, 0), 0);
	assert_true(c.inconsistent);
	assert_non_null(strstr(c.inconsistent_why, "seq 1 appears twice"));
}

/* A number seen before that lies below an open gap (0, 2, 0: seq 1 is still
 * missing) is a duplicate, not a late entry filling the gap. */
static void test_duplicate_below_open_gap(void **state)
{
	struct kw_log_check c;

	(void)state;
	/* The trailer claims complete, no gaps. */
	check(&c, OPEN DEC(0, "permit") DEC(2, "permit") DEC(0, "permit") CLOSE("true", 3, 0, 0, 3, 0), 0);
	assert_true(c.inconsistent);
	assert_false(c.complete);
	assert_non_null(strstr(c.inconsistent_why, "line 4: seq 0 appears twice"));
	assert_int_equal(c.seq_late, 0);
	assert_int_equal(c.seq_missing, 1);
	kw_log_check_free(&c);
	/* The same under an honest trailer (one gap, one drop): still a duplicate. */
	check(&c, OPEN DEC(0, "permit") DEC(2, "permit") DEC(0, "permit") CLOSE("false", 3, 0, 1, 3, 1), 0);
	assert_true(c.inconsistent);
	assert_non_null(strstr(c.inconsistent_why, "line 4: seq 0 appears twice"));
	kw_log_check_free(&c);
}

static void test_gap_counted_by_trailer(void **state)
{
	struct kw_log_check c;

	(void)state;
	check(&c, OPEN DEC(0, "permit") DEC(2, "deny") CLOSE("false", 2, 1, 1, 3, 1), 0);
	assert_false(c.inconsistent);
	assert_false(c.complete);
	assert_non_null(strstr(c.incomplete_why, "complete:false, 1 dropped, 1 seq gaps"));
	/* A trailer that hides the gap. */
	check(&c, OPEN DEC(0, "permit") DEC(2, "deny") CLOSE("true", 2, 1, 0, 3, 0), 0);
	assert_true(c.inconsistent);
	assert_non_null(strstr(c.inconsistent_why, "seq gaps"));
	/* Numbers missing at the end (below next_seq) are gaps too. */
	check(&c, OPEN DEC(0, "permit") CLOSE("false", 1, 0, 2, 3, 2), 0);
	assert_false(c.inconsistent);
	assert_false(c.complete);
}

static void test_trailer_counts(void **state)
{
	struct kw_log_check c;

	(void)state;
	check(&c, OPEN DEC(0, "permit") CLOSE("true", 2, 0, 0, 1, 0), 0);
	assert_true(c.inconsistent);
	assert_non_null(strstr(c.inconsistent_why, "counts 2 decisions, the log holds 1"));
	check(&c, OPEN DEC(0, "deny") CLOSE("true", 1, 0, 0, 1, 0), 0);
	assert_true(c.inconsistent);
	assert_non_null(strstr(c.inconsistent_why, "denials"));
	check(&c, OPEN DEC(0, "deny") DEC(5, "deny") CLOSE("false", 2, 2, 4, 3, 0), 0);
	assert_true(c.inconsistent);
	assert_non_null(strstr(c.inconsistent_why, "beyond the trailer's next_seq"));
	check(&c, OPEN DEC(0, "permit") CLOSE("true", 1, 0, 0, 1, 0) DEC(1, "permit"), 0);
	assert_true(c.inconsistent);
	assert_non_null(strstr(c.inconsistent_why, "after the trailer"));
}

/* A proc entry (docs/decision-log.md, "proc") is numbered but not a
 * decision: its seq fills the sequence, the trailer's counts leave it out;
 * one without a seq is inconsistent like a decision without one. */
#define PROC(seq) "{\"event\":\"fork\",\"pid\":7,\"proc\":\"7-9\",\"seq\":" #seq ",\"tool\":\"proc\"}\n"
static void test_proc_entries(void **state)
{
	struct kw_log_check c;

	(void)state;
	check(&c, OPEN PROC(0) DEC(1, "deny") PROC(2) CLOSE("true", 1, 1, 0, 3, 0), 0);
	assert_false(c.inconsistent);
	assert_true(c.complete);
	assert_int_equal(c.decisions, 1);
	check(&c, OPEN PROC(0) DEC(1, "deny") CLOSE("true", 2, 1, 0, 2, 0), 0);
	assert_true(c.inconsistent);
	assert_non_null(strstr(c.inconsistent_why, "counts 2 decisions, the log holds 1"));
	check(&c, OPEN DEC(0, "deny") CLOSE("true", 1, 1, 0, 2, 0), 0);
	assert_true(c.inconsistent); /* the proc entry's number is missing: a gap */
	check(&c, OPEN "{\"pid\":7,\"proc\":\"7-9\",\"tool\":\"proc\"}\n" DEC(0, "deny")
		  CLOSE("true", 1, 1, 0, 1, 0), 0);
	assert_true(c.inconsistent);
}

/* A trailer of a close with kill, JCS order (kill_failed before killed). */
#define KCLOSE(complete, failed)                                                                   \
	"{\"complete\":" complete ",\"decisions\":1,\"denials\":0,\"dropped\":0,\"kill_failed\":" \
	#failed ",\"killed\":0,\"next_seq\":1,\"seq_gaps\":0,\"session\":\"" SID                \
	"\",\"still_running\":" #failed ",\"tool\":\"kwitness.close\",\"ts\":2,\"unrecorded\":0}\n"

/* A kill at close that did not end every process: the trailer that admits
 * it is incomplete; one that claims complete all the same is inconsistent;
 * a trailer from before kill_failed (none) still verifies complete. */
static void test_kill_failed(void **state)
{
	struct kw_log_check c;

	(void)state;
	check(&c, OPEN DEC(0, "permit") KCLOSE("false", 1), 0);
	assert_false(c.inconsistent);
	assert_false(c.complete);
	assert_non_null(strstr(c.incomplete_why, "1 process(es) a kill at close did not end"));
	check(&c, OPEN DEC(0, "permit") KCLOSE("true", 2), 0);
	assert_true(c.inconsistent);
	assert_false(c.complete);
	assert_non_null(strstr(c.inconsistent_why, "counts 2 processes a kill did not end"));
	check(&c, OPEN DEC(0, "permit") KCLOSE("true", 0), 0);
	assert_false(c.inconsistent);
	assert_true(c.complete);
	check(&c, OPEN DEC(0, "permit") CLOSE("true", 1, 0, 0, 1, 0), 0);
	assert_false(c.inconsistent);
	assert_true(c.complete);
}

static void test_no_trailer_sealed_notes(void **state)
{
	struct kw_log_check c;

	(void)state;
	check(&c, OPEN DEC(0, "permit") DEC(1, "permit"), 0);
	assert_false(c.complete);
	assert_false(c.inconsistent);
	assert_non_null(strstr(c.incomplete_why, "no trailer"));
	check(&c, OPEN DEC(0, "permit")
		  "{\"complete\":false,\"decisions\":1,\"denials\":0,\"sealed\":\"stopped\",\"session\":\"" SID
		  "\",\"tool\":\"kwitness.close\",\"ts\":3}\n", 0);
	assert_false(c.inconsistent);
	assert_false(c.complete);
	assert_non_null(strstr(c.incomplete_why, "sealed"));
	/* A collector note between decisions: counted, not a decision. */
	check(&c, OPEN DEC(0, "permit") "{\"downtime_us\":5,\"tool\":\"kwitness.resume\"}\n" DEC(1, "permit")
		  CLOSE("true", 2, 0, 0, 2, 0), 0);
	assert_false(c.inconsistent);
	assert_true(c.complete);
	assert_int_equal(c.resumes, 1);
	assert_int_equal(c.decisions, 2);
	assert_int_equal(c.entries, 5);
}

static void test_syntax(void **state)
{
	struct kw_log_check c;

	(void)state;
	check(&c, OPEN DEC(0, "permit") "{\"a\":1}", 0);
	assert_int_equal(c.problem, KW_VERIFY_LOG_TRUNCATED);
	check(&c, OPEN "{\"a\":1}\r\n", 0);
	assert_int_equal(c.problem, KW_VERIFY_LOG_NOT_CANONICAL);
	check(&c, OPEN "[1]\n", 0);
	assert_int_equal(c.problem, KW_VERIFY_LOG_MALFORMED);
	check(&c, OPEN "\n", 0);
	assert_int_equal(c.problem, KW_VERIFY_LOG_MALFORMED);
	check(&c, "{\"a\":\"\xc3\x28\"}\n", 0);
	assert_int_equal(c.problem, KW_VERIFY_LOG_MALFORMED);
	assert_non_null(strstr(c.why, "UTF-8"));
}

static void test_long_line(void **state)
{
	struct kw_log_check c;
	size_t n = KW_LOG_LINE_MAX + 10;
	char *big = malloc(n + 1);

	(void)state;
	assert_non_null(big);
	memset(big, 'x', n);
	big[n] = '\0';
	check(&c, big, 4096);
	assert_int_equal(c.problem, KW_VERIFY_LOG_LINE_TOO_LONG);
	free(big);
}

static void test_many_gaps(void **state)
{
	struct kw_buf log = { 0 };
	struct kw_log_check c;
	char line[256];
	int n = 3000;

	(void)state;
	assert_int_equal(kw_buf_puts(&log, OPEN), 0);
	for (int i = 0; i < n; i++) { /* every other number missing */
		snprintf(line, sizeof(line), "{\"decision\":\"permit\",\"seq\":%d,\"tool\":\"t\"}\n", 2 * i);
		assert_int_equal(kw_buf_puts(&log, line), 0);
	}
	snprintf(line, sizeof(line),
		 "{\"complete\":false,\"decisions\":%d,\"denials\":0,\"dropped\":%d,\"next_seq\":%d,"
		 "\"seq_gaps\":%d,\"session\":\"" SID "\",\"tool\":\"kwitness.close\",\"ts\":2}\n",
		 n, n, 2 * n, n);
	assert_int_equal(kw_buf_puts(&log, line), 0);
	check(&c, log.data, 0);
	assert_false(c.inconsistent);
	assert_true(c.gaps_merged);
	assert_int_equal(c.n_gaps, KW_LOG_GAP_RANGES);
	assert_int_equal(c.seq_missing, n - 1);
	assert_false(c.complete);
	kw_buf_free(&log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_answer),
		cmocka_unit_test(test_machine_id_and_close_evidence),
		cmocka_unit_test(test_late_entry_fills_its_gap),
		cmocka_unit_test(test_duplicate_seq),
		cmocka_unit_test(test_duplicate_below_open_gap),
		cmocka_unit_test(test_gap_counted_by_trailer),
		cmocka_unit_test(test_trailer_counts),
		cmocka_unit_test(test_proc_entries),
		cmocka_unit_test(test_kill_failed),
		cmocka_unit_test(test_no_trailer_sealed_notes),
		cmocka_unit_test(test_syntax),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_many_gaps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
