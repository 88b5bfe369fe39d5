/* SPDX-License-Identifier: Apache-2.0 */
/* DSSE, the Dead Simple Signing Envelope (secure-systems-lab/dsse, protocol
 * v1.0.0): the pre-authentication encoding every signature covers, and the
 * JSON envelope {payload, payloadType, signatures[{keyid, sig}]} signed and
 * checked with an Ed25519 key. */
#ifndef KWITNESS_ATTEST_DSSE_H
#define KWITNESS_ATTEST_DSSE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "lib/buf.h"
#include "trace/key.h"

#define DSSE_INTOTO_PAYLOAD_TYPE "application/vnd.in-toto+json"
/* The most signatures an envelope may carry for kwitness to look at. */
#define DSSE_MAX_SIGNATURES 16

/* PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body,
 * LEN the decimal byte length. Appended to out. 0 or -ENOMEM. */
int dsse_pae(const char *type, size_t type_len, const void *body, size_t body_len,
	     struct kw_buf *out);

/* The envelope of body (standard base64 with padding), signed with key over
 * PAE(type, body); keyid is the key's RFC 7638 thumbprint. NULL on error. */
json_t *dsse_sign(const char *type, const void *body, size_t body_len, const struct kw_key *key);

/* Why an envelope was refused, in the order the checks run. */
enum dsse_reason {
	DSSE_OK = 0,
	DSSE_MALFORMED,         /* "envelope_malformed": members, base64, signature count */
	DSSE_SIGNATURE_INVALID, /* "signature_invalid": no signature over PAE by the key */
	DSSE_TYPE_UNSUPPORTED,  /* "payload_type_unsupported" */
};
const char *dsse_reason_code(enum dsse_reason r);

/* Checks an envelope: its members well-formed, at least one signature over
 * PAE by key (keyid is a hint the spec forbids trusting, so every signature
 * is tried), then payloadType equal to want_type. Either base64 alphabet is
 * accepted, as the spec requires. On DSSE_OK body holds the decoded
 * payload; else the reason, with why (-ENOMEM: out of memory). */
int dsse_verify(const json_t *env, const char *want_type, const struct kw_key *key,
		struct kw_buf *body, char *why, size_t whylen);

/* base64 of either alphabet (standard or URL-safe, padded or not; one
 * alphabet per string), strictly. 0, -EINVAL or -ENOMEM. */
int dsse_b64_decode(const char *s, size_t len, struct kw_buf *out);

#endif
