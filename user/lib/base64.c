/* SPDX-License-Identifier: Apache-2.0 */
/* Base64, standard and url alphabets, see kwitness/base64.h. */
#include <errno.h>

#include "lib/base64.h"

static const char alphabet[2][65] = {
	[KW_B64_STD] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
	[KW_B64_URL] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
};

size_t kw_b64_encode(enum kw_b64_alphabet a, const uint8_t *in, size_t n, char *out)
{
	const char *abc = alphabet[a == KW_B64_URL];
	size_t o = 0, i = 0;

	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		out[o++] = abc[(v >> 18) & 63];
		out[o++] = abc[(v >> 12) & 63];
		out[o++] = abc[(v >> 6) & 63];
		out[o++] = abc[v & 63];
	}
	if (n - i) {
		uint32_t v = (uint32_t)in[i] << 16 | (n - i == 2 ? (uint32_t)in[i + 1] << 8 : 0);

		out[o++] = abc[(v >> 18) & 63];
		out[o++] = abc[(v >> 12) & 63];
		if (n - i == 2)
			out[o++] = abc[(v >> 6) & 63];
		while (a == KW_B64_STD && o % 4)
			out[o++] = '=';
	}
	out[o] = '\0';
	return o;
}

static int value(enum kw_b64_alphabet a, char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == (a == KW_B64_URL ? '-' : '+'))
		return 62;
	if (c == (a == KW_B64_URL ? '_' : '/'))
		return 63;
	return -1;
}

int kw_b64_decode(enum kw_b64_alphabet a, const char *s, size_t len, uint8_t *out, size_t outcap,
		  size_t *outlen)
{
	size_t data = len, rem, need, o = 0;
	uint32_t acc = 0;
	int bits = 0;

	if (a == KW_B64_STD) {
		if (len % 4)
			return -EINVAL;
		/* At most two '=', only at the end; any other '=' is refused
		 * below as outside the alphabet. */
		while (data && len - data < 2 && s[data - 1] == '=')
			data--;
	}
	rem = data % 4;
	need = data / 4 * 3 + (rem ? rem - 1 : 0);
	if (rem == 1)
		return -EINVAL;
	for (size_t i = 0; i < data; i++)
		if (value(a, s[i]) < 0)
			return -EINVAL;
	if (need > outcap)
		return -ENOBUFS;
	for (size_t i = 0; i < data; i++) {
		acc = (acc << 6 | (uint32_t)value(a, s[i])) & 0xffffff;
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
