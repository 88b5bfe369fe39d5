/* SPDX-License-Identifier: Apache-2.0 */
/* Base64 in the two alphabets kwitness writes (RFC 4648): the standard one
 * with padding (section 4: signed notes, checkpoints, proofs) and base64url
 * without padding (section 5: JWS, JWK, TPM evidence). Decoding is strict in
 * both: each byte string has exactly one text form, so a signature or a key
 * cannot be spelled twice. */
#ifndef KWITNESS_BASE64_H
#define KWITNESS_BASE64_H

#include <stddef.h>
#include <stdint.h>

enum kw_b64_alphabet {
	KW_B64_STD, /* A-Z a-z 0-9 + /, padded with '=' to a multiple of 4 */
	KW_B64_URL, /* A-Z a-z 0-9 - _, no padding */
};

/* Characters needed to encode n bytes, plus NUL (either alphabet). */
#define KW_B64_LEN(n) ((((n) + 2) / 3) * 4 + 1)

/* Writes the encoding and a NUL; returns its length. */
size_t kw_b64_encode(enum kw_b64_alphabet a, const uint8_t *in, size_t n, char *out);
/* Decodes exactly len characters. Refuses any character outside the
 * alphabet, a length that no encoding has (KW_B64_STD: not a multiple of 4;
 * KW_B64_URL: 1 mod 4), padding but at the end of KW_B64_STD, and non-zero
 * trailing bits. Returns 0 with *outlen set, -EINVAL, or -ENOBUFS when
 * outcap is short (nothing is written then). */
int kw_b64_decode(enum kw_b64_alphabet a, const char *s, size_t len, uint8_t *out, size_t outcap,
		  size_t *outlen);

#endif
