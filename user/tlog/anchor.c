/* SPDX-License-Identifier: Apache-2.0 */
/* registry-anchor-v1 canonical claim bytes and proof objects. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlog/anchor.h"

#define SAFE_INT ((json_int_t)9007199254740991LL)

static int put_u16_escape(struct kw_buf *out, unsigned v)
{
	char e[12];

	snprintf(e, sizeof(e), "\\u%04x", (unsigned)(v & 0xffff));
	return kw_buf_append(out, e, 6);
}

/* Decodes one UTF-8 sequence (jansson has validated the string). */
static size_t utf8_next(const unsigned char *s, size_t len, uint32_t *cp)
{
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0 && len >= 2) {
		*cp = (uint32_t)(s[0] & 0x1f) << 6 | (s[1] & 0x3f);
		return 2;
	}
	if ((s[0] & 0xf0) == 0xe0 && len >= 3) {
		*cp = (uint32_t)(s[0] & 0x0f) << 12 | (uint32_t)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
		return 3;
	}
	if ((s[0] & 0xf8) == 0xf0 && len >= 4) {
		*cp = (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3f) << 12 |
		      (uint32_t)(s[2] & 0x3f) << 6 | (s[3] & 0x3f);
		return 4;
	}
	return 0;
}

static int put_string(struct kw_buf *out, const char *s, size_t len)
{
	int ret = kw_buf_putc(out, '"');

	for (size_t i = 0; i < len && !ret;) {
		uint32_t cp;
		size_t n = utf8_next((const unsigned char *)s + i, len - i, &cp);

		if (!n)
			return -EINVAL;
		i += n;
		switch (cp) {
		case '"': ret = kw_buf_puts(out, "\\\""); break;
		case '\\': ret = kw_buf_puts(out, "\\\\"); break;
		case '\b': ret = kw_buf_puts(out, "\\b"); break;
		case '\f': ret = kw_buf_puts(out, "\\f"); break;
		case '\n': ret = kw_buf_puts(out, "\\n"); break;
		case '\r': ret = kw_buf_puts(out, "\\r"); break;
		case '\t': ret = kw_buf_puts(out, "\\t"); break;
		default:
			if (cp >= 0x20 && cp <= 0x7e) {
				ret = kw_buf_putc(out, (char)cp);
			} else if (cp < 0x10000) {
				ret = put_u16_escape(out, cp);
			} else {
				cp -= 0x10000;
				ret = put_u16_escape(out, 0xd800 | (cp >> 10));
				if (!ret)
					ret = put_u16_escape(out, 0xdc00 | (cp & 0x3ff));
			}
		}
	}
	return ret ? ret : kw_buf_putc(out, '"');
}

/* UTF-8 byte order is code point order. */
static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int anchor_claim_bytes(const json_t *v, struct kw_buf *out)
{
	char num[32];
	int ret = 0;

	switch (json_typeof(v)) {
	case JSON_NULL:
		return kw_buf_puts(out, "null");
	case JSON_TRUE:
		return kw_buf_puts(out, "true");
	case JSON_FALSE:
		return kw_buf_puts(out, "false");
	case JSON_REAL:
		return -EDOM;
	case JSON_INTEGER: {
		json_int_t i = json_integer_value(v);

		if (i > SAFE_INT || i < -SAFE_INT)
			return -EDOM;
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, i);
		return kw_buf_puts(out, num);
	}
	case JSON_STRING:
		return put_string(out, json_string_value(v), json_string_length(v));
	case JSON_ARRAY:
		ret = kw_buf_putc(out, '[');
		for (size_t i = 0; i < json_array_size(v) && !ret; i++) {
			if (i)
				ret = kw_buf_putc(out, ',');
			if (!ret)
				ret = anchor_claim_bytes(json_array_get(v, i), out);
		}
		return ret ? ret : kw_buf_putc(out, ']');
	case JSON_OBJECT: {
		size_t n = json_object_size(v), k = 0;
		const char **keys = calloc(n ? n : 1, sizeof(*keys));
		const char *key;
		json_t *val;

		if (!keys)
			return -ENOMEM;
		json_object_foreach((json_t *)v, key, val)
			keys[k++] = key;
		qsort(keys, n, sizeof(*keys), key_cmp);
		ret = kw_buf_putc(out, '{');
		for (size_t i = 0; i < n && !ret; i++) {
			if (i)
				ret = kw_buf_putc(out, ',');
			if (!ret)
				ret = put_string(out, keys[i], strlen(keys[i]));
			if (!ret)
				ret = kw_buf_putc(out, ':');
			if (!ret)
				ret = anchor_claim_bytes(json_object_get(v, keys[i]), out);
		}
		free(keys);
		return ret ? ret : kw_buf_putc(out, '}');
	}
	}
	return -EINVAL;
}

void anchor_hash_str(const struct tlog_hash *h, char out[72])
{
	memcpy(out, "sha256:", 7);
	for (int i = 0; i < TLOG_HASH_LEN; i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", h->b[i]);
}

int anchor_proof_json(uint64_t index, const struct tlog_hash *path, size_t count,
		      struct kw_buf *out)
{
	char num[32], hs[72];
	int ret = kw_buf_puts(out, "{\"audit_path\":[");

	for (size_t i = 0; i < count && !ret; i++) {
		anchor_hash_str(&path[i], hs);
		ret = (i ? kw_buf_putc(out, ',') : 0);
		if (!ret)
			ret = kw_buf_putc(out, '"');
		if (!ret)
			ret = kw_buf_puts(out, hs);
		if (!ret)
			ret = kw_buf_putc(out, '"');
	}
	snprintf(num, sizeof(num), "%" PRIu64, index);
	if (!ret)
		ret = kw_buf_puts(out, "],\"leaf_index\":");
	if (!ret)
		ret = kw_buf_puts(out, num);
	return ret ? ret : kw_buf_putc(out, '}');
}
