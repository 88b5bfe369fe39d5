/* SPDX-License-Identifier: Apache-2.0 */
/* RFC 8785: conformance vectors, every refusal with its line and column, the
 * number formatting over a million doubles (and against node when present),
 * the emitter and jcs_dump. */
#include <dirent.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "../../user/jcs/jcs_internal.h" /* jcs_put_u64 */

static char vectors[4096];

/* libm-free helpers: the test links only what the library links. */
static double pow10i(int e)
{
	double r = 1;
	for (; e > 0; e--)
		r *= 10;
	for (; e < 0; e++)
		r /= 10;
	return r;
}

static double pow2i(int e)
{
	uint64_t bits;
	double v;
	if (e >= -1022)
		bits = (uint64_t)(e + 1023) << 52;
	else
		bits = 1ULL << (e + 1074);
	memcpy(&v, &bits, sizeof(v));
	return v;
}

static void vec_path(char *out, size_t n, const char *rel)
{
	snprintf(out, n, "%s/%s", vectors, rel);
}

static void read_vec(const char *rel, struct kw_buf *b)
{
	char path[4200];
	vec_path(path, sizeof(path), rel);
	int rc = kw_read_file(path, 1 << 26, b);
	if (rc)
		fail_msg("cannot read %s: %s", path, strerror(-rc));
}

/* Canonical form of s, or NULL; *err filled. Caller frees. */
static char *canon(const char *s, size_t n, struct jcs_error *err)
{
	struct kw_buf out = {0};
	int rc = jcs_canonicalize(s, n, &out, err);
	if (rc) {
		assert_int_equal(rc, -EINVAL);
		assert_int_equal(out.len, 0);
		kw_buf_free(&out);
		return NULL;
	}
	if (!out.data)
		return strdup("");
	return out.data;
}

static void expect_canon(const char *in, const char *want)
{
	struct jcs_error err = {0};
	char *got = canon(in, strlen(in), &err);
	if (!got)
		fail_msg("refused %s: %zu:%zu: %s", in, err.line, err.column, err.message);
	if (strcmp(got, want))
		fail_msg("canonical form of %s\n  want %s\n  got  %s", in, want, got);
	free(got);
}

static void expect_refused_n(const char *in, size_t n, size_t line, size_t col, const char *msg)
{
	struct jcs_error err = {0};
	char *got = canon(in, n, &err);
	if (got)
		fail_msg("accepted %.*s as %s", (int)n, in, got);
	if (err.line != line || err.column != col || !strstr(err.message, msg))
		fail_msg("input %.*s: want %zu:%zu \"%s\", got %zu:%zu \"%s\"", (int)n, in, line, col,
			 msg, err.line, err.column, err.message);
	/* jcs_parse applies the same checks and reports the same place. */
	struct jcs_error err2 = {0};
	json_t *v = jcs_parse(in, n, &err2);
	assert_null(v);
	assert_int_equal(err2.line, line);
	assert_int_equal(err2.column, col);
}

static void expect_dump(json_t *v, const char *want);
static void expect_dump_fails(json_t *v);

static void expect_refused(const char *in, size_t line, size_t col, const char *msg)
{
	expect_refused_n(in, strlen(in), line, col, msg);
}

/* --- conformance vectors ------------------------------------------------ */

static void hex_to_bytes(const char *hex, struct kw_buf *out)
{
	for (const char *p = hex; *p;) {
		unsigned v;
		int used;
		if (sscanf(p, " %2x%n", &v, &used) != 1)
			break;
		char c = (char)v;
		assert_int_equal(kw_buf_append(out, &c, 1), 0);
		p += used;
	}
}

static void replace_once(struct kw_buf *b, const char *from, const char *to)
{
	const char *at = memmem(b->data, b->len, from, strlen(from));
	struct kw_buf r = {0};

	assert_non_null(at);
	assert_int_equal(kw_buf_append(&r, b->data, (size_t)(at - b->data)), 0);
	assert_int_equal(kw_buf_puts(&r, to), 0);
	assert_int_equal(kw_buf_append(&r, at + strlen(from), b->len - (size_t)(at - b->data) - strlen(from)), 0);
	kw_buf_free(b);
	*b = r;
}

/* RFC 8785's own example (section 3.2.2, and cyberphone's values.json) holds
 * 1E30, which the integer rule refuses (docs/canonical-json.md). When in is
 * refused, it must be for exactly that number; the rest of the example is
 * then checked with 1E15 in its place. Returns whether it substituted. */
static bool substitute_1e30(struct kw_buf *in, struct kw_buf *want, struct kw_buf *wanthex)
{
	struct kw_buf out = {0};
	struct jcs_error err;
	int rc = jcs_canonicalize(in->data, in->len, &out, &err);

	kw_buf_free(&out);
	if (rc == 0)
		return false;
	assert_int_equal(rc, -EINVAL);
	assert_non_null(strstr(err.message, "2^53"));
	assert_true(err.offset + 4 <= in->len);
	assert_memory_equal(in->data + err.offset, "1E30", 4);
	replace_once(in, "1E30", "1E15");
	replace_once(want, "1e+30", "1000000000000000");
	if (wanthex)
		replace_once(wanthex, "1e+30", "1000000000000000");
	return true;
}

static void test_cyberphone_vectors(void **state)
{
	(void)state;
	char dir[4200];
	vec_path(dir, sizeof(dir), "jcs/input");
	DIR *d = opendir(dir);
	assert_non_null(d);
	int count = 0, substituted = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l < 6 || strcmp(e->d_name + l - 5, ".json"))
			continue;
		char rel[600];
		struct kw_buf in = {0}, want = {0}, hex = {0}, wanthex = {0}, out = {0};
		snprintf(rel, sizeof(rel), "jcs/input/%s", e->d_name);
		read_vec(rel, &in);
		snprintf(rel, sizeof(rel), "jcs/output/%s", e->d_name);
		read_vec(rel, &want);
		snprintf(rel, sizeof(rel), "jcs/outhex/%.*s.txt", (int)(l - 5), e->d_name);
		read_vec(rel, &hex);
		hex_to_bytes(hex.data, &wanthex);
		substituted += substitute_1e30(&in, &want, &wanthex);

		struct jcs_error err;
		int rc = jcs_canonicalize(in.data, in.len, &out, &err);
		if (rc)
			fail_msg("%s refused: %zu:%zu %s", e->d_name, err.line, err.column, err.message);
		assert_int_equal(out.len, want.len);
		assert_memory_equal(out.data, want.data, want.len);
		assert_int_equal(out.len, wanthex.len);
		assert_memory_equal(out.data, wanthex.data, wanthex.len);

		/* Through a jansson tree: the same bytes. */
		json_t *v = jcs_parse(in.data, in.len, &err);
		assert_non_null(v);
		kw_buf_reset(&out);
		assert_int_equal(jcs_dump(v, &out), 0);
		assert_int_equal(out.len, want.len);
		assert_memory_equal(out.data, want.data, want.len);
		json_decref(v);

		/* Canonical output is a fixed point. */
		struct kw_buf again = {0};
		assert_int_equal(jcs_canonicalize(out.data, out.len, &again, &err), 0);
		assert_int_equal(again.len, out.len);
		assert_memory_equal(again.data, out.data, out.len);

		kw_buf_free(&again);
		kw_buf_free(&in);
		kw_buf_free(&want);
		kw_buf_free(&hex);
		kw_buf_free(&wanthex);
		kw_buf_free(&out);
		count++;
	}
	closedir(d);
	assert_int_equal(count, 6);
	assert_int_equal(substituted, 1); /* values.json */
}

static void test_rfc_examples(void **state)
{
	(void)state;
	struct kw_buf in = {0}, want = {0}, hex = {0}, wanthex = {0}, out = {0};
	struct jcs_error err;
	read_vec("rfc/rfc8785/section-3.2.2-input.json", &in);
	read_vec("rfc/rfc8785/section-3.2.2-output.json", &want);
	read_vec("rfc/rfc8785/section-3.2.4-output-utf8.hex", &hex);
	hex_to_bytes(hex.data, &wanthex);
	assert_true(substitute_1e30(&in, &want, &wanthex));
	assert_int_equal(jcs_canonicalize(in.data, in.len, &out, &err), 0);
	assert_int_equal(out.len, want.len);
	assert_memory_equal(out.data, want.data, want.len);
	assert_int_equal(out.len, wanthex.len);
	assert_memory_equal(out.data, wanthex.data, out.len);

	kw_buf_reset(&in);
	kw_buf_reset(&want);
	kw_buf_reset(&out);
	read_vec("rfc/rfc8785/section-3.2.3-input.json", &in);
	read_vec("rfc/rfc8785/section-3.2.3-output.json", &want);
	assert_int_equal(jcs_canonicalize(in.data, in.len, &out, &err), 0);
	assert_int_equal(out.len, want.len);
	assert_memory_equal(out.data, want.data, want.len);
	kw_buf_free(&in);
	kw_buf_free(&want);
	kw_buf_free(&hex);
	kw_buf_free(&wanthex);
	kw_buf_free(&out);
}

static double from_bits(uint64_t bits)
{
	double v;
	memcpy(&v, &bits, sizeof(v));
	return v;
}

