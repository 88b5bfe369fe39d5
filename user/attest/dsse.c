/* SPDX-License-Identifier: Apache-2.0 */
/* DSSE envelopes (dsse.h). The signature covers the PAE, never the JSON
 * around it, so the envelope's own spelling (member order, base64 alphabet)
 * is not what is checked: only its decoded payload and type are. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base64.h"
#include "dsse.h"

int dsse_pae(const char *type, size_t type_len, const void *body, size_t body_len,
	     struct kw_buf *out)
{
	char n[32];
	int e;

	snprintf(n, sizeof(n), "DSSEv1 %zu ", type_len);
	e = kw_buf_puts(out, n) ?: kw_buf_append(out, type, type_len);
	snprintf(n, sizeof(n), " %zu ", body_len);
	return e ?: kw_buf_puts(out, n) ?: kw_buf_append(out, body, body_len);
}

json_t *dsse_sign(const char *type, const void *body, size_t body_len, const struct kw_key *key)
{
	uint8_t sig[KW_ED25519_SIG_LEN];
	char tp[KW_THUMBPRINT_MAX], sig64[KW_B64_LEN(KW_ED25519_SIG_LEN)];
	struct kw_buf pae = { 0 };
	json_t *env = NULL;
	char *payload;

	payload = malloc(KW_B64_LEN(body_len));
	if (!payload || dsse_pae(type, strlen(type), body, body_len, &pae) ||
	    kw_key_sign(key, pae.data, pae.len, sig) || kw_key_thumbprint(key, tp))
		goto out;
	kw_b64_encode(KW_B64_STD, body, body_len, payload);
	kw_b64_encode(KW_B64_STD, sig, sizeof(sig), sig64);
	env = json_pack("{s:s, s:s, s:[{s:s, s:s}]}", "payload", payload, "payloadType", type,
			"signatures", "keyid", tp, "sig", sig64);
out:
	free(payload);
	kw_buf_free(&pae);
	return env;
}

int dsse_b64_decode(const char *s, size_t len, struct kw_buf *out)
{
	bool url = strpbrk(s, "-_") != NULL, std = strpbrk(s, "+/") != NULL;
	size_t n = len, got;
	char *t;
	int e;

	if (strlen(s) != len || (url && std))
		return -EINVAL;
	/* Padding, if any, is what the length calls for and nothing more. */
	while (n > 0 && s[n - 1] == '=' && len - n < 2)
		n--;
	if (n < len && len % 4)
		return -EINVAL;
	if (!(t = malloc(n + 1)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		t[i] = s[i] == '+' ? '-' : s[i] == '/' ? '_' : s[i];
	t[n] = 0;
	kw_buf_reset(out);
	e = kw_buf_reserve(out, n / 4 * 3 + 3);
	e = e ?: kw_b64_decode(KW_B64_URL, t, n, (uint8_t *)out->data, n / 4 * 3 + 3, &got);
	free(t);
	if (!e)
		out->len = got;
	return e;
}

const char *dsse_reason_code(enum dsse_reason r)
{
	switch (r) {
	case DSSE_OK: return "ok";
	case DSSE_MALFORMED: return "envelope_malformed";
	case DSSE_SIGNATURE_INVALID: return "signature_invalid";
	case DSSE_TYPE_UNSUPPORTED: return "payload_type_unsupported";
	}
	return "unknown";
}

static int sig_holds(const json_t *s, const struct kw_buf *pae, const struct kw_key *key)
{
	const char *b = json_string_value(json_object_get(s, "sig"));
	struct kw_buf sig = { 0 };
	int ok;

	if (!json_is_object(s) || !b)
		return 0;
	ok = !dsse_b64_decode(b, json_string_length(json_object_get(s, "sig")), &sig) &&
	     !kw_key_verify(key, pae->data, pae->len, (const uint8_t *)sig.data, sig.len);
	kw_buf_free(&sig);
	return ok;
}

int dsse_verify(const json_t *env, const char *want_type, const struct kw_key *key,
		struct kw_buf *body, char *why, size_t whylen)
{
	const json_t *sigs = json_object_get(env, "signatures"), *pl = json_object_get(env, "payload");
	const json_t *ty = json_object_get(env, "payloadType");
	struct kw_buf pae = { 0 };
	size_t i, good = 0;
	const json_t *s;

	if (!json_is_object(env) || !json_is_string(pl) || !json_is_string(ty) || !json_is_array(sigs)) {
		snprintf(why, whylen, "not a DSSE envelope (payload, payloadType, signatures)");
		return DSSE_MALFORMED;
	}
	if (json_array_size(sigs) == 0 || json_array_size(sigs) > DSSE_MAX_SIGNATURES) {
		snprintf(why, whylen, "the envelope has %zu signatures (1 to %d expected)",
			 json_array_size(sigs), DSSE_MAX_SIGNATURES);
		return DSSE_MALFORMED;
	}
	if (dsse_b64_decode(json_string_value(pl), json_string_length(pl), body)) {
		snprintf(why, whylen, "the payload is not base64");
		return DSSE_MALFORMED;
	}
	if (dsse_pae(json_string_value(ty), json_string_length(ty), body->data, body->len, &pae)) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	json_array_foreach(sigs, i, s)
		good += sig_holds(s, &pae, key);
	kw_buf_free(&pae);
	if (!good) {
		snprintf(why, whylen, "no signature over the envelope's PAE verifies with the key");
		return DSSE_SIGNATURE_INVALID;
	}
	/* Checked after the signature, as the protocol orders it. */
	if (json_string_length(ty) != strlen(want_type) || strcmp(json_string_value(ty), want_type)) {
		snprintf(why, whylen, "payloadType is not %s", want_type);
		return DSSE_TYPE_UNSUPPORTED;
	}
	return 0;
}
