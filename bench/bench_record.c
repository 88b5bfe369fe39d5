/* SPDX-License-Identifier: Apache-2.0 */
/* TRACE record signing and verification rates, with raw Ed25519 over the same
 * number of bytes as the same-run baseline:
 *   - kw_record_sign: schema check, RFC 8785 bytes, Ed25519 sign, then the full
 *     self-verification (parse, schema, thumbprints, Ed25519 verify);
 *   - kw_record_verify: parse untrusted text, schema, thumbprints, freshness,
 *     canonical bytes, Ed25519 verify, plus the evidence hashes;
 *   - kw_key_sign / kw_key_verify on a buffer of the signed length;
 *   - kw_seal_record: what a session's close does (build, sign, the seal's
 *     self-check, atomic write), into $TMPDIR (default /tmp; a tmpfs such as
 *     /dev/shm keeps the disk's fsync out of the number).
 * Rates are per CPU-second of this process (single thread).
 * Usage: bench_record [CPU_SECONDS_PER_PART]   (default 1) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "trace/key.h"
#include "trace/record.h"
#include "collector/seal.h"

#define BUNDLE "network:\n  egress: deny-all\nfilesystem:\n  write: /work\n"
#define IMAGE "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define TRANSCRIPT "sha256:ffce23badc0a325b93ac587374132bbaae4f7798a4d57f84cf135a312f4a6aea"

/* CPU time of this process: the machine is shared, and a rate per CPU-second
 * does not move when other work takes the cores. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_record: %s\n", what);
	exit(1);
}

struct bench {
	struct kw_key *key;
	const struct kw_record_input *in;
	const char *seal_path;
	json_t *rec;
	const struct kw_buf *text;
	const struct kw_verify_opts *opts;
	const uint8_t *msg;
	size_t msglen;
	uint8_t sig[KW_ED25519_SIG_LEN];
};

static void op_record_sign(struct bench *b)
{
	char err[256];

	if (kw_record_sign(b->rec, b->key, err, sizeof(err)))
		die(err);
}

static void op_record_verify(struct bench *b)
{
	struct kw_verify_result res;

	if (kw_record_verify(b->text->data, b->text->len, b->opts, &res))
		die(res.message);
}

static void op_seal(struct bench *b)
{
	enum kw_seal_stage stage;
	char why[512];

	if (kw_seal_record(b->in, b->key, b->seal_path, NULL, &stage, why, sizeof(why)))
		die(why);
}

static void op_raw_sign(struct bench *b)
{
	if (kw_key_sign(b->key, b->msg, b->msglen, b->sig))
		die("sign");
}

static void op_raw_verify(struct bench *b)
{
	if (kw_key_verify(b->key, b->msg, b->msglen, b->sig, sizeof(b->sig)))
		die("verify");
}

/* Runs op in batches until budget seconds have passed; operations per second. */
static double rate(double budget, void (*op)(struct bench *), struct bench *b)
{
	double t0 = now(), t;
	long n = 0;

	op(b); /* warm up */
	do {
		for (int i = 0; i < 32; i++)
			op(b);
		n += 32;
		t = now() - t0;
	} while (t < budget);
	return (double)n / t;
}

static void line(const char *what, double rate, size_t bytes)
{
	printf("%-58s %9.0f ops/s  %7.1f us/op  (%zu bytes)\n", what, rate, 1e6 / rate, bytes);
}

