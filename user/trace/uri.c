/* SPDX-License-Identifier: Apache-2.0 */
/* RFC 3986 appendix A, the productions a URI (not a relative reference) needs.
 * The delimiters split a URI before any of its parts is read: the scheme ends
 * at the first ':', the fragment starts at the first '#', the query at the
 * first '?' before it, and an authority (after "//") ends at the first '/'.
 * No part may hold the delimiter that ends it, so this split is the grammar's;
 * each part is then checked against its own production. */
#include <stdio.h>
#include <string.h>

#include "trace/uri.h"

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* HEXDIG: ABNF strings are case-insensitive, so a-f as well as A-F. */
static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~" */
static bool is_unreserved(char c)
{
	return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/* sub-delims = "!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "=" */
static bool is_sub_delim(char c)
{
	return c != '\0' && strchr("!$&'()*+,;=", c);
}

static bool in_set(char c, const char *set)
{
	return c != '\0' && strchr(set, c);
}

/* A part of a URI made of unreserved, pct-encoded, sub-delims and extra. */
struct part {
	const char *extra;
	const char *not_allowed;
};

/* userinfo = *( unreserved / pct-encoded / sub-delims / ":" ) */
static const struct part userinfo = { ":", "is not allowed in the userinfo" };
/* reg-name = *( unreserved / pct-encoded / sub-delims ) */
static const struct part reg_name = { "", "is not allowed in a host name" };
/* segments: pchar = unreserved / pct-encoded / sub-delims / ":" / "@", and "/" */
static const struct part path = { ":@/", "is not allowed in the path" };
/* query = *( pchar / "/" / "?" ) */
static const struct part query = { ":@/?", "is not allowed in the query" };
/* fragment = *( pchar / "/" / "?" ) */
static const struct part fragment = { ":@/?", "is not allowed in the fragment" };

static bool fail(struct kw_uri_error *err, size_t off, const char *reason, bool bad_char)
{
	if (err) {
		err->offset = off;
		err->reason = reason;
		err->bad_char = bad_char;
	}
	return false;
}

/* s[from..to) holds only the part's characters; pct-encoded = "%" HEXDIG HEXDIG. */
static bool check_part(const char *s, size_t from, size_t to, const struct part *p,
		       struct kw_uri_error *err)
{
	for (size_t i = from; i < to; i++) {
		char c = s[i];

		if (is_unreserved(c) || is_sub_delim(c) || in_set(c, p->extra))
			continue;
		if (c != '%')
			return fail(err, i, p->not_allowed, true);
		if (to - i < 3 || !is_hex(s[i + 1]) || !is_hex(s[i + 2]))
			return fail(err, i, "'%' must be followed by two hex digits", false);
		i += 2;
	}
	return true;
}

/* dec-octet = DIGIT / %x31-39 DIGIT / "1" 2DIGIT / "2" %x30-34 DIGIT / "25" %x30-35
 * IPv4address = dec-octet "." dec-octet "." dec-octet "." dec-octet */
static bool ipv4_valid(const char *s, size_t n)
{
	size_t i = 0;

	for (int octet = 0; octet < 4; octet++) {
		size_t start;
		unsigned v = 0;

		if (octet && (i == n || s[i++] != '.'))
			return false;
		start = i;
		while (i < n && is_digit(s[i]) && i - start < 3)
			v = v * 10 + (unsigned)(s[i++] - '0');
		if (i == start || v > 255 || (i - start > 1 && s[start] == '0'))
			return false;
	}
	return i == n;
}

/* IPv6address, RFC 3986 section 3.2.2: six h16 and an ls32, or fewer with one
 * "::". Read as pieces: with "::" the nine forms are exactly "at most seven
 * 16-bit units", without it exactly eight; an IPv4address (two units) may only
 * be the last piece. h16 = 1*4HEXDIG. */
static bool ipv6_valid(const char *s, size_t n)
{
	size_t i = 0, units = 0;
	bool elided = false;

	if (n >= 2 && s[0] == ':' && s[1] == ':') {
		elided = true;
		i = 2;
	} else if (n && s[0] == ':') {
		return false;
	}
	while (i < n) {
		size_t j = i;

		while (j < n && s[j] != ':')
			j++;
		if (memchr(s + i, '.', j - i)) {
			if (j != n || !ipv4_valid(s + i, j - i))
				return false;
			units += 2;
			break;
		}
		if (j == i || j - i > 4)
			return false;
		for (size_t k = i; k < j; k++)
			if (!is_hex(s[k]))
				return false;
		if (++units > 8)
			return false;
		if (j == n)
			break;
		if (j + 1 < n && s[j + 1] == ':') {
			if (elided)
				return false; /* a second "::" */
			elided = true;
			i = j + 2;
		} else if (j + 1 == n) {
			return false; /* a lone trailing ':' */
		} else {
			i = j + 1;
		}
	}
	return elided ? units <= 7 : units == 8;
}

/* IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ) */
static bool ipvfuture_valid(const char *s, size_t n)
{
	size_t i = 1;

	if (n == 0 || (s[0] != 'v' && s[0] != 'V'))
		return false;
	while (i < n && is_hex(s[i]))
		i++;
	if (i == 1 || i == n || s[i] != '.' || ++i == n)
		return false;
	for (; i < n; i++)
		if (!is_unreserved(s[i]) && !is_sub_delim(s[i]) && s[i] != ':')
			return false;
	return true;
}

/* authority = [ userinfo "@" ] host [ ":" port ]
 * host = IP-literal / IPv4address / reg-name; an IPv4address is also a
 * reg-name, so reg-name decides outside brackets. port = *DIGIT. */
static bool check_authority(const char *s, size_t from, size_t to, struct kw_uri_error *err)
{
	const char *at = memchr(s + from, '@', to - from);
	size_t host = from, port;

	if (at) {
		host = (size_t)(at - s) + 1;
		if (!check_part(s, from, host - 1, &userinfo, err))
			return false;
	}
	if (host < to && s[host] == '[') {
		/* IP-literal = "[" ( IPv6address / IPvFuture ) "]" */
		const char *close = memchr(s + host, ']', to - host);
		size_t in = host + 1, end;

		if (!close)
			return fail(err, host, "the IP literal has no closing ']'", false);
		end = (size_t)(close - s);
		if (in < end && (s[in] == 'v' || s[in] == 'V')) {
			if (!ipvfuture_valid(s + in, end - in))
				return fail(err, in, "the IP literal is not an IPvFuture (v<hex>.<characters>)",
					    false);
		} else if (!ipv6_valid(s + in, end - in)) {
			if (memchr(s + in, '%', end - in))
				return fail(err, in,
					    "the IP literal has an IPv6 zone identifier (RFC 6874), which is not accepted",
					    false);
			return fail(err, in, "the IP literal is not an IPv6 address", false);
		}
		port = end + 1;
		if (port < to && s[port] != ':')
			return fail(err, port, "is not allowed after an IP literal (only ':' and a port)", true);
	} else {
		const char *colon = memchr(s + host, ':', to - host);

		port = colon ? (size_t)(colon - s) : to;
		if (!check_part(s, host, port, &reg_name, err))
			return false;
	}
	if (port < to)
		for (size_t i = port + 1; i < to; i++)
			if (!is_digit(s[i]))
				return fail(err, i, "is not allowed in the port, which is digits only", true);
	return true;
}

bool kw_uri_valid(const char *s, size_t n, struct kw_uri_error *err)
{
	const char *hash, *qmark;
	size_t i, hier, end_hier, end_query;

	/* scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) */
	if (n == 0)
		return fail(err, 0, "an empty string is not a URI", false);
	if (!is_alpha(s[0]))
		return fail(err, 0, "a URI starts with a scheme, which starts with a letter", false);
	for (i = 1; i < n && s[i] != ':'; i++)
		if (!is_alpha(s[i]) && !is_digit(s[i]) && !in_set(s[i], "+-."))
			return fail(err, i, "is not allowed in the scheme (or the scheme's ':' is missing)",
				    true);
	if (i == n)
		return fail(err, n, "the scheme's ':' is missing", false);
	hier = i + 1;

	hash = memchr(s + hier, '#', n - hier);
	end_query = hash ? (size_t)(hash - s) : n;
	qmark = memchr(s + hier, '?', end_query - hier);
	end_hier = qmark ? (size_t)(qmark - s) : end_query;

	/* hier-part = "//" authority path-abempty / path-absolute / path-rootless
	 * / path-empty. Without "//", a path made of pchar and "/" is always one
	 * of the last three: it cannot start with "//". */
	if (end_hier - hier >= 2 && s[hier] == '/' && s[hier + 1] == '/') {
		const char *slash = memchr(s + hier + 2, '/', end_hier - hier - 2);
		size_t end_auth = slash ? (size_t)(slash - s) : end_hier;

		if (!check_authority(s, hier + 2, end_auth, err) ||
		    !check_part(s, end_auth, end_hier, &path, err))
			return false;
	} else if (!check_part(s, hier, end_hier, &path, err)) {
		return false;
	}
	if (qmark && !check_part(s, end_hier + 1, end_query, &query, err))
		return false;
	if (hash && !check_part(s, end_query + 1, n, &fragment, err))
		return false;
	return true;
}

void kw_uri_describe(const char *s, size_t n, const struct kw_uri_error *err, char *out,
		     size_t outlen)
{
	unsigned char c;

	if (!outlen)
		return;
	if (!err->bad_char || err->offset >= n) {
		snprintf(out, outlen, "at byte %zu: %s", err->offset, err->reason);
		return;
	}
	c = (unsigned char)s[err->offset];
	if (c > 0x20 && c < 0x7f && c != '\'')
		snprintf(out, outlen, "'%c' at byte %zu %s", c, err->offset, err->reason);
	else
		snprintf(out, outlen, "character 0x%02x at byte %zu %s", c, err->offset, err->reason);
}
