/* SPDX-License-Identifier: Apache-2.0 */
/* RFC 6962 / RFC 9162 Merkle tree hashing: leaf and node hashes, tree hashes
 * of any size read from stored perfect subtrees, inclusion and consistency
 * proofs (making them and checking them). SHA-256 through OpenSSL. */
#ifndef KWITNESS_TLOG_MERKLE_H
#define KWITNESS_TLOG_MERKLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TLOG_HASH_LEN 32
/* A proof for a tree of at most 2^63 leaves has at most 63 hashes (+1 for
 * the consistency verifier's prepended old root). */
#define TLOG_PROOF_MAX 64

struct tlog_hash {
	uint8_t b[TLOG_HASH_LEN];
};

/* SHA-256(0x00 || data) */
void tlog_leaf_hash(const void *data, size_t n, struct tlog_hash *out);
/* SHA-256(0x01 || left || right) */
void tlog_node_hash(const struct tlog_hash *left, const struct tlog_hash *right,
		    struct tlog_hash *out);
/* SHA-256 of nothing: the root of the empty tree. */
void tlog_empty_root(struct tlog_hash *out);

/* Reads the hash of the perfect subtree at height `level` and position
 * `index` (the tree hash of leaves [index << level, (index + 1) << level)).
 * Returns 0 or a negative errno. */
typedef int (*tlog_node_reader)(void *ctx, unsigned level, uint64_t index,
				struct tlog_hash *out);

/* The RFC 6962 Merkle Tree Hash of leaves [lo, hi), lo < hi. */
int tlog_range_hash(tlog_node_reader rd, void *ctx, uint64_t lo, uint64_t hi,
		    struct tlog_hash *out);
/* The root of the tree of `size` leaves (the empty root for 0). */
int tlog_tree_hash(tlog_node_reader rd, void *ctx, uint64_t size, struct tlog_hash *out);

/* RFC 6962 section 2.1.1 audit path of leaf `index` in the tree of `size`
 * leaves: path[0] is the leaf's sibling. -EINVAL when index >= size. */
int tlog_inclusion_proof(tlog_node_reader rd, void *ctx, uint64_t index, uint64_t size,
			 struct tlog_hash path[TLOG_PROOF_MAX], size_t *count);
/* RFC 6962 section 2.1.2 consistency proof from old_size to size
 * (0 < old_size <= size; empty when they are equal). */
int tlog_consistency_proof(tlog_node_reader rd, void *ctx, uint64_t old_size, uint64_t size,
			   struct tlog_hash path[TLOG_PROOF_MAX], size_t *count);

/* RFC 9162 section 2.1.3.2: true when `path` proves `leaf` is leaf `index`
 * of the tree of `size` leaves whose root is `root`. */
bool tlog_inclusion_verify(uint64_t index, uint64_t size, const struct tlog_hash *leaf,
			   const struct tlog_hash *path, size_t count,
			   const struct tlog_hash *root);
/* RFC 9162 section 2.1.4.2: true when `path` proves the tree (old_size,
 * old_root) is a prefix of (size, root). An old size of 0 is consistent with
 * anything given an empty proof; equal sizes need equal roots and no proof. */
bool tlog_consistency_verify(uint64_t old_size, uint64_t size,
			     const struct tlog_hash *old_root, const struct tlog_hash *root,
			     const struct tlog_hash *path, size_t count);

bool tlog_hash_equal(const struct tlog_hash *a, const struct tlog_hash *b);

#endif
