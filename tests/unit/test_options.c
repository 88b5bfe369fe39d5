/* SPDX-License-Identifier: Apache-2.0 */
/* The command-line option parser every command uses: what each kind of row
 * sets, --help, the three ways of saying a bad option, number ranges, the
 * options a command reads itself, and operands after the options. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/options.h"

static FILE *usage_to;
static int usage_calls;

static void usage(FILE *f)
{
	usage_to = f;
	usage_calls++;
}

/* Runs the parser over words with stderr captured into said. */
struct run {
	const char *text, *key;
	bool json;
	int64_t jobs;
	int verbose;
	int own[4], nown;
	const char *own_arg[4];
	int result, status, optind_after;
	char said[512];
};

static void parse(struct run *r, enum cli_on_bad on_bad, bool in_order, const char *const *words)
{
	const struct cli_opt opts[] = {
		{ "text", 0, CLI_TEXT, &r->text },
		{ "key", 'k', CLI_TEXT, &r->key },
		{ "json", 0, CLI_FLAG, &r->json },
		{ "jobs", 0, CLI_NUMBER, &r->jobs, .min = 1, .max = 64, .bad = "needs a number from 1 to 64" },
		{ "verbose", 'v', CLI_COUNT, &r->verbose },
		{ "witness", 0, CLI_OWN, .id = 7 },
		{ "help", 'h', CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness test", .usage = usage, .opts = opts,
				 .on_bad = on_bad, .in_order = in_order };
	char *argv[16];
	char tmpl[] = "/tmp/kwitness-test-options.XXXXXX";
	int argc = 0, saved = dup(STDERR_FILENO), fd = mkstemp(tmpl), c;
	ssize_t n;

	assert_true(saved >= 0 && fd >= 0);
	unlink(tmpl);
	argv[argc++] = (char *)"test";
	for (; *words; words++)
		argv[argc++] = (char *)*words;
	argv[argc] = NULL;
	usage_to = NULL;
	usage_calls = 0;
	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	while ((c = cli_next_option(&p, argc, argv)) > 0) {
		assert_true(r->nown < 4);
		r->own[r->nown] = c;
		r->own_arg[r->nown++] = optarg;
	}
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	r->result = c;
	r->status = p.status;
	r->optind_after = optind;
	n = pread(fd, r->said, sizeof(r->said) - 1, 0);
	r->said[n > 0 ? n : 0] = '\0';
	close(fd);
}

#define WORDS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void test_rows_set_what_they_say(void **state)
{
	struct run r = { .jobs = 3 };

	(void)state;
	parse(&r, CLI_BAD_SAY_USAGE, false,
	      WORDS("--text", "a", "-k", "K", "--json", "--jobs", "64", "-vv", "--verbose",
		    "--witness", "w1", "--witness=w2", "operand"));
	assert_int_equal(r.result, CLI_OPTIONS_DONE);
	assert_string_equal(r.text, "a");
	assert_string_equal(r.key, "K");
	assert_true(r.json);
	assert_int_equal(r.jobs, 64);
	assert_int_equal(r.verbose, 3);
	assert_int_equal(r.nown, 2);
	assert_int_equal(r.own[0], 7);
	assert_string_equal(r.own_arg[0], "w1");
	assert_string_equal(r.own_arg[1], "w2");
	assert_int_equal(r.optind_after, 13); /* getopt moved the operand last */
	assert_string_equal(r.said, "");
	assert_int_equal(usage_calls, 0);
}

static void test_help(void **state)
{
	struct run r = { 0 };

	(void)state;
	parse(&r, CLI_BAD_SAY_USAGE, false, WORDS("--json", "-h", "--text", "never"));
	assert_int_equal(r.result, CLI_OPTIONS_EXIT);
	assert_int_equal(r.status, 0);
	assert_int_equal(usage_calls, 1);
	assert_ptr_equal(usage_to, stdout);
	assert_null(r.text); /* nothing after --help is read */
}

/* Every bad option gets one line naming it and where the help is, the
 * nearest known option for a near miss, and never the whole usage. */
static void test_bad_options(void **state)
{
	struct run r = { 0 };

	(void)state;
	parse(&r, CLI_BAD_SAY_USAGE, false, WORDS("--bogus"));
	assert_int_equal(r.result, CLI_OPTIONS_EXIT);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.said, "kwitness test: unknown option '--bogus'; see `kwitness test --help`\n");
	assert_int_equal(usage_calls, 0);

	memset(&r, 0, sizeof(r));
	parse(&r, CLI_BAD_SAY, false, WORDS("--json", "--jsno"));
	assert_int_equal(r.status, 2);
	assert_string_equal(r.said, "kwitness test: unknown option '--jsno' (did you mean --json?); "
				    "see `kwitness test --help`\n");
	assert_int_equal(usage_calls, 0);

	/* a long option has no letter unless its row gives one */
	memset(&r, 0, sizeof(r));
	parse(&r, CLI_BAD_SAY, false, WORDS("-j"));
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.said, "option '-j'"));

	/* an option without its argument */
	memset(&r, 0, sizeof(r));
	parse(&r, CLI_BAD_USAGE, false, WORDS("--text"));
	assert_int_equal(r.status, 2);
	assert_string_equal(r.said, "kwitness test: option '--text' needs an argument; "
				    "see `kwitness test --help`\n");
	assert_int_equal(usage_calls, 0);
}

static void test_numbers(void **state)
{
	static const char *const bad[] = { "0", "65", "-1", "1x", "", "99999999999999999999" };
	struct run r;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&r, 0, sizeof(r));
		r.jobs = 5;
		parse(&r, CLI_BAD_SAY_USAGE, false, WORDS("--jobs", bad[i]));
		assert_int_equal(r.result, CLI_OPTIONS_EXIT);
		assert_int_equal(r.status, 2);
		assert_int_equal(r.jobs, 5); /* untouched */
		assert_string_equal(r.said, "kwitness test: --jobs needs a number from 1 to 64\n");
		assert_int_equal(usage_calls, 0);
	}
	memset(&r, 0, sizeof(r));
	parse(&r, CLI_BAD_SAY_USAGE, false, WORDS("--jobs", "1"));
	assert_int_equal(r.result, CLI_OPTIONS_DONE);
	assert_int_equal(r.jobs, 1);
}

/* in_order: the options end at the first operand; what follows is its own. */
static void test_in_order(void **state)
{
	struct run r = { 0 };

	(void)state;
	parse(&r, CLI_BAD_USAGE, true, WORDS("--json", "cmd", "--text", "x"));
	assert_int_equal(r.result, CLI_OPTIONS_DONE);
	assert_true(r.json);
	assert_null(r.text);
	assert_int_equal(r.optind_after, 2);

	memset(&r, 0, sizeof(r));
	parse(&r, CLI_BAD_USAGE, false, WORDS("--json", "cmd", "--text", "x"));
	assert_string_equal(r.text, "x");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_set_what_they_say),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_in_order),
	};

	return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
