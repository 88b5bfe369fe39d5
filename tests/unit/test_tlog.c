/* SPDX-License-Identifier: Apache-2.0 */
/* The transparency log (user/tlog): RFC 6962 hashing and proofs against the
 * published test data, strict base64, signed notes against the Go note
 * package's example, checkpoints, tlog-proof files, registry-anchor-v1 known
 * answers, and the writer: tile boundaries, every proof of every leaf,
 * consistency between checkpoints, torn-append recovery, corruption. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <jansson.h>
#include <openssl/sha.h>
#include <errno.h>
#include <stdbool.h>

#include "trace/key.h"
#include "tlog/anchor.h"
#include "lib/base64.h"
#include "tlog/log.h"
#include "tlog/merkle.h"
#include "tlog/note.h"
#include "tlog/policy.h"
#include "tlog/witness.h"
#include "tlog/proof.h"
#include "tlog/tiles.h"

static json_t *load_vector(const char *rel)
{
	const char *root = getenv("KW_ROOT") ? getenv("KW_ROOT") : ".";
	char path[512];
	json_error_t err;
	json_t *j;

	snprintf(path, sizeof(path), "%s/tests/vectors/%s", root, rel);
	j = json_load_file(path, 0, &err);
	if (!j)
		fail_msg("%s: %s", path, err.text);
	return j;
}

static void unhex(const char *s, uint8_t *out, size_t n)
{
	assert_int_equal(strlen(s), 2 * n);
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		assert_int_equal(sscanf(s + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

static void hash_of(const char *hex, struct tlog_hash *h)
{
	if (!strncmp(hex, "sha256:", 7))
		hex += 7;
	unhex(hex, h->b, TLOG_HASH_LEN);
}

/* An in-memory tree: every leaf hash, node hashes computed by recursion
 * straight from the RFC 6962 definition (no stored interior nodes). */
struct memtree {
	struct tlog_hash *leaf;
	uint64_t n;
};

static void mth(const struct memtree *t, uint64_t lo, uint64_t hi, struct tlog_hash *out)
{
	uint64_t k = 1;
	struct tlog_hash a, b;

	if (hi - lo == 1) {
		*out = t->leaf[lo];
		return;
	}
	while (k * 2 < hi - lo)
		k *= 2;
	mth(t, lo, lo + k, &a);
	mth(t, lo + k, hi, &b);
	tlog_node_hash(&a, &b, out);
}

static int mem_reader(void *ctx, unsigned level, uint64_t index, struct tlog_hash *out)
{
	const struct memtree *t = ctx;
	uint64_t lo = index << level, hi = (index + 1) << level;

	if (hi > t->n)
		return -1;
	mth(t, lo, hi, out);
	return 0;
}

static void rfc_tree(struct memtree *t, json_t *v)
{
	json_t *leaves = json_object_get(v, "leaves");

	t->n = json_array_size(leaves);
	t->leaf = calloc(t->n, sizeof(*t->leaf));
	for (size_t i = 0; i < t->n; i++) {
		const char *hex = json_string_value(json_array_get(leaves, i));
		uint8_t buf[64];
		size_t len = strlen(hex) / 2;

		unhex(hex, buf, len);
		tlog_leaf_hash(buf, len, &t->leaf[i]);
	}
}

static size_t path_of_json(json_t *arr, struct tlog_hash *path)
{
	for (size_t i = 0; i < json_array_size(arr); i++)
		hash_of(json_string_value(json_array_get(arr, i)), &path[i]);
	return json_array_size(arr);
}

static void test_rfc6962_roots(void **state)
{
	json_t *v = load_vector("tlog/rfc6962-merkle.json");
	json_t *roots = json_object_get(v, "roots");
	struct memtree t;
	struct tlog_hash want, got;

	(void)state;
	rfc_tree(&t, v);
	for (uint64_t size = 0; size <= t.n; size++) {
		struct memtree sub = { t.leaf, size };

		hash_of(json_string_value(json_array_get(roots, size)), &want);
		assert_int_equal(tlog_tree_hash(mem_reader, &sub, size, &got), 0);
		assert_memory_equal(got.b, want.b, TLOG_HASH_LEN);
	}
	free(t.leaf);
	json_decref(v);
}

static void test_rfc6962_inclusion(void **state)
{
	json_t *v = load_vector("tlog/rfc6962-merkle.json"), *c;
	json_t *roots = json_object_get(v, "roots");
	struct memtree t;
	size_t i;

	(void)state;
	rfc_tree(&t, v);
	json_array_foreach(json_object_get(v, "inclusion"), i, c) {
		uint64_t index = (uint64_t)json_integer_value(json_object_get(c, "index"));
		uint64_t size = (uint64_t)json_integer_value(json_object_get(c, "size"));
		struct tlog_hash want[TLOG_PROOF_MAX], got[TLOG_PROOF_MAX], root, bad;
		size_t n = path_of_json(json_object_get(c, "path"), want), gn;
		struct memtree sub = { t.leaf, size };

		hash_of(json_string_value(json_array_get(roots, size)), &root);
		/* The maker gives the published path ... */
		assert_int_equal(tlog_inclusion_proof(mem_reader, &sub, index, size, got, &gn), 0);
		assert_int_equal(gn, n);
		if (n)
			assert_memory_equal(got, want, n * sizeof(*want));
		/* ... the verifier accepts it ... */
		assert_true(tlog_inclusion_verify(index, size, &t.leaf[index], want, n, &root));
		/* ... and refuses every corruption of it. */
		assert_false(tlog_inclusion_verify(index + 1, size, &t.leaf[index], want, n, &root));
		if (index)
			assert_false(tlog_inclusion_verify(index - 1, size, &t.leaf[index], want, n, &root));
		assert_false(tlog_inclusion_verify(index, size * 2, &t.leaf[index], want, n, &root));
		if (size > 1)
			assert_false(tlog_inclusion_verify(index, size / 2, &t.leaf[index], want, n, &root));
		assert_false(tlog_inclusion_verify(index, size, &t.leaf[(index + 1) % t.n], want, n,
						   &root));
		want[n] = root;
		assert_false(tlog_inclusion_verify(index, size, &t.leaf[index], want, n + 1, &root));
		for (size_t j = 0; j < n; j++) {
			want[j].b[0] ^= 8;
			assert_false(tlog_inclusion_verify(index, size, &t.leaf[index], want, n, &root));
			want[j].b[0] ^= 8;
		}
		if (n)
			assert_false(tlog_inclusion_verify(index, size, &t.leaf[index], want, n - 1, &root));
		bad = root;
		bad.b[31] ^= 1;
		assert_false(tlog_inclusion_verify(index, size, &t.leaf[index], want, n, &bad));
	}
	free(t.leaf);
	json_decref(v);
}

