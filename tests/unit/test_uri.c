/* SPDX-License-Identifier: Apache-2.0 */
/* The RFC 3986 URI grammar, production by production: the RFC's own examples
 * (section 1.1.2, section 3, the section 5.4 resolution results, which are
 * absolute URIs, while the references they resolve are not), IPv6 literals
 * from RFC 4291 section 2.2 and RFC 2732, the nine IPv6address forms, and edge
 * cases. Then a differential test against an independent oracle: POSIX
 * extended regular expressions written from RFC 3986 appendix A, run over
 * mutations of the valid examples. */
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "trace/uri.h"

static void expect_valid(const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct kw_uri_error err = { 0 };

		if (!kw_uri_valid(list[i], strlen(list[i]), &err))
			fail_msg("refused a URI: %s (byte %zu: %s)", list[i], err.offset, err.reason);
	}
}

static void expect_invalid(const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct kw_uri_error err = { 0 };

		if (kw_uri_valid(list[i], strlen(list[i]), &err))
			fail_msg("accepted a non-URI: %s", list[i]);
		assert_non_null(err.reason);
		assert_true(err.offset <= strlen(list[i]));
	}
}

#define VALID(...)                                                                 \
	do {                                                                       \
		static const char *const l_[] = { __VA_ARGS__ };                   \
		expect_valid(l_, sizeof(l_) / sizeof(l_[0]));                       \
	} while (0)
#define INVALID(...)                                                               \
	do {                                                                       \
		static const char *const l_[] = { __VA_ARGS__ };                   \
		expect_invalid(l_, sizeof(l_) / sizeof(l_[0]));                     \
	} while (0)

/* "why" for s: the describe line. */
static const char *why(const char *s)
{
	static char out[200];
	struct kw_uri_error err;

	assert_false(kw_uri_valid(s, strlen(s), &err));
	kw_uri_describe(s, strlen(s), &err, out, sizeof(out));
	return out;
}

static void test_rfc3986_examples(void **state)
{
	(void)state;
	/* section 1.1.2 */
	VALID("ftp://ftp.is.co.za/rfc/rfc1808.txt", "http://www.ietf.org/rfc/rfc2396.txt",
	      "ldap://[2001:db8::7]/c=GB?objectClass?one", "mailto:John.Doe@example.com",
	      "news:comp.infosystems.www.servers.unix", "tel:+1-816-555-1212",
	      "telnet://192.0.2.16:80/", "urn:oasis:names:specification:docbook:dtd:xml:4.1.2");
	/* section 3 */
	VALID("foo://example.com:8042/over/there?name=ferret#nose", "urn:example:animal:ferret:nose");
	/* section 5.4: the base, and every result (normal and abnormal examples) */
	VALID("http://a/b/c/d;p?q", "g:h", "http://a/b/c/g", "http://a/b/c/g/", "http://a/g",
	      "http://g", "http://a/b/c/d;p?y", "http://a/b/c/g?y", "http://a/b/c/d;p?q#s",
	      "http://a/b/c/g#s", "http://a/b/c/g?y#s", "http://a/b/c/;x", "http://a/b/c/g;x",
	      "http://a/b/c/g;x?y#s", "http://a/b/c/", "http://a/b/", "http://a/b/g", "http://a/",
	      "http://a/b/c/g.", "http://a/b/c/.g", "http://a/b/c/g..", "http://a/b/c/..g",
	      "http://a/b/c/g/h", "http://a/b/c/h", "http://a/b/c/g;x=1/y", "http://a/b/c/y",
	      "http://a/b/c/g?y/./x", "http://a/b/c/g?y/../x", "http://a/b/c/g#s/./x",
	      "http://a/b/c/g#s/../x", "http:g");
	/* section 5.4: the references are relative references, not URIs */
	INVALID("g", "./g", "g/", "/g", "//g", "?y", "g?y", "#s", "g#s", "g?y#s", ";x", "g;x",
		"g;x?y#s", "", ".", "./", "..", "../", "../g", "../..", "../../", "../../g");
	/* section 6.2.2: case and percent-encoding variants are URIs too */
	VALID("example://a/b/c/%7Bfoo%7D", "eXAMPLE://a/./b/../b/%63/%7bfoo%7d",
	      "HTTP://www.EXAMPLE.com/", "http://example.com:/", "http://example.com/~smith/");
}

/* scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) */
static void test_scheme(void **state)
{
	(void)state;
	VALID("a:", "z:x", "h+t-t.p1:x", "A9:x", "urn:kwitness:collector");
	INVALID("1http://x", "+a:x", ":x", "http", "ht tp://x", "ht_tp://x", "\xc3\xa9:x",
		"-:x", "a/b:c");
	assert_string_equal(why("ex.com/path"),
			    "'/' at byte 6 is not allowed in the scheme (or the scheme's ':' is missing)");
	assert_string_equal(why("mailto"), "at byte 6: the scheme's ':' is missing");
}

/* authority = [ userinfo "@" ] host [ ":" port ] */
static void test_authority_userinfo_port(void **state)
{
	(void)state;
	VALID("ftp://user:pass@ex.com/", "http://u%3Ai@ex.com/", "http://:@ex.com/",
	      "http://a!$&'()*+,;=:b@ex.com/", "http://ex.com:/", "http://ex.com:0/",
	      "http://ex.com:65536/", /* port = *DIGIT: the grammar sets no upper bound */
	      "http://ex.com:00080", "http://ex.com:8080?q", "http://ex.com:8080#f");
	INVALID("http://a@b@c/", "http://us[er@ex.com/", "http://us er@ex.com/",
		"http://ex.com:8o/", "http://ex.com:-1/", "http://ex.com:80:81/",
		"http://ex.com: 80/", "http://ex.com:+80/", "http://u%zz@ex.com/");
	assert_string_equal(why("http://ex.com:8o/"),
			    "'o' at byte 15 is not allowed in the port, which is digits only");
}

/* An authority may be empty: host = reg-name = *( ... ) matches "". */
static void test_empty_authority(void **state)
{
	(void)state;
	VALID("file:///etc/hosts", "http://", "http:///", "http://?q", "http://#f", "http://:80/",
	      "http://@/", "http://@:/");
}

/* reg-name and IPv4address: outside brackets every IPv4address is also a
 * reg-name (section 3.2.2), so malformed dotted quads are still host names. */
static void test_reg_name_ipv4(void **state)
{
	(void)state;
	VALID("http://192.0.2.16/", "http://255.255.255.255/", "http://256.1.1.1/",
	      "http://01.2.3.4/", "http://ex%41mple.com/", "http://ex!$&'()*+,;=.com/",
	      "http://-._~/");
	INVALID("http://ex[.com/", "http://ex].com/", "http://ex.com%/", "http://ex.com%4/",
		"http://ex com/", "http://ex\x7f.com/", "http://ex\xc3\xa9.com/", "http://ex<.com/",
		"http://ex\".com/", "http://ex\\.com/", "http://ex^.com/", "http://ex`.com/",
		"http://ex{.com/", "http://ex|.com/");
}

/* The nine IPv6address forms, each filled to its maximum, and one short each. */
static void test_ipv6_nine_forms(void **state)
{
	(void)state;
	VALID("http://[1:2:3:4:5:6:7:8]/", "http://[1:2:3:4:5:6:1.2.3.4]/",      /* 6( h16 ":" ) ls32 */
	      "http://[::2:3:4:5:6:7:8]/", "http://[::2:3:4:5:6:1.2.3.4]/",      /* "::" 5( h16 ":" ) ls32 */
	      "http://[1::3:4:5:6:7:8]/", "http://[::3:4:5:6:7:8]/",             /* [ h16 ] "::" 4( ) ls32 */
	      "http://[1:2::4:5:6:7:8]/", "http://[2::4:5:6:7:8]/",              /* *1 */
	      "http://[1:2:3::5:6:7:8]/", "http://[3::5:6:7:8]/",                /* *2 */
	      "http://[1:2:3:4::6:7:8]/", "http://[4::6:7:8]/",                  /* *3 */
	      "http://[1:2:3:4:5::7:8]/", "http://[1:2:3:4:5::1.2.3.4]/", "http://[::1.2.3.4]/",
	      "http://[1:2:3:4:5:6::8]/", "http://[::8]/",                       /* *5 ... "::" h16 */
	      "http://[1:2:3:4:5:6:7::]/", "http://[1::]/", "http://[::]/",      /* *6 ... "::" */
	      "http://[FFFF:ffff:0:00:000:0000::]/");
	INVALID("http://[1:2:3:4:5:6:7]/",         /* seven units, no "::" */
		"http://[1:2:3:4:5:6:7:8:9]/",     /* nine */
		"http://[1:2:3:4:5:6:7::8]/",      /* eight units and "::" */
		"http://[::1:2:3:4:5:6:7:8]/", "http://[1:2:3:4:5:6::1.2.3.4]/",
		"http://[1:2:3:4:5:6:7:1.2.3.4]/", "http://[1::2::3]/", "http://[:::]/",
		"http://[1:::2]/", "http://[:1:2:3:4:5:6:7:8]/", "http://[1:2:3:4:5:6:7:8:]/",
		"http://[:1::]/", "http://[1::2:]/", "http://[12345::]/", "http://[g::1]/",
		"http://[]/", "http://[:]/", "http://[1]/", "http://[1.2.3.4]/",
		"http://[1.2.3.4::]/", "http://[::1.2.3.4:1]/", "http://[::1.2.3.4.5]/",
		"http://[::1.2.3]/", "http://[::256.0.0.1]/", "http://[::1.2.3.04]/",
		"http://[::ffff:01.2.3.4]/", "http://[::1:]/", "http://[ ::1]/");
}