static void test_es6_number_file(void **state)
{
	(void)state;
	struct kw_buf f = {0};
	read_vec("jcs/numbers/es6testfile10k.txt", &f);
	int lines = 0;
	char *save = NULL;
	for (char *line = strtok_r(f.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *comma = strchr(line, ',');
		assert_non_null(comma);
		*comma = '\0';
		double v = from_bits(strtoull(line, NULL, 16));
		char got[JCS_NUMBER_MAX];
		size_t n = jcs_format_double(v, got);
		if (n != strlen(comma + 1) || strcmp(got, comma + 1))
			fail_msg("bits %s: want %s got %s", line, comma + 1, got);
		lines++;
	}
	assert_int_equal(lines, 10000);
	kw_buf_free(&f);
}

static void test_appendix_b(void **state)
{
	(void)state;
	struct kw_buf f = {0};
	read_vec("rfc/rfc8785/appendix-b-numbers.csv", &f);
	int rows = 0, rejected = 0, beyond = 0;
	char *save = NULL;
	for (char *line = strtok_r(f.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "ieee754_hex", 11))
			continue;
		char hex[32], want[64] = "";
		if (sscanf(line, "%31[0-9a-f],%63[^,]", hex, want) < 1)
			fail_msg("bad row %s", line);
		double v = from_bits(strtoull(hex, NULL, 16));
		char got[JCS_NUMBER_MAX];
		size_t n = jcs_format_double(v, got);
		if (!want[0]) {
			/* NaN and Infinity have no JSON form: the formatter
			 * refuses (jansson cannot even hold them in a tree). */
			assert_int_equal(n, 0);
			json_t *r = json_real(1);
			assert_int_equal(json_real_set(r, v), -1);
			json_decref(r);
			rejected++;
		} else {
			if (strcmp(got, want))
				fail_msg("%s: want %s got %s", hex, want, got);
			/* Through a tree too, where the integer rule applies: the
			 * rows of magnitude 2^53 and more are refused. */
			json_t *r = json_real(v);
			struct kw_buf out = {0};
			if (fabs(v) > (double)JCS_MAX_SAFE_INT) {
				assert_int_equal(jcs_dump(r, &out), -EINVAL);
				beyond++;
			} else {
				assert_int_equal(jcs_dump(r, &out), 0);
				assert_string_equal(out.data, want);
			}
			json_decref(r);
			kw_buf_free(&out);
		}
		rows++;
	}
	assert_int_equal(rows, 26);
	assert_int_equal(rejected, 2);
	/* max, -max, 2^53, -2^53, ~2^68, three around 1e23, three around 1e21 */
	assert_int_equal(beyond, 11);
	kw_buf_free(&f);
}

/* --- numbers ------------------------------------------------------------ */

static void expect_num(double v, const char *want)
{
	char got[JCS_NUMBER_MAX];
	size_t n = jcs_format_double(v, got);
	if (n != strlen(want) || strcmp(got, want))
		fail_msg("%.17g: want %s got %s", v, want, got);
}

static void test_number_cases(void **state)
{
	(void)state;
	expect_num(0.0, "0");
	expect_num(-0.0, "0");
	expect_num(1, "1");
	expect_num(-1, "-1");
	expect_num(1e21, "1e+21");
	expect_num(1e20, "100000000000000000000");
	expect_num(123456789012345680000.0, "123456789012345680000");
	expect_num(1e-7, "1e-7");
	expect_num(1.5e-7, "1.5e-7");
	expect_num(1e-6, "0.000001");
	expect_num(1.25e-6, "0.00000125");
	expect_num(0.1, "0.1");
	expect_num(0.5, "0.5");
	expect_num(-0.3, "-0.3");
	expect_num(0.1 + 0.2, "0.30000000000000004");
	expect_num(5e-324, "5e-324");
	expect_num(-5e-324, "-5e-324");
	expect_num(1.7976931348623157e308, "1.7976931348623157e+308");
	expect_num(2.2250738585072014e-308, "2.2250738585072014e-308");
	expect_num(9007199254740991.0, "9007199254740991");
	expect_num(9007199254740992.0, "9007199254740992");
	expect_num(9007199254740993.0, "9007199254740992"); /* rounds to 2^53 */
	expect_num(9007199254740994.0, "9007199254740994");
	expect_num(-9007199254740992.0, "-9007199254740992");
	expect_num(1e23, "1e+23");
	expect_num(4.35, "4.35");
	expect_num(1.0e100, "1e+100");
	expect_num(123.456, "123.456");
	expect_num(2e-323, "2e-323");
	expect_num(pow2i(-1074) * 3, "1.5e-323");
	expect_num(pow2i(1023), "8.98846567431158e+307");
	expect_num(pow2i(-1022), "2.2250738585072014e-308");
	char out[JCS_NUMBER_MAX];
	assert_int_equal(jcs_format_double(NAN, out), 0);
	assert_int_equal(jcs_format_double(INFINITY, out), 0);
	assert_int_equal(jcs_format_double(-INFINITY, out), 0);

	/* The same numbers through the parser. */
	expect_canon("[-0,0.0,-0.0,1.0,1e2,1E+2,100e-2,1e-7,0.000001,5e-324]",
		     "[0,0,0,1,100,100,1,1e-7,0.000001,5e-324]");
	expect_canon("[1e-400,-1e-400]", "[0,0]"); /* underflow reads as zero */
	expect_canon("[0.30000000000000004,1234567890.12345678901234567890]",
		     "[0.30000000000000004,1234567890.1234567]");
}

/* One rule for every spelling: a number whose magnitude is above 2^53 - 1 is
 * refused, written as an integer or not (every double from 2^53 up is an
 * integer). So canonical output always reads back, and a document kwitness
 * accepts holds no number that JavaScript, Python's rfc8785 or a verifier
 * holding numbers as doubles would refuse or change. */