/* A consistency proof checked with the right new root and a wrong old one,
 * for every pair of sizes of the RFC 6962 tree: an old size that is not a
 * power of two is bound only through the old root the proof rebuilds, so
 * the new root alone must never pass it. */
static void test_consistency_wrong_old_root(void **state)
{
	json_t *v = load_vector("tlog/rfc6962-merkle.json");
	json_t *roots = json_object_get(v, "roots");
	struct memtree t;

	(void)state;
	rfc_tree(&t, v);
	assert_true(t.n >= 5);
	for (uint64_t old = 1; old < t.n; old++)
		for (uint64_t size = old + 1; size <= t.n; size++) {
			struct tlog_hash p[TLOG_PROOF_MAX], r_old, r_new, wrong;
			struct memtree sub = { t.leaf, size };
			size_t n;

			hash_of(json_string_value(json_array_get(roots, old)), &r_old);
			hash_of(json_string_value(json_array_get(roots, size)), &r_new);
			assert_int_equal(tlog_consistency_proof(mem_reader, &sub, old, size, p, &n), 0);
			assert_true(tlog_consistency_verify(old, size, &r_old, &r_new, p, n));
			wrong = r_old;
			wrong.b[7] ^= 0x20;
			assert_false(tlog_consistency_verify(old, size, &wrong, &r_new, p, n));
			/* a genuine root, of another size */
			hash_of(json_string_value(json_array_get(roots, old - 1)), &wrong);
			assert_false(tlog_consistency_verify(old, size, &wrong, &r_new, p, n));
			assert_false(tlog_consistency_verify(old, size, &r_new, &r_new, p, n));
		}
	free(t.leaf);
	json_decref(v);
}

static void test_rfc6962_consistency(void **state)
{
	json_t *v = load_vector("tlog/rfc6962-merkle.json"), *c;
	json_t *roots = json_object_get(v, "roots");
	struct memtree t;
	size_t i;

	(void)state;
	rfc_tree(&t, v);
	json_array_foreach(json_object_get(v, "consistency"), i, c) {
		uint64_t old = (uint64_t)json_integer_value(json_object_get(c, "old"));
		uint64_t size = (uint64_t)json_integer_value(json_object_get(c, "new"));
		struct tlog_hash want[TLOG_PROOF_MAX], got[TLOG_PROOF_MAX], r1, r2;
		size_t n = path_of_json(json_object_get(c, "path"), want), gn;
		struct memtree sub = { t.leaf, size };

		hash_of(json_string_value(json_array_get(roots, old)), &r1);
		hash_of(json_string_value(json_array_get(roots, size)), &r2);
		assert_int_equal(tlog_consistency_proof(mem_reader, &sub, old, size, got, &gn), 0);
		assert_int_equal(gn, n);
		if (n)
			assert_memory_equal(got, want, n * sizeof(*want));
		assert_true(tlog_consistency_verify(old, size, &r1, &r2, want, n));
		if (!n)
			continue;
		assert_false(tlog_consistency_verify(old, size, &r2, &r1, want, n));
		assert_false(tlog_consistency_verify(old + 1, size, &r1, &r2, want, n));
		assert_false(tlog_consistency_verify(old - 1, size, &r1, &r2, want, n));
		assert_false(tlog_consistency_verify(old, size * 2, &r1, &r2, want, n));
		assert_false(tlog_consistency_verify(old, size, &r1, &r2, want, 0));
		assert_false(tlog_consistency_verify(old, size, &r1, &r2, want, n - 1));
		want[n] = r2;
		assert_false(tlog_consistency_verify(old, size, &r1, &r2, want, n + 1));
		for (size_t j = 0; j < n; j++) {
			want[j].b[0] ^= 16;
			assert_false(tlog_consistency_verify(old, size, &r1, &r2, want, n));
			want[j].b[0] ^= 16;
		}
	}
	/* Size 0 is consistent with anything, and a rollback with nothing. */
	{
		struct tlog_hash a, b;

		tlog_empty_root(&a);
		hash_of(json_string_value(json_array_get(roots, 3)), &b);
		assert_true(tlog_consistency_verify(0, 3, &a, &b, NULL, 0));
		assert_false(tlog_consistency_verify(3, 2, &b, &a, NULL, 0));
		assert_false(tlog_consistency_verify(3, 3, &b, &a, NULL, 0));
	}
	free(t.leaf);
	json_decref(v);
}