/* RFC 4291 section 2.2 text forms and the RFC 2732 examples. */
static void test_ipv6_published_examples(void **state)
{
	(void)state;
	VALID("http://[2001:DB8:0:0:8:800:200C:417A]/", "http://[FF01:0:0:0:0:0:0:101]/",
	      "http://[0:0:0:0:0:0:0:1]/", "http://[0:0:0:0:0:0:0:0]/",
	      "http://[2001:DB8::8:800:200C:417A]/", "http://[FF01::101]/", "http://[::1]/",
	      "http://[0:0:0:0:0:0:13.1.68.3]/", "http://[0:0:0:0:0:FFFF:129.144.52.38]/",
	      "http://[::13.1.68.3]/", "http://[::FFFF:129.144.52.38]/",
	      "http://[FEDC:BA98:7654:3210:FEDC:BA98:7654:3210]:80/index.html",
	      "http://[1080:0:0:0:8:800:200C:417A]/index.html", "http://[3ffe:2a00:100:7031::1]",
	      "http://[1080::8:800:200C:417A]/foo", "http://[::192.9.5.5]/ipng",
	      "http://[::FFFF:129.144.52.38]:80/index.html", "http://[2010:836B:4179::836B:4179]");
}

/* IP-literal edges: the closing bracket, what may follow it, IPvFuture. */
static void test_ip_literal(void **state)
{
	(void)state;
	VALID("http://[::1]:80/", "http://[::1]:/", "http://user@[::1]:1/", "http://[v7.fe80::abcd]/",
	      "http://[V1F.a+b]/", "http://[vA.x:y:z]/", "http://[v1.!$&'()*+,;=-._~]/");
	INVALID("http://[::1", "http://[::1/x]", "http://[::1]x/", "http://[::1]]/",
		"http://[::1]:8a/", "http://[[::1]]/", "http://x[::1]/", "http://[v.x]/",
		"http://[v7.]/", "http://[v7]/", "http://[v7x]/", "http://[vg.x]/",
		"http://[v7.a%41]/", "http://[v7.a@b]/", "http://[v7.a b]/", "http://[w7.a]/");
	assert_string_equal(why("http://[::1"), "at byte 7: the IP literal has no closing ']'");
	assert_string_equal(why("http://[::ffff:01.2.3.4]/"),
			    "at byte 8: the IP literal is not an IPv6 address");
}

/* RFC 6874 zone identifiers are refused, whether written as it specifies
 * ("%25" then the zone) or raw. */
static void test_zone_ids_refused(void **state)
{
	(void)state;
	INVALID("http://[fe80::a%25en1]/", "http://[fe80::1%25eth0]:8080/", "http://[fe80::a%en1]/",
		"http://[fe80::a%25]/", "http://[::1%251]/");
	assert_string_equal(why("http://[fe80::a%25en1]/"),
			    "at byte 8: the IP literal has an IPv6 zone identifier (RFC 6874), which is not accepted");
}

