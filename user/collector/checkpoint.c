/* SPDX-License-Identifier: Apache-2.0 */
/* The checkpoint line: build, sign, read back, see checkpoint.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "lib/base64.h"
#include "jcs/jcs.h"
#include "collector/checkpoint.h"

/* The members in RFC 8785 order; "signature" only with sig. */
static int checkpoint_dump(const struct kw_checkpoint *c, const char *sig, struct kw_buf *out)
{
	struct jcs_obj o;
	int e;

	kw_buf_reset(out);
	e = jcs_obj_begin(&o, out);
	e = e ?: jcs_obj_int(&o, "decisions", (int64_t)c->decisions);
	e = e ?: jcs_obj_int(&o, "denials", (int64_t)c->denials);
	e = e ?: jcs_obj_int(&o, "dropped", (int64_t)c->dropped);
	e = e ?: jcs_obj_int(&o, "gaps", (int64_t)c->gaps);
	e = e ?: jcs_obj_str(&o, "kid", c->kid);
	if (c->last_seq >= 0)
		e = e ?: jcs_obj_int(&o, "last_seq", c->last_seq);
	e = e ?: jcs_obj_int(&o, "lines", (int64_t)c->lines);
	e = e ?: jcs_obj_int(&o, "n", (int64_t)c->n);
	if (c->prev[0])
		e = e ?: jcs_obj_str(&o, "prev", c->prev);
	e = e ?: jcs_obj_str(&o, "session", c->session);
	if (sig)
		e = e ?: jcs_obj_str(&o, "signature", sig);
	e = e ?: jcs_obj_str(&o, "transcript_prefix", c->prefix);
	e = e ?: jcs_obj_int(&o, "ts", c->ts);
	e = e ?: jcs_obj_str(&o, "type", KW_CHECKPOINT_TYPE);
	return e ?: jcs_obj_end(&o);
}

int kw_checkpoint_sign(struct kw_checkpoint *c, const struct kw_key *key, struct kw_buf *out,
		       char hash[KW_DIGEST_STR_MAX])
{
	uint8_t sig[KW_ED25519_SIG_LEN];
	char sig_b64[96];
	int e;

	e = kw_key_thumbprint(key, c->kid);
	e = e ?: checkpoint_dump(c, NULL, out);
	e = e ?: kw_key_sign(key, out->data, out->len, sig);
	if (e)
		return e;
	kw_b64_encode(KW_B64_URL, sig, sizeof(sig), sig_b64);
	OPENSSL_cleanse(sig, sizeof(sig));
	e = checkpoint_dump(c, sig_b64, out);
	return e ?: kw_digest_buf(KW_SHA256, out->data, out->len, hash);
}

static bool get_u64(json_t *o, const char *k, uint64_t *v, bool optional)
{
	json_t *j = json_object_get(o, k);

	if (!j)
		return optional;
	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return false;
	*v = (uint64_t)json_integer_value(j);
	return true;
}

static bool get_str(json_t *o, const char *k, char *out, size_t cap, bool optional)
{
	const char *s = json_string_value(json_object_get(o, k));

	if (!s)
		return optional && !json_object_get(o, k);
	if (strlen(s) >= cap)
		return false;
	snprintf(out, cap, "%s", s);
	return true;
}

/* The members of one parsed line into c: every one present and well formed,
 * nothing else. */
static bool checkpoint_members(json_t *o, struct kw_checkpoint *c, char *sig, size_t sigcap)
{
	uint64_t seq = 0, ts = 0;
	char type[32];
	size_t known = 14; /* every member, "last_seq" and "prev" included */

	memset(c, 0, sizeof(*c));
	c->last_seq = -1;
	if (!get_u64(o, "decisions", &c->decisions, false) ||
	    !get_u64(o, "denials", &c->denials, false) || !get_u64(o, "dropped", &c->dropped, false) ||
	    !get_u64(o, "gaps", &c->gaps, false) || !get_u64(o, "lines", &c->lines, false) ||
	    !get_u64(o, "n", &c->n, false) || !get_u64(o, "ts", &ts, false) ||
	    !get_u64(o, "last_seq", &seq, true) || !get_str(o, "kid", c->kid, sizeof(c->kid), false) ||
	    !get_str(o, "prev", c->prev, sizeof(c->prev), true) ||
	    !get_str(o, "session", c->session, sizeof(c->session), false) ||
	    !get_str(o, "signature", sig, sigcap, false) ||
	    !get_str(o, "transcript_prefix", c->prefix, sizeof(c->prefix), false) ||
	    !get_str(o, "type", type, sizeof(type), false))
		return false;
	c->ts = (int64_t)ts;
	if (json_object_get(o, "last_seq"))
		c->last_seq = (int64_t)seq;
	else
		known--;
	if (!c->prev[0])
		known--;
	return json_object_size(o) == known && !strcmp(type, KW_CHECKPOINT_TYPE) && c->n > 0 &&
	       c->lines > 0 && kw_digest_valid(c->prefix) && (c->n == 1) == !c->prev[0] &&
	       (!c->prev[0] || kw_digest_valid(c->prev)) && strlen(c->session) == 32;
}

int kw_checkpoint_read(const char *line, size_t len, const struct kw_key *key,
		       struct kw_checkpoint *c, char hash[KW_DIGEST_STR_MAX], char *why,
		       size_t whylen)
{
	struct kw_buf canon = { 0 };
	char sig_b64[128], tp[KW_THUMBPRINT_MAX];
	uint8_t sig[KW_ED25519_SIG_LEN + 1];
	size_t siglen = 0;
	json_t *o;
	int ret = KW_CHECKPOINT_MALFORMED;

	o = len <= KW_CHECKPOINT_LINE_MAX ? jcs_parse(line, len, NULL) : NULL;
	if (!o || !json_is_object(o) || jcs_dump(o, &canon) || canon.len != len ||
	    memcmp(canon.data, line, len)) {
		snprintf(why, whylen, "not a canonical JSON object");
		goto out;
	}
	if (!checkpoint_members(o, c, sig_b64, sizeof(sig_b64))) {
		snprintf(why, whylen, "not a kwitness.checkpoint (a member is missing, extra or malformed)");
		goto out;
	}
	if (kw_key_thumbprint(key, tp) || strcmp(tp, c->kid)) {
		ret = KW_CHECKPOINT_KEY_MISMATCH;
		snprintf(why, whylen, "checkpoint %" PRIu64 " names key %s, not the trusted key", c->n,
			 c->kid);
		goto out;
	}
	ret = KW_CHECKPOINT_BAD_SIGNATURE;
	json_object_del(o, "signature");
	kw_buf_reset(&canon);
	if (kw_b64_decode(KW_B64_URL, sig_b64, strlen(sig_b64), sig, sizeof(sig), &siglen) ||
	    siglen != KW_ED25519_SIG_LEN || jcs_dump(o, &canon) ||
	    kw_key_verify(key, canon.data, canon.len, sig, siglen)) {
		snprintf(why, whylen, "checkpoint %" PRIu64 ": the Ed25519 signature does not hold",
			 c->n);
		goto out;
	}
	ret = kw_digest_buf(KW_SHA256, line, len, hash) ? -ENOMEM : KW_CHECKPOINT_OK;
out:
	json_decref(o);
	kw_buf_free(&canon);
	return ret;
}
