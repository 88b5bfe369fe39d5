/* SPDX-License-Identifier: Apache-2.0 */
/* Signed notes, vkeys, log signatures, cosignatures and checkpoints. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "trace/key.h"
#include "lib/base64.h"
#include "tlog/note.h"

/* "— " : U+2014 EM DASH in UTF-8, then a space. */
static const char SIG_PREFIX[] = "\xe2\x80\x94 ";
#define SIG_PREFIX_LEN 4
#define ED25519_SIG 64
#define COSIG_TS 8
/* Largest signature kept for checking: key ID + timestamp + Ed25519. Longer
 * ones (other algorithms) are carried but never match a key of ours. */
#define SIG_BYTES_MAX (4 + COSIG_TS + ED25519_SIG)

bool tlog_key_name_valid(const char *name, size_t len)
{
	if (len == 0 || len >= TLOG_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c <= 0x20 || c == 0x7f || c == '+')
			return false;
	}
	return true;
}

uint32_t tlog_key_id(const char *name, uint8_t type, const uint8_t pub[32])
{
	uint8_t h[32];
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	uint8_t sep[2] = { '\n', type };

	if (!c || EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(c, name, strlen(name)) != 1 || EVP_DigestUpdate(c, sep, 2) != 1 ||
	    EVP_DigestUpdate(c, pub, 32) != 1 || EVP_DigestFinal_ex(c, h, NULL) != 1)
		memset(h, 0, sizeof(h));
	EVP_MD_CTX_free(c);
	return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
}

int tlog_key_from(const char *name, uint8_t type, struct kw_key *k, struct tlog_key *out)
{
	size_t n = strlen(name);

	if (!tlog_key_name_valid(name, n))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	memcpy(out->name, name, n);
	out->type = type;
	kw_key_public_raw(k, out->pub);
	out->keyid = tlog_key_id(out->name, type, out->pub);
	out->key = k;
	return 0;
}

