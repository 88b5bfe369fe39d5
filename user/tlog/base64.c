/* SPDX-License-Identifier: Apache-2.0 */
/* Standard base64: encoding through OpenSSL, a strict decoder here (OpenSSL's
 * decoder accepts whitespace and non-canonical trailing bits). */
#include <errno.h>

#include <openssl/evp.h>

#include "tlog/base64.h"

size_t tlog_b64_encode(const uint8_t *in, size_t n, char *out)
{
	if (n == 0) {
		out[0] = '\0';
		return 0;
	}
	return (size_t)EVP_EncodeBlock((unsigned char *)out, in, (int)n);
}

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int tlog_b64_decode(const char *s, size_t len, uint8_t *out, size_t outcap, size_t *outlen)
{
	size_t o = 0;

	if (len % 4)
		return -EINVAL;
	for (size_t i = 0; i < len; i += 4) {
		int v[4], pad = 0;
		uint32_t w;

		for (int j = 0; j < 4; j++) {
			if (s[i + j] == '=' && i + 4 == len && j >= 2) {
				v[j] = 0;
				pad++;
				continue;
			}
			if (pad)
				return -EINVAL; /* data after padding */
			v[j] = b64_value(s[i + j]);
			if (v[j] < 0)
				return -EINVAL;
		}
		w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
		if ((pad == 1 && (w & 0xff)) || (pad == 2 && (w & 0xffff)))
			return -EINVAL; /* non-zero trailing bits */
		if (o + 3 - (size_t)pad > outcap)
			return -ENOBUFS;
		out[o++] = (uint8_t)(w >> 16);
		if (pad < 2)
			out[o++] = (uint8_t)(w >> 8);
		if (pad < 1)
			out[o++] = (uint8_t)w;
	}
	*outlen = o;
	return 0;
}