static void test_integer_rule_every_spelling(void **state)
{
	(void)state;
	/* 2^53 - 1 itself, however written. */
	expect_canon("[9007199254740991,-9007199254740991,9007199254740991.0,9.007199254740991e15,"
		     "90071992547409910e-1,9007199254740991.4]",
		     "[9007199254740991,-9007199254740991,9007199254740991,9007199254740991,"
		     "9007199254740991,9007199254740991]");
	expect_canon("[1e15,9.99e14,1e-7,0.5e16]",
		     "[1000000000000000,999000000000000,1e-7,5000000000000000]");
	/* 2^53 and above: the literal and every other spelling alike. */
	expect_refused("9007199254740992", 1, 1, "2^53");
	expect_refused("1e16", 1, 1, "2^53");
	expect_refused("[1E16]", 1, 2, "2^53");
	expect_refused("9007199254740992.0", 1, 1, "2^53");
	expect_refused("9.007199254740992e15", 1, 1, "2^53");
	expect_refused("-9.007199254740992e15", 1, 1, "2^53");
	expect_refused("9007199254740991.6", 1, 1, "2^53"); /* reads as 2^53 */
	expect_refused("0.9007199254740992e16", 1, 1, "2^53");
	expect_refused("[1e21]", 1, 2, "2^53");
	expect_refused("1e20", 1, 1, "2^53");
	expect_refused("100000000000000000000", 1, 1, "2^53");
	expect_refused("1E30", 1, 1, "2^53");
	expect_refused("1.7976931348623157e308", 1, 1, "2^53");
	expect_refused("{\"a\":[0,-1.5e300]}", 1, 9, "2^53");
	/* The tree writer applies the same rule to reals. */
	expect_dump(json_real(9007199254740991.0), "9007199254740991");
	expect_dump(json_real(-9007199254740991.0), "-9007199254740991");
	expect_dump_fails(json_real(9007199254740992.0));
	expect_dump_fails(json_real(-1e16));
	expect_dump_fails(json_pack("{s:[f]}", "a", 1e300));
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

static uint64_t rng(void)
{
	/* xorshift64*: a fixed, reproducible sequence. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

/* The k-digit decimals either side of |v| (k >= 1), as strings to strtod. */
static void bracket(double a, int k, char *lo, char *hi, size_t n)
{
	char s[80];
	snprintf(s, sizeof(s), "%.40e", a); /* far more digits than k */
	char d[24];
	int nd = 0;
	const char *p = s;
	for (; *p != 'e'; p++)
		if (*p != '.' && nd < k)
			d[nd++] = *p;
	int e = atoi(p + 1);
	snprintf(lo, n, "%.*se%d", k, d, e - k + 1);
	int i = k - 1;
	while (i >= 0 && d[i] == '9')
		d[i--] = '0';
	if (i >= 0) {
		d[i]++;
		snprintf(hi, n, "%.*se%d", k, d, e - k + 1);
	} else {
		snprintf(hi, n, "1e%d", e + 1);
	}
}

/* Checks one formatted double against the ECMAScript rules. */
static void check_formatted(double v, const char *s)
{
	if (v == 0) {
		assert_string_equal(s, "0");
		return;
	}
	/* Reads back as the very same double. */
	double back = strtod(s, NULL);
	if (memcmp(&back, &v, sizeof(v)))
		fail_msg("%a formatted %s reads back as %a", v, s, back);

	/* Significant digits and exponent, from the text. */
	const char *p = s;
	bool neg = *p == '-';
	if (neg)
		p++;
	assert_true(neg == (v < 0));
	char digits[32];
	int k = 0, point = -1, intlen = 0;
	const char *q = p;
	bool leading = true;
	for (; *q && *q != 'e'; q++) {
		if (*q == '.') {
			point = (int)(q - p);
			continue;
		}
		assert_true(*q >= '0' && *q <= '9');
		if (point < 0)
			intlen++;
		if (leading && *q == '0')
			continue;
		leading = false;
		digits[k++] = *q;
	}
	while (k > 1 && digits[k - 1] == '0')
		k--; /* zeros that only place the point */
	assert_true(k >= 1 && k <= 17);
	double a = v < 0 ? -v : v;
	bool sci = *q == 'e';
	/* Exponent form exactly outside [1e-7, 1e21). */
	if ((a >= 1e21 || a < 1e-6) != sci)
		fail_msg("%s: exponent form wrong for %.17g", s, v);
	if (sci) {
		assert_true(intlen == 1 && p[0] != '0');
		assert_true(q[1] == '+' || q[1] == '-');
		assert_true(q[2] >= '1' && q[2] <= '9');
		if (point >= 0)
			assert_true(q[-1] != '0' && q[-1] != '.');
		else
			assert_int_equal(k, 1);
	} else if (point >= 0) {
		/* No trailing zeros after the point; "0." only below 1. */
		assert_true(q[-1] != '0' && q[-1] != '.');
		if (a < 1)
			assert_true(intlen == 1 && p[0] == '0');
		else
			assert_true(p[0] != '0');
	} else {
		assert_true(p[0] != '0');
	}
	/* No shorter digit string reads back as v: the two (k-1)-digit
	 * decimals around v are the only candidates worth trying. */
	if (k > 1) {
		char lo[64], hi[64];
		bracket(a, k - 1, lo, hi, sizeof(lo));
		if (strtod(lo, NULL) == a || strtod(hi, NULL) == a)
			fail_msg("%s is not the shortest for %a (%s or %s)", s, v, lo, hi);
	}
	/* Which of the shortest digit strings (the closest) is node's answer,
	 * checked for the same doubles in test_node_cross_check. */
}

static void test_every_double_property(void **state)
{
	(void)state;
	int checked = 0;
	for (int i = 0; i < 1000000; i++) {
		uint64_t bits = rng();
		/* Every fourth pattern: a short decimal, to exercise small k. */
		if ((i & 3) == 3) {
			double d = (double)(bits % 100000) * pow10i((int)((bits >> 20) % 40) - 20);
			memcpy(&bits, &d, sizeof(d));
		}
		double v = from_bits(bits);
		char s[JCS_NUMBER_MAX];
		size_t n = jcs_format_double(v, s);
		if (!isfinite(v)) {
			assert_int_equal(n, 0);
			continue;
		}
		assert_true(n > 0 && n < JCS_NUMBER_MAX && strlen(s) == n);
		check_formatted(v, s);
		checked++;
	}
	/* Powers of two, where the gap below is narrower than above. */
	for (int e = -1074; e <= 1023; e++) {
		char s[JCS_NUMBER_MAX];
		double v = pow2i(e);
		jcs_format_double(v, s);
		check_formatted(v, s);
		checked++;
	}
	assert_true(checked > 900000);
}

/* The parser formats short decimal literals without strtod; whatever path a
 * literal takes, its canonical form is jcs_format_double(strtod(literal)). */
static void test_parser_numbers_match_strtod(void **state)
{
	(void)state;
	uint64_t seed = rng_state;
	rng_state = 0x5DEECE66DULL;
	struct kw_buf out = {0};
	struct jcs_error err;
	for (int i = 0; i < 200000; i++) {
		uint64_t r = rng(), r2 = rng();
		char lit[96], *p = lit;
		if (r & 1)
			*p++ = '-';
		int lz = (int)((r >> 1) % 4), nd = 1 + (int)((r >> 3) % 18), tz = (int)((r >> 8) % 4);
		int intlen = (int)((r >> 12) % (unsigned)(lz + nd + tz + 1));
		char digits[40];
		int m = 0;
		for (int j = 0; j < lz; j++)
			digits[m++] = '0';
		for (int j = 0; j < nd; j++)
			digits[m++] = (char)('0' + (r2 >> (j * 3 % 60)) % 10);
		for (int j = 0; j < tz; j++)
			digits[m++] = '0';
		/* intpart: no leading zero unless it is "0" */
		int start = 0;
		while (start < intlen - 1 && digits[start] == '0')
			start++;
		if (intlen == 0) {
			*p++ = '0';
		} else {
			memcpy(p, digits + start, (size_t)(intlen - start));
			p += intlen - start;
		}
		bool has_frac = intlen < m || (r >> 20) % 3 == 0;
		if (has_frac) {
			*p++ = '.';
			if (intlen < m) {
				memcpy(p, digits + intlen, (size_t)(m - intlen));
				p += m - intlen;
			} else {
				*p++ = '0';
			}
		}
		if ((r >> 22) % 3 || !has_frac) {
			int e = (int)((r >> 24) % 700) - 350;
			p += sprintf(p, "%c%s%d", (r >> 34) & 1 ? 'e' : 'E',
				     e >= 0 && ((r >> 35) & 1) ? "+" : "", e);
		}
		*p = '\0';
		double v = strtod(lit, NULL);
		char want[JCS_NUMBER_MAX];
		size_t wl = jcs_format_double(v, want);
		kw_buf_reset(&out);
		int rc = jcs_canonicalize(lit, strlen(lit), &out, &err);
		if (!wl) {
			if (rc != -EINVAL || !strstr(err.message, "infinity"))
				fail_msg("%s overflows but gave %d %s", lit, rc, out.data);
			continue;
		}
		if (fabs(v) > (double)JCS_MAX_SAFE_INT) {
			if (rc != -EINVAL || !strstr(err.message, "2^53"))
				fail_msg("%s is beyond 2^53 - 1 but gave %d %s", lit, rc, out.data);
			continue;
		}
		if (rc)
			fail_msg("%s refused: %s", lit, err.message);
		if (strcmp(out.data, want))
			fail_msg("%s: want %s got %s", lit, want, out.data);
	}
	/* Long literals: many zeros, many digits. */
	const char *cases[][2] = {
		{ "0.000000000000000000000000000000000000000000000000000000000000001", "1e-63" },
		{ "1000000000000000.00000000000000000000000000000000000000000000000", "1000000000000000" },
		{ "1.00000000000000000000000000000000000000000000000000000000000000", "1" },
		{ "123456789012345.0e-5", "1234567890.12345" },
		{ "1234567890123456.0e-5", "12345678901.23456" },
		{ "0.1e1", "1" }, { "0e999999999999", "0" }, { "-0.0e-5", "0" },
		{ "1e-0000000000000000000000007", "1e-7" }, { "2.5E+0", "2.5" },
		{ "1e-308", "1e-308" }, { "4.9e-324", "5e-324" }, { "2e-324", "0" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char in[128];
		snprintf(in, sizeof(in), "[%s]", cases[i][0]);
		char want[64];
		snprintf(want, sizeof(want), "[%s]", cases[i][1]);
		expect_canon(in, want);
	}
	expect_refused("100000000000000000000000000000000000000000000000000000000000.0", 1, 1, "2^53");
	expect_refused("1e308", 1, 1, "2^53");
	expect_refused("1.7976931348623158e308", 1, 1, "2^53");
	expect_refused("1.7976931348623159e308", 1, 1, "infinity");
	expect_refused("1e99999999999999999999", 1, 1, "infinity");
	kw_buf_free(&out);
	rng_state = seed;
}

/* The properties of check_formatted() where formatting is hardest:
 * subnormals, both sides of every power of two, exact decimals and ties, and
 * integers just past 2^53. */
static void test_format_hard_cases(void **state)
{
	(void)state;
	long checked = 0;
	char a[JCS_NUMBER_MAX];
#define HARD(v)                                                                          \
	do {                                                                             \
		double v_ = (v);                                                         \
		if (!isfinite(v_))                                                       \
			break;                                                           \
		assert_true(jcs_format_double(v_, a) > 0);                               \
		check_formatted(v_, a);                                                  \
		checked++;                                                               \
	} while (0)
	for (uint64_t m = 1; m < 1000; m++) {
		HARD(from_bits(m));                            /* smallest subnormals */
		HARD(from_bits(0x0010000000000000ULL - m));    /* largest subnormals */
		HARD(from_bits(0x0010000000000000ULL + m - 1)); /* smallest normals */
		HARD(from_bits(0x7FEFFFFFFFFFFFFFULL - m + 1)); /* largest */
	}
	for (int e = -1074; e <= 1023; e++) {
		uint64_t p2;
		double v = pow2i(e);
		memcpy(&p2, &v, sizeof(p2));
		for (int d = -3; d <= 3; d++)
			HARD(from_bits(p2 + (uint64_t)d));
	}
	for (int e = -325; e <= 308; e += 1)
		for (int k = 1; k < 200; k += 9) {
			char t[32];
			snprintf(t, sizeof(t), "%de%d", k, e);
			HARD(strtod(t, NULL));
			snprintf(t, sizeof(t), "%d5e%d", k, e); /* ties at many lengths */
			HARD(strtod(t, NULL));
		}
	for (uint64_t x = (1ULL << 53) - 100; x < (1ULL << 53) + 1000; x++)
		HARD((double)x);
#undef HARD
	assert_true(checked > 30000);
}

/* Integer digits, written in whole words: every length, both sides of every
 * power of two and of ten. */
static void check_u64(uint64_t v)
{
	char got[32], want[32];
	memset(got, 'x', sizeof(got));
	size_t n = jcs_put_u64(v, got);
	got[n] = '\0';
	snprintf(want, sizeof(want), "%llu", (unsigned long long)v);
	if (strcmp(got, want))
		fail_msg("jcs_put_u64(%s) wrote %s", want, got);
}

static void test_put_u64(void **state)
{
	(void)state;
	for (uint64_t v = 0; v < 100000; v++)
		check_u64(v);
	for (int e = 0; e < 64; e++)
		for (int d = -2; d <= 2; d++)
			check_u64((1ULL << e) + (uint64_t)d);
	uint64_t p = 1;
	for (int e = 0; e < 20; e++, p *= 10)
		for (int d = -1; d <= 1; d++)
			check_u64(p + (uint64_t)d);
	check_u64(UINT64_MAX);
	uint64_t seed = rng_state;
	for (int i = 0; i < 100000; i++) {
		uint64_t r = rng();
		check_u64(r >> (r % 64)); /* every magnitude */
	}
	rng_state = seed;
}

/* node (V8's own Number-to-String, which RFC 8785 adopts) is the oracle for
 * the digits: a million random doubles, a third of them short decimals, and
 * every power of two. Node is a test dependency (scripts/deps.sh). */
static void test_node_cross_check(void **state)
{
	(void)state;
	if (system("command -v node >/dev/null 2>&1") != 0)
		fail_msg("node is missing: run scripts/deps.sh");
	char in[] = "/tmp/kw-jcs-node-XXXXXX";
	int fd = mkstemp(in);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	const int randoms = 1000000, count = randoms + 2098;
	double *vals = calloc(count, sizeof(double));
	uint64_t seed = rng_state;
	rng_state = 0x0123456789ABCDEFULL;
	for (int i = 0; i < count; i++) {
		uint64_t bits;
		if (i >= randoms) {
			double d = pow2i(i - randoms - 1074); /* 2^-1074 .. 2^1023 */
			memcpy(&bits, &d, sizeof(d));
		} else {
			do {
				bits = rng();
				if (i % 3 == 1) {
					double d = (double)(bits % 1000000) *
						   pow10i((int)((bits >> 24) % 60) - 30);
					memcpy(&bits, &d, sizeof(d));
				}
			} while (!isfinite(from_bits(bits)));
		}
		vals[i] = from_bits(bits);
		fprintf(f, "%016llx\n", (unsigned long long)bits);
	}
	rng_state = seed;
	fclose(f);
	char cmd[512];
	snprintf(cmd, sizeof(cmd),
		 "node -e 'const fs=require(\"fs\");const b=Buffer.alloc(8);"
		 "const out=fs.readFileSync(process.argv[1],\"utf8\").trim().split(\"\\n\")"
		 ".map(h=>{b.writeBigUInt64BE(BigInt(\"0x\"+h));return String(b.readDoubleBE(0));});"
		 "process.stdout.write(out.join(\"\\n\")+\"\\n\");' %s",
		 in);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[128];
	int i = 0, mismatches = 0;
	while (i < count && fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = '\0';
		char got[JCS_NUMBER_MAX];
		jcs_format_double(vals[i], got);
		if (strcmp(got, line)) {
			if (mismatches++ < 5)
				print_message("# %a: node %s, kwitness %s\n", vals[i], line, got);
		}
		i++;
	}
	int rc = pclose(p);
	unlink(in);
	free(vals);
	assert_int_equal(rc, 0);
	assert_int_equal(i, count);
	assert_int_equal(mismatches, 0);
}

/* printf and strtod follow LC_NUMERIC; a program that sets a locale with a
 * decimal comma must still get the same bytes. */
static void test_locale_independent(void **state)
{
	if (!setlocale(LC_NUMERIC, "de_DE.UTF-8")) {
		char dir[] = "/tmp/kw-jcs-locale-XXXXXX", cmd[256];
		assert_non_null(mkdtemp(dir));
		snprintf(cmd, sizeof(cmd),
			 "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1", dir);
		if (system(cmd) == 0) {
			setenv("LOCPATH", dir, 1);
			setlocale(LC_NUMERIC, "de_DE.UTF-8");
		}
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd)) {
		}
	}
	char probe[16];
	snprintf(probe, sizeof(probe), "%.1f", 1.5);
	if (strcmp(probe, "1,5")) {
		setlocale(LC_NUMERIC, "C");
		fail_msg("no decimal-comma locale (de_DE.UTF-8), and localedef could not make one: "
			 "scripts/deps.sh installs the locales package");
	}
	test_es6_number_file(state);
	expect_num(0.1, "0.1");
	expect_num(1.5e-7, "1.5e-7");
	expect_num(2.5, "2.5");
	expect_canon("[1.5,0.30000000000000004,1.2345678901234567e-300,12345678901234567.5e-10,-0.0]",
		     "[1.5,0.30000000000000004,1.2345678901234568e-300,1234567.8901234567,0]");
	setlocale(LC_NUMERIC, "C");
	unsetenv("LOCPATH");
}

/* --- random documents against the npm canonicalize package -------------- */

/* Random JSON text whose RFC 8785 form another implementation computes:
 * node's JSON.parse, then the canonicalize package. */
struct gen {
	struct kw_buf *b;
	int depth;
};

static void gen_ws(struct gen *g)
{
	static const char *ws[] = { "", "", "", " ", "\n", "\t ", "\r\n  " };
	kw_buf_puts(g->b, ws[rng() % 7]);
}

static uint32_t gen_code_point(void)
{
	switch (rng() % 10) {
	case 0: return (uint32_t)(rng() % 0x20);              /* control */
	case 1: return "\"\\/\x7f"[rng() % 4];
	case 2: return 0x80 + (uint32_t)(rng() % 0x780);       /* 2 bytes */
	case 3: {                                             /* 3 bytes, no surrogates */
		uint32_t c = 0x800 + (uint32_t)(rng() % 0xF800);
		return c >= 0xD800 && c <= 0xDFFF ? 0xE000 + (c & 0xFFF) : c;
	}
	case 4: return 0xE000 + (uint32_t)(rng() % 0x2000);    /* private use .. U+FFFF */
	case 5: return 0x10000 + (uint32_t)(rng() % 0x100000); /* supplementary */
	default: return 0x20 + (uint32_t)(rng() % 0x5F);       /* printable ASCII */
	}
}

static size_t utf8_encode(uint32_t c, char *o)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xC0 | c >> 6);
		o[1] = (char)(0x80 | (c & 0x3F));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xE0 | c >> 12);
		o[1] = (char)(0x80 | ((c >> 6) & 0x3F));
		o[2] = (char)(0x80 | (c & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | c >> 18);
	o[1] = (char)(0x80 | ((c >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((c >> 6) & 0x3F));
	o[3] = (char)(0x80 | (c & 0x3F));
	return 4;
}

/* Writes code points cps as a JSON string, escaping each in a random legal
 * way; dec gets the decoded UTF-8 (for uniqueness of names). */
static void gen_string_of(struct gen *g, const uint32_t *cps, size_t n, struct kw_buf *dec)
{
	kw_buf_putc(g->b, '"');
	for (size_t i = 0; i < n; i++) {
		uint32_t c = cps[i];
		char u[8];
		size_t l = utf8_encode(c, u);
		if (dec)
			kw_buf_append(dec, u, l);
		bool must = c < 0x20 || c == '"' || c == '\\';
		uint64_t how = rng() % 4;
		if (!must && how < 2) {
			kw_buf_append(g->b, u, l);
		} else if (how == 2 && (c == '"' || c == '\\' || c == '/' || c == '\b' ||
					c == '\f' || c == '\n' || c == '\r' || c == '\t')) {
			char e[3] = { '\\', 0, 0 };
			e[1] = c == '\b' ? 'b' : c == '\f' ? 'f' : c == '\n' ? 'n' : c == '\r' ? 'r' :
			       c == '\t' ? 't' : (char)c;
			kw_buf_puts(g->b, e);
		} else {
			char e[16];
			if (c >= 0x10000) {
				uint32_t v = c - 0x10000;
				snprintf(e, sizeof(e), (rng() & 1) ? "\\u%04X\\u%04X" : "\\u%04x\\u%04x",
					 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
			} else {
				snprintf(e, sizeof(e), (rng() & 1) ? "\\u%04X" : "\\u%04x", c);
			}
			kw_buf_puts(g->b, e);
		}
	}
	kw_buf_putc(g->b, '"');
}

static void gen_string(struct gen *g, struct kw_buf *dec)
{
	uint32_t cps[48];
	size_t n = (size_t)(rng() % 6 == 0 ? rng() % 48 : rng() % 8);
	for (size_t i = 0; i < n; i++)
		cps[i] = gen_code_point();
	gen_string_of(g, cps, n, dec);
}

static void gen_number(struct gen *g)
{
	char t[64];
	uint64_t r = rng();
	switch (r % 6) {
	case 0:
		snprintf(t, sizeof(t), "%lld", (long long)(rng() % 2000001) - 1000000);
		break;
	case 1:
		snprintf(t, sizeof(t), "%lld", (long long)(rng() % (uint64_t)JCS_MAX_SAFE_INT) *
					       ((r >> 8) & 1 ? -1 : 1));
		break;
	case 2: {
		double v;
		do {
			uint64_t bits = rng();
			memcpy(&v, &bits, sizeof(v));
		} while (!isfinite(v) || fabs(v) > (double)JCS_MAX_SAFE_INT);
		snprintf(t, sizeof(t), "%.17e", v);
		break;
	}
	case 3:
		snprintf(t, sizeof(t), "%lld.%03de%d", (long long)(rng() % 1000), (int)(rng() % 1000),
			 (int)(rng() % 42) - 30); /* below 10^15 */
		break;
	case 4:
		snprintf(t, sizeof(t), "%s0.%0*d", (r >> 8) & 1 ? "-" : "", (int)(rng() % 12) + 1, 7);
		break;
	default:
		snprintf(t, sizeof(t), "%.*g", (int)(rng() % 17) + 1, (double)(rng() % 100000000) / 997.0);
		break;
	}
	kw_buf_puts(g->b, t);
}

static void gen_value(struct gen *g)
{
	uint64_t r = rng() % 10;
	if (g->depth >= 4 && r < 4)
		r = 4 + rng() % 6;
	gen_ws(g);
	if (r < 2) {
		/* Object with distinct decoded names. */
		size_t n = (size_t)(rng() % 18);
		struct kw_buf names = {0};
		kw_buf_putc(g->b, '{');
		g->depth++;
		for (size_t i = 0; i < n; i++) {
			struct kw_buf dec = {0};
			uint32_t cps[8];
			size_t len;
			for (;;) {
				len = (size_t)(rng() % 5);
				for (size_t j = 0; j < len; j++)
					cps[j] = rng() % 3 ? 'a' + (uint32_t)(rng() % 4) : gen_code_point();
				kw_buf_reset(&dec);
				for (size_t j = 0; j < len; j++) {
					char u[8];
					kw_buf_append(&dec, u, utf8_encode(cps[j], u));
				}
				kw_buf_putc(&dec, '\0');
				/* "__proto__" is special in JavaScript; never generated (max 4 chars). */
				bool seen = false;
				for (size_t at = 0; at < names.len; at += strlen(names.data + at) + 1)
					if (dec.len - 1 == strlen(names.data + at) &&
					    !memcmp(names.data + at, dec.data, dec.len))
						seen = true;
				/* A NUL inside a name would confuse this bookkeeping. */
				if (!seen && !memchr(dec.data, '\0', dec.len - 1))
					break;
			}
			kw_buf_append(&names, dec.data, dec.len);
			kw_buf_free(&dec);
			if (i)
				kw_buf_putc(g->b, ',');
			gen_ws(g);
			gen_string_of(g, cps, len, NULL);
			gen_ws(g);
			kw_buf_putc(g->b, ':');
			gen_value(g);
		}
		g->depth--;
		gen_ws(g);
		kw_buf_putc(g->b, '}');
		kw_buf_free(&names);
	} else if (r < 4) {
		size_t n = (size_t)(rng() % 8);
		kw_buf_putc(g->b, '[');
		g->depth++;
		for (size_t i = 0; i < n; i++) {
			if (i)
				kw_buf_putc(g->b, ',');
			gen_value(g);
		}
		g->depth--;
		gen_ws(g);
		kw_buf_putc(g->b, ']');
	} else if (r < 7) {
		gen_string(g, NULL);
	} else if (r < 9) {
		gen_number(g);
	} else {
		static const char *lit[] = { "true", "false", "null" };
		kw_buf_puts(g->b, lit[rng() % 3]);
	}
	gen_ws(g);
}

/* Mutated documents (bytes flipped, inserted, deleted, duplicated): never a
 * crash (ASan watches); whatever is accepted is a fixed point and reads the
 * same through jansson: jcs_dump(jcs_parse(text)) gives the same bytes. */
static void test_mutations_consistent(void **state)
{
	(void)state;
	uint64_t seed = rng_state;
	rng_state = 0xF00DFACE12345ULL;
	static const char *tokens[] = { "\"", "\\", "{", "}", "[", "]", ",", ":", "\\u", "\\ud800",
					"\\udc00", "1e400", "-0", "9007199254740992", "\xed\xa0\x80",
					"\xc0\xaf", "\xf4\x90\x80\x80", "\xe2\x82", "\"a\"", "0.1",
					"\x7f", "\t", "\x01", "null", "tru", "1.", "\xf0\x9f\x98\x80" };
	struct kw_buf base = {0}, doc = {0}, out = {0}, again = {0}, dumped = {0};
	int accepted = 0, refused = 0;
	for (int i = 0; i < 30000; i++) {
		if (i % 50 == 0) {
			kw_buf_reset(&base);
			struct gen g = { &base, 2 };
			gen_value(&g);
		}
		kw_buf_reset(&doc);
		kw_buf_append(&doc, base.data, base.len);
		int edits = 1 + (int)(rng() % 3);
		for (int e = 0; e < edits && doc.len; e++) {
			size_t at = (size_t)(rng() % doc.len);
			switch (rng() % 4) {
			case 0: /* flip a byte */
				doc.data[at] = (char)rng();
				break;
			case 1: { /* delete a span */
				size_t n = 1 + (size_t)(rng() % 4);
				if (n > doc.len - at)
					n = doc.len - at;
				memmove(doc.data + at, doc.data + at + n, doc.len - at - n);
				doc.len -= n;
				break;
			}
			default: { /* insert a token */
				const char *t = tokens[rng() % (sizeof(tokens) / sizeof(tokens[0]))];
				size_t n = strlen(t);
				kw_buf_reserve(&doc, n);
				memmove(doc.data + at + n, doc.data + at, doc.len - at);
				memcpy(doc.data + at, t, n);
				doc.len += n;
			}
			}
		}
		struct jcs_error err;
		kw_buf_reset(&out);
		int rc = jcs_canonicalize(doc.data, doc.len, &out, &err);
		if (rc) {
			assert_int_equal(rc, -EINVAL);
			assert_true(err.offset <= doc.len);
			assert_true(err.line >= 1 && err.column >= 1);
			refused++;
			continue;
		}
		accepted++;
		kw_buf_reset(&again);
		rc = jcs_canonicalize(out.data, out.len, &again, &err);
		/* Canonical output always reads back, to the same bytes. */
		assert_int_equal(rc, 0);
		assert_int_equal(again.len, out.len);
		assert_memory_equal(again.data, out.data, out.len);
		json_t *v = jcs_parse(doc.data, doc.len, &err);
		if (!v) {
			assert_non_null(strstr(err.message, "NUL")); /* jansson: no \u0000 in names */
			continue;
		}
		kw_buf_reset(&dumped);
		assert_int_equal(jcs_dump(v, &dumped), 0);
		json_decref(v);
		if (dumped.len != out.len || memcmp(dumped.data, out.data, out.len))
			fail_msg("tree and parser disagree on %.*s\n  parser %s\n  tree   %s",
				 (int)doc.len, doc.data, out.data, dumped.data);
	}
	assert_true(accepted > 1000 && refused > 1000);
	kw_buf_free(&base);
	kw_buf_free(&doc);
	kw_buf_free(&out);
	kw_buf_free(&again);
	kw_buf_free(&dumped);
	rng_state = seed;
}

/* The npm canonicalize package (an RFC 8785 implementation of its own,
 * installed into build/npm by scripts/deps.sh) is the oracle. */
static void test_node_documents(void **state)
{
	const char *root = getenv("KW_ROOT") ? getenv("KW_ROOT") : ".";
	char npm[1024];

	(void)state;
	snprintf(npm, sizeof(npm), "%s/build/npm/node_modules/canonicalize/package.json", root);
	if (system("command -v node >/dev/null 2>&1") != 0 || access(npm, R_OK) != 0)
		fail_msg("node or the npm canonicalize package is missing: run scripts/deps.sh");
	uint64_t seed = rng_state;
	rng_state = 0xC0FFEE1234567ULL;
	const int count = 400;
	char in[] = "/tmp/kw-jcs-docs-XXXXXX";
	int fd = mkstemp(in);
	assert_true(fd >= 0);
	struct kw_buf all = {0}, mine = {0};
	for (int i = 0; i < count; i++) {
		struct kw_buf doc = {0};
		struct gen g = { &doc, i % 4 };
		gen_value(&g);
		struct jcs_error err;
		if (jcs_canonicalize(doc.data, doc.len, &mine, &err))
			fail_msg("generated document %d refused: %zu:%zu %s\n%s", i, err.line, err.column,
				 err.message, doc.data);
		kw_buf_putc(&mine, '\0');
		kw_buf_append(&all, doc.data, doc.len);
		kw_buf_putc(&all, '\0');
		kw_buf_free(&doc);
	}
	assert_true(all.len > 100000); /* the documents are not trivial */
	assert_int_equal(write(fd, all.data, all.len), (ssize_t)all.len);
	close(fd);
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
		 "cd '%s/build/npm' && node --input-type=module -e '"
		 "import fs from \"fs\"; import canonicalize from \"canonicalize\";"
		 "const d=fs.readFileSync(process.argv[1]).toString(\"utf8\").split(\"\\0\");d.pop();"
		 "process.stdout.write(d.map(t=>canonicalize(JSON.parse(t))+\"\\0\").join(\"\"));' %s",
		 root, in);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	struct kw_buf theirs = {0};
	char chunk[65536];
	size_t got;
	while ((got = fread(chunk, 1, sizeof(chunk), p)) > 0)
		kw_buf_append(&theirs, chunk, got);
	assert_int_equal(pclose(p), 0);
	unlink(in);
	size_t a = 0, b = 0;
	for (int i = 0; i < count; i++) {
		size_t la = strlen(mine.data + a), lb = strlen(theirs.data + b);
		if (la != lb || memcmp(mine.data + a, theirs.data + b, la))
			fail_msg("document %d:\n  kwitness %s\n  node     %s", i, mine.data + a,
				 theirs.data + b);
		a += la + 1;
		b += lb + 1;
	}
	assert_int_equal(b, theirs.len);
	kw_buf_free(&all);
	kw_buf_free(&mine);
	kw_buf_free(&theirs);
	rng_state = seed;
}

/* --- strings, ordering, structure --------------------------------------- */

static void test_strings_and_escapes(void **state)
{
	(void)state;
	expect_canon("\"\\u0000\\u0001\\u001f\\b\\t\\n\\f\\r\\\"\\\\\\/\"",
		     "\"\\u0000\\u0001\\u001f\\b\\t\\n\\f\\r\\\"\\\\/\"");
	expect_canon("\"\\u0008\\u0009\\u000A\\u000c\\u000D\\u001F\"", "\"\\b\\t\\n\\f\\r\\u001f\"");
	/* Nothing else is escaped: '/', DEL, U+2028, non-ASCII. */
	expect_canon("\"/\x7f\\u007f\\u2028\\u00e9\\u20AC\"", "\"/\x7f\x7f\xe2\x80\xa8\xc3\xa9\xe2\x82\xac\"");
	expect_canon("\"\\ud83d\\ude00\"", "\"\xf0\x9f\x98\x80\"");
	expect_canon("\"\\uD834\\uDD1E\xf0\x9d\x84\x9e\"", "\"\xf0\x9d\x84\x9e\xf0\x9d\x84\x9e\"");
	expect_canon("\"\xf4\x8f\xbf\xbf\xef\xbf\xbf\"", "\"\xf4\x8f\xbf\xbf\xef\xbf\xbf\"");
	expect_canon("\"\\u0061\\u0041\"", "\"aA\"");
	expect_canon("  [ true , false , null , \"\" , { } , [ ] ]  \n", "[true,false,null,\"\",{},[]]");
	expect_canon("{\"k\\u0000\":\"a\\u0000b\"}", "{\"k\\u0000\":\"a\\u0000b\"}");
	/* \u0000 in a string value survives into the tree too; jansson cannot
	 * hold it in a member name, so jcs_parse refuses that with its message. */
	struct jcs_error err;
	json_t *v = jcs_parse("{\"k\":\"a\\u0000b\"}", 16, &err);
	assert_non_null(v);
	struct kw_buf out = {0};
	assert_int_equal(jcs_dump(v, &out), 0);
	assert_string_equal(out.data, "{\"k\":\"a\\u0000b\"}");
	json_decref(v);
	kw_buf_free(&out);
	v = jcs_parse("{\"k\\u0000\":1}", 13, &err);
	if (v) {
		json_decref(v);
	} else {
		assert_true(strstr(err.message, "NUL") != NULL);
		assert_int_equal(err.line, 1);
	}
}

static void test_utf16_member_order(void **state)
{
	(void)state;
	/* U+1F600 is D83D DE00 in UTF-16: before U+E000, after U+D7FF. */
	expect_canon("{\"\\ue000\":1,\"\\ud83d\\ude00\":2,\"\\ud7ff\":3}",
		     "{\"\xed\x9f\xbf\":3,\"\xf0\x9f\x98\x80\":2,\"\xee\x80\x80\":1}");
	expect_canon("{\"\xef\xbf\xbf\":1,\"\xf4\x8f\xbf\xbf\":2}",
		     "{\"\xf4\x8f\xbf\xbf\":2,\"\xef\xbf\xbf\":1}");
	expect_canon("{\"b\":1,\"a\":2,\"\":3,\"ab\":4,\"aa\":5,\"A\":6,\"\\u00e9\":7,\"z\":8,\"\\u0080\":9,\"\\u007f\":10}",
		     "{\"\":3,\"A\":6,\"a\":2,\"aa\":5,\"ab\":4,\"b\":1,\"z\":8,\"\x7f\":10,\"\xc2\x80\":9,\"\xc3\xa9\":7}");
	/* Names compare decoded: "\n" (0x0a) before "!" (0x21) although its
	 * escaped form starts with '\'. */
	expect_canon("{\"!\":1,\"\\n\":2,\"\\\"\":3,\"\\\\\":4}",
		     "{\"\\n\":2,\"!\":1,\"\\\"\":3,\"\\\\\":4}");
	/* Nested objects, and many members (the sort that is not insertion). */
	expect_canon("{\"b\":{\"y\":[{\"d\":1,\"c\":2}],\"x\":0},\"a\":[]}",
		     "{\"a\":[],\"b\":{\"x\":0,\"y\":[{\"c\":2,\"d\":1}]}}");
	struct kw_buf in = {0}, want = {0};
	kw_buf_putc(&in, '{');
	for (int i = 39; i >= 0; i--) {
		char m[32];
		snprintf(m, sizeof(m), "%s\"k%02d\":%d", i == 39 ? "" : ",", i, i);
		kw_buf_puts(&in, m);
	}
	kw_buf_putc(&in, '}');
	kw_buf_putc(&want, '{');
	for (int i = 0; i < 40; i++) {
		char m[32];
		snprintf(m, sizeof(m), "%s\"k%02d\":%d", i ? "," : "", i, i);
		kw_buf_puts(&want, m);
	}
	kw_buf_putc(&want, '}');
	expect_canon(in.data, want.data);
	kw_buf_free(&in);
	kw_buf_free(&want);
}

static void test_refusals(void **state)
{
	(void)state;
	expect_refused("{\"a\":1,\"a\":2}", 1, 8, "duplicate member name");
	expect_refused("{\"a\":1,\"\\u0061\":2}", 1, 8, "duplicate member name");
	expect_refused("{\"\\u0061\":1,\"b\":0,\"a\":2}", 1, 19, "duplicate member name");
	expect_refused("{\n  \"x\": {\"a\": 1},\n  \"x\": 2\n}", 3, 3, "duplicate member name");
	expect_refused("{\"\\n\":1,\"\\u000a\":2}", 1, 9, "duplicate member name \"?\"");
	expect_refused("{\"a\\u0000b\":1,\"a\\u0000b\":2}", 1, 15, "duplicate member name \"a?b\"");
	expect_refused("{\"\xc3\xa9\":1,\"\\u00e9\":2}", 1, 9, "duplicate member name \"\xc3\xa9\"");
	{
		/* Long names are cut, never inside a character. */
		struct kw_buf in = {0};
		kw_buf_puts(&in, "{\"");
		for (int i = 0; i < 40; i++)
			kw_buf_puts(&in, "\xc3\xa9");
		kw_buf_puts(&in, "\":1,\"");
		for (int i = 0; i < 40; i++)
			kw_buf_puts(&in, "\xc3\xa9");
		kw_buf_puts(&in, "\":2}");
		struct jcs_error err;
		char *got = canon(in.data, in.len, &err);
		assert_null(got);
		assert_non_null(strstr(err.message, "...\""));
		size_t ml = strlen(err.message);
		/* "\xc3\xa9" pairs only: 30 of them, then ..." */
		assert_int_equal(ml, strlen("duplicate member name \"") + 60 + 4);
		kw_buf_free(&in);
	}
	/* Lone surrogates, escaped or raw. */
	expect_refused("\"\\ud800\"", 1, 2, "surrogate");
	expect_refused("\"\\udc00\"", 1, 2, "surrogate");
	expect_refused("\"\\ud800\\u0041\"", 1, 2, "surrogate");
	expect_refused("[\"ab\\uDBFF\"]", 1, 5, "surrogate");
	expect_refused("\"\xed\xa0\x80\"", 1, 2, "invalid UTF-8");
	expect_refused("\"\xed\xbf\xbf\"", 1, 2, "invalid UTF-8");
	/* Invalid UTF-8: overlong, beyond U+10FFFF, truncated, stray. */
	expect_refused("\"\xc0\xaf\"", 1, 2, "invalid UTF-8");
	expect_refused("\"\xc1\xbf\"", 1, 2, "invalid UTF-8");
	expect_refused("\"\xe0\x80\xaf\"", 1, 2, "invalid UTF-8");
	expect_refused("\"\xf0\x80\x80\xaf\"", 1, 2, "invalid UTF-8");
	expect_refused("\"\xf4\x90\x80\x80\"", 1, 2, "invalid UTF-8");
	expect_refused("\"\xf5\x80\x80\x80\"", 1, 2, "invalid UTF-8");
	expect_refused("\"ab\xe2\x82\"", 1, 4, "invalid UTF-8");
	expect_refused("\"ab\xe2\x82", 1, 4, "invalid UTF-8");
	expect_refused("\"\x80\"", 1, 2, "invalid UTF-8");
	expect_refused("{\"k\xff\":1}", 1, 4, "invalid UTF-8");
	/* NaN, Infinity, overflow, integers beyond 2^53 - 1. */
	expect_refused("NaN", 1, 1, "NaN");
	expect_refused("[Infinity]", 1, 2, "Infinity");
	expect_refused("[1,-Infinity]", 1, 4, "Infinity");
	expect_refused("1e400", 1, 1, "infinity");
	expect_refused("[0,-1.8e308]", 1, 4, "infinity");
	expect_refused("9007199254740992", 1, 1, "2^53");
	expect_refused("-9007199254740992", 1, 1, "2^53");
	expect_refused("{\"n\":12345678901234567890}", 1, 6, "2^53");
	expect_refused("100000000000000000000000000000", 1, 1, "2^53");
	/* Trailing content, depth. */
	expect_refused("{} x", 1, 4, "trailing content");
	expect_refused("1 2", 1, 3, "trailing content");
	expect_refused("[1]\n]", 2, 1, "trailing content");
	char deep[2 * JCS_MAX_DEPTH + 3];
	memset(deep, '[', JCS_MAX_DEPTH);
	memset(deep + JCS_MAX_DEPTH, ']', JCS_MAX_DEPTH);
	deep[2 * JCS_MAX_DEPTH] = '\0';
	expect_canon(deep, deep); /* exactly the limit: accepted */
	memset(deep, '[', JCS_MAX_DEPTH + 1);
	memset(deep + JCS_MAX_DEPTH + 1, ']', JCS_MAX_DEPTH + 1);
	deep[2 * JCS_MAX_DEPTH + 2] = '\0';
	expect_refused(deep, 1, JCS_MAX_DEPTH + 1, "nesting deeper than 128");
	char deepobj[8 * (JCS_MAX_DEPTH + 1) + 8] = "";
	for (int i = 0; i <= JCS_MAX_DEPTH; i++)
		strcat(deepobj, i % 2 ? "[" : "{\"a\":");
	expect_refused(deepobj, 1, 64 * 5 + 64 + 1, "nesting");
	/* Syntax. */
	expect_refused("", 1, 1, "end of input");
	expect_refused("  \n ", 2, 2, "end of input");
	expect_refused("01", 1, 1, "leading zero");
	expect_refused("[-01]", 1, 2, "leading zero");
	expect_refused("-", 1, 2, "digit expected");
	expect_refused("1.", 1, 3, "digit expected");
	expect_refused("1.e5", 1, 3, "digit expected");
	expect_refused("1e", 1, 3, "exponent");
	expect_refused("1e+", 1, 4, "exponent");
	expect_refused(".5", 1, 1, "unexpected '.'");
	expect_refused("+1", 1, 1, "unexpected '+'");
	expect_refused("0x10", 1, 2, "trailing content");
	expect_refused("tru", 1, 1, "invalid literal");
	expect_refused("nul", 1, 1, "invalid literal");
	expect_refused("True", 1, 1, "unexpected 'T'");
	expect_refused("\xef\xbb\xbf{}", 1, 1, "byte 0xef");
	expect_refused("'a'", 1, 1, "unexpected");
	expect_refused("\"abc", 1, 1, "unterminated string");
	expect_refused("\"abc\\", 1, 5, "unterminated string");
	expect_refused("\"\\x\"", 1, 2, "invalid escape");
	expect_refused("\"\\U0041\"", 1, 2, "invalid escape");
	expect_refused("\"\\u12\"", 1, 2, "four hex digits");
	expect_refused("\"\\u12G4\"", 1, 2, "four hex digits");
	expect_refused("\"a\tb\"", 1, 3, "control character");
	expect_refused("\"a\nb\"", 1, 3, "control character");
	expect_refused_n("\"a\0b\"", 5, 1, 3, "control character");
	expect_refused("[1,]", 1, 4, "value expected");
	expect_refused("[1 2]", 1, 4, "expected ',' or ']'");
	expect_refused("[1", 1, 3, "expected ',' or ']'");
	expect_refused("{\"a\":1,}", 1, 8, "member name");
	expect_refused("{\"a\" 1}", 1, 6, "expected ':'");
	expect_refused("{a:1}", 1, 2, "member name");
	expect_refused("{\"a\":1 \"b\":2}", 1, 8, "expected ',' or '}'");
	expect_refused("{\"a\":}", 1, 6, "value expected");
	expect_refused("[\v]", 1, 2, "byte 0x0b");
	expect_refused("{\n\t\"a\": [1, 2,\n\t\tx]\n}", 3, 3, "unexpected 'x'");
	/* NULL err is allowed. */
	struct kw_buf out = {0};
	assert_int_equal(jcs_canonicalize("[", 1, &out, NULL), -EINVAL);
	assert_null(jcs_parse("[", 1, NULL));
	kw_buf_free(&out);
}

static void test_appends_to_buffer(void **state)
{
	(void)state;
	struct kw_buf out = {0};
	struct jcs_error err;
	kw_buf_puts(&out, "prefix:");
	assert_int_equal(jcs_canonicalize("{\"b\":1,\"a\":2}", 13, &out, &err), 0);
	assert_string_equal(out.data, "prefix:{\"a\":2,\"b\":1}");
	/* A refusal leaves the buffer as it was. */
	assert_int_equal(jcs_canonicalize("{\"b\":1,\"a\":2,}", 14, &out, &err), -EINVAL);
	assert_string_equal(out.data, "prefix:{\"a\":2,\"b\":1}");
	kw_buf_free(&out);
}

/* --- jcs_canonicalize_stream: output handed over between array elements -- */

struct collect {
	struct kw_buf got;
	size_t calls;
	int fail_at; /* 1-based call that fails with -ENOSPC, 0: none */
};

static int collect_write(void *ctx, const char *data, size_t len)
{
	struct collect *c = ctx;

	if (++c->calls == (size_t)c->fail_at)
		return -ENOSPC;
	return kw_buf_append(&c->got, data, len);
}

/* What the sink was given followed by what out kept must be the one-shot
 * canonical form, for every chunk size; a check_only pass refuses and
 * accepts the same documents. Returns how many times the sink was called
 * with chunk 0. */
static size_t expect_stream_same(const char *doc)
{
	struct kw_buf once = {0};
	struct jcs_error e1, e2;
	size_t len = strlen(doc), calls0 = 0;
	int want = jcs_canonicalize(doc, len, &once, &e1);
	static const size_t chunks[] = { 0, 1, 7, 64, 1 << 20 };

	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++)
		for (int check_only = 0; check_only < 2; check_only++) {
			struct collect c = {0};
			struct kw_buf out = {0};
			struct jcs_sink sink = { collect_write, &c, chunks[i], check_only };
			int rc = jcs_canonicalize_stream(doc, len, &out, &sink, &e2);

			if (rc != want)
				fail_msg("%s: chunk %zu: rc %d, one-shot %d", doc, chunks[i], rc, want);
			if (rc) {
				assert_string_equal(e2.message, e1.message);
				assert_int_equal(e2.offset, e1.offset);
			} else if (!check_only) {
				kw_buf_append(&c.got, out.data, out.len);
				if (c.got.len != once.len || memcmp(c.got.data, once.data, once.len))
					fail_msg("%s: chunk %zu: %.*s", doc, chunks[i], (int)c.got.len,
						 c.got.data);
			}
			if (chunks[i] == 0 && !check_only)
				calls0 = c.calls;
			kw_buf_free(&c.got);
			kw_buf_free(&out);
		}
	kw_buf_free(&once);
	return calls0;
}

static void test_stream(void **state)
{
	(void)state;
	/* Handed over only where no object is open: at the top level's and
	 * nested arrays' element ends, never inside {"b":[...]} . */
	assert_int_equal(expect_stream_same("[{\"b\":1,\"a\":2},[3,{\"d\":[4,5],\"c\":6}],7]"), 5);
	assert_int_equal(expect_stream_same("{\"b\":[1,2,3],\"a\":[[4],[5]]}"), 0);
	assert_int_equal(expect_stream_same("\"x\""), 0);
	expect_stream_same("[[[1e2,\"\\u00e9\"]],{\"\\u0062\":1,\"a\":{\"z\":[1,{}],\"y\":[]}},[]]");
	expect_stream_same("[1,2,{\"a\":1,\"a\":2}]");  /* refused after output went out */
	expect_stream_same("[1,2,9007199254740992]");
	expect_stream_same("[1,2,\"\xed\xa0\x80\"]");
	expect_stream_same("[1,2] x");

	/* The sink's error stops the parse and is returned. */
	struct collect c = { .fail_at = 2 };
	struct kw_buf out = {0};
	struct jcs_sink sink = { collect_write, &c, 0, false };
	assert_int_equal(jcs_canonicalize_stream("[1,2,3,4]", 9, &out, &sink, NULL), -ENOSPC);
	assert_int_equal(c.calls, 2);
	kw_buf_free(&c.got);
	kw_buf_free(&out);

	/* out is never much more than a chunk plus an element: 10000 elements
	 * of ~30 bytes through a 1 KiB chunk. */
	struct kw_buf doc = {0};
	kw_buf_putc(&doc, '[');
	for (int i = 0; i < 10000; i++) {
		char e[64];
		snprintf(e, sizeof(e), "%s{\"seq\":%d,\"host\":\"10.0.0.%d\"}", i ? "," : "", i,
			 i % 256);
		kw_buf_puts(&doc, e);
	}
	kw_buf_putc(&doc, ']');
	struct collect big = {0};
	struct jcs_sink bsink = { collect_write, &big, 1024, false };
	assert_int_equal(jcs_canonicalize_stream(doc.data, doc.len, &out, &bsink, NULL), 0);
	assert_true(out.cap <= 8192); /* the document is 300 KB */
	assert_true(big.calls > 100);
	kw_buf_append(&big.got, out.data, out.len);
	struct kw_buf once = {0};
	assert_int_equal(jcs_canonicalize(doc.data, doc.len, &once, NULL), 0);
	assert_int_equal(big.got.len, once.len);
	assert_memory_equal(big.got.data, once.data, once.len);
	kw_buf_free(&once);
	kw_buf_free(&big.got);
	kw_buf_free(&doc);
	kw_buf_free(&out);
}

/* --- jansson trees ------------------------------------------------------ */

static void expect_dump(json_t *v, const char *want)
{
	struct kw_buf out = {0};
	int rc = jcs_dump(v, &out);
	if (rc)
		fail_msg("jcs_dump failed %d, want %s", rc, want);
	assert_string_equal(out.data, want);
	kw_buf_free(&out);
	json_decref(v);
}

static void expect_dump_fails(json_t *v)
{
	struct kw_buf out = {0};
	kw_buf_puts(&out, "x");
	assert_int_equal(jcs_dump(v, &out), -EINVAL);
	assert_string_equal(out.data, "x");
	kw_buf_free(&out);
	json_decref(v);
}

static void test_jcs_dump(void **state)
{
	(void)state;
	expect_dump(json_pack("{s:f,s:f,s:f,s:f,s:f}", "one", 1.0, "hundred", 1e2, "half", 0.5,
			      "big", 1e15, "tiny", 1e-7),
		    "{\"big\":1000000000000000,\"half\":0.5,\"hundred\":100,\"one\":1,\"tiny\":1e-7}");
	expect_dump(json_pack("{s:I,s:I,s:I}", "max", (json_int_t)JCS_MAX_SAFE_INT, "min",
			      (json_int_t)-JCS_MAX_SAFE_INT, "zero", (json_int_t)0),
		    "{\"max\":9007199254740991,\"min\":-9007199254740991,\"zero\":0}");
	expect_dump(json_pack("[n,b,b,s,[],{}]", 1, 0, "\xe2\x82\xac\"\\\n\x01/"),
		    "[null,true,false,\"\xe2\x82\xac\\\"\\\\\\n\\u0001/\",[],{}]");
	expect_dump(json_pack("{s:i,s:i,s:i}", "\xee\x80\x80", 1, "\xf0\x9f\x98\x80", 2, "z", 3),
		    "{\"z\":3,\"\xf0\x9f\x98\x80\":2,\"\xee\x80\x80\":1}");
	expect_dump(json_real(-0.0), "0");
	expect_dump(json_pack("{s:{s:[i,f]}}", "a", "b", 1, 2.5), "{\"a\":{\"b\":[1,2.5]}}");
	expect_dump_fails(json_integer(JCS_MAX_SAFE_INT + 1));
	expect_dump_fails(json_integer(-JCS_MAX_SAFE_INT - 1));
	expect_dump_fails(json_pack("[i,[I]]", 1, (json_int_t)INT64_MAX));
	expect_dump_fails(json_stringn_nocheck("\xc0\xaf", 2));
	expect_dump_fails(json_stringn_nocheck("\xed\xa0\x80", 3));
	json_t *o = json_object();
	json_object_set_new_nocheck(o, "\xff", json_true());
	expect_dump_fails(o);
	struct kw_buf out = {0};
	assert_int_equal(jcs_dump(NULL, &out), -EINVAL);
	kw_buf_free(&out);

	/* jcs_parse keeps jansson's number kinds; jcs_dump writes both
	 * canonically. */
	struct jcs_error err;
	json_t *v = jcs_parse("{\"i\":1,\"r\":1.0,\"e\":1e2,\"s\":\"x\"}", 31, &err);
	assert_non_null(v);
	assert_true(json_is_integer(json_object_get(v, "i")));
	assert_true(json_is_real(json_object_get(v, "r")));
	assert_true(json_is_real(json_object_get(v, "e")));
	expect_dump(v, "{\"e\":100,\"i\":1,\"r\":1,\"s\":\"x\"}");
	v = jcs_parse(" 42 ", 4, &err);
	assert_non_null(v);
	assert_int_equal(json_integer_value(v), 42);
	json_decref(v);
	v = jcs_parse("[1e-400]", 8, &err);
	assert_non_null(v);
	expect_dump(v, "[0]");

	/* Too deep a tree is refused rather than recursed into. */
	json_t *root = json_array(), *cur = root;
	for (int i = 0; i < JCS_MAX_DEPTH; i++) {
		json_t *n = json_array();
		json_array_append_new(cur, n);
		cur = n;
	}
	expect_dump_fails(root);
}

/* --- emitter ------------------------------------------------------------ */

static void test_emitter(void **state)
{
	(void)state;
	struct kw_buf out = {0};
	assert_int_equal(jcs_write_string(&out, "a\"b\\c/\x7f\xe2\x80\xa8\xc3\xa9\t\x1f", 14), 0);
	assert_string_equal(out.data, "\"a\\\"b\\\\c/\x7f\xe2\x80\xa8\xc3\xa9\\t\\u001f\"");
	kw_buf_reset(&out);
	assert_int_equal(jcs_write_string(&out, "x\0y", 3), 0);
	assert_string_equal(out.data, "\"x\\u0000y\"");
	kw_buf_reset(&out);
	kw_buf_puts(&out, "keep");
	assert_int_equal(jcs_write_string(&out, "ab\xc3", 3), -EILSEQ);
	assert_int_equal(jcs_write_string(&out, "\xed\xa0\x80", 3), -EILSEQ);
	assert_int_equal(jcs_write_string(&out, "\xf4\x90\x80\x80", 4), -EILSEQ);
	assert_string_equal(out.data, "keep");
	kw_buf_reset(&out);
	assert_int_equal(jcs_write_string_lossy(&out, "ok\xc3\xa9", 4), 0);
	assert_int_equal(jcs_write_string_lossy(&out, "a\xff" "b\xc3", 4), 1);
	assert_string_equal(out.data, "\"ok\xc3\xa9\"\"a\xef\xbf\xbd" "b\xef\xbf\xbd\"");
	kw_buf_reset(&out);
	assert_int_equal(jcs_write_string(&out, "", 0), 0);
	assert_string_equal(out.data, "\"\"");

	kw_buf_reset(&out);
	assert_int_equal(jcs_write_int(&out, 0), 0);
	assert_int_equal(jcs_write_int(&out, -1), 0);
	assert_int_equal(jcs_write_int(&out, JCS_MAX_SAFE_INT), 0);
	assert_int_equal(jcs_write_int(&out, -JCS_MAX_SAFE_INT), 0);
	assert_int_equal(jcs_write_int(&out, JCS_MAX_SAFE_INT + 1), -EINVAL);
	assert_int_equal(jcs_write_int(&out, INT64_MIN), -EINVAL);
	assert_string_equal(out.data, "0-19007199254740991-9007199254740991");

	/* A decision entry; the result is already canonical. */
	kw_buf_reset(&out);
	struct jcs_obj o, inner;
	bool replaced = true;
	assert_int_equal(jcs_obj_begin(&o, &out), 0);
	assert_int_equal(jcs_obj_int(&o, "cgroup", 1234), 0);
	assert_int_equal(jcs_obj_strn_lossy(&o, "comm", "cu\xffrl", 5, &replaced), 0);
	assert_true(replaced);
	assert_int_equal(jcs_obj_str(&o, "decision", "deny"), 0);
	assert_int_equal(jcs_obj_bool(&o, "enforced", true), 0);
	assert_int_equal(jcs_obj_key(&o, "extra"), 0);
	assert_int_equal(jcs_obj_begin(&inner, &out), 0);
	assert_int_equal(jcs_obj_bool(&inner, "a", false), 0);
	assert_int_equal(jcs_obj_strn(&inner, "b", "x\"y", 3), 0);
	assert_int_equal(jcs_obj_end(&inner), 0);
	assert_int_equal(jcs_obj_strn_lossy(&o, "host", "10.1.2.3", 8, &replaced), 0);
	assert_false(replaced);
	assert_int_equal(jcs_obj_int(&o, "pid", -4242), 0);
	assert_int_equal(jcs_obj_int(&o, "ts", 1785000000123456LL), 0);
	assert_int_equal(jcs_obj_int(&o, "z", JCS_MAX_SAFE_INT + 1), -EINVAL);
	assert_int_equal(jcs_obj_end(&o), 0);
	const char *want = "{\"cgroup\":1234,\"comm\":\"cu\xef\xbf\xbdrl\",\"decision\":\"deny\","
			   "\"enforced\":true,\"extra\":{\"a\":false,\"b\":\"x\\\"y\"},"
			   "\"host\":\"10.1.2.3\",\"pid\":-4242,\"ts\":1785000000123456}";
	assert_string_equal(out.data, want);
	struct kw_buf again = {0};
	struct jcs_error err;
	assert_int_equal(jcs_canonicalize(out.data, out.len, &again, &err), 0);
	assert_string_equal(again.data, want);
	kw_buf_free(&again);

	/* Every path of the member writers: long names and values, names and
	 * values that need escapes or UTF-8 checks, integers of every length. */
	kw_buf_reset(&out);
	char longname[80], longval[200];
	memset(longname, 'n', 70);
	longname[70] = '\0';
	memset(longval, 'v', 150);
	longval[150] = '\0';
	assert_int_equal(jcs_obj_begin(&o, &out), 0);
	assert_int_equal(jcs_obj_str(&o, "a", "bad\xc3"), -EILSEQ); /* leaves no trace */
	assert_int_equal(jcs_obj_strn(&o, "a\"", "bad\xc3", 4), -EILSEQ);
	assert_int_equal(jcs_obj_str(&o, "a", "good"), 0); /* retried after a refusal */
	assert_int_equal(jcs_obj_str(&o, "a\"q", "x"), 0);
	assert_int_equal(jcs_obj_str(&o, "b", longval), 0);
	assert_int_equal(jcs_obj_str(&o, "c", "tab\there"), 0);
	assert_int_equal(jcs_obj_str(&o, "d", "caf\xc3\xa9"), 0);
	assert_int_equal(jcs_obj_str(&o, "e", "bad\xff"), -EILSEQ);
	assert_int_equal(jcs_obj_str(&o, "f", ""), 0);
	assert_int_equal(jcs_obj_int(&o, longname, 0), 0);
	assert_int_equal(jcs_obj_int(&o, "\xc3\xa9", 1), 0);
	assert_int_equal(jcs_obj_end(&o), 0);
	struct kw_buf w2 = {0};
	kw_buf_puts(&w2, "{\"a\":\"good\",\"a\\\"q\":\"x\",\"b\":\"");
	kw_buf_puts(&w2, longval);
	kw_buf_puts(&w2, "\",\"c\":\"tab\\there\",\"d\":\"caf\xc3\xa9\",\"f\":\"\",\"");
	kw_buf_puts(&w2, longname);
	kw_buf_puts(&w2, "\":0,\"\xc3\xa9\":1}");
	assert_string_equal(out.data, w2.data);
	kw_buf_free(&w2);
	uint64_t p10 = 1;
	for (int d = 1; d <= 16; d++) {
		int64_t vals[3] = { (int64_t)p10 - 1, (int64_t)p10, (int64_t)p10 + 1 };
		for (int j = 0; j < 3; j++) {
			if (vals[j] > JCS_MAX_SAFE_INT)
				continue;
			for (int sign = 1; sign >= -1; sign -= 2) {
				char want2[32];
				snprintf(want2, sizeof(want2), "%lld", (long long)(sign * vals[j]));
				kw_buf_reset(&out);
				assert_int_equal(jcs_write_int(&out, sign * vals[j]), 0);
				assert_string_equal(out.data, want2);
			}
		}
		p10 *= 10;
	}

	/* An empty object. */
	kw_buf_reset(&out);
	assert_int_equal(jcs_obj_begin(&o, &out), 0);
	assert_int_equal(jcs_obj_end(&o), 0);
	assert_string_equal(out.data, "{}");
	kw_buf_free(&out);
}

/* The emitter reads names and values 16 bytes at a time: never across into
 * a page it may not read. Strings end exactly at a PROT_NONE page. */
static void test_emitter_page_edge(void **state)
{
	(void)state;
	long pg = sysconf(_SC_PAGESIZE);
	char *map = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	assert_true(map != MAP_FAILED);
	assert_int_equal(mprotect(map + pg, (size_t)pg, PROT_NONE), 0);
	char *edge = map + pg;
	struct kw_buf out = {0}, want = {0};
	for (size_t n = 0; n <= 70; n++) {
		/* A C string whose NUL is the page's last byte. */
		char *cs = edge - n - 1;
		memset(cs, 'k', n);
		cs[n] = '\0';
		/* A counted string whose last byte is the page's last byte. */
		char *vs = edge - n;
		kw_buf_reset(&out);
		kw_buf_reset(&want);
		struct jcs_obj o;
		assert_int_equal(jcs_obj_begin(&o, &out), 0);
		if (n)
			assert_int_equal(jcs_obj_str(&o, cs, cs), 0); /* name and value */
		assert_int_equal(jcs_obj_end(&o), 0);
		kw_buf_putc(&want, '{');
		if (n) {
			kw_buf_putc(&want, '"');
			kw_buf_append(&want, cs, n);
			kw_buf_puts(&want, "\":\"");
			kw_buf_append(&want, cs, n);
			kw_buf_putc(&want, '"');
		}
		kw_buf_putc(&want, '}');
		assert_string_equal(out.data, want.data);

		memset(vs, 'v', n);
		kw_buf_reset(&out);
		assert_int_equal(jcs_obj_begin(&o, &out), 0);
		assert_int_equal(jcs_obj_strn(&o, "a", vs, n), 0);
		assert_int_equal(jcs_obj_strn_lossy(&o, "b", vs, n, NULL), 0);
		assert_int_equal(jcs_obj_end(&o), 0);
		assert_int_equal(out.len, 2 * n + 15);
		assert_memory_equal(out.data + 6, vs, n);
		assert_int_equal(jcs_write_string(&out, vs, n), 0);
	}
	munmap(map, (size_t)pg * 2);
	kw_buf_free(&out);
	kw_buf_free(&want);
}

/* Builds without NDEBUG (all of ours) abort on member names out of RFC 8785
 * order, rather than sign bytes no verifier reproduces. */
static bool order_aborts(const char *first, const char *second)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* Quiet child: the assertion message is expected. */
		if (!freopen("/dev/null", "w", stderr))
			_exit(3);
		struct kw_buf out = {0};
		struct jcs_obj o;
		jcs_obj_begin(&o, &out);
		jcs_obj_int(&o, first, 1);
		jcs_obj_bool(&o, second, true);
		jcs_obj_end(&o);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void test_emitter_asserts_order(void **state)
{
	(void)state;
#ifdef NDEBUG
	skip();
#else
	assert_false(order_aborts("a", "b"));
	assert_false(order_aborts("a", "aa"));
	assert_false(order_aborts("abcdefghijklmnopqrstuvwxyz0", "abcdefghijklmnopqrstuvwxyz1"));
	assert_false(order_aborts("\xf0\x9f\x98\x80", "\xee\x80\x80")); /* UTF-16 order */
	assert_true(order_aborts("b", "a"));
	static char a1[] = "a", a2[] = "a"; /* equal names at different addresses */
	assert_true(order_aborts(a1, a2));
	assert_true(order_aborts("aa", "a"));
	assert_true(order_aborts("abcdefghijklmnopqrstuvwxyz1", "abcdefghijklmnopqrstuvwxyz0"));
	assert_true(order_aborts("\xee\x80\x80", "\xf0\x9f\x98\x80"));
	/* Names built in one reused buffer: the same pointer is not checked. */
	struct kw_buf out = {0};
	struct jcs_obj o;
	char name[16];
	assert_int_equal(jcs_obj_begin(&o, &out), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "k%d", i);
		assert_int_equal(jcs_obj_int(&o, name, i), 0);
	}
	assert_int_equal(jcs_obj_end(&o), 0);
	assert_string_equal(out.data, "{\"k0\":0,\"k1\":1,\"k2\":2}");
	kw_buf_free(&out);
#endif
}