static void test_base64_strict(void **state)
{
	uint8_t out[16];
	size_t n;
	char enc[16];

	(void)state;
	assert_int_equal(kw_b64_decode(KW_B64_STD, "Zm9vYg==", 8, out, sizeof(out), &n), 0);
	assert_int_equal(n, 4);
	assert_memory_equal(out, "foob", 4);
	assert_int_equal(kw_b64_encode(KW_B64_STD, (const uint8_t *)"foob", 4, enc), 8);
	assert_string_equal(enc, "Zm9vYg==");
	assert_int_equal(kw_b64_decode(KW_B64_STD, "Zm9vYh==", 8, out, sizeof(out), &n), -EINVAL); /* bits */
	assert_int_equal(kw_b64_decode(KW_B64_STD, "Zm9vYg=", 7, out, sizeof(out), &n), -EINVAL);
	assert_int_equal(kw_b64_decode(KW_B64_STD, "Zm9v\nYg==", 9, out, sizeof(out), &n), -EINVAL);
	assert_int_equal(kw_b64_decode(KW_B64_STD, "Zm=vYg==", 8, out, sizeof(out), &n), -EINVAL);
	assert_int_equal(kw_b64_decode(KW_B64_STD, "Zm9vYg-_", 8, out, sizeof(out), &n), -EINVAL);
	assert_int_equal(kw_b64_decode(KW_B64_STD, "Zm9vYmFy", 8, out, 5, &n), -ENOBUFS);
}

/* "PRIVATE+KEY+<name>+<id>+<base64(0x01 || seed)>" -> a signer. */
static void signer_from_skey(const char *skey, struct tlog_key *k)
{
	const char *p = skey + strlen("PRIVATE+KEY+");
	const char *plus = strchr(p, '+');
	const char *b64 = strchr(plus + 1, '+') + 1;
	uint8_t raw[33];
	size_t n;
	char name[64];
	struct kw_key *key;

	assert_int_equal(kw_b64_decode(KW_B64_STD, b64, strlen(b64), raw, sizeof(raw), &n), 0);
	assert_int_equal(n, 33);
	assert_int_equal(raw[0], 1);
	memcpy(name, p, (size_t)(plus - p));
	name[plus - p] = '\0';
	assert_int_equal(kw_key_from_seed(raw + 1, &key), 0);
	assert_int_equal(tlog_key_from(name, TLOG_SIG_ED25519, key, k), 0);
	assert_int_equal(k->keyid, strtoul(plus + 1, NULL, 16));
}

static void test_signed_note_go_example(void **state)
{
	json_t *v = load_vector("tlog/signed-note.json");
	const char *vkey = json_string_value(json_object_get(v, "vkey"));
	const char *text = json_string_value(json_object_get(v, "text"));
	const char *want = json_string_value(json_object_get(v, "note"));
	struct tlog_key signer, verifier;
	char vk[TLOG_VKEY_MAX];
	struct kw_buf note = { 0 };
	struct tlog_note n;
	char *bad;

	(void)state;
	signer_from_skey(json_string_value(json_object_get(v, "skey")), &signer);
	assert_int_equal(tlog_key_vkey(&signer, vk), 0);
	assert_string_equal(vk, vkey);
	assert_int_equal(tlog_key_parse_vkey(vkey, strlen(vkey), &verifier), 0);
	assert_int_equal(verifier.keyid, 0xc74f20a3);
	assert_int_equal(kw_buf_puts(&note, text), 0);
	assert_int_equal(kw_buf_putc(&note, '\n'), 0);
	assert_int_equal(tlog_note_sign(&signer, text, strlen(text), 0, &note), 0);
	assert_string_equal(note.data, want);
	assert_int_equal(tlog_note_parse(want, strlen(want), &n), 0);
	assert_int_equal(n.nsigs, 1);
	assert_int_equal(n.text_len, strlen(text));
	assert_int_equal(tlog_note_verify(&n, &verifier, NULL), 0);
	/* A changed text fails; a key of another name is not consulted. */
	bad = strdup(want);
	bad[3] ^= 1;
	assert_int_equal(tlog_note_parse(bad, strlen(bad), &n), 0);
	assert_int_equal(tlog_note_verify(&n, &verifier, NULL), -EBADMSG);
	free(bad);
	assert_int_equal(tlog_note_parse(want, strlen(want), &n), 0);
	memcpy(verifier.name, "PeterNeumanm", 12);
	assert_int_equal(tlog_note_verify(&n, &verifier, NULL), -ENOENT);
	/* The vkey's key ID must match its name and key. */
	{
		char wrong[TLOG_VKEY_MAX];
		struct tlog_key k;

		snprintf(wrong, sizeof(wrong), "%s", vkey);
		wrong[13] = wrong[13] == '0' ? '1' : '0';
		assert_int_equal(tlog_key_parse_vkey(wrong, strlen(wrong), &k), -EINVAL);
	}
	/* Notes the format refuses. */
	{
		static const char *bads[] = {
			"text\n\n",                          /* no signature */
			"text\n— a AAAA\n",                  /* no empty line */
			"text\n\n— a b c\n",                 /* bad base64 */
			"te\x01xt\n\n— a AAAAAA==\n",        /* control character */
			"text\n\n— a AAAAAA==",              /* no final newline */
			"\n\n— a AAAAAA==\n",                /* empty text */
			"text\n\n- a AAAAAA==\n",            /* not an em dash */
			"text\n\n— a+b AAAAAA==\n",          /* '+' in a name */
			"t\xc3\x28xt\n\n— a AAAAAA==\n",     /* bad UTF-8 */
		};
		for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++)
			assert_int_not_equal(tlog_note_parse(bads[i], strlen(bads[i]), &n), 0);
	}
	kw_buf_free(&note);
	tlog_key_clear(&signer);
	tlog_key_clear(&verifier);
	json_decref(v);
}