/* pct-encoded = "%" HEXDIG HEXDIG, in every part that allows it. */
static void test_percent_encoding(void **state)
{
	(void)state;
	VALID("http://ex.com/%41%7e%7E%00", "http://ex.com/?%2F#%3F", "urn:a%20b", "a:%ff",
	      "http://%65x.com/");
	INVALID("http://ex.com/%", "http://ex.com/%4", "http://ex.com/%G1", "http://ex.com/%4G",
		"http://ex.com/?%zz", "http://ex.com/#%2", "urn:%", "urn:a%2", "http://ex.com/%%41",
		"a:%\xc3\xa9");
	assert_string_equal(why("http://ex.com/%4"),
			    "at byte 14: '%' must be followed by two hex digits");
}

/* path-abempty / path-absolute / path-rootless / path-empty */
static void test_paths(void **state)
{
	(void)state;
	VALID("a:/", "a:/b//c", "a:b//c", "a:b/c:d@e", "mailto:", "a:?q", "a:#f", "http://ex.com",
	      "http://ex.com//", "http://ex.com/a:b@c!$&'()*+,;=-._~", "a:/:@");
	INVALID("http://ex.com/a b", "http://ex.com/a\x7f", "http://ex.com/\xc3\xa9",
		"http://ex.com/[", "http://ex.com/]", "http://ex.com/a\\b", "a:\\b", "a:b\"",
		"a:b<", "a:b>", "a:b^", "a:b`", "a:b{", "a:b|", "a:b}", "a:b\t", "a:b\n");
}

/* query and fragment: *( pchar / "/" / "?" ); the first '#' starts the fragment. */
static void test_query_fragment(void **state)
{
	(void)state;
	VALID("http://ex.com/?a?b/c:@", "http://ex.com/#a?b/c:@", "http://ex.com/?q#f?x",
	      "http://ex.com/?", "http://ex.com/#", "http://ex.com/?#", "a:?/?#/?");
	INVALID("http://ex.com/?q=[x]", "http://ex.com/?q=]", "http://ex.com/#a#b",
		"http://ex.com/##", "http://ex.com/?q#a#", "http://ex.com/?q= x",
		"http://ex.com/#[x]", "http://ex.com/?a|b");
	assert_string_equal(why("http://ex.com/?q=[x]"), "'[' at byte 17 is not allowed in the query");
	assert_string_equal(why("http://ex.com/#a#b"),
			    "'#' at byte 16 is not allowed in the fragment");
}

/* The length is the caller's: a NUL inside is a byte like any other, and
 * nothing past n is read. */
static void test_length_and_nul(void **state)
{
	struct kw_uri_error err;
	const char s[] = "http://ex.com/a\0b";

	(void)state;
	assert_false(kw_uri_valid(s, sizeof(s) - 1, &err));
	assert_int_equal(err.offset, 15);
	assert_true(kw_uri_valid(s, 15, NULL));
	assert_true(kw_uri_valid("http://ex.com/%41", 17, NULL));
	assert_false(kw_uri_valid("http://ex.com/%41", 16, NULL)); /* "%4" then the end */
	assert_false(kw_uri_valid("http://[::1]/", 11, NULL));     /* "http://[::1" */
	assert_false(kw_uri_valid(NULL, 0, NULL));
}

/* --- differential test against RFC 3986 appendix A as regular expressions --- */

#define HEX "[0-9A-Fa-f]"
#define PCT "%" HEX HEX
#define UNRES_SUB "A-Za-z0-9._~!$&'()*+,;="
#define DEC "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])"
#define V4 DEC "\\." DEC "\\." DEC "\\." DEC
#define H16 HEX "{1,4}"
#define LS32 "(" H16 ":" H16 "|" V4 ")"
#define V6                                                                     \
	"((" H16 ":){6}" LS32                                                      \
	"|::(" H16 ":){5}" LS32                                                    \
	"|(" H16 ")?::(" H16 ":){4}" LS32                                          \
	"|((" H16 ":){0,1}" H16 ")?::(" H16 ":){3}" LS32                           \
	"|((" H16 ":){0,2}" H16 ")?::(" H16 ":){2}" LS32                           \
	"|((" H16 ":){0,3}" H16 ")?::" H16 ":" LS32                                \
	"|((" H16 ":){0,4}" H16 ")?::" LS32                                        \
	"|((" H16 ":){0,5}" H16 ")?::" H16                                         \
	"|((" H16 ":){0,6}" H16 ")?::)"