void tlog_key_clear(struct tlog_key *k)
{
	kw_key_free(k->key);
	memset(k, 0, sizeof(*k));
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int tlog_key_parse_vkey(const char *s, size_t len, struct tlog_key *out)
{
	const char *p1 = memchr(s, '+', len), *p2;
	uint8_t raw[33];
	size_t rawlen, nl;
	uint32_t id = 0;
	struct kw_key *k = NULL;

	memset(out, 0, sizeof(*out));
	if (!p1)
		return -EINVAL;
	nl = (size_t)(p1 - s);
	p2 = memchr(p1 + 1, '+', len - nl - 1);
	if (!p2 || p2 - p1 != 9 || !tlog_key_name_valid(s, nl))
		return -EINVAL;
	for (int i = 1; i <= 8; i++) {
		int v = hex_value(p1[i]);

		if (v < 0)
			return -EINVAL;
		id = id << 4 | (uint32_t)v;
	}
	if (kw_b64_decode(KW_B64_STD, p2 + 1, len - (size_t)(p2 + 1 - s), raw, sizeof(raw), &rawlen) ||
	    rawlen != 33)
		return -EINVAL;
	if (raw[0] != TLOG_SIG_ED25519 && raw[0] != TLOG_SIG_COSIGNATURE)
		return -EINVAL;
	memcpy(out->name, s, nl);
	out->type = raw[0];
	memcpy(out->pub, raw + 1, 32);
	out->keyid = tlog_key_id(out->name, out->type, out->pub);
	if (out->keyid != id || kw_key_from_raw_public(out->pub, &k)) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	out->key = k;
	return 0;
}

int tlog_key_vkey(const struct tlog_key *k, char out[TLOG_VKEY_MAX])
{
	uint8_t raw[33];
	char b64[KW_B64_LEN(33)];
	int n;

	raw[0] = k->type;
	memcpy(raw + 1, k->pub, 32);
	kw_b64_encode(KW_B64_STD, raw, sizeof(raw), b64);
	n = snprintf(out, TLOG_VKEY_MAX, "%s+%08" PRIx32 "+%s", k->name, k->keyid, b64);
	return n > 0 && n < TLOG_VKEY_MAX ? 0 : -ENAMETOOLONG;
}

/* Valid UTF-8 (no overlongs, surrogates or values past U+10FFFF) with no
 * control character but newline. */
static bool text_valid(const unsigned char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		size_t need;
		uint32_t cp;

		if (c < 0x80) {
			if ((c < 0x20 && c != '\n') || c == 0x7f)
				return false;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			need = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			need = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (len - i <= need)
			return false;
		for (size_t j = 1; j <= need; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		if ((need == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (need == 3 && (cp < 0x10000 || cp > 0x10ffff)))
			return false;
		i += need + 1;
	}
	return true;
}

static int parse_sig_line(const char *line, size_t len, struct tlog_note_sig *sig)
{
	const char *sp;
	uint8_t raw[SIG_BYTES_MAX];
	size_t rawlen;
	int ret;

	/* len excludes the newline */
	if (len < SIG_PREFIX_LEN || memcmp(line, SIG_PREFIX, SIG_PREFIX_LEN))
		return -EINVAL;
	sp = memchr(line + SIG_PREFIX_LEN, ' ', len - SIG_PREFIX_LEN);
	if (!sp)
		return -EINVAL;
	sig->name = line + SIG_PREFIX_LEN;
	sig->name_len = (size_t)(sp - sig->name);
	if (!tlog_key_name_valid(sig->name, sig->name_len))
		return -EINVAL;
	sig->b64 = sp + 1;
	sig->b64_len = len - (size_t)(sig->b64 - line);
	/* Decode fully when it fits, else just its first 4 bytes (the key ID). */
	ret = kw_b64_decode(KW_B64_STD, sig->b64, sig->b64_len, raw, sizeof(raw), &rawlen);
	if (ret == -ENOBUFS)
		ret = sig->b64_len % 4 ? -EINVAL :
		      kw_b64_decode(KW_B64_STD, sig->b64, 8, raw, sizeof(raw), &rawlen);
	if (ret || rawlen < 5)
		return -EINVAL;
	sig->keyid = (uint32_t)raw[0] << 24 | (uint32_t)raw[1] << 16 | (uint32_t)raw[2] << 8 | raw[3];
	return 0;
}

int tlog_note_parse(const char *buf, size_t len, struct tlog_note *out)
{
	size_t sep = 0, pos;
	bool found = false;

	memset(out, 0, sizeof(*out));
	if (len == 0 || len > TLOG_NOTE_MAX || buf[len - 1] != '\n' ||
	    !text_valid((const unsigned char *)buf, len))
		return -EINVAL;
	/* The text ends at the last empty line. */
	for (size_t i = len - 1; i-- > 0;)
		if (buf[i] == '\n' && buf[i + 1] == '\n') {
			sep = i;
			found = true;
			break;
		}
	if (!found || sep == 0)
		return -EINVAL;
	out->text = buf;
	out->text_len = sep + 1;
	pos = sep + 2;
	if (pos >= len)
		return -EINVAL;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		struct tlog_note_sig *sig;

		if (out->nsigs == TLOG_NOTE_SIGS_MAX)
			return -E2BIG;
		sig = &out->sigs[out->nsigs];
		if (parse_sig_line(buf + pos, (size_t)(nl - (buf + pos)), sig))
			return -EINVAL;
		sig->line = buf + pos;
		sig->line_len = (size_t)(nl - (buf + pos)) + 1;
		out->nsigs++;
		pos = (size_t)(nl - buf) + 1;
	}
	return 0;
}

/* "cosignature/v1\ntime <t>\n" || text */
static int cosigned_message(const char *text, size_t len, uint64_t ts, struct kw_buf *msg)
{
	char head[64];
	int n = snprintf(head, sizeof(head), "cosignature/v1\ntime %" PRIu64 "\n", ts);

	if (n < 0 || (size_t)n >= sizeof(head))
		return -EINVAL;
	if (kw_buf_append(msg, head, (size_t)n) || kw_buf_append(msg, text, len))
		return -ENOMEM;
	return 0;
}

int tlog_note_sign(const struct tlog_key *k, const char *text, size_t text_len,
		   uint64_t timestamp, struct kw_buf *out)
{
	uint8_t raw[SIG_BYTES_MAX];
	char b64[KW_B64_LEN(SIG_BYTES_MAX)];
	size_t n = 4;
	struct kw_buf msg = { 0 };
	int ret;

	if (!k->key || !kw_key_has_private(k->key))
		return -EINVAL;
	raw[0] = (uint8_t)(k->keyid >> 24);
	raw[1] = (uint8_t)(k->keyid >> 16);
	raw[2] = (uint8_t)(k->keyid >> 8);
	raw[3] = (uint8_t)k->keyid;
	if (k->type == TLOG_SIG_COSIGNATURE) {
		if (timestamp > INT64_MAX)
			return -EINVAL;
		for (int i = 0; i < 8; i++)
			raw[4 + i] = (uint8_t)(timestamp >> (56 - 8 * i));
		n += COSIG_TS;
		ret = cosigned_message(text, text_len, timestamp, &msg);
		if (!ret)
			ret = kw_key_sign(k->key, msg.data, msg.len, raw + n);
		kw_buf_free(&msg);
	} else {
		ret = kw_key_sign(k->key, text, text_len, raw + n);
	}
	if (ret)
		return ret;
	n += ED25519_SIG;
	kw_b64_encode(KW_B64_STD, raw, n, b64);
	if (kw_buf_puts(out, SIG_PREFIX) || kw_buf_puts(out, k->name) || kw_buf_putc(out, ' ') ||
	    kw_buf_puts(out, b64) || kw_buf_putc(out, '\n'))
		return -ENOMEM;
	return 0;
}

static int verify_one(const struct tlog_note *n, const struct tlog_note_sig *sig,
		      const struct tlog_key *k, uint64_t *timestamp)
{
	uint8_t raw[SIG_BYTES_MAX];
	size_t rawlen;
	struct kw_buf msg = { 0 };
	int ret;

	if (kw_b64_decode(KW_B64_STD, sig->b64, sig->b64_len, raw, sizeof(raw), &rawlen))
		return -EBADMSG;
	if (k->type == TLOG_SIG_ED25519) {
		if (rawlen != 4 + ED25519_SIG)
			return -EBADMSG;
		return kw_key_verify(k->key, n->text, n->text_len, raw + 4, ED25519_SIG) ? -EBADMSG : 0;
	}
	if (rawlen != 4 + COSIG_TS + ED25519_SIG)
		return -EBADMSG;
	uint64_t ts = 0;

	for (int i = 0; i < 8; i++)
		ts = ts << 8 | raw[4 + i];
	if (ts > INT64_MAX)
		return -EBADMSG;
	ret = cosigned_message(n->text, n->text_len, ts, &msg);
	if (!ret)
		ret = kw_key_verify(k->key, msg.data, msg.len, raw + 4 + COSIG_TS, ED25519_SIG) ?
		      -EBADMSG : 0;
	kw_buf_free(&msg);
	if (!ret && timestamp)
		*timestamp = ts;
	return ret;
}

int tlog_note_verify(const struct tlog_note *n, const struct tlog_key *k, uint64_t *timestamp)
{
	size_t nl = strlen(k->name);
	bool seen = false;

	for (size_t i = 0; i < n->nsigs; i++) {
		const struct tlog_note_sig *sig = &n->sigs[i];

		if (sig->name_len != nl || memcmp(sig->name, k->name, nl) || sig->keyid != k->keyid)
			continue;
		if (verify_one(n, sig, k, timestamp))
			return -EBADMSG;
		seen = true;
	}
	return seen ? 0 : -ENOENT;
}

int tlog_parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 19 || (len > 1 && s[0] == '0'))
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > INT64_MAX)
		return -EINVAL;
	*out = v;
	return 0;
}