static void test_cosignature(void **state)
{
	uint8_t seed[32] = { 7 };
	struct kw_key *k;
	struct tlog_key w, wv;
	const char *text = "example.com/log\n5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n";
	struct kw_buf note = { 0 };
	struct tlog_note n;
	uint64_t ts = 0;
	char vk[TLOG_VKEY_MAX];

	(void)state;
	assert_int_equal(kw_key_from_seed(seed, &k), 0);
	assert_int_equal(tlog_key_from("witness.example/w1", TLOG_SIG_COSIGNATURE, k, &w), 0);
	assert_int_equal(tlog_key_vkey(&w, vk), 0);
	assert_int_equal(tlog_key_parse_vkey(vk, strlen(vk), &wv), 0);
	assert_int_equal(wv.type, TLOG_SIG_COSIGNATURE);
	assert_int_equal(kw_buf_puts(&note, text), 0);
	assert_int_equal(kw_buf_putc(&note, '\n'), 0);
	assert_int_equal(tlog_note_sign(&w, text, strlen(text), 1679315147, &note), 0);
	assert_int_equal(tlog_note_parse(note.data, note.len, &n), 0);
	assert_int_equal(tlog_note_verify(&n, &wv, &ts), 0);
	assert_int_equal(ts, 1679315147);
	/* The same key as a plain Ed25519 note key has another key ID. */
	{
		struct tlog_key plain = wv;

		plain.type = TLOG_SIG_ED25519;
		plain.keyid = tlog_key_id(plain.name, plain.type, plain.pub);
		assert_int_not_equal(plain.keyid, wv.keyid);
		assert_int_equal(tlog_note_verify(&n, &plain, NULL), -ENOENT);
	}
	kw_buf_free(&note);
	tlog_key_clear(&w);
	tlog_key_clear(&wv);
}

static void test_checkpoint(void **state)
{
	struct tlog_checkpoint cp;
	struct kw_buf b = { 0 };
	static const char good[] = "example.com/log\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";
	static const char ext[] = "o\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\nextension line\n";
	static const char *bads[] = {
		"o\n01\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
		"o\n-1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
		"\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
		"o\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2=\n",
		"o\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=",
		"o\n1\n",
		"o\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\nx\n",
		"o\n99999999999999999999\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
	};

	(void)state;
	assert_int_equal(tlog_checkpoint_parse(good, strlen(good), &cp), 0);
	assert_string_equal(cp.origin, "example.com/log");
	assert_int_equal(cp.size, 20852163);
	assert_int_equal(tlog_checkpoint_format(&cp, &b), 0);
	assert_string_equal(b.data, good);
	assert_int_equal(tlog_checkpoint_parse(ext, strlen(ext), &cp), 0);
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++)
		assert_int_not_equal(tlog_checkpoint_parse(bads[i], strlen(bads[i]), &cp), 0);
	kw_buf_free(&b);
}

static void test_tile_paths(void **state)
{
	char p[TLOG_PATH_MAX];

	(void)state;
	assert_int_equal(tlog_tile_path(p, sizeof(p), 0, 1234067, 0), 0);
	assert_string_equal(p, "tile/0/x001/x234/067");
	assert_int_equal(tlog_tile_path(p, sizeof(p), 2, 5, 17), 0);
	assert_string_equal(p, "tile/2/005.p/17");
	assert_int_equal(tlog_tile_path(p, sizeof(p), TLOG_ENTRIES_LEVEL, 1000, 0), 0);
	assert_string_equal(p, "tile/entries/x001/000");
	/* The spec's example: a tree of 70,000 leaves. */
	assert_int_equal(tlog_partial_width(70000, 0), 112);
	assert_int_equal(tlog_partial_width(70000, 1), 17);
	assert_int_equal(tlog_partial_width(70000, 2), 1);
	assert_int_equal(tlog_tile_width(70000, 0, 272), 256);
	assert_int_equal(tlog_tile_width(70000, 0, 273), 112);
	assert_int_equal(tlog_tile_width(70000, 0, 274), 0);
	assert_int_equal(tlog_partial_width(256, 0), 0);
	assert_int_equal(tlog_partial_width(256, 1), 1);
}

static void test_anchor_v1(void **state)
{
	json_t *v = load_vector("anchor-v1/known-answers.json"), *c;
	size_t i;

	(void)state;
	json_array_foreach(json_object_get(v, "cases"), i, c) {
		json_t *claims = json_object_get(c, "claims");
		size_t n = json_array_size(claims);
		struct memtree t = { calloc(n, sizeof(struct tlog_hash)), n };
		struct tlog_hash root, want;

		for (size_t j = 0; j < n; j++) {
			struct kw_buf b = { 0 };
			struct tlog_hash h;
			uint8_t d[32], wd[32];

			assert_int_equal(anchor_claim_bytes(json_array_get(claims, j), &b), 0);
			SHA256((const uint8_t *)b.data, b.len, d);
			unhex(json_string_value(json_array_get(json_object_get(c, "canonical_claim_bytes_sha256"), j)), wd, 32);
			assert_memory_equal(d, wd, 32);
			tlog_leaf_hash(b.data, b.len, &t.leaf[j]);
			hash_of(json_string_value(json_array_get(json_object_get(c, "leaf_hashes"), j)), &h);
			assert_memory_equal(t.leaf[j].b, h.b, 32);
			kw_buf_free(&b);
		}
		assert_int_equal(tlog_tree_hash(mem_reader, &t, n, &root), 0);
		hash_of(json_string_value(json_object_get(c, "merkle_root")), &want);
		assert_memory_equal(root.b, want.b, 32);
		for (size_t j = 0; j < n; j++) {
			json_t *p = json_array_get(json_object_get(c, "proofs"), j);
			struct tlog_hash path[TLOG_PROOF_MAX];
			size_t pn;
			struct kw_buf js = { 0 };
			char *wantjs = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);

			assert_int_equal(tlog_inclusion_proof(mem_reader, &t, j, n, path, &pn), 0);
			assert_int_equal(anchor_proof_json(j, path, pn, &js), 0);
			assert_string_equal(js.data, wantjs);
			assert_true(tlog_inclusion_verify(j, n, &t.leaf[j], path, pn, &root));
			free(wantjs);
			kw_buf_free(&js);
		}
		free(t.leaf);
	}
	/* Outside the profile. */
	{
		json_t *r = json_real(1.5), *big = json_integer(9007199254740992LL);
		struct kw_buf b = { 0 };

		assert_int_equal(anchor_claim_bytes(r, &b), -EDOM);
		assert_int_equal(anchor_claim_bytes(big, &b), -EDOM);
		json_decref(r);
		json_decref(big);
		kw_buf_free(&b);
	}
	json_decref(v);
}