#define VFUTURE "[vV]" HEX "+\\.[" UNRES_SUB ":-]+"
#define PCHAR "([" UNRES_SUB ":@-]|" PCT ")"
#define AUTHORITY                                                              \
	"(([" UNRES_SUB ":-]|" PCT ")*@)?"                                         \
	"(\\[(" V6 "|" VFUTURE ")]|" V4 "|([" UNRES_SUB "-]|" PCT ")*)"            \
	"(:[0-9]*)?"
#define URI_ERE                                                                \
	"^[A-Za-z][A-Za-z0-9+.-]*:"                                               \
	"(//" AUTHORITY "(/" PCHAR "*)*"                                           \
	"|/(" PCHAR "+(/" PCHAR "*)*)?"                                            \
	"|" PCHAR "+(/" PCHAR "*)*"                                                \
	"|)"                                                                       \
	"(\\?(" PCHAR "|[/?])*)?"                                                 \
	"(#(" PCHAR "|[/?])*)?$"

static uint64_t rng_state = 0x2545F4914F6CDD1DULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static void test_differential_against_abnf_regex(void **state)
{
	static const char *const seeds[] = {
		"ldap://[2001:db8::7]/c=GB?objectClass?one", "foo://u:p@example.com:8042/over/there?name=ferret#nose",
		"urn:example:animal:ferret:nose", "telnet://192.0.2.16:80/", "http://[::FFFF:129.144.52.38]:80/a",
		"http://[v7.fe80::abcd]/", "http://[1:2:3:4:5:6:7:8]/", "http://[1:2:3:4:5::1.2.3.4]/",
		"file:///etc/hosts", "mailto:John.Doe@example.com", "http://a/b/c/g;x?y#s",
		"http://ex.com/%41?%2F#%3F", "a:/b//c",
	};
	/* Bytes that matter to the grammar, and a few that never fit. */
	static const char alphabet[] = "[]:@/?#%.vV0129aAfFgG-_~!$&'()*+,;= \"<>\\^`{|}\x7f\xc3";
	regex_t re;
	int valid = 0, invalid = 0;

	(void)state;
	assert_int_equal(regcomp(&re, URI_ERE, REG_EXTENDED | REG_NOSUB), 0);
	for (int round = 0; round < 60000; round++) {
		char buf[160];
		size_t n;
		int edits = 1 + (int)(rng() % 3);

		snprintf(buf, sizeof(buf), "%s", seeds[rng() % (sizeof(seeds) / sizeof(seeds[0]))]);
		n = strlen(buf);
		for (int e = 0; e < edits; e++) {
			size_t at = n ? (size_t)(rng() % (n + 1)) : 0;
			char c = alphabet[rng() % (sizeof(alphabet) - 1)];

			switch (rng() % 3) {
			case 0: /* insert */
				if (n + 1 < sizeof(buf)) {
					memmove(buf + at + 1, buf + at, n - at + 1);
					buf[at] = c;
					n++;
				}
				break;
			case 1: /* replace */
				if (at < n)
					buf[at] = c;
				break;
			default: /* delete */
				if (at < n) {
					memmove(buf + at, buf + at + 1, n - at);
					n--;
				}
			}
		}
		bool want = regexec(&re, buf, 0, NULL, 0) == 0;
		bool got = kw_uri_valid(buf, n, NULL);

		if (want != got)
			fail_msg("\"%s\": the ABNF says %s, kw_uri_valid says %s", buf,
				 want ? "URI" : "not a URI", got ? "URI" : "not a URI");
		if (got)
			valid++;
		else
			invalid++;
	}
	regfree(&re);
	/* Both verdicts are well represented, so the comparison means something. */
	print_message("differential: %d URIs, %d non-URIs\n", valid, invalid);
	assert_true(valid > 10000 && invalid > 10000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc3986_examples),
		cmocka_unit_test(test_scheme),
		cmocka_unit_test(test_authority_userinfo_port),
		cmocka_unit_test(test_empty_authority),
		cmocka_unit_test(test_reg_name_ipv4),
		cmocka_unit_test(test_ipv6_nine_forms),
		cmocka_unit_test(test_ipv6_published_examples),
		cmocka_unit_test(test_ip_literal),
		cmocka_unit_test(test_zone_ids_refused),
		cmocka_unit_test(test_percent_encoding),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_query_fragment),
		cmocka_unit_test(test_length_and_nul),
		cmocka_unit_test(test_differential_against_abnf_regex),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
