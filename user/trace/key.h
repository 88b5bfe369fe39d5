/* SPDX-License-Identifier: Apache-2.0 */
/* Ed25519 signing keys (OpenSSL), public JWKs and RFC 7638 thumbprints. */
#ifndef KWITNESS_KEY_H
#define KWITNESS_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* A public or private key. Opaque; release with kw_key_free(). */
struct kw_key;

/* base64url of a SHA-256 is 43 characters + NUL. */
#define KW_THUMBPRINT_MAX 44
#define KW_ED25519_SIG_LEN 64

/* Generates an Ed25519 key and writes it as a PKCS#8 PEM file created with
 * O_EXCL and mode 0600 (never overwrites). *out may be NULL. 0 or -errno. */
int kw_key_generate(const char *path, struct kw_key **out);
/* Loads a private key: from path when path is non-NULL, else from the
 * environment variable TRACE_PRIVATE_KEY_PEM (the PEM text). A key file that
 * is group- or world-accessible, or owned by a user other than root and the
 * caller, is refused (-EPERM). Ed25519 only. */
int kw_key_load_private(const char *path, struct kw_key **out);
/* Loads a trusted public key: a file holding a public JWK (JSON) or a PEM
 * public key (a PEM private key is accepted and reduced to its public half). */
int kw_key_load_public(const char *path, struct kw_key **out);
/* From a JWK object: OKP/Ed25519 only; private members ("d") refused. */
int kw_key_from_jwk(const json_t *jwk, struct kw_key **out);
void kw_key_free(struct kw_key *key);

/* {"crv":"Ed25519","kty":"OKP","x":...}; new reference, NULL on error. */
json_t *kw_key_public_jwk(const struct kw_key *key);
int kw_key_thumbprint(const struct kw_key *key, char out[KW_THUMBPRINT_MAX]);
/* RFC 7638 thumbprint (SHA-256, base64url) of an OKP, EC or RSA JWK, from its
 * required members only. -EINVAL when a required member is missing. */
int kw_jwk_thumbprint(const json_t *jwk, char out[KW_THUMBPRINT_MAX]);

/* Ed25519 (pure) signature of msg. Needs a private key. 0 or -errno. */
int kw_key_sign(const struct kw_key *key, const void *msg, size_t n,
		uint8_t sig[KW_ED25519_SIG_LEN]);
/* 0 when sig is a valid signature of msg, -EBADMSG when not, -errno on error. */
int kw_key_verify(const struct kw_key *key, const void *msg, size_t n,
		  const uint8_t *sig, size_t siglen);

/* Additive (record/key part): keys from raw bytes, used by the RFC 8032 and
 * Wycheproof tests; private-member check shared by JWK loading and the schema. */
int kw_key_from_seed(const uint8_t seed[32], struct kw_key **out);
int kw_key_from_raw_public(const uint8_t pub[32], struct kw_key **out);
bool kw_key_has_private(const struct kw_key *key);
/* The 32-byte RFC 8032 public key (signed-note key IDs and vkeys). */
void kw_key_public_raw(const struct kw_key *key, uint8_t out[32]);
/* True when the JWK object has a private member: d, p, q, dp, dq, qi or k. */
bool kw_jwk_has_private_member(const json_t *jwk);

#endif