/* A log in a fresh temporary directory with a fixed key. */
static char logdir[64];

static void new_log(struct tlog_key *key)
{
	uint8_t seed[32] = { 1, 2, 3 };
	struct kw_key *k;
	char cmd[128];

	snprintf(logdir, sizeof(logdir), "/tmp/kw-tlog-test.%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "rm -rf %s", logdir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(kw_key_from_seed(seed, &k), 0);
	assert_int_equal(tlog_key_from("log.example/test", TLOG_SIG_ED25519, k, key), 0);
	assert_int_equal(tlog_log_create(logdir, key), 0);
	assert_int_equal(tlog_log_create(logdir, key), -EEXIST);
}

static void rm_log(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", logdir);
	assert_int_equal(system(cmd), 0);
}

static void entry_of(uint64_t i, char *buf, size_t *len)
{
	*len = (size_t)snprintf(buf, 64, "entry %llu", (unsigned long long)i);
}

static void append_n(struct tlog_log *l, uint64_t from, uint64_t n)
{
	const void **e = calloc(n, sizeof(*e));
	size_t *lens = calloc(n, sizeof(*lens));
	char (*bufs)[64] = calloc(n, 64);
	uint64_t first;

	for (uint64_t i = 0; i < n; i++) {
		entry_of(from + i, bufs[i], &lens[i]);
		e[i] = bufs[i];
	}
	assert_int_equal(tlog_log_append(l, e, lens, n, &first), 0);
	assert_int_equal(first, from);
	free(e);
	free(lens);
	free(bufs);
}

/* The checkpoint on disk: verified, root equal to the recomputed tree. */
static void check_published(const struct tlog_key *key, struct memtree *t, uint64_t size,
			    struct tlog_checkpoint *out)
{
	int dfd = open(logdir, O_RDONLY | O_DIRECTORY);
	struct kw_buf b = { 0 };
	struct tlog_note n;
	struct tlog_hash root;
	struct memtree sub = { t->leaf, size };
	struct tlog_tiles tiles;
	struct kw_buf e = { 0 };

	assert_true(dfd >= 0);
	assert_int_equal(tlog_read_checkpoint(dfd, &b, &n, out), 0);
	assert_int_equal(tlog_note_verify(&n, key, NULL), 0);
	assert_int_equal(out->size, size);
	assert_int_equal(tlog_tree_hash(mem_reader, &sub, size, &root), 0);
	assert_memory_equal(out->root.b, root.b, 32);
	/* Every leaf proves from the tiles (one reader: its tile cache holds
	 * the neighbours); tlog_prove and the entries on a sample. */
	tlog_tiles_init(&tiles, dfd, size);
	for (uint64_t i = 0; i < size; i++) {
		struct tlog_hash path[TLOG_PROOF_MAX];
		size_t pn;
		char want[64];
		size_t wl;

		assert_int_equal(tlog_inclusion_proof(tlog_tiles_read_node, &tiles, i, size, path, &pn), 0);
		assert_true(tlog_inclusion_verify(i, size, &t->leaf[i], path, pn, &root));
		if (i % 97 == 0 || i + 1 == size) {
			struct tlog_proof p;
			struct tlog_tiles et;

			assert_int_equal(tlog_prove(dfd, i, size, &out->root, b.data, b.len, &p), 0);
			assert_true(tlog_inclusion_verify(i, size, &t->leaf[i], p.path, p.count, &root));
			tlog_tiles_init(&et, dfd, size);
			assert_int_equal(tlog_tiles_read_entry(&et, i, &e), 0);
			entry_of(i, want, &wl);
			assert_int_equal(e.len, wl);
			assert_memory_equal(e.data, want, wl);
		}
	}
	kw_buf_free(&e);
	kw_buf_free(&b);
	close(dfd);
}

static void test_log_boundaries(void **state)
{
	static const uint64_t sizes[] = { 1, 2, 255, 256, 257, 511, 513, 600, 70000 };
	struct tlog_key key;
	struct memtree t = { calloc(70000, sizeof(struct tlog_hash)), 70000 };
	struct tlog_checkpoint cps[sizeof(sizes) / sizeof(sizes[0])];
	uint64_t have = 0;

	(void)state;
	for (uint64_t i = 0; i < t.n; i++) {
		char buf[64];
		size_t len;

		entry_of(i, buf, &len);
		tlog_leaf_hash(buf, len, &t.leaf[i]);
	}
	new_log(&key);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct tlog_log *l;

		/* Reopen each time: the right edge is reloaded from the tiles. */
		assert_int_equal(tlog_log_open(logdir, &key, &l), 0);
		assert_int_equal(tlog_log_size(l), have);
		append_n(l, have, sizes[s] - have);
		have = sizes[s];
		tlog_log_close(l);
		check_published(&key, &t, have, &cps[s]);
	}
	/* Every pair of checkpoints is consistent through the final tiles. */
	{
		int dfd = open(logdir, O_RDONLY | O_DIRECTORY);
		struct tlog_tiles tiles;

		tlog_tiles_init(&tiles, dfd, have);
		for (size_t a = 0; a < sizeof(sizes) / sizeof(sizes[0]); a++)
			for (size_t b = a; b < sizeof(sizes) / sizeof(sizes[0]); b++) {
				struct tlog_hash p[TLOG_PROOF_MAX];
				size_t n;
				struct tlog_tiles tb;

				tlog_tiles_init(&tb, dfd, cps[b].size);
				assert_int_equal(tlog_consistency_proof(tlog_tiles_read_node, &tb,
									cps[a].size, cps[b].size, p, &n), 0);
				assert_true(tlog_consistency_verify(cps[a].size, cps[b].size, &cps[a].root,
								    &cps[b].root, p, n));
				if (cps[a].size != cps[b].size)
					assert_false(tlog_consistency_verify(cps[a].size, cps[b].size,
									     &cps[b].root, &cps[a].root,
									     p, n));
			}
		close(dfd);
	}
	rm_log();
	tlog_key_clear(&key);
	free(t.leaf);
}