int tlog_checkpoint_parse(const char *text, size_t len, struct tlog_checkpoint *out)
{
	const char *line[3];
	size_t llen[3], pos = 0, rawlen;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < 3; i++) {
		const char *nl = pos < len ? memchr(text + pos, '\n', len - pos) : NULL;

		if (!nl)
			return -EINVAL;
		line[i] = text + pos;
		llen[i] = (size_t)(nl - line[i]);
		pos += llen[i] + 1;
	}
	/* Extension lines, if any, must be non-empty. */
	for (size_t i = pos; i < len; i++)
		if (text[i] == '\n' && (i == pos || text[i - 1] == '\n'))
			return -EINVAL;
	if (len == 0 || text[len - 1] != '\n')
		return -EINVAL;
	if (llen[0] == 0 || llen[0] >= TLOG_NAME_MAX)
		return -EINVAL;
	for (size_t i = 0; i < llen[0]; i++)
		if ((unsigned char)line[0][i] < 0x20)
			return -EINVAL;
	memcpy(out->origin, line[0], llen[0]);
	if (tlog_parse_u64(line[1], llen[1], &out->size))
		return -EINVAL;
	if (llen[2] != 44 || kw_b64_decode(KW_B64_STD, line[2], llen[2], out->root.b, TLOG_HASH_LEN, &rawlen) ||
	    rawlen != TLOG_HASH_LEN)
		return -EINVAL;
	return 0;
}

int tlog_checkpoint_format(const struct tlog_checkpoint *cp, struct kw_buf *out)
{
	char b64[KW_B64_LEN(TLOG_HASH_LEN)], num[24];

	kw_b64_encode(KW_B64_STD, cp->root.b, TLOG_HASH_LEN, b64);
	snprintf(num, sizeof(num), "%" PRIu64, cp->size);
	if (kw_buf_puts(out, cp->origin) || kw_buf_putc(out, '\n') || kw_buf_puts(out, num) ||
	    kw_buf_putc(out, '\n') || kw_buf_puts(out, b64) || kw_buf_putc(out, '\n'))
		return -ENOMEM;
	return 0;
}