int main(int argc, char **argv)
{
	double budget = argc > 1 ? atof(argv[1]) : 1.0;
	static const uint8_t seed[32] = { 0x4c, 0xcd, 0x08, 0x9b, 0x28, 0xff, 0x96, 0xda,
					  0x9d, 0xb6, 0xc3, 0x46, 0xec, 0x11, 0x4e, 0x0f,
					  0x5b, 0x8a, 0x31, 0x9f, 0x35, 0xab, 0xa6, 0x24,
					  0xda, 0x8c, 0xf6, 0xed, 0x4f, 0xb8, 0xa6, 0xfb };
	struct kw_record_input in = {
		.sandbox_id = "spiffe://example.org/sandbox/code-review-7f2a",
		.image_digest = IMAGE, .bundle = BUNDLE, .bundle_len = strlen(BUNDLE),
		.transcript_hash = TRANSCRIPT, .call_count = 2, .enforcement_mode = "enforce",
		.model_provider = "anthropic", .model_id = "claude-sonnet-4-6",
		.data_class = "internal", .iat = (int64_t)time(NULL),
	};
	struct kw_buf signed_text = { 0 }, unsigned_bytes = { 0 };
	struct kw_verify_opts vo = { 0 }, vo_evidence;
	struct kw_key *key = NULL;
	struct bench b = { 0 };
	uint8_t *msg;
	char err[256], seal_path[4096];
	const char *tmp = getenv("TMPDIR");
	json_t *rec, *copy;

	if (budget <= 0)
		budget = 1.0;
	snprintf(seal_path, sizeof(seal_path), "%s/bench_record.%d.json", tmp && *tmp ? tmp : "/tmp",
		 (int)getpid());
	if (kw_key_from_seed(seed, &key))
		die("key");
	rec = kw_record_build(&in, err, sizeof(err));
	if (!rec || kw_record_sign(rec, key, err, sizeof(err)))
		die(err);
	if (jcs_dump(rec, &signed_text))
		die("jcs_dump");
	copy = json_deep_copy(rec);
	json_object_del(copy, "signature");
	if (jcs_dump(copy, &unsigned_bytes))
		die("jcs_dump");
	json_decref(copy);

	vo.trusted = key;
	vo.now = in.iat;
	vo.max_age = 86400;
	vo.skew = 60;
	vo.call_count = -1;
	vo_evidence = vo;
	vo_evidence.transcript_hash = TRANSCRIPT;
	vo_evidence.call_count = 2;
	vo_evidence.bundle = BUNDLE;
	vo_evidence.bundle_len = strlen(BUNDLE);
	vo_evidence.image_digest = IMAGE;

	printf("TRACE v0.2 record: %zu signed bytes (%zu bytes under the signature); rates per CPU-second, %.1f s each\n",
	       signed_text.len, unsigned_bytes.len, budget);

	b.key = key;
	b.rec = rec;
	b.text = &signed_text;
	b.opts = &vo;
	line("record sign (schema + RFC 8785 + Ed25519 + self-verify)",
	     rate(budget, op_record_sign, &b), unsigned_bytes.len);
	line("record verify (parse + schema + RFC 8785 + Ed25519)",
	     rate(budget, op_record_verify, &b), signed_text.len);
	b.opts = &vo_evidence;
	line("record verify + bundle/measurement/transcript checks",
	     rate(budget, op_record_verify, &b), signed_text.len);
	b.in = &in;
	b.seal_path = seal_path;
	line("seal (build + sign + self-check + atomic write)", rate(budget, op_seal, &b),
	     signed_text.len);
	unlink(seal_path);

	/* Baseline: the same key, the same bytes, nothing else. */
	msg = malloc(unsigned_bytes.len);
	if (!msg)
		die("out of memory");
	memcpy(msg, unsigned_bytes.data, unsigned_bytes.len);
	b.msg = msg;
	b.msglen = unsigned_bytes.len;
	line("baseline: raw Ed25519 sign (OpenSSL EVP), same bytes",
	     rate(budget, op_raw_sign, &b), unsigned_bytes.len);
	line("baseline: raw Ed25519 verify (OpenSSL EVP), same bytes",
	     rate(budget, op_raw_verify, &b), unsigned_bytes.len);

	free(msg);
	json_decref(rec);
	kw_buf_free(&signed_text);
	kw_buf_free(&unsigned_bytes);
	kw_key_free(key);
	return 0;
}