static void write_at(const char *rel, const char *data, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", logdir, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static bool exists_at(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", logdir, rel);
	return access(path, F_OK) == 0;
}

static void test_log_torn_append(void **state)
{
	struct tlog_key key;
	struct tlog_log *l;
	struct memtree t = { calloc(300, sizeof(struct tlog_hash)), 300 };
	struct tlog_checkpoint cp;
	char junk[8192];

	(void)state;
	for (uint64_t i = 0; i < t.n; i++) {
		char buf[64];
		size_t len;

		entry_of(i, buf, &len);
		tlog_leaf_hash(buf, len, &t.leaf[i]);
	}
	memset(junk, 0x5a, sizeof(junk));
	new_log(&key);
	assert_int_equal(tlog_log_open(logdir, &key, &l), 0);
	append_n(l, 0, 200);
	tlog_log_close(l);
	/* A torn append towards 260: a full tile and bundle, partials of width 4,
	 * half-written, no checkpoint. */
	write_at(".kwitness/pending", "260\n", 4);
	write_at("tile/0/000", junk, 8192);
	write_at("tile/entries/000", junk, 100);
	{
		char d[128];

		snprintf(d, sizeof(d), "%s/tile/0/001.p", logdir);
		mkdir(d, 0755);
		snprintf(d, sizeof(d), "%s/tile/1", logdir);
		mkdir(d, 0755);
		snprintf(d, sizeof(d), "%s/tile/1/000.p", logdir);
		mkdir(d, 0755);
	}
	write_at("tile/0/001.p/4", junk, 128);
	write_at("tile/1/000.p/1", junk, 32);
	/* Opening undoes it, and the log goes on as if it never happened. */
	assert_int_equal(tlog_log_open(logdir, &key, &l), 0);
	assert_false(exists_at(".kwitness/pending"));
	assert_false(exists_at("tile/0/000"));
	assert_false(exists_at("tile/entries/000"));
	assert_false(exists_at("tile/0/001.p/4"));
	assert_false(exists_at("tile/1/000.p/1"));
	assert_true(exists_at("tile/0/000.p/200"));
	assert_int_equal(tlog_log_size(l), 200);
	append_n(l, 200, 100);
	tlog_log_close(l);
	check_published(&key, &t, 300, &cp);
	/* A corrupted partial tile is found when the log opens. */
	write_at("tile/0/001.p/44", junk, 44 * 32);
	assert_int_equal(tlog_log_open(logdir, &key, &l), -EBADMSG);
	/* And a checkpoint signed by another key is refused. */
	{
		uint8_t seed[32] = { 9 };
		struct kw_key *k;
		struct tlog_key other;

		assert_int_equal(kw_key_from_seed(seed, &k), 0);
		assert_int_equal(tlog_key_from("log.example/test", TLOG_SIG_ED25519, k, &other), 0);
		assert_int_equal(tlog_log_open(logdir, &other, &l), -EKEYREJECTED);
		tlog_key_clear(&other);
	}
	rm_log();
	tlog_key_clear(&key);
	free(t.leaf);
}

static void test_proof_format(void **state)
{
	static const char text[] =
		"c2sp.org/tlog-proof@v1\nextra YWJj\nindex 73894\n"
		"gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=\n"
		"B95lDa8R83lS8n0eG+o0buTxRKQTYFi//1U8anccXmA=\n\n"
		"example.com/fancylog\n109482\nsFodV/vSp5O8n9a8QpW6PRY97tfOSW5bsc2Xl/EQi08=\n\n"
		"\xe2\x80\x94 example.com/fancylog AAAAAA==\n";
	struct tlog_proof p;
	struct kw_buf b = { 0 };

	(void)state;
	assert_int_equal(tlog_proof_parse(text, strlen(text), &p), 0);
	assert_int_equal(p.index, 73894);
	assert_int_equal(p.count, 2);
	assert_true(p.has_extra);
	assert_int_equal(p.extra_len, 3);
	assert_int_equal(tlog_proof_format(&p, &b), 0);
	assert_string_equal(b.data, text);
	{
		static const char *bads[] = {
			"c2sp.org/tlog-proof@v2\nindex 1\n\nx\n",
			"c2sp.org/tlog-proof@v1\nindex 01\n\nx\n",
			"c2sp.org/tlog-proof@v1\nindex 1\nAAAA\n\nx\n",
			"c2sp.org/tlog-proof@v1\nindex 1\n",
			"c2sp.org/tlog-proof@v1\nextra !!\nindex 1\n\nx\n",
		};
		for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++)
			assert_int_not_equal(tlog_proof_parse(bads[i], strlen(bads[i]), &p), 0);
	}
	kw_buf_free(&b);
}

static struct kw_key *seed_key(uint8_t b)
{
	uint8_t seed[32];
	struct kw_key *k;

	memset(seed, b, sizeof(seed));
	assert_int_equal(kw_key_from_seed(seed, &k), 0);
	return k;
}

/* A signed checkpoint of the first `size` leaves of t (root flipped when
 * fork is set). */
