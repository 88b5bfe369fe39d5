/* SPDX-License-Identifier: Apache-2.0 */
/* Standard base64 with padding (RFC 4648 section 4), the encoding of signed
 * notes, checkpoints and proofs; strict on decode. */
#ifndef KWITNESS_TLOG_BASE64_H
#define KWITNESS_TLOG_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* Characters needed to encode n bytes, plus NUL. */
#define TLOG_B64_LEN(n) ((((n) + 2) / 3) * 4 + 1)

/* Writes the padded encoding and a NUL; returns its length. */
size_t tlog_b64_encode(const uint8_t *in, size_t n, char *out);
/* Decodes exactly len characters: a multiple of 4, padding only at the end,
 * zero trailing bits (one encoding per value). 0 with *outlen set, -EINVAL,
 * or -ENOBUFS when outcap is short. */
int tlog_b64_decode(const char *s, size_t len, uint8_t *out, size_t outcap, size_t *outlen);

#endif
