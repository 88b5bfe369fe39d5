/* SPDX-License-Identifier: Apache-2.0 */
/* The RFC 3986 URI grammar (appendix A, production "URI"): what JSON Schema's
 * "format": "uri" means for every URI member of a TRACE record. */
#ifndef KWITNESS_URI_H
#define KWITNESS_URI_H

#include <stdbool.h>
#include <stddef.h>

/* Where and why a string is not a URI. */
struct kw_uri_error {
	size_t offset;      /* byte offset of the first byte that does not fit */
	const char *reason; /* static text, e.g. "is not allowed in the query" */
	bool bad_char;      /* reason is about the byte at offset itself */
};

/* True when s[0..n) matches
 *   URI = scheme ":" hier-part [ "?" query ] [ "#" fragment ]
 * exactly: ASCII only, every '%' followed by two hex digits, IP literals as
 * IPv6address (the nine forms) or IPvFuture, IPv4address without leading
 * zeros inside IPv6, port = *DIGIT. IPv6 zone identifiers (RFC 6874) are
 * refused: they name an interface of one host and mean nothing to a verifier
 * elsewhere. Otherwise false, and err (may be NULL) says where and why. */
bool kw_uri_valid(const char *s, size_t n, struct kw_uri_error *err);

/* One line for err, e.g. "'[' at byte 17 is not allowed in the query" or
 * "at byte 7: the IP literal has no closing ']'". */
void kw_uri_describe(const char *s, size_t n, const struct kw_uri_error *err, char *out,
		     size_t outlen);

#endif