static void make_cp(const struct tlog_key *log, const struct memtree *t, uint64_t size,
		    bool fork, struct kw_buf *out)
{
	struct tlog_checkpoint cp = { .size = size };
	struct memtree sub = { t->leaf, size };
	struct kw_buf text = { 0 };

	snprintf(cp.origin, sizeof(cp.origin), "%s", log->name);
	assert_int_equal(tlog_tree_hash(mem_reader, &sub, size, &cp.root), 0);
	if (fork)
		cp.root.b[0] ^= 1;
	kw_buf_reset(out);
	assert_int_equal(tlog_checkpoint_format(&cp, &text), 0);
	assert_int_equal(kw_buf_append(out, text.data, text.len), 0);
	assert_int_equal(kw_buf_putc(out, '\n'), 0);
	assert_int_equal(tlog_note_sign(log, text.data, text.len, 0, out), 0);
	kw_buf_free(&text);
}

static int submit(const struct tlog_witness *w, const struct memtree *t, uint64_t old,
		  const struct kw_buf *note, uint64_t size, struct kw_buf *resp)
{
	struct tlog_hash p[TLOG_PROOF_MAX];
	size_t n = 0;
	struct memtree sub = { t->leaf, size };
	struct kw_buf req = { 0 };
	int status;

	if (old && old <= size)
		assert_int_equal(tlog_consistency_proof(mem_reader, &sub, old, size, p, &n), 0);
	assert_int_equal(tlog_witness_request(old, p, n, note->data, note->len, &req), 0);
	status = tlog_witness_add_checkpoint(w, req.data, req.len, 1700000000, resp);
	kw_buf_free(&req);
	return status;
}

static void test_witness(void **state)
{
	struct tlog_key log, other, wkey, wv;
	struct memtree t = { calloc(40, sizeof(struct tlog_hash)), 40 };
	struct kw_buf note = { 0 }, resp = { 0 }, cosigned = { 0 };
	struct tlog_witness w;
	char dir[64];
	struct tlog_note n;
	uint64_t ts;

	(void)state;
	for (uint64_t i = 0; i < t.n; i++)
		tlog_leaf_hash(&i, sizeof(i), &t.leaf[i]);
	assert_int_equal(tlog_key_from("log.example/a", TLOG_SIG_ED25519, seed_key(1), &log), 0);
	assert_int_equal(tlog_key_from("log.example/a", TLOG_SIG_ED25519, seed_key(2), &other), 0);
	assert_int_equal(tlog_key_from("witness.example/w", TLOG_SIG_COSIGNATURE, seed_key(3), &wkey), 0);
	wv = wkey;
	snprintf(dir, sizeof(dir), "/tmp/kw-witness-test.%d", (int)getpid());
	mkdir(dir, 0700);
	w = (struct tlog_witness){ .key = wkey, .logs = &log, .nlogs = 1,
				   .statefd = open(dir, O_RDONLY | O_DIRECTORY) };
	assert_true(w.statefd >= 0);

	make_cp(&log, &t, 10, false, &note);
	assert_int_equal(submit(&w, &t, 0, &note, 10, &resp), 200);
	/* The response is a cosignature on the checkpoint. */
	assert_int_equal(kw_buf_append(&cosigned, note.data, note.len), 0);
	assert_int_equal(kw_buf_append(&cosigned, resp.data, resp.len), 0);
	assert_int_equal(tlog_note_parse(cosigned.data, cosigned.len, &n), 0);
	assert_int_equal(tlog_note_verify(&n, &wv, &ts), 0);
	assert_int_equal(ts, 1700000000);
	/* Grows with a consistency proof. */
	make_cp(&log, &t, 25, false, &note);
	assert_int_equal(submit(&w, &t, 10, &note, 25, &resp), 200);
	/* The same checkpoint again is fine; a fork of the same size is not. */
	assert_int_equal(submit(&w, &t, 25, &note, 25, &resp), 200);
	make_cp(&log, &t, 25, true, &note);
	assert_int_equal(submit(&w, &t, 25, &note, 25, &resp), 409);
	/* A stale old size gets the witness's size back. */
	make_cp(&log, &t, 30, false, &note);
	assert_int_equal(submit(&w, &t, 10, &note, 30, &resp), 409);
	assert_string_equal(resp.data, "25\n");
	/* A rolled-back log: a checkpoint smaller than what was cosigned. */
	make_cp(&log, &t, 20, false, &note);
	assert_int_equal(submit(&w, &t, 25, &note, 20, &resp), 400);
	assert_int_equal(submit(&w, &t, 20, &note, 20, &resp), 409);
	/* A grown fork: the proof cannot link it to what was cosigned. */
	make_cp(&log, &t, 30, true, &note);
	assert_int_equal(submit(&w, &t, 25, &note, 30, &resp), 422);
	/* Another key with the log's name; an unknown origin. */
	make_cp(&other, &t, 30, false, &note);
	assert_int_equal(submit(&w, &t, 25, &note, 30, &resp), 403);
	{
		struct tlog_key stranger;

		assert_int_equal(tlog_key_from("log.example/b", TLOG_SIG_ED25519, seed_key(4), &stranger), 0);
		make_cp(&stranger, &t, 30, false, &note);
		assert_int_equal(submit(&w, &t, 0, &note, 30, &resp), 404);
		tlog_key_clear(&stranger);
	}
	/* Garbage. */
	assert_int_equal(tlog_witness_add_checkpoint(&w, "old x\n\n", 7, 1, &resp), 400);
	assert_int_equal(tlog_witness_add_checkpoint(&w, "old 1\nAAAA\n\nx\n", 14, 1, &resp), 400);
	/* The state held through all that. */
	make_cp(&log, &t, 40, false, &note);
	assert_int_equal(submit(&w, &t, 25, &note, 40, &resp), 200);

	close(w.statefd);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		assert_int_equal(system(cmd), 0);
	}
	kw_buf_free(&note);
	kw_buf_free(&resp);
	kw_buf_free(&cosigned);
	tlog_key_clear(&log);
	tlog_key_clear(&other);
	tlog_key_clear(&wkey);
	free(t.leaf);
}