int main(void)
{
	const char *root = getenv("KW_ROOT");
	snprintf(vectors, sizeof(vectors), "%s/tests/vectors", root ? root : ".");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cyberphone_vectors),
		cmocka_unit_test(test_rfc_examples),
		cmocka_unit_test(test_es6_number_file),
		cmocka_unit_test(test_appendix_b),
		cmocka_unit_test(test_number_cases),
		cmocka_unit_test(test_integer_rule_every_spelling),
		cmocka_unit_test(test_every_double_property),
		cmocka_unit_test(test_format_hard_cases),
		cmocka_unit_test(test_put_u64),
		cmocka_unit_test(test_parser_numbers_match_strtod),
		cmocka_unit_test(test_node_cross_check),
		cmocka_unit_test(test_node_documents),
		cmocka_unit_test(test_mutations_consistent),
		cmocka_unit_test(test_strings_and_escapes),
		cmocka_unit_test(test_utf16_member_order),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_appends_to_buffer),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_jcs_dump),
		cmocka_unit_test(test_emitter),
		cmocka_unit_test(test_emitter_page_edge),
		cmocka_unit_test(test_emitter_asserts_order),
		/* Last: a failure here may leave the locale changed. */
		cmocka_unit_test(test_locale_independent),
	};
	return cmocka_run_group_tests_name("jcs", tests, NULL, NULL);
}
