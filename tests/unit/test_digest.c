/* SPDX-License-Identifier: Apache-2.0 */
/* Digests, base64url and transcript hashing against known answers
 * (tests/vectors/trace-spec/PROVENANCE, FIPS 180 "abc", RFC 4648 section 10). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/base64.h"
#include "lib/buf.h"
#include "lib/digest.h"
#include "trace/record.h"
#include "collector/transcript.h"

#define BUNDLE "network:\n  egress: deny-all\nfilesystem:\n  write: /work\n"
#define IMAGE "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define E1 "{\"tool\":\"fs.read\",\"path\":\"/work/src\",\"decision\":\"permit\"}"
#define E2 "{\"tool\":\"net.connect\",\"host\":\"api.example.org\",\"decision\":\"deny\"}"
/* E1 and E2 canonical (RFC 8785: keys sorted), as log lines hold them */
#define P1 "{\"decision\":\"permit\",\"path\":\"/work/src\",\"tool\":\"fs.read\"}"
#define P2 "{\"decision\":\"deny\",\"host\":\"api.example.org\",\"tool\":\"net.connect\"}"
#define KA_BUNDLE "sha256:b7a7d560278f34511e4abcc7a8909a3c07e9ee16143da6693b19cb3222ee0cae"
#define KA_TRANSCRIPT "sha256:ffce23badc0a325b93ac587374132bbaae4f7798a4d57f84cf135a312f4a6aea"
#define KA_MEASUREMENT "sha256:06a9b5018d74ec48f31bcec06e5eade5b12b565a6443caafc5ba8cdda715ac5f"
#define KA_EMPTY "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
#define KA_CAFE "sha256:76c4c3e442fa36036109df075d0ab259d08dc1c3aab16b500af4b0afc0e992dc"

static void test_digest_known_answers(void **state)
{
	char out[KW_DIGEST_STR_MAX];

	(void)state;
	assert_int_equal(kw_digest_buf(KW_SHA256, "abc", 3, out), 0);
	assert_string_equal(out, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_int_equal(kw_digest_buf(KW_SHA384, "abc", 3, out), 0);
	assert_string_equal(out, "sha384:cb00753f45a35e8bb5a03d699ac65007272c32ab0eded163"
				 "1a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7");
	assert_int_equal(kw_digest_buf(KW_SHA256, BUNDLE, strlen(BUNDLE), out), 0);
	assert_string_equal(out, KA_BUNDLE);
	assert_true(kw_digest_valid(out));
}

static void test_digest_streaming_equals_oneshot(void **state)
{
	static uint8_t data[10007];
	char one[KW_DIGEST_STR_MAX], streamed[KW_DIGEST_STR_MAX];
	struct kw_digest d;

	(void)state;
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 131 + 7);
	for (int alg = KW_SHA256; alg <= KW_SHA384; alg++) {
		assert_int_equal(kw_digest_buf(alg, data, sizeof(data), one), 0);
		assert_int_equal(kw_digest_init(&d, alg), 0);
		for (size_t off = 0, step = 1; off < sizeof(data); off += step, step = step * 2 + 1) {
			size_t n = off + step > sizeof(data) ? sizeof(data) - off : step;

			assert_int_equal(kw_digest_update(&d, data + off, n), 0);
		}
		assert_int_equal(kw_digest_final(&d, streamed), 0);
		assert_string_equal(one, streamed);
	}
	/* A context released without final does not leak (ASan checks). */
	assert_int_equal(kw_digest_init(&d, KW_SHA256), 0);
	assert_int_equal(kw_digest_update(&d, "x", 1), 0);
	kw_digest_free(&d);
	kw_digest_free(&d);
}

static void test_software_measurement_known_answer(void **state)
{
	char out[KW_DIGEST_STR_MAX];
	struct kw_digest d;

	(void)state;
	/* sha256(image_digest + "\n" + bundle_hash), both as UTF-8 text. */
	assert_int_equal(kw_digest_init(&d, KW_SHA256), 0);
	assert_int_equal(kw_digest_update(&d, IMAGE "\n" KA_BUNDLE, strlen(IMAGE "\n" KA_BUNDLE)), 0);
	assert_int_equal(kw_digest_final(&d, out), 0);
	assert_string_equal(out, KA_MEASUREMENT);
}