static void test_policy(void **state)
{
	struct tlog_key log, w[3];
	char vk[4][TLOG_VKEY_MAX], text[4096], err[200];
	struct memtree t = { calloc(5, sizeof(struct tlog_hash)), 5 };
	struct kw_buf note = { 0 };
	struct tlog_policy *p = calloc(1, sizeof(*p));
	struct tlog_note n;
	struct tlog_checkpoint cp;
	size_t cosigned;

	(void)state;
	for (uint64_t i = 0; i < t.n; i++)
		tlog_leaf_hash(&i, sizeof(i), &t.leaf[i]);
	assert_int_equal(tlog_key_from("log.example/p", TLOG_SIG_ED25519, seed_key(5), &log), 0);
	assert_int_equal(tlog_key_vkey(&log, vk[0]), 0);
	for (int i = 0; i < 3; i++) {
		char name[32];

		snprintf(name, sizeof(name), "w%d.example", i);
		assert_int_equal(tlog_key_from(name, TLOG_SIG_COSIGNATURE, seed_key((uint8_t)(10 + i)), &w[i]), 0);
		assert_int_equal(tlog_key_vkey(&w[i], vk[i + 1]), 0);
	}
	snprintf(text, sizeof(text),
		 "# two of three\nlog %s https://log.example/p\n\n"
		 "witness A %s\n  witness B\t%s\nwitness C %s\n"
		 "group two 2 A B C\nquorum two\n", vk[0], vk[1], vk[2], vk[3]);
	assert_int_equal(tlog_policy_parse(text, strlen(text), p, err, sizeof(err)), 0);
	assert_int_equal(p->nlogs, 1);
	assert_int_equal(p->nwitnesses, 3);

	make_cp(&log, &t, 5, false, &note);
	assert_int_equal(tlog_note_parse(note.data, note.len, &n), 0);
	assert_int_equal(tlog_checkpoint_parse(n.text, n.text_len, &cp), 0);
	assert_int_equal(tlog_policy_check(p, &n, &cp, &cosigned), TLOG_POLICY_QUORUM);
	assert_int_equal(tlog_note_sign(&w[0], n.text, n.text_len, 5, &note), 0);
	assert_int_equal(tlog_note_parse(note.data, note.len, &n), 0);
	assert_int_equal(tlog_policy_check(p, &n, &cp, &cosigned), TLOG_POLICY_QUORUM);
	assert_int_equal(cosigned, 1);
	assert_int_equal(tlog_note_sign(&w[2], n.text, n.text_len, 5, &note), 0);
	assert_int_equal(tlog_note_parse(note.data, note.len, &n), 0);
	assert_int_equal(tlog_policy_check(p, &n, &cp, &cosigned), TLOG_POLICY_OK);
	assert_int_equal(cosigned, 2);
	/* Another origin; the log's signature by another key. */
	snprintf(cp.origin, sizeof(cp.origin), "log.example/q");
	assert_int_equal(tlog_policy_check(p, &n, &cp, &cosigned), TLOG_POLICY_UNKNOWN_LOG);
	{
		struct tlog_key imp;

		assert_int_equal(tlog_key_from("log.example/p", TLOG_SIG_ED25519, seed_key(6), &imp), 0);
		make_cp(&imp, &t, 5, false, &note);
		assert_int_equal(tlog_note_parse(note.data, note.len, &n), 0);
		assert_int_equal(tlog_checkpoint_parse(n.text, n.text_len, &cp), 0);
		assert_int_equal(tlog_policy_check(p, &n, &cp, &cosigned), TLOG_POLICY_LOG_SIGNATURE);
		tlog_key_clear(&imp);
	}
	tlog_policy_free(p);
	/* quorum none; and the errors. */
	snprintf(text, sizeof(text), "log %s\nquorum none\n", vk[0]);
	assert_int_equal(tlog_policy_parse(text, strlen(text), p, err, sizeof(err)), 0);
	tlog_policy_free(p);
	{
		const char *bad[] = { "log %s\n", "log %s\nquorum X\n", "log %s\nwitness A %s\nwitness B %s\nquorum A\n",
				      "log %s\nlog %s\nquorum none\n", "log %s\nwitness A %s\ngroup g 2 A\nquorum g\n",
				      "log %s\nwitness A %s\ngroup g any A A\nquorum g\n", "frob %s\n",
				      "log %s\nquorum none\nquorum none\n" };
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			snprintf(text, sizeof(text), bad[i], vk[0], i == 3 ? vk[0] : vk[1], vk[1]);
			assert_int_equal(tlog_policy_parse(text, strlen(text), p, err, sizeof(err)), -EINVAL);
			assert_non_null(strstr(err, "line "));
		}
	}
	free(p);
	kw_buf_free(&note);
	tlog_key_clear(&log);
	for (int i = 0; i < 3; i++)
		tlog_key_clear(&w[i]);
	free(t.leaf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc6962_roots),
		cmocka_unit_test(test_rfc6962_inclusion),
		cmocka_unit_test(test_rfc6962_consistency),
		cmocka_unit_test(test_consistency_wrong_old_root),
		cmocka_unit_test(test_base64_strict),
		cmocka_unit_test(test_signed_note_go_example),
		cmocka_unit_test(test_cosignature),
		cmocka_unit_test(test_checkpoint),
		cmocka_unit_test(test_tile_paths),
		cmocka_unit_test(test_anchor_v1),
		cmocka_unit_test(test_log_boundaries),
		cmocka_unit_test(test_log_torn_append),
		cmocka_unit_test(test_proof_format),
		cmocka_unit_test(test_witness),
		cmocka_unit_test(test_policy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
