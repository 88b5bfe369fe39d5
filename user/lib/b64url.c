/* SPDX-License-Identifier: Apache-2.0 */
/* base64url without padding (RFC 4648 section 5). Decoding accepts only the
 * one canonical spelling of each byte string, so a signature or a key has
 * exactly one text form. */
#include <errno.h>

#include "kwitness/b64url.h"

static const char b64url_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

size_t kw_b64url_encode(const uint8_t *in, size_t n, char *out)
{
	size_t o = 0, i = 0;

	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		out[o++] = b64url_alphabet[(v >> 18) & 63];
		out[o++] = b64url_alphabet[(v >> 12) & 63];
		out[o++] = b64url_alphabet[(v >> 6) & 63];
		out[o++] = b64url_alphabet[v & 63];
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)in[i] << 16;

		out[o++] = b64url_alphabet[(v >> 18) & 63];
		out[o++] = b64url_alphabet[(v >> 12) & 63];
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;

		out[o++] = b64url_alphabet[(v >> 18) & 63];
		out[o++] = b64url_alphabet[(v >> 12) & 63];
		out[o++] = b64url_alphabet[(v >> 6) & 63];
	}
	out[o] = '\0';
	return o;
}

static int b64url_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

int kw_b64url_decode(const char *s, size_t len, uint8_t *out, size_t outcap, size_t *outlen)
{
	size_t rem = len % 4, need = len / 4 * 3 + (rem ? rem - 1 : 0);
	uint32_t acc = 0;
	int bits = 0;
	size_t o = 0;

	if (rem == 1)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (b64url_value(s[i]) < 0)
			return -EINVAL;
	if (need > outcap)
		return -ENOBUFS;
	for (size_t i = 0; i < len; i++) {
		acc = (acc << 6 | (uint32_t)b64url_value(s[i])) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (uint8_t)(acc >> bits);
		}
	}
	/* Leftover bits must be zero: otherwise two spellings decode alike. */
	if (bits && (acc & ((1u << bits) - 1)))
		return -EINVAL;
	*outlen = o;
	return 0;
}
