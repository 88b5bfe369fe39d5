/* SPDX-License-Identifier: Apache-2.0 */
/* The transparency log's parsers, on what arrives from outside: the first
 * byte picks one, the rest is its input. 0: a signed note and the checkpoint
 * in it (checked against a fixed log key); 1: a tlog-proof file (and the
 * proof's path run through the verifier, and the whole proof through the
 * offline check of a fixed record against a policy of the fixed key); 2: a tlog-policy file; 3: a
 * witness add-checkpoint request (the witness trusts a fixed key, so nothing
 * reaches its state); 4: a vkey; 5: an HTTP request (the log and witness
 * servers' input). Each input is its own allocation, so a read
 * past its end is caught. Properties: what parses re-formats to the same
 * bytes (checkpoints, proofs). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/key.h"
#include "tlog/http.h"
#include "tlog/note.h"
#include "tlog/policy.h"
#include "tlog/proof.h"
#include "tlog/record_check.h"
#include "tlog/witness.h"

static struct tlog_key log_key;
static struct tlog_policy log_policy;
static const char record[] =
	"{\"iat\":1,\"subject\":\"spiffe://fuzz\","
	"\"transparency\":\"https://log.example/fuzz/kwitness/x.tlog-proof\"}";

static void setup(void)
{
	uint8_t seed[32] = { 1 };
	struct kw_key *k;

	if (log_key.key)
		return;
	if (kw_key_from_seed(seed, &k) || tlog_key_from("log.example/fuzz", TLOG_SIG_ED25519, k, &log_key))
		abort();
	log_policy.logs[0] = log_key;
	log_policy.nlogs = 1;
	log_policy.quorum = -1;
	log_policy.has_quorum = 1;
}

static void fuzz_note(const char *in, size_t len)
{
	struct tlog_note n;
	struct tlog_checkpoint cp;
	struct kw_buf b = { 0 };

	if (tlog_note_parse(in, len, &n))
		return;
	if (n.text_len > len || n.nsigs == 0)
		abort();
	(void)tlog_note_verify(&n, &log_key, NULL);
	if (tlog_checkpoint_parse(n.text, n.text_len, &cp) == 0) {
		/* The first three lines re-format to themselves. */
		if (tlog_checkpoint_format(&cp, &b) || b.len > n.text_len || memcmp(b.data, n.text, b.len))
			abort();
	}
	kw_buf_free(&b);
}

static void fuzz_proof(const char *in, size_t len)
{
	struct tlog_proof *p = malloc(sizeof(*p));
	struct kw_buf b = { 0 };
	struct tlog_hash leaf = { { 0 } }, root = { { 0 } };

	if (!p)
		return;
	if (tlog_proof_parse(in, len, p) == 0) {
		if (tlog_proof_format(p, &b) || b.len != len || memcmp(b.data, in, len))
			abort();
		(void)tlog_inclusion_verify(p->index, p->index + 1 + p->count, &leaf, p->path, p->count,
					    &root);
		(void)tlog_consistency_verify(p->index, p->index * 2 + 1, &leaf, &root, p->path, p->count);
	}
	{
		struct tlog_verdict v;

		if (tlog_check_record(&log_policy, in, len, "fuzz", record, sizeof(record) - 1, &v))
			abort();
		if (v.step < 0 || v.step > 6 || !v.code ||
		    (v.checkpoint && (v.checkpoint < in || v.checkpoint + v.checkpoint_len > in + len)))
			abort();
	}
	kw_buf_free(&b);
	free(p);
}

static void fuzz_policy(const char *in, size_t len)
{
	struct tlog_policy *p = malloc(sizeof(*p));
	char err[200];

	if (!p)
		return;
	if (tlog_policy_parse(in, len, p, err, sizeof(err)) == 0) {
		struct tlog_note n;
		struct tlog_checkpoint cp = { .origin = "log.example/fuzz" };
		size_t cosigned;
		static const char note[] = "log.example/fuzz\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n\n"
					   "\xe2\x80\x94 log.example/fuzz AAAAAA==\n";

		if (tlog_note_parse(note, sizeof(note) - 1, &n) == 0)
			(void)tlog_policy_check(p, &n, &cp, &cosigned);
		tlog_policy_free(p);
	}
	free(p);
}

static void fuzz_witness(const char *in, size_t len)
{
	struct tlog_witness w = { .logs = &log_key, .nlogs = 1, .statefd = -1 };
	struct kw_buf resp = { 0 };
	int s = tlog_witness_add_checkpoint(&w, in, len, 1, &resp);

	/* Without the log's private key nothing can be signed by it. */
	if (s == 200 || s == 409 || s == 422)
		abort();
	kw_buf_free(&resp);
}

static void fuzz_vkey(const char *in, size_t len)
{
	struct tlog_key k;
	char out[TLOG_VKEY_MAX];

	if (tlog_key_parse_vkey(in, len, &k) == 0) {
		if (tlog_key_vkey(&k, out) || strlen(out) != len || memcmp(out, in, len))
			abort();
		tlog_key_clear(&k);
	}
}

static void fuzz_http(const char *in, size_t len)
{
	struct http_request req;
	int ret = http_parse_request(in, len, 4096, &req);

	if (ret == 0 && (req.body_len > 4096 || req.body < in || req.body + req.body_len != in + len))
		abort();
	if (ret == 0 && (!req.method[0] || !req.path[0]))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in;

	if (size < 1)
		return 0;
	setup();
	in = malloc(size - 1 ? size - 1 : 1);
	if (!in)
		return 0;
	memcpy(in, data + 1, size - 1);
	switch (data[0] % 6) {
	case 0: fuzz_note(in, size - 1); break;
	case 1: fuzz_proof(in, size - 1); break;
	case 2: fuzz_policy(in, size - 1); break;
	case 3: fuzz_witness(in, size - 1); break;
	case 4: fuzz_vkey(in, size - 1); break;
	case 5: fuzz_http(in, size - 1); break;
	}
	free(in);
	return 0;
}