static void test_digest_valid_pattern(void **state)
{
	static const char *const bad[] = {
		"", "sha256:", "sha256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"sha256:gaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"SHA256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"sha512:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"sha384:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		" sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
	};

	(void)state;
	assert_true(kw_digest_valid(IMAGE));
	assert_true(kw_digest_valid("sha384:000000000000000000000000000000000000000000000000"
				    "0000000000000000000000000000000000000000000000ff"));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(kw_digest_valid(bad[i]));
	assert_false(kw_digest_valid(NULL));
}

static void test_b64url_rfc4648(void **state)
{
	static const char *const plain[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
	static const char *const enc[] = { "", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy" };
	char out[16];
	uint8_t back[16];
	size_t n;

	(void)state;
	for (size_t i = 0; i < 7; i++) {
		size_t len = strlen(plain[i]);

		assert_int_equal(kw_b64_encode(KW_B64_URL, (const uint8_t *)plain[i], len, out), strlen(enc[i]));
		assert_string_equal(out, enc[i]);
		assert_true(strlen(enc[i]) + 1 <= KW_B64_LEN(len));
		assert_int_equal(kw_b64_decode(KW_B64_URL, enc[i], strlen(enc[i]), back, sizeof(back), &n), 0);
		assert_int_equal(n, len);
		assert_memory_equal(back, plain[i], len);
	}
	/* The URL alphabet: 0xfb 0xff -> "-_8". */
	assert_int_equal(kw_b64_encode(KW_B64_URL, (const uint8_t *)"\xfb\xff", 2, out), 3);
	assert_string_equal(out, "-_8");
}

static void test_b64url_round_trip(void **state)
{
	uint8_t in[100], back[100];
	char enc[KW_B64_LEN(100)];
	size_t n;

	(void)state;
	for (size_t len = 0; len <= sizeof(in); len++) {
		for (size_t i = 0; i < len; i++)
			in[i] = (uint8_t)(i * 37 + len * 11);
		size_t el = kw_b64_encode(KW_B64_URL, in, len, enc);

		assert_int_equal(strlen(enc), el);
		assert_int_equal(kw_b64_decode(KW_B64_URL, enc, el, back, sizeof(back), &n), 0);
		assert_int_equal(n, len);
		assert_memory_equal(in, back, len);
	}
}

static void test_b64url_refuses_non_canonical(void **state)
{
	static const char *const bad[] = {
		"Zg==", "Zg=", "Zm9=", "Zm8=", /* padding */
		"Zm+v", "Zm/v",               /* base64 (not url) alphabet */
		"Zm9vY",                      /* length 1 mod 4 */
		"Zh", "Zm9", "Zm9vYh",        /* non-zero trailing bits */
		"Zm 9", "Zm9\n", "Zm.v", "\xc3\xa9xx",
	};
	uint8_t out[16];
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(kw_b64_decode(KW_B64_URL, bad[i], strlen(bad[i]), out, sizeof(out), &n), -EINVAL);
	/* An embedded NUL inside the given length is a character like any other. */
	assert_int_equal(kw_b64_decode(KW_B64_URL, "Zm\0v", 4, out, sizeof(out), &n), -EINVAL);
	/* Short output buffer. */
	assert_int_equal(kw_b64_decode(KW_B64_URL, "Zm9vYmFy", 8, out, 5, &n), -ENOBUFS);
	assert_int_equal(kw_b64_decode(KW_B64_URL, "Zm9vYmFy", 8, out, 6, &n), 0);
	assert_int_equal(n, 6);
}

static void test_transcript_known_answers(void **state)
{
	char hash[KW_DIGEST_STR_MAX], err[200];
	struct kw_transcript t;
	uint64_t count = 99;
	const char *arr = "[" E1 ", " E2 "]";
	const char *lines = E1 "\n\n" E2 "\n";
	const char *cafe = "[{\"tool\":\"fs.read\",\"path\":\"/work/caf\xc3\xa9\",\"decision\":\"permit\"}]";

	(void)state;
	assert_int_equal(kw_transcript_from_text(arr, strlen(arr), hash, &count, err, sizeof(err)), 0);
	assert_string_equal(hash, KA_TRANSCRIPT);
	assert_int_equal(count, 2);
	assert_int_equal(kw_transcript_from_text(lines, strlen(lines), hash, &count, err, sizeof(err)), 0);
	assert_string_equal(hash, KA_TRANSCRIPT);
	assert_int_equal(count, 2);
	/* The same with CRLF line ends and no final newline. */
	assert_int_equal(kw_transcript_from_text(E1 "\r\n" E2, strlen(E1 "\r\n" E2), hash, &count, err,
						 sizeof(err)), 0);
	assert_string_equal(hash, KA_TRANSCRIPT);

	/* Streaming with canonical entries (keys sorted). */
	assert_int_equal(kw_transcript_init(&t), 0);
	assert_int_equal(kw_transcript_append(&t, P1, strlen(P1)), 0);
	assert_int_equal(kw_transcript_append(&t, P2, strlen(P2)), 0);
	assert_int_equal(kw_transcript_final(&t, hash, &count), 0);
	assert_string_equal(hash, KA_TRANSCRIPT);
	assert_int_equal(count, 2);

	/* Whole log lines a chunk at a time (as kwitnessd's I/O thread hashes
	 * what it wrote), alone and after an entry streamed one by one. */
	{
		char chunk[] = P1 "\n" P2 "\n", second[] = P2 "\n", torn[] = P1;

		assert_int_equal(kw_transcript_init(&t), 0);
		assert_int_equal(kw_transcript_append_lines(&t, chunk, strlen(chunk)), 0);
		assert_int_equal(kw_transcript_append_lines(&t, chunk, 0), 0);
		assert_int_equal(kw_transcript_final(&t, hash, &count), 0);
		assert_string_equal(hash, KA_TRANSCRIPT);
		assert_int_equal(count, 2);
		assert_null(strchr(chunk, '\n')); /* the newlines were taken for commas */

		assert_int_equal(kw_transcript_init(&t), 0);
		assert_int_equal(kw_transcript_append(&t, P1, strlen(P1)), 0);
		assert_int_equal(kw_transcript_append_lines(&t, torn, strlen(torn)), -EINVAL);
		assert_int_equal(kw_transcript_append_lines(&t, second, strlen(second)), 0);
		assert_int_equal(kw_transcript_final(&t, hash, &count), 0);
		assert_string_equal(hash, KA_TRANSCRIPT);
		assert_int_equal(count, 2);
	}

	/* The empty transcript is "[]". */
	assert_int_equal(kw_transcript_from_text("", 0, hash, &count, err, sizeof(err)), 0);
	assert_string_equal(hash, KA_EMPTY);
	assert_int_equal(count, 0);
	assert_int_equal(kw_transcript_from_text(" [ ]\n", 5, hash, &count, err, sizeof(err)), 0);
	assert_string_equal(hash, KA_EMPTY);
	assert_int_equal(kw_transcript_init(&t), 0);
	assert_int_equal(kw_transcript_final(&t, hash, &count), 0);
	assert_string_equal(hash, KA_EMPTY);

	assert_int_equal(kw_transcript_from_text(cafe, strlen(cafe), hash, &count, err, sizeof(err)), 0);
	assert_string_equal(hash, KA_CAFE);
	assert_int_equal(count, 1);
}

/* Lines after entries that filled the stage to its last byte, checked
 * against SHA-256 of the whole "[...]" built here. */
static void test_transcript_lines_at_stage_end(void **state)
{
	struct kw_transcript t;
	char entry[KW_TRANSCRIPT_STAGE], hash[KW_DIGEST_STR_MAX], want[KW_DIGEST_STR_MAX];
	char lines[] = "{\"a\":1}\n{\"b\":2}\n";
	struct kw_buf all = { 0 };
	size_t second = KW_TRANSCRIPT_STAGE - 2 - 1; /* "[1" staged, then ",": it fills the rest */
	uint64_t count;

	(void)state;
	memset(entry, 'x', sizeof(entry));
	entry[0] = '"';
	entry[second - 1] = '"';
	assert_int_equal(kw_transcript_init(&t), 0);
	assert_int_equal(kw_transcript_append(&t, "1", 1), 0);
	assert_int_equal(kw_transcript_append(&t, entry, second), 0);
	assert_int_equal(t.staged, KW_TRANSCRIPT_STAGE);
	assert_int_equal(kw_transcript_append_lines(&t, lines, strlen(lines)), 0);
	assert_int_equal(kw_transcript_final(&t, hash, &count), 0);
	assert_int_equal(count, 4);

	assert_int_equal(kw_buf_puts(&all, "[1,"), 0);
	assert_int_equal(kw_buf_append(&all, entry, second), 0);
	assert_int_equal(kw_buf_puts(&all, ",{\"a\":1},{\"b\":2}]"), 0);
	assert_int_equal(kw_digest_buf(KW_SHA256, all.data, all.len, want), 0);
	assert_string_equal(hash, want);
	kw_buf_free(&all);
}

/* An entry whose comma and bytes are exactly one byte more than the stage
 * has left: the stage is hashed first, then holds the comma and the entry
 * (never one byte past its end); beside it the entry that fits exactly, and
 * entries of a whole stage and one byte less. On the heap, so that ASan sees
 * a write past the stage. The answer: SHA-256 of the "[...]" built here. */
static void test_transcript_entry_one_byte_over(void **state)
{
	struct kw_transcript *t = malloc(sizeof(*t));
	char *entry = malloc(KW_TRANSCRIPT_STAGE + 1), hash[KW_DIGEST_STR_MAX], want[KW_DIGEST_STR_MAX];
	struct kw_buf all = { 0 };
	uint64_t count;
	/* After "[1": 4094 bytes left. 4093 + its comma fill them; 4094 + its
	 * comma are one too many. */
	static const size_t over[] = { KW_TRANSCRIPT_STAGE - 2, KW_TRANSCRIPT_STAGE - 3,
				       KW_TRANSCRIPT_STAGE - 1, KW_TRANSCRIPT_STAGE };

	(void)state;
	assert_non_null(t);
	assert_non_null(entry);
	for (size_t k = 0; k < sizeof(over) / sizeof(over[0]); k++) {
		size_t len = over[k];

		memset(entry, 'a' + (int)k, len);
		entry[0] = entry[len - 1] = '"';
		assert_int_equal(kw_transcript_init(t), 0);
		assert_int_equal(kw_transcript_append(t, "1", 1), 0);
		assert_int_equal(t->staged, 2);
		assert_int_equal(kw_transcript_append(t, entry, len), 0);
		if (len == KW_TRANSCRIPT_STAGE - 3)
			assert_int_equal(t->staged, KW_TRANSCRIPT_STAGE); /* fits: no hashing yet */
		else if (len + 1 <= KW_TRANSCRIPT_STAGE)
			assert_int_equal(t->staged, len + 1); /* "[1" hashed; "," + entry staged */
		else
			assert_int_equal(t->staged, 0); /* longer than the stage: hashed as it is */
		assert_int_equal(kw_transcript_append(t, "2", 1), 0);
		assert_int_equal(kw_transcript_final(t, hash, &count), 0);
		assert_int_equal(count, 3);

		kw_buf_reset(&all);
		assert_int_equal(kw_buf_puts(&all, "[1,"), 0);
		assert_int_equal(kw_buf_append(&all, entry, len), 0);
		assert_int_equal(kw_buf_puts(&all, ",2]"), 0);
		assert_int_equal(kw_digest_buf(KW_SHA256, all.data, all.len, want), 0);
		assert_string_equal(hash, want);
	}
	kw_buf_free(&all);
	free(entry);
	free(t);
}

/* Entries of random length (some longer than the stage), hashed one by one
 * and mixed with runs of log lines cut at random line boundaries, as the
 * collector's open entry, its chunks and a resume's rehash meet: SHA-256 of
 * the "[...]" built here is the answer every time. */
static void test_transcript_lines_random_cuts(void **state)
{
	uint64_t x = 0x2545F4914F6CDD1DULL;
	struct kw_buf all = { 0 }, lines = { 0 };
	char hash[KW_DIGEST_STR_MAX], want[KW_DIGEST_STR_MAX];

	(void)state;
	for (int round = 0; round < 200; round++) {
		struct kw_transcript t;
		int n = (int)(round % 40);
		uint64_t count;

		kw_buf_reset(&all);
		assert_int_equal(kw_buf_putc(&all, '['), 0);
		assert_int_equal(kw_transcript_init(&t), 0);
		for (int i = 0; i < n;) {
			/* xorshift64: a fixed, reproducible sequence */
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			int run = 1 + (int)(x % 5), as_lines = (int)((x >> 8) & 1);

			kw_buf_reset(&lines);
			for (int k = 0; k < run && i < n; k++, i++) {
				size_t len = 2 + (size_t)((x >> (16 + k * 3)) % 7) *
						     ((x >> 40) & 1 ? 1000 : 37);
				char entry[7000];

				memset(entry, 'a' + (char)(i % 26), len);
				entry[0] = entry[len - 1] = '"';
				if (i)
					assert_int_equal(kw_buf_putc(&all, ','), 0);
				assert_int_equal(kw_buf_append(&all, entry, len), 0);
				if (as_lines) {
					assert_int_equal(kw_buf_append(&lines, entry, len), 0);
					assert_int_equal(kw_buf_putc(&lines, '\n'), 0);
				} else {
					assert_int_equal(kw_transcript_append(&t, entry, len), 0);
				}
			}
			if (as_lines)
				assert_int_equal(kw_transcript_append_lines(&t, lines.data, lines.len), 0);
		}
		assert_int_equal(kw_buf_putc(&all, ']'), 0);
		assert_int_equal(kw_transcript_final(&t, hash, &count), 0);
		assert_int_equal(count, (uint64_t)n);
		assert_int_equal(kw_digest_buf(KW_SHA256, all.data, all.len, want), 0);
		assert_string_equal(hash, want);
	}
	kw_buf_free(&all);
	kw_buf_free(&lines);
}

static void test_transcript_refusals(void **state)
{
	static const char *const bad[] = {
		"[1,2]", "{\"a\":1}\n2\n", "{\"a\":1}\n{\"a\":\n", "[{\"a\":1}", "{\"a\":1,\"a\":2}\n",
		"[{\"a\":1}] x", "{\"a\":NaN}\n", "\"text\"\n", "{\"a\":\"\xff\"}\n",
	};
	char hash[KW_DIGEST_STR_MAX], err[200];
	uint64_t count;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(kw_transcript_from_text(bad[i], strlen(bad[i]), hash, &count, err,
							 sizeof(err)), -EINVAL);
		assert_true(strlen(err) > 0);
	}
	/* The error names the line. */
	assert_int_equal(kw_transcript_from_text("{\"a\":1}\n\n{oops}\n", 16, hash, &count, err,
						 sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 3"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_digest_known_answers),
		cmocka_unit_test(test_digest_streaming_equals_oneshot),
		cmocka_unit_test(test_software_measurement_known_answer),
		cmocka_unit_test(test_digest_valid_pattern),
		cmocka_unit_test(test_b64url_rfc4648),
		cmocka_unit_test(test_b64url_round_trip),
		cmocka_unit_test(test_b64url_refuses_non_canonical),
		cmocka_unit_test(test_transcript_known_answers),
		cmocka_unit_test(test_transcript_lines_at_stage_end),
		cmocka_unit_test(test_transcript_entry_one_byte_over),
		cmocka_unit_test(test_transcript_lines_random_cuts),
		cmocka_unit_test(test_transcript_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
