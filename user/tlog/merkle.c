/* SPDX-License-Identifier: Apache-2.0 */
/* RFC 6962 / RFC 9162 Merkle tree hashing and proofs. The proof makers follow
 * the RFC 6962 recursive definitions (PATH, SUBPROOF) over leaf ranges; the
 * verifiers follow the RFC 9162 iterative algorithms, so the two halves are
 * written from different descriptions of the same tree. */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "tlog/merkle.h"

/* SHA-256 fetched once: the implicit fetch of each one-shot call costs more
 * than hashing a 65-byte node. */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static const EVP_MD *sha256(void)
{
	pthread_once(&sha256_once, sha256_fetch);
	return sha256_md ? sha256_md : EVP_sha256();
}

void tlog_leaf_hash(const void *data, size_t n, struct tlog_hash *out)
{
	static const uint8_t prefix = 0x00;
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	/* Only allocation can fail here; a zero hash then matches nothing. */
	if (!c || EVP_DigestInit_ex(c, sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(c, &prefix, 1) != 1 || EVP_DigestUpdate(c, data, n) != 1 ||
	    EVP_DigestFinal_ex(c, out->b, NULL) != 1)
		memset(out->b, 0, TLOG_HASH_LEN);
	EVP_MD_CTX_free(c);
}

void tlog_node_hash(const struct tlog_hash *left, const struct tlog_hash *right,
		    struct tlog_hash *out)
{
	uint8_t buf[1 + 2 * TLOG_HASH_LEN];

	buf[0] = 0x01;
	memcpy(buf + 1, left->b, TLOG_HASH_LEN);
	memcpy(buf + 1 + TLOG_HASH_LEN, right->b, TLOG_HASH_LEN);
	if (EVP_Digest(buf, sizeof(buf), out->b, NULL, sha256(), NULL) != 1)
		memset(out->b, 0, TLOG_HASH_LEN);
}

void tlog_empty_root(struct tlog_hash *out)
{
	SHA256((const uint8_t *)"", 0, out->b);
}

bool tlog_hash_equal(const struct tlog_hash *a, const struct tlog_hash *b)
{
	return CRYPTO_memcmp(a->b, b->b, TLOG_HASH_LEN) == 0;
}

/* The largest power of two strictly below n (n >= 2). */
static uint64_t split_point(uint64_t n)
{
	uint64_t k = 1;

	while (k << 1 < n)
		k <<= 1;
	return k;
}

static bool is_pow2(uint64_t n)
{
	return n && !(n & (n - 1));
}

static unsigned log2_exact(uint64_t n)
{
	unsigned l = 0;

	while ((1ULL << l) < n)
		l++;
	return l;
}

int tlog_range_hash(tlog_node_reader rd, void *ctx, uint64_t lo, uint64_t hi,
		    struct tlog_hash *out)
{
	uint64_t n, k;
	struct tlog_hash l, r;
	int ret;

	if (lo >= hi)
		return -EINVAL;
	n = hi - lo;
	/* A perfect, aligned subtree is stored as one node. */
	if (is_pow2(n) && lo % n == 0)
		return rd(ctx, log2_exact(n), lo / n, out);
	k = split_point(n);
	ret = tlog_range_hash(rd, ctx, lo, lo + k, &l);
	if (!ret)
		ret = tlog_range_hash(rd, ctx, lo + k, hi, &r);
	if (!ret)
		tlog_node_hash(&l, &r, out);
	return ret;
}

int tlog_tree_hash(tlog_node_reader rd, void *ctx, uint64_t size, struct tlog_hash *out)
{
	if (size == 0) {
		tlog_empty_root(out);
		return 0;
	}
	return tlog_range_hash(rd, ctx, 0, size, out);
}

/* PATH(m, D[lo:hi]) appended to path in RFC order (deepest first). */
static int path_of(tlog_node_reader rd, void *ctx, uint64_t m, uint64_t lo, uint64_t hi,
		   struct tlog_hash *path, size_t *count)
{
	uint64_t n = hi - lo, k;
	int ret;

	if (n <= 1)
		return 0;
	if (*count >= TLOG_PROOF_MAX)
		return -E2BIG;
	k = split_point(n);
	if (m < k) {
		ret = path_of(rd, ctx, m, lo, lo + k, path, count);
		if (!ret)
			ret = tlog_range_hash(rd, ctx, lo + k, hi, &path[(*count)++]);
	} else {
		ret = path_of(rd, ctx, m - k, lo + k, hi, path, count);
		if (!ret)
			ret = tlog_range_hash(rd, ctx, lo, lo + k, &path[(*count)++]);
	}
	return ret;
}

int tlog_inclusion_proof(tlog_node_reader rd, void *ctx, uint64_t index, uint64_t size,
			 struct tlog_hash path[TLOG_PROOF_MAX], size_t *count)
{
	*count = 0;
	if (index >= size)
		return -EINVAL;
	return path_of(rd, ctx, index, 0, size, path, count);
}

/* SUBPROOF(m, D[lo:hi], whole) */
static int subproof(tlog_node_reader rd, void *ctx, uint64_t m, uint64_t lo, uint64_t hi,
		    bool whole, struct tlog_hash *path, size_t *count)
{
	uint64_t n = hi - lo, k;
	int ret;

	if (*count >= TLOG_PROOF_MAX)
		return -E2BIG;
	if (m == n) {
		if (whole)
			return 0;
		return tlog_range_hash(rd, ctx, lo, hi, &path[(*count)++]);
	}
	k = split_point(n);
	if (m <= k) {
		ret = subproof(rd, ctx, m, lo, lo + k, whole, path, count);
		if (!ret && *count >= TLOG_PROOF_MAX)
			ret = -E2BIG;
		if (!ret)
			ret = tlog_range_hash(rd, ctx, lo + k, hi, &path[(*count)++]);
	} else {
		ret = subproof(rd, ctx, m - k, lo + k, hi, false, path, count);
		if (!ret && *count >= TLOG_PROOF_MAX)
			ret = -E2BIG;
		if (!ret)
			ret = tlog_range_hash(rd, ctx, lo, lo + k, &path[(*count)++]);
	}
	return ret;
}

int tlog_consistency_proof(tlog_node_reader rd, void *ctx, uint64_t old_size, uint64_t size,
			   struct tlog_hash path[TLOG_PROOF_MAX], size_t *count)
{
	*count = 0;
	if (old_size > size)
		return -EINVAL;
	if (old_size == 0 || old_size == size)
		return 0;
	return subproof(rd, ctx, old_size, 0, size, true, path, count);
}

bool tlog_inclusion_verify(uint64_t index, uint64_t size, const struct tlog_hash *leaf,
			   const struct tlog_hash *path, size_t count,
			   const struct tlog_hash *root)
{
	uint64_t fn, sn;
	struct tlog_hash r = *leaf;

	if (index >= size || count > TLOG_PROOF_MAX)
		return false;
	fn = index;
	sn = size - 1;
	for (size_t i = 0; i < count; i++) {
		if (sn == 0)
			return false;
		if ((fn & 1) || fn == sn) {
			tlog_node_hash(&path[i], &r, &r);
			while (!(fn & 1) && fn != 0) {
				fn >>= 1;
				sn >>= 1;
			}
		} else {
			tlog_node_hash(&r, &path[i], &r);
		}
		fn >>= 1;
		sn >>= 1;
	}
	return sn == 0 && tlog_hash_equal(&r, root);
}

bool tlog_consistency_verify(uint64_t old_size, uint64_t size,
			     const struct tlog_hash *old_root, const struct tlog_hash *root,
			     const struct tlog_hash *path, size_t count)
{
	struct tlog_hash p[TLOG_PROOF_MAX + 1], fr, sr;
	size_t n = 0;
	uint64_t fn, sn;

	if (old_size > size || count > TLOG_PROOF_MAX)
		return false;
	if (old_size == 0)
		return count == 0;
	if (old_size == size)
		return count == 0 && tlog_hash_equal(old_root, root);
	if (count == 0)
		return false;
	/* An old tree that is a perfect subtree is its own first proof node. */
	if (is_pow2(old_size))
		p[n++] = *old_root;
	memcpy(&p[n], path, count * sizeof(*path));
	n += count;
	fn = old_size - 1;
	sn = size - 1;
	while (fn & 1) {
		fn >>= 1;
		sn >>= 1;
	}
	fr = sr = p[0];
	for (size_t i = 1; i < n; i++) {
		if (sn == 0)
			return false;
		if ((fn & 1) || fn == sn) {
			tlog_node_hash(&p[i], &fr, &fr);
			tlog_node_hash(&p[i], &sr, &sr);
			while (!(fn & 1) && fn != 0) {
				fn >>= 1;
				sn >>= 1;
			}
		} else {
			tlog_node_hash(&sr, &p[i], &sr);
		}
		fn >>= 1;
		sn >>= 1;
	}
	return sn == 0 && tlog_hash_equal(&fr, old_root) && tlog_hash_equal(&sr, root);
}
