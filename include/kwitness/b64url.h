/* SPDX-License-Identifier: Apache-2.0 */
/* base64url without padding (RFC 4648 section 5), strict on decode. */
#ifndef KWITNESS_B64URL_H
#define KWITNESS_B64URL_H

#include <stddef.h>
#include <stdint.h>

/* Characters needed to encode n bytes, plus NUL. */
#define KW_B64URL_LEN(n) ((((n) + 2) / 3) * 4 + 1)

/* Writes the unpadded encoding and a NUL; returns its length. */
size_t kw_b64url_encode(const uint8_t *in, size_t n, char *out);
/* Decodes exactly len characters. Refuses padding, '+', '/', any other
 * character, a length of 1 mod 4, and non-zero trailing bits (non-canonical
 * input). Returns 0 with *outlen set, -EINVAL, or -ENOBUFS when outcap is short. */
int kw_b64url_decode(const char *s, size_t len, uint8_t *out, size_t outcap, size_t *outlen);

#endif
